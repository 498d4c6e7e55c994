"""The HETERO compiled model: submodels compiled on their devices, run in order, joined by
intermediate tensors."""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping, Sequence
from datetime import timedelta
from typing import Any

import numpy as np

from hetero_sdk import properties as props
from hetero_sdk import rt_info
from hetero_sdk.graph import Model
from hetero_sdk.hetero.blob_format import write_blob
from hetero_sdk.hetero.report import PlacementReport
from hetero_sdk.hetero.submodels import SplitModel
from hetero_sdk.runtime import CompiledModel, ProfilingInfo, RunContext, Status

__all__ = ["HeteroCompiledModel"]


class HeteroCompiledModel(CompiledModel):
    """A model split across devices.

    :param model: the original model (its inputs and outputs are this compiled model's).
    :param device_name: the name HETERO was registered under (from its entry point).
    :param split: the submodels and how their tensors connect.
    :param compiled: one compiled model per submodel, in the same order.
    :param config: HETERO's resolved configuration.
    :param report: where each op runs and why.
    """

    def __init__(
        self,
        model: Model,
        device_name: str,
        split: SplitModel,
        compiled: Sequence[CompiledModel],
        config: Mapping[str, Any],
        report: PlacementReport,
    ) -> None:
        super().__init__(model, device_name, config)
        self.split = split
        self.compiled = list(compiled)
        self.report = report
        self._release_after = _last_uses(split)
        self._remote = _remote_outputs(split, [c.device_name for c in self.compiled])
        self._ends = _ends(split)
        self._alone = _positions(split) if len(split.submodels) == 1 else None
        self._profiled = [bool(c.get_property_or(props.enable_profiling, False)) for c in self.compiled]
        self._gates = _device_gates(self.compiled)

    def run(self, inputs: Sequence[Any], context: RunContext) -> list[Any]:
        """Runs the submodels in order; intermediate tensors pass without copies on shared memory.

        Each device runs at most as many submodels at once as its submodel's
        ``OPTIMAL_NUMBER_OF_INFER_REQUESTS`` (its streams), waiting in arrival order: with several async
        requests in flight they form a pipeline (submodel k of one request runs while submodel k+1 of
        the request before it does), and a device never holds more requests' activations at once than
        it was planned for (``PIPELINE_PARALLEL``). Each submodel gets its own state inside the
        request's :attr:`RunContext.state` (:meth:`create_request_state`), kept between inferences
        (TEMPLATE reuses its buffers). A submodel whose outputs all leave the model may return them still
        copying back when the caller reads them later (:attr:`RunContext.host_outputs_later`); the others
        finish before the next starts.
        When the caller takes remote outputs (:attr:`RunContext.remote_outputs`, as a stateful model's
        wrapper does), each submodel's outputs stay on its device: a variable made by a submodel and fed
        back to it next time never visits the host."""
        profile = context.profile
        if self._alone is not None and profile is None:
            return self._run_alone(inputs, context, *self._alone)
        env: dict[str, Any] = dict(zip(self.split.inputs, inputs))
        env.update(self.split.constants)
        for key, (source, dtype) in self.split.shapes.items():  # read without moving the tensor
            env[key] = np.array(np.shape(env[source]), dtype)
        for i, (sub, compiled) in enumerate(zip(self.split.submodels, self.compiled)):
            context.check_cancelled()
            started = time.perf_counter()
            args = []
            for key in sub.inputs:
                value = env[key]
                moved = _to_device(value, compiled.device_name)
                if moved is not value and isinstance(moved, np.ndarray):
                    env[key] = moved  # copied to the host once for every later stage that reads it
                args.append(moved)
            transferred = time.perf_counter()
            sub_context = self._sub_context(i, context)
            with self._gates[i]:
                outputs = compiled.run(args, sub_context)
            finished = time.perf_counter()
            env.update(zip(sub.outputs, outputs))
            for key in self._release_after[i]:
                env.pop(key, None)
            if profile is not None:
                profile += _rows(
                    i, compiled.device_name, sub_context.profile or [], transferred - started, finished - transferred
                )
        return [env[key] for key in self.split.outputs]

    def create_request_state(self) -> list[Any]:
        """Each submodel's state for a request, by submodel."""
        return [compiled.create_request_state() for compiled in self.compiled]

    def _sub_context(self, i: int, context: RunContext) -> RunContext:
        # a caller that takes remote outputs (a stateful model's wrapper keeping each cache where its layer
        # runs) gets the model outputs as the devices hold them; a tensor bound for another device still
        # comes to the host on its way there (_to_device)
        return RunContext(
            context.profile is not None and self._profiled[i],
            remote_outputs=self._remote[i] or context.remote_outputs,
            cancelled=context.cancelled,
            state=None if context.state is None else context.state[i],
            host_outputs_later=context.host_outputs_later and self._ends[i],
        )

    def _run_alone(
        self, inputs: Sequence[Any], context: RunContext, takes: list[int], gives: list[tuple[str, Any]]
    ) -> list[Any]:
        """The one submodel's run (not profiled): its inputs and the model's outputs picked by position."""
        context.check_cancelled()
        compiled = self.compiled[0]
        args = [_to_device(inputs[i], compiled.device_name) for i in takes]
        with self._gates[0]:
            outputs = compiled.run(args, self._sub_context(0, context))
        picked = {"submodel": outputs, "input": inputs}
        return [picked[source][at] if source in picked else at for source, at in gives]

    @property
    def execution_devices(self) -> list[str]:
        """The devices of the submodels, in order of first use."""
        return list(dict.fromkeys(c.device_name for c in self.compiled))

    @property
    def optimal_number_of_infer_requests(self) -> int:
        """Enough requests to keep every submodel busy: async requests pipeline across devices."""
        return max(len(self.compiled), max((c.optimal_number_of_infer_requests for c in self.compiled), default=1))

    def get_property(self, name: str) -> Any:
        """HETERO's compiled-model properties, then the common ones."""
        if name == props.enable_profiling:
            return bool(self.config.get(props.enable_profiling)) or any(self._profiled)
        if name == props.hetero.number_of_submodels:
            return len(self.compiled)
        if name == props.device.properties:
            # keyed as the devices were listed (and as affinities name them): "TEMPLATE" for
            # HETERO:XLA,TEMPLATE, while EXECUTION_DEVICES names the instance that runs ("TEMPLATE.0")
            return {sub.device: _readable_properties(c) for sub, c in zip(self.split.submodels, self.compiled)}
        if name == props.supported_properties:
            return {**super().get_property(name), props.hetero.number_of_submodels: "RO", props.device.properties: "RO"}
        return super().get_property(name)

    def get_runtime_model(self) -> Model:
        """The original model; each op's rt_info gives its ``affinity`` and ``subgraph``, and, from
        its device's runtime model, the kernel (``layerType``) and, after a profiled run,
        ``execTimeMcs`` (summed over the device ops it became)."""
        from_devices: dict[str, dict[str, Any]] = {}
        for compiled in self.compiled:
            for op in compiled.get_runtime_model().get_ops():
                info = op.get_rt_info()
                for name in str(info.get(rt_info.ORIGINAL_NAMES) or op.friendly_name).split(","):
                    merged = from_devices.setdefault(name, {})
                    if rt_info.LAYER_TYPE in info:
                        merged.setdefault(rt_info.LAYER_TYPE, info[rt_info.LAYER_TYPE])
                    if rt_info.PERF_COUNTER in info:
                        merged[rt_info.PERF_COUNTER] = merged.get(rt_info.PERF_COUNTER, 0) + info[rt_info.PERF_COUNTER]
        runtime = self.model.clone()
        for node in runtime.get_ops():
            info = node.get_rt_info()
            placed = self.report.placement.get(node.friendly_name)
            if placed is not None:
                info.update({rt_info.AFFINITY: placed[0], rt_info.SUBGRAPH: placed[1]})
            info[rt_info.ORIGINAL_NAMES] = node.friendly_name
            info.update(from_devices.get(node.friendly_name, {}))
        return runtime

    def placement_report(self) -> PlacementReport:
        """Which device runs each op, why ops fell back, the subgraphs and the cut tensors."""
        return self.report

    def export_model(self) -> bytes:
        """A versioned, checksummed blob (see :mod:`hetero_sdk.hetero.blob_format`)."""
        return write_blob(self.model, self.split, self.compiled, self.config, self.report)


class _Gate:
    """A counting semaphore that lets waiters in by arrival order (first come, first served)."""

    def __init__(self, slots: int) -> None:
        self._free = slots
        self._condition = threading.Condition()
        self._next_ticket = 0
        self._serving = 0
        self._waiting = 0  # (notifying nobody still costs a Python call: only wake waiters there are)

    def __enter__(self) -> None:
        with self._condition:
            ticket = self._next_ticket
            self._next_ticket += 1
            if ticket != self._serving or self._free == 0:
                self._waiting += 1
                while ticket != self._serving or self._free == 0:
                    self._condition.wait()
                self._waiting -= 1
            self._serving += 1
            self._free -= 1
            if self._waiting:
                self._condition.notify_all()

    def __exit__(self, *exc: object) -> None:
        with self._condition:
            self._free += 1
            if self._waiting:
                self._condition.notify_all()


def _device_gates(compiled: Sequence[CompiledModel]) -> list[_Gate]:
    """One gate per device, shared by its submodels, as wide as the smallest of their request counts."""
    slots: dict[str, int] = {}
    for c in compiled:
        width = max(1, int(c.optimal_number_of_infer_requests))
        slots[c.device_name] = min(slots.get(c.device_name, width), width)
    gates = {device: _Gate(width) for device, width in slots.items()}
    return [gates[c.device_name] for c in compiled]


def _to_device(value: Any, device: str) -> Any:
    """``value`` as ``device`` takes it: as it is when it is on the host or on that device, or when it says
    it passes to that device (``passes_to``: a RAY actor's output another actor fetches itself); else a
    host copy."""
    # (device_name read directly: an isinstance check against the RemoteTensor protocol costs more than
    # a small stage's run)
    if isinstance(value, np.ndarray) or getattr(value, "device_name", None) == device:
        return value
    passes_to = getattr(value, "passes_to", None)
    if passes_to is not None and passes_to(device):
        return value
    return np.asarray(value)


def _rows(index: int, device: str, rows: Sequence[ProfilingInfo], transfer: float, run: float) -> list[ProfilingInfo]:
    prefix = f"subgraph{index}: "
    out = [
        ProfilingInfo(
            f"{prefix}input transfer",
            "Transfer",
            device,
            Status.EXECUTED,
            timedelta(seconds=transfer),
            timedelta(seconds=transfer),
        ),
    ]
    out += [row._replace(node_name=prefix + row.node_name) for row in rows]
    out.append(
        ProfilingInfo(
            f"{prefix}total", "Subgraph", device, Status.EXECUTED, timedelta(seconds=run), timedelta(seconds=run)
        )
    )
    return out


def _last_uses(split: SplitModel) -> list[list[str]]:
    """For each submodel, the intermediate tensors nothing after it reads."""
    keep = set(split.outputs)
    last: dict[str, int] = {}
    for sub in split.submodels:
        for key in sub.inputs:
            last[key] = sub.index
    release: list[list[str]] = [[] for _ in split.submodels]
    for key, index in last.items():
        if key not in keep:
            release[index].append(key)
    return release


def _remote_outputs(split: SplitModel, devices: Sequence[str]) -> list[bool]:
    """Whether each submodel may hand device-resident outputs on: only when every consumer of
    every output is a submodel on the same device (model outputs go to the host)."""
    model_outputs = set(split.outputs)
    consumers = {c.key: c.consumers for c in split.cuts}
    flags = []
    for sub in split.submodels:
        ok = all(
            key not in model_outputs and all(devices[c] == devices[sub.index] for c in consumers.get(key, ()))
            for key in sub.outputs
        )
        flags.append(ok)
    return flags


def _positions(split: SplitModel) -> tuple[list[int], list[tuple[str, Any]]]:
    """For a model in one submodel: the position among the model's inputs of each of the submodel's,
    and where each model output comes from (``("submodel", index)``, ``("input", index)`` or
    ``("constant", value)``)."""
    (sub,) = split.submodels
    gives: list[tuple[str, Any]] = []
    for key in split.outputs:
        if key in sub.outputs:
            gives.append(("submodel", sub.outputs.index(key)))
        elif key in split.inputs:
            gives.append(("input", split.inputs.index(key)))
        else:
            gives.append(("constant", split.constants[key]))
    return [split.inputs.index(key) for key in sub.inputs], gives


def _ends(split: SplitModel) -> list[bool]:
    """Whether each submodel's outputs are all model outputs that no other submodel reads."""
    model_outputs = set(split.outputs)
    consumers = {c.key: c.consumers for c in split.cuts}
    return [all(key in model_outputs and not consumers.get(key) for key in sub.outputs) for sub in split.submodels]


def _readable_properties(compiled: CompiledModel) -> dict[str, Any]:
    values = {}
    for key in compiled.get_property(props.supported_properties):
        if key != props.supported_properties:
            values[key] = compiled.get_property_or(key, None)
    return values
