"""The TEMPLATE compiled model: the transformed graph, its execution plan, export to a blob."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from concurrent.futures import Executor
from typing import Any

from hetero_sdk import Model, rt_info
from hetero_sdk.plugin import CompiledModel, RunContext
from hetero_sdk.transformations import fused_names
from template_plugin.blob import write_blob
from template_plugin.execution_plan import ExecutionPlan
from template_plugin.transformations import transform_model

__all__ = ["TemplateCompiledModel"]


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
        self._last_profile: dict[str, float] = {}

    def run(self, inputs: Sequence[Any], context: RunContext) -> list[Any]:
        """Runs the execution plan; records per-op times when profiling."""
        outputs = self._plan.run(inputs, context)
        if context.profile is not None:
            self._last_profile = {row.node_name: row.real_time.total_seconds() * 1e6 for row in context.profile}
        return outputs

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
            if node.friendly_name in self._last_profile:
                info[rt_info.PERF_COUNTER] = self._last_profile[node.friendly_name]
        return runtime

    def export_model(self) -> bytes:
        """A checksummed blob: the original model (native format) and the compile configuration."""
        return write_blob(self.model, self.config)
