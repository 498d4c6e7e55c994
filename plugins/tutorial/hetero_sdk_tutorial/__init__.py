"""TUTORIAL: the smallest real hetero-sdk device, the code that the plugin tutorial walks through.

It computes f32 elementwise ops, activations and MatMul with the SDK's numpy reference kernels, one op
at a time. Under ``HETERO:TUTORIAL,TEMPLATE`` every other op falls back to TEMPLATE.
"""

# --8<-- [start:imports]
from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from hetero_sdk import Core, Model, Type
from hetero_sdk import properties as props
from hetero_sdk.plugin import (
    CompiledModel,
    ConfiguredDevice,
    DeviceConfig,
    DevicePlugin,
    RemoteContext,
    RunContext,
    SupportTable,
    Version,
    VersionReporter,
    hookimpl,
    read_only,
    run_node,
    standard,
)

# --8<-- [end:imports]

__all__ = ["SUPPORT", "SUPPORTED_OPS", "TutorialCompiledModel", "TutorialPlugin"]

__version__ = "0.1.0"

# --8<-- [start:ops]
SUPPORTED_OPS = frozenset(
    {"Add", "Subtract", "Multiply", "Maximum", "Minimum", "Relu", "Sigmoid", "Tanh", "Abs", "Negative", "MatMul"}
)
"""The op types TUTORIAL computes, on f32 only."""

SUPPORT = SupportTable("TUTORIAL").add(SUPPORTED_OPS, element_types={Type.f32})
"""What TUTORIAL runs: answers ``query_model`` and checks ``compile_model``, with a reason per declined op."""


# --8<-- [end:ops]


# --8<-- [start:config]
def make_config() -> DeviceConfig:
    """TUTORIAL's property table: three standard settings and the read-only identity every device answers."""
    return DeviceConfig(
        [
            standard.device_id(),
            standard.perf_count(),
            standard.performance_hint(),
            standard.execution_mode_hint(),
            read_only(props.available_devices, ["0"]),
            read_only(props.device.full_name, "Tutorial device (numpy reference kernels)"),
            read_only(props.device.architecture, "numpy"),
            read_only(props.device.capabilities, ["FP32"]),
            read_only(props.range_for_async_infer_requests, (1, 4, 1)),
        ]
    )


# --8<-- [end:config]


# --8<-- [start:compiled]
class TutorialCompiledModel(CompiledModel):
    """A model compiled for TUTORIAL: its ops in topological order, run one kernel at a time."""

    def __init__(self, model: Model, device_name: str, config: dict[str, Any]) -> None:
        model = model.clone()  # the caller's model must not change
        super().__init__(model, device_name, config)
        self._ops = model.get_ordered_ops()
        self._parameters = model.get_parameters()
        self._results = model.get_results()

    def run(self, inputs: Sequence[Any], context: RunContext) -> list[Any]:
        """Computes every op with its reference kernel; one profiling row per compute op when profiling."""
        values: dict[int, list[np.ndarray]] = {id(p): [x] for p, x in zip(self._parameters, inputs)}
        for node in self._ops:
            if node.get_type_name() == "Parameter":
                continue
            context.check_cancelled()
            args = [values[id(source.node)][source.index] for source in node.input_values()]
            if node.op.structural:
                values[id(node)] = run_node(node, args)
                continue
            with context.timed(node.friendly_name, node.get_type_name(), "numpy"):
                values[id(node)] = run_node(node, args)
        self.keep_profile(context.profile)  # each op's time goes into the runtime model's rt_info
        return [values[id(result)][0] for result in self._results]


# --8<-- [end:compiled]


# --8<-- [start:plugin]
class TutorialPlugin(ConfiguredDevice):
    """The TUTORIAL device: ``get_property`` and ``set_property`` from :class:`ConfiguredDevice`, the two
    other required hooks and ``get_version``."""

    def __init__(self) -> None:
        self.config = make_config()

    @hookimpl
    def get_version(self, device_name: str) -> Version:
        return Version(__version__, "TUTORIAL device (numpy reference kernels)")

    @hookimpl
    def query_model(self, model: Model, properties: dict[str, Any], device_name: str, core: Core) -> dict[str, str]:
        self.config.resolve(properties)  # rejects unknown keys and wrong values, as compile_model does
        return SUPPORT.query(model).claims(device_name)

    @hookimpl
    def compile_model(
        self, model: Model, properties: dict[str, Any], context: RemoteContext | None, device_name: str, core: Core
    ) -> TutorialCompiledModel:
        config = self.config.resolve(properties)
        SUPPORT.check(model, device_name)  # raises UnsupportedOperationError naming each declined op and why
        return TutorialCompiledModel(model, device_name, config)


# --8<-- [end:plugin]


if TYPE_CHECKING:  # mypy checks the hook methods against the contract's Protocols

    def _typed(plugin: TutorialPlugin) -> tuple[DevicePlugin, VersionReporter]:
        return plugin, plugin
