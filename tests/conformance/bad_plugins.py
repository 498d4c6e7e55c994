"""Device plugins for the kit's own tests: a small correct device on the reference kernels (MINI), and
deliberately wrong variants, each with one defect that one check of the kit is meant to catch.

Run the kit on one with ``--conformance-plugin tests.conformance.bad_plugins:WrongRelu --device WRONG_RELU``.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

import hetero_sdk as hs
from hetero_sdk.errors import BlobFormatError, ModelFormatError, UnsupportedOperationError
from hetero_sdk.plugin import (
    CompiledModel,
    ConfiguredDevice,
    DeviceConfig,
    RemoteContext,
    RunContext,
    Version,
    get_supported_nodes,
    hookimpl,
    pack_blob,
    read_only,
    standard,
    unpack_blob,
)
from hetero_sdk.reference import kernel_types, run_node
from hetero_sdk.serialization import model_from_bytes, model_to_bytes

__all__ = [
    "AcceptsUnknownKeys", "ClaimsSigmoid", "CorruptsBlobs", "CrashesOnSigmoid", "HangsOnExp", "IgnoresPerfCount",
    "MiniDevice", "WrongRelu", "WrongVectorMatMul",
]  # fmt: skip

_BLOB = "MINI"


class MiniCompiledModel(CompiledModel):
    """Runs the model op by op with the reference kernels."""

    def __init__(self, model: hs.Model, device_name: str, config: dict[str, Any]) -> None:
        super().__init__(model.clone(), device_name, config)
        self._ops = self._model.get_ordered_ops()
        self._times: dict[str, float] = {}

    def compute(self, node: hs.Node, args: list[np.ndarray]) -> list[np.ndarray]:
        """One op's outputs (the defects override this)."""
        return run_node(node, args)

    def run(self, inputs: Sequence[Any], context: RunContext) -> list[Any]:
        env: dict[tuple[int, int], Any] = {}
        for parameter, value in zip(self._model.get_parameters(), inputs):
            env[(id(parameter), 0)] = np.asarray(value)
        for node in self._ops:
            if node.type_name in ("Parameter", "Result"):
                continue
            if node.type_name == "Constant":
                env[(id(node), 0)] = node.attrs["value"]
                continue
            context.check_cancelled()
            args = [env[(id(s.node), s.index)] for s in node.input_values()]
            with context.timed(node.friendly_name, node.type_name, "mini_ref"):
                outputs = self.compute(node, args)
            for i, value in enumerate(outputs):
                env[(id(node), i)] = value
        if context.profile is not None:
            self._times = {row.node_name: row.real_time.total_seconds() * 1e6 for row in context.profile}
        return [env[(id(r.input_value(0).node), r.input_value(0).index)] for r in self._model.get_results()]

    def get_runtime_model(self) -> hs.Model:
        runtime = self._model.clone()
        for node in runtime.get_ops():
            node.get_rt_info()["originalLayersNames"] = node.friendly_name
            if node.friendly_name in self._times:
                node.get_rt_info()["execTimeMcs"] = self._times[node.friendly_name]
        return runtime

    def export_model(self) -> bytes:
        return pack_blob(_BLOB, {"model": model_to_bytes(self._model), "config": json.dumps(self._config).encode()})


class MiniDevice(ConfiguredDevice):
    """A small, correct device: every op with a reference kernel, computed op by op."""

    compiled_class: type[MiniCompiledModel] = MiniCompiledModel

    def __init__(self) -> None:
        self.config = DeviceConfig(
            [
                standard.device_id(),
                standard.perf_count(),
                standard.performance_hint(),
                standard.execution_mode_hint(),
                read_only("AVAILABLE_DEVICES", ["0"]),
                read_only("FULL_DEVICE_NAME", "Mini reference device"),
                read_only("DEVICE_ARCHITECTURE", "numpy"),
                read_only("OPTIMIZATION_CAPABILITIES", ["FP32", "EXPORT_IMPORT"]),
                read_only("RANGE_FOR_ASYNC_INFER_REQUESTS", (1, 4, 1)),
            ],
            device_ids=lambda: ["0"],
        )

    def supports(self, node: hs.Node) -> bool:
        """Whether the device runs ``node``."""
        return node.op.structural or node.type_name in kernel_types()

    def resolve(self, properties: dict[str, Any]) -> dict[str, Any]:
        """The compile configuration."""
        return self.config.resolve(properties)

    @hookimpl
    def get_version(self, device_name: str) -> Version:
        return Version("1.0.0", "mini reference device for the conformance kit's tests")

    @hookimpl
    def query_model(
        self, model: hs.Model, properties: dict[str, Any], device_name: str, core: hs.Core
    ) -> dict[str, str]:
        self.resolve(properties)
        return dict.fromkeys(get_supported_nodes(model, lambda m: None, self.supports), device_name)

    @hookimpl
    def compile_model(
        self,
        model: hs.Model,
        properties: dict[str, Any],
        context: RemoteContext | None,
        device_name: str,
        core: hs.Core,
    ) -> MiniCompiledModel:
        config = self.resolve(properties)
        missing = sorted({n.type_name for n in model.get_ops() if not n.op.structural} - set(kernel_types()))
        if missing:
            raise UnsupportedOperationError(f"{device_name} has no kernel for {', '.join(missing)}")
        return self.compiled_class(model, f"{device_name}.{config['DEVICE_ID']}", config)

    @hookimpl
    def import_model(
        self, blob: bytes, properties: dict[str, Any], context: RemoteContext | None, device_name: str, core: hs.Core
    ) -> MiniCompiledModel:
        frames = unpack_blob(blob, _BLOB)
        try:
            model = model_from_bytes(frames["model"], source="MINI blob")
            stored = json.loads(frames["config"])
        except (KeyError, ValueError, ModelFormatError) as exc:
            raise BlobFormatError(f"MINI blob is malformed: {exc}") from exc
        stored.pop("DEVICE_ID", None)
        config = self.resolve({**stored, **properties})
        return self.compiled_class(model, f"{device_name}.{config['DEVICE_ID']}", config)


# -- the defects -----------------------------------------------------------------------------------


class _WrongReluCompiled(MiniCompiledModel):
    def compute(self, node: hs.Node, args: list[np.ndarray]) -> list[np.ndarray]:
        if node.type_name == "Relu":
            return [(np.maximum(args[0], 0) * 1.01).astype(args[0].dtype)]
        return super().compute(node, args)


class WrongRelu(MiniDevice):
    """Relu computes ``relu(x) * 1.01``: caught by the Relu op check."""

    compiled_class = _WrongReluCompiled


class ClaimsSigmoid(MiniDevice):
    """Claims Sigmoid in query_model, but compile_model cannot compile it: caught by the Sigmoid op check."""

    def supports(self, node: hs.Node) -> bool:
        return True

    @hookimpl
    def compile_model(
        self,
        model: hs.Model,
        properties: dict[str, Any],
        context: RemoteContext | None,
        device_name: str,
        core: hs.Core,
    ) -> MiniCompiledModel:
        if any(n.type_name == "Sigmoid" for n in model.get_ops()):
            raise UnsupportedOperationError(f"{device_name} has no Sigmoid kernel")
        return MiniDevice.compile_model(self, model, properties, context, device_name, core)


class _SilentCompiled(MiniCompiledModel):
    def run(self, inputs: Sequence[Any], context: RunContext) -> list[Any]:
        silent = RunContext(False)
        silent.cancelled = context.cancelled
        return super().run(inputs, silent)


class IgnoresPerfCount(MiniDevice):
    """Accepts PERF_COUNT but never records profiling rows: caught by the profiling check."""

    compiled_class = _SilentCompiled


class AcceptsUnknownKeys(MiniDevice):
    """Silently ignores property keys it does not know: caught by the unknown-keys check."""

    def _known(self, properties: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in properties.items() if k in self.config.specs}

    def resolve(self, properties: dict[str, Any]) -> dict[str, Any]:
        return self.config.resolve(self._known(properties))

    @hookimpl
    def set_property(self, properties: dict[str, Any], device_name: str, core: hs.Core) -> None:
        self.config.set(self._known(properties))


class _CorruptingCompiled(MiniCompiledModel):
    def export_model(self) -> bytes:
        model = self._model.clone()
        for node in model.get_ops():
            if node.type_name == "Constant" and node.attrs["value"].dtype.kind == "f":
                node.attrs["value"] = node.attrs["value"] * 2
        return json.dumps({"model": model_to_bytes(model).hex(), "config": self._config}).encode()


class CorruptsBlobs(MiniDevice):
    """Exports wrong weights in an unchecked format and imports whatever it is given: caught by the
    export/import and corrupted-blob checks."""

    compiled_class = _CorruptingCompiled

    @hookimpl
    def import_model(
        self, blob: bytes, properties: dict[str, Any], context: RemoteContext | None, device_name: str, core: hs.Core
    ) -> MiniCompiledModel:
        data = json.loads(blob)
        model = model_from_bytes(bytes.fromhex(data["model"]), source="blob")
        config = self.resolve({k: v for k, v in data["config"].items() if k != "DEVICE_ID"} | properties)
        return self.compiled_class(model, f"{device_name}.0", config)


class _CrashingCompiled(MiniCompiledModel):
    def compute(self, node: hs.Node, args: list[np.ndarray]) -> list[np.ndarray]:
        if node.type_name == "Sigmoid":
            os._exit(1)
        return super().compute(node, args)


class CrashesOnSigmoid(MiniDevice):
    """Ends the interpreter (``os._exit(1)``) when it runs a Sigmoid: that check fails, the run goes on."""

    compiled_class = _CrashingCompiled


class _HangingCompiled(MiniCompiledModel):
    def compute(self, node: hs.Node, args: list[np.ndarray]) -> list[np.ndarray]:
        if node.type_name == "Exp":
            time.sleep(3600)
        return super().compute(node, args)


class HangsOnExp(MiniDevice):
    """Never finishes an Exp: that check fails on its time limit, the run goes on."""

    compiled_class = _HangingCompiled


class _WrongVectorMatMulCompiled(MiniCompiledModel):
    def compute(self, node: hs.Node, args: list[np.ndarray]) -> list[np.ndarray]:
        if node.type_name == "MatMul" and node.attrs["transpose_a"] and args[1].ndim == 1:
            a = np.swapaxes(args[0], -1, -2)
            return [np.flip(a, -2) @ args[1]]  # the rows of A^T in the wrong order
        return super().compute(node, args)


class WrongVectorMatMul(MiniDevice):
    """MatMul with ``transpose_a`` and a 1-D B gives its rows reversed: a rare combination the ci profile's
    drawn cases missed, caught by MatMul's key case."""

    compiled_class = _WrongVectorMatMulCompiled
