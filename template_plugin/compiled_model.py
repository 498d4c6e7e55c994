"""The TEMPLATE compiled model: the transformed graph, its execution plan, export to a blob."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from concurrent.futures import Executor
from contextlib import AbstractContextManager, nullcontext
from typing import Any

from hetero_sdk import Model
from hetero_sdk.plugin import CompiledModel, RunContext, fused_names, rt_info
from template_plugin import blas
from template_plugin.arena import Arena
from template_plugin.blob import write_blob
from template_plugin.execution_plan import ExecutionPlan
from template_plugin.transformations import transform_model

__all__ = ["PEAK_MEMORY", "TemplateCompiledModel"]

PEAK_MEMORY = "TEMPLATE_PEAK_MEMORY"
"""Read-only compiled-model property: the most bytes that inputs, intermediate results and the
request's arena (buffers kept between its inferences) held at once during the last inference
(constants excluded; 0 before the first)."""


class TemplateCompiledModel(CompiledModel):
    """A model compiled for TEMPLATE: transformations applied once, then an execution plan."""

    def __init__(
        self, model: Model, device_name: str, config: Mapping[str, Any], executor: Executor | None = None
    ) -> None:
        super().__init__(model.clone(), device_name, config, executor)
        self._runtime = model.clone()
        if not config.get("TEMPLATE_DISABLE_TRANSFORMATIONS", False):
            transform_model(self._runtime)
        self._plan = ExecutionPlan(self._runtime)
        self._threads = int(config.get("INFERENCE_NUM_THREADS", 0))
        if self._threads > 0 and all(pool["num_threads"] <= self._threads for pool in blas.pools()):
            self._threads = 0  # already within the limit: no per-call switching

    def run(self, inputs: Sequence[Any], context: RunContext) -> list[Any]:
        """Runs the execution plan, with BLAS limited to ``INFERENCE_NUM_THREADS`` threads when set
        (through threadpoolctl); records per-op times when profiling."""
        limit: AbstractContextManager[Any] = (
            blas.threadpools().limit(limits=self._threads, user_api="blas") if self._threads else nullcontext()
        )
        with limit:
            outputs = self._plan.run(inputs, context)
        self.keep_profile(context.profile)
        return outputs

    def create_request_state(self) -> Arena:
        """The request's arena: the buffers its inferences reuse."""
        return Arena()

    def get_property(self, name: str) -> Any:
        """The compiled model's properties, with :data:`PEAK_MEMORY` (``TEMPLATE_PEAK_MEMORY``) added."""
        if name == PEAK_MEMORY:
            return self._plan.peak_bytes
        supported = super().get_property(name)
        if name == "SUPPORTED_PROPERTIES":
            return {**supported, PEAK_MEMORY: "RO"}
        return supported

    @property
    def execution_devices(self) -> list[str]:
        """``EXECUTION_DEVICES``: the device with its id, under the name the plugin is registered as
        (``TEMPLATE.1``)."""
        return [self.device_name]

    def get_runtime_model(self) -> Model:
        """The transformed model; each op's rt_info names the original ops it runs
        (``originalLayersNames``), its kernel (``layerType``) and, after a profiled run, ``execTimeMcs``."""
        runtime = self._runtime.clone()
        for node in runtime.get_ops():
            info = node.get_rt_info()
            info[rt_info.ORIGINAL_NAMES] = ",".join(sorted(fused_names(node)))
            info[rt_info.LAYER_TYPE] = node.type_name
        return self.with_profiled_times(runtime)

    def export_model(self) -> bytes:
        """A checksummed blob: the original model (native format) and the compile configuration."""
        return write_blob(self.model, self.config)
