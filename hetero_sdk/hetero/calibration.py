"""``HETERO_PLACEMENT_POLICY=LATENCY`` inside HETERO: measuring a cost model at compile time, placing by
it (:func:`~hetero_sdk.hetero.latency.place_for_latency`) and measuring the plans.

**Calibration.** Each distinct op *signature* (type, attributes, input types and shapes, and the values
of small Constant inputs) becomes a one-op model (its Constant inputs kept, the others Parameters),
compiled on every listed device that claims the op in ``query_model`` and run on random inputs: one
untimed run, then the median of :data:`RUNS` timed ones. The cheapest such call on a device is taken as
its fixed cost of one dispatch (its *hop*: what one more subgraph, so one more transfer, costs there);
an op costs its median minus that. Tensors move through host memory, so the bandwidth is the host's,
measured by copying a 4 MiB array. The cost: one compile and ``RUNS + 1`` runs per signature and
device: repeated blocks share signatures, so a transformer of 24 identical layers costs what one layer
does. Ops that cannot be calibrated (dynamic shapes, a run failing on random data) cost the same on
every device that claims them: their placement follows the transfers.
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from hetero_sdk.errors import HeteroSDKError
from hetero_sdk.graph import Model, Node
from hetero_sdk.hetero.affinity import Placement, compute_nodes
from hetero_sdk.hetero.distribution import nbytes
from hetero_sdk.hetero.latency import CostModel, DataTensor, estimate_ns, place_for_latency
from hetero_sdk.hetero.report import LatencyInfo
from hetero_sdk.runtime import CompiledModel

if TYPE_CHECKING:
    from hetero_sdk import Core

__all__ = ["RUNS", "calibrate", "data_tensors", "measure_plans", "place_by_latency", "random_inputs"]

RUNS = 5
"""Timed runs per measurement (the median is taken)."""

_SMALL_CONSTANT = 64
"""Constant inputs with at most this many elements are part of an op's signature by value."""


def data_tensors(model: Model) -> list[DataTensor]:
    """The tensors between compute ops (model inputs and Constants left out)."""
    ops = compute_nodes(model)
    names = {id(n): n.friendly_name for n in ops}
    consumers = model.consumers()
    tensors = []
    for node in ops:
        for output in node.outputs():
            readers = tuple(dict.fromkeys(names[id(u)] for u, _ in consumers.get(output, []) if id(u) in names))
            if readers:
                tensors.append(DataTensor(node.friendly_name, readers, nbytes(output)))
    return tensors


def place_by_latency(
    model: Model,
    priorities: Sequence[str],
    core: Core,
    device_config: Mapping[str, Mapping[str, Any]],
    priority: Placement,
) -> tuple[Placement, LatencyInfo]:
    """The LATENCY plan of ``model`` over ``priorities``, and its estimates.

    :param priority: PRIORITY's placement (a starting plan the result never loses to).
    """
    costs = calibrate(model, priorities, core, device_config)
    ops = [n.friendly_name for n in compute_nodes(model)]
    tensors = data_tensors(model)
    singles = {d: {op: d for op in ops} for d in priorities if all(d in costs.op_ns[op] for op in ops)}
    starts = [priority.device, *singles.values()]
    plan = place_for_latency(ops, tensors, costs, priorities, starts)
    estimated = {"chosen": estimate_ns(plan, tensors, costs), "PRIORITY": estimate_ns(priority.device, tensors, costs)}
    estimated.update({d: estimate_ns(p, tensors, costs) for d, p in singles.items()})
    info = LatencyInfo(
        estimated={k: v / 1e9 for k, v in estimated.items() if v is not None},
        costs={"op_ns": costs.op_ns, "hop_ns": costs.hop_ns, "bytes_per_ns": costs.bytes_per_ns},
    )
    rejected = {op: devices for op, devices in priority.rejected_by.items() if plan[op] not in devices}
    return Placement(plan, rejected), info


def calibrate(
    model: Model, devices: Sequence[str], core: Core, device_config: Mapping[str, Mapping[str, Any]]
) -> CostModel:
    """Measures the cost model of ``model``'s ops on ``devices`` (see the module's description)."""
    ops = compute_nodes(model)
    claimed = {d: core.query_model(model, d, dict(device_config.get(d, {}))) for d in devices}
    rng = np.random.default_rng(0)
    seconds: dict[tuple[str, str], float | None] = {}
    for node in ops:
        key = _signature(node)
        for device in devices:
            if node.friendly_name in claimed[device] and (key, device) not in seconds:
                seconds[key, device] = _time_op(node, device, core, device_config.get(device, {}), rng)
    hop = {}
    for device in devices:
        timed = [s for (_, d), s in seconds.items() if d == device and s is not None]
        hop[device] = min(timed, default=0.0)
    op_ns: dict[str, dict[str, int]] = {}
    for node in ops:
        key = _signature(node)
        per = {d: seconds[key, d] for d in devices if node.friendly_name in claimed[d]}
        known = [s - hop[d] for d, s in per.items() if s is not None]
        neutral = statistics.median(known) if known else 0.0
        op_ns[node.friendly_name] = {
            d: round(max((s - hop[d]) if s is not None else neutral, 0.0) * 1e9) for d, s in per.items()
        }
    return CostModel(op_ns, {d: round(h * 1e9) for d, h in hop.items()}, _host_bytes_per_ns())


def measure_plans(
    compiled: CompiledModel,
    model: Model,
    core: Core,
    device_config: Mapping[str, Mapping[str, Any]],
    latency: LatencyInfo,
) -> None:
    """Fills ``latency.measured``: the median seconds of the chosen plan (``compiled``) and of the model
    compiled on each single device the estimate has; left empty for models with dynamic inputs."""
    inputs = random_inputs(model, np.random.default_rng(1))
    if inputs is None:
        return
    latency.measured["chosen"] = _median_seconds(compiled, inputs)
    for device in latency.estimated:
        if device in ("chosen", "PRIORITY"):
            continue
        try:
            alone = core.compile_model(model, device, dict(device_config.get(device, {})))
        except HeteroSDKError:
            continue
        latency.measured[device] = _median_seconds(alone, inputs)


def random_inputs(model: Model, rng: np.random.Generator) -> list[np.ndarray] | None:
    """Random inputs for ``model`` (normal floats, zero integers and bools), None when a shape is dynamic."""
    values = []
    for parameter in model.get_parameters():
        port = parameter.output(0)
        if not port.partial_shape.is_static:
            return None
        dtype = port.element_type.numpy
        shape = port.partial_shape.dims
        if port.element_type.is_real:
            values.append(rng.standard_normal(shape).astype(dtype))
        else:
            values.append(np.zeros(shape, dtype))
    return values


def _median_seconds(compiled: CompiledModel, inputs: list[np.ndarray]) -> float:
    request = compiled.create_infer_request()
    request.infer(inputs)
    times = []
    for _ in range(RUNS):
        started = time.perf_counter()
        request.infer(inputs)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def _one_op_model(node: Node) -> Model | None:
    inputs = []
    parameters = []
    for i, source in enumerate(node.input_values()):
        if source.node.type_name == "Constant":
            inputs.append(Node("Constant", [], source.node.attrs, name=f"c{i}").output(0))
            continue
        if not source.partial_shape.is_static:
            return None
        parameter = Node(
            "Parameter", [], {"element_type": source.element_type, "shape": source.partial_shape}, name=f"p{i}"
        )
        parameters.append(parameter)
        inputs.append(parameter.output(0))
    clone = Node(node.type_name, inputs, node.attrs, name=node.friendly_name)
    results = [Node("Result", [o], {}, name=f"r{o.index}") for o in clone.outputs()]
    return Model(results, parameters, f"calibrate/{node.friendly_name}")


def _time_op(node: Node, device: str, core: Core, config: Mapping[str, Any], rng: np.random.Generator) -> float | None:
    try:
        model = _one_op_model(node)
        inputs = None if model is None else random_inputs(model, rng)
        if model is None or inputs is None:
            return None
        return _median_seconds(core.compile_model(model, device, dict(config)), inputs)
    except (HeteroSDKError, ValueError, TypeError, ArithmeticError, IndexError):
        return None


def _signature(node: Node) -> str:
    parts: list[Any] = [node.type_name, repr(sorted((k, repr(v)) for k, v in node.attrs.items()))]
    for source in node.input_values():
        parts.append([str(source.element_type), list(source.partial_shape.dims)])
        if source.node.type_name == "Constant":
            value = np.asarray(source.node.attrs["value"])
            parts.append(value.tolist() if value.size <= _SMALL_CONSTANT else "large")
    return json.dumps(parts, default=str)


def _host_bytes_per_ns() -> float:
    source = np.ones(1 << 20, np.float32)
    target = np.empty_like(source)
    times = []
    for _ in range(RUNS):
        started = time.perf_counter()
        np.copyto(target, source)
        times.append(time.perf_counter() - started)
    return source.nbytes / max(statistics.median(times) * 1e9, 1e-3)
