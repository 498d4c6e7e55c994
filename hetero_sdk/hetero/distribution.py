"""``MODEL_DISTRIBUTION_POLICY=PIPELINE_PARALLEL`` inside HETERO: a model's memory facts, each device's
memory (its ``DEVICE_TOTAL_MEM_SIZE``, or a budget in ``DEVICE_PROPERTIES``) and the stages of
:func:`~hetero_sdk.hetero.pipeline.plan_pipeline` as subgraphs."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from hetero_sdk import properties as props
from hetero_sdk.errors import HeteroSDKError, UnsupportedOperationError
from hetero_sdk.graph import Model, Output
from hetero_sdk.hetero.affinity import compute_nodes
from hetero_sdk.hetero.pipeline import LinearGraph, PipelinePlan, Tensor, plan_pipeline
from hetero_sdk.hetero.report import StageInfo
from hetero_sdk.hetero.subgraph import Subgraph

if TYPE_CHECKING:
    from hetero_sdk import Core
    from hetero_sdk.graph import Node

__all__ = ["PIPELINE_PARALLEL", "device_memory", "linear_graph", "nbytes", "plan_stages", "planned_bytes"]

PIPELINE_PARALLEL = "PIPELINE_PARALLEL"
"""The ``MODEL_DISTRIBUTION_POLICY`` value that splits a model over devices by memory."""


def nbytes(output: Output) -> int:
    """The bytes of a tensor, 0 when its shape is dynamic."""
    shape = output.partial_shape
    if not shape.is_static:
        return 0
    return int(np.prod(shape.dims, dtype=np.int64)) * output.element_type.numpy.itemsize


def planned_bytes(output: Output) -> int:
    """The bytes a plan counts for a tensor: its size, each dynamic dimension counted as 1 (a decoder's
    tensors per sequence and token), so that a cut through a dynamic model still costs what crosses it:
    the hidden state between two layers costs less than the same cut plus a layer's intermediates."""
    dims = [max(d, 1) for d in output.partial_shape.dims]
    return int(np.prod(dims, dtype=np.int64)) * output.element_type.numpy.itemsize


def linear_graph(model: Model) -> tuple[LinearGraph, list[Node]]:
    """The memory facts of ``model``'s compute ops in its topological order, and those ops (tensor sizes
    by :func:`planned_bytes`)."""
    ops = compute_nodes(model)
    position = {id(n): q for q, n in enumerate(ops)}
    consumers = model.consumers()
    weights: list[dict[str, int]] = []
    for node in ops:
        constants = [s.node for s in node.input_values() if s.node.type_name == "Constant"]
        weights.append({c.friendly_name: int(np.asarray(c.attrs["value"]).nbytes) for c in constants})
    tensors = []
    sources = [(-1, p) for p in model.get_parameters()] + [(position[id(n)], n) for n in ops]
    for producer, node in sources:
        for output in node.outputs():
            users = consumers.get(output, [])
            readers = tuple(sorted({position[id(u)] for u, _ in users if id(u) in position}))
            is_output = any(u.type_name == "Result" for u, _ in users)
            tensors.append(Tensor(producer, readers, planned_bytes(output), is_output))
    return LinearGraph(tuple(n.friendly_name for n in ops), tuple(weights), tuple(tensors)), ops


def device_memory(core: Core, device: str, budget: Any) -> tuple[int | None, str]:
    """A device's memory for planning and where it comes from: the ``DEVICE_TOTAL_MEM_SIZE`` budget
    given in ``DEVICE_PROPERTIES`` (``"budget"``), else the size the device reports (``"reported"``),
    else None (``"equal share"``)."""
    if budget is not None:
        return int(budget), "budget"
    try:
        if props.device.total_mem_size in core.get_property(device, props.supported_properties):
            value = core.get_property(device, props.device.total_mem_size)
            if value:
                return int(value), "reported"
    except (HeteroSDKError, ValueError):
        pass
    return None, "equal share"


def plan_stages(
    model: Model,
    devices: Sequence[str],
    core: Core,
    device_config: Mapping[str, Mapping[str, Any]],
    budgets: Mapping[str, Any],
) -> tuple[list[Subgraph], list[StageInfo], PipelinePlan]:
    """The pipeline stages of ``model`` over ``devices``: one subgraph per device that gets ops.

    :raises CompilationError: when no split fits the devices' memory (see :func:`plan_pipeline`).
    :raises UnsupportedOperationError: when an op is supported by none of the devices.
    """
    graph, ops = linear_graph(model)
    memory = [device_memory(core, d, budgets.get(d)) for d in devices]
    supported = []
    for device in devices:
        claimed = core.query_model(model, device, dict(device_config.get(device, {})))
        supported.append(frozenset(q for q, n in enumerate(ops) if n.friendly_name in claimed))
    nowhere = [n.friendly_name for q, n in enumerate(ops) if not any(q in s for s in supported)]
    if nowhere:
        raise UnsupportedOperationError(
            f"PIPELINE_PARALLEL: no device of {', '.join(devices)} supports {len(nowhere)} op(s): "
            f"{', '.join(nowhere[:20])}; list a device that does"
        )
    plan = plan_pipeline(graph, [cap for cap, _ in memory], devices, supported)
    parts = []
    stages = []
    for device, (start, end), (weights, peak), cap, (_, source) in zip(
        devices, plan.bounds, plan.memory, plan.caps, memory
    ):
        if end > start:
            parts.append(Subgraph(device, frozenset(ops[start:end])))
            stages.append(
                StageInfo(device, end - start, graph.ops[start], graph.ops[end - 1], weights, peak, cap, source)
            )
    return parts, stages, plan
