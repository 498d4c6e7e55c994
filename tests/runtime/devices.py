"""A test device that claims every op and compiles to a given :class:`CompiledModel` class."""

from __future__ import annotations

from typing import Any

import hetero_sdk as hs
from hetero_sdk import opset
from hetero_sdk.plugin import CompiledModel, DeviceConfig, PropertySpec, RemoteContext, as_bool, hookimpl, read_only


class WholeModelDevice:
    """Runs every op, as one ``compiled_type(model, device_name, config)``; ``PERF_COUNT`` is settable."""

    def __init__(self, compiled_type: type[CompiledModel]) -> None:
        self.compiled_type = compiled_type
        self.config = DeviceConfig(
            [PropertySpec("PERF_COUNT", default=False, convert=as_bool), read_only("AVAILABLE_DEVICES", ["0"])]
        )

    @hookimpl
    def get_property(self, name: str, arguments: dict[str, Any], device_name: str, core: hs.Core) -> Any:
        return self.config.get(name)

    @hookimpl
    def set_property(self, properties: dict[str, Any], device_name: str, core: hs.Core) -> None:
        self.config.set(properties)

    @hookimpl
    def query_model(
        self, model: hs.Model, properties: dict[str, Any], device_name: str, core: hs.Core
    ) -> dict[str, str]:
        return {n.friendly_name: device_name for n in model.get_ops()}

    @hookimpl
    def compile_model(
        self,
        model: hs.Model,
        properties: dict[str, Any],
        context: RemoteContext | None,
        device_name: str,
        core: hs.Core,
    ) -> CompiledModel:
        return self.compiled_type(model.clone(), device_name, self.config.resolve(properties))  # type: ignore[call-arg]


def compiled_relu(core: hs.Core, compiled_type: type[CompiledModel], name: str) -> Any:
    """``Relu`` of a ``[3]`` f32 input ``x`` (output ``y``), compiled on a :class:`WholeModelDevice` of
    ``compiled_type`` registered in ``core`` as ``name``."""
    core.register_plugin(WholeModelDevice(compiled_type), name)
    x = opset.parameter([3], hs.Type.f32, name="x")
    compiled = core.compile_model(hs.Model([opset.relu(x, name="y")], [x], name=name.lower()), name)
    assert isinstance(compiled, compiled_type)
    return compiled
