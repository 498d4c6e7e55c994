"""The TEMPLATE device plugin: the optimised CPU reference device, computing with numpy kernels
(:mod:`template_plugin.kernels`); ``plugins/tutorial`` is the device to copy."""

from __future__ import annotations

import os
import threading
from concurrent.futures import Executor, ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from hetero_sdk import Core, Model, __version__
from hetero_sdk import properties as props
from hetero_sdk.errors import BlobFormatError
from hetero_sdk.plugin import (
    ConfiguredDevice,
    ContextProvider,
    DevicePlugin,
    HostContext,
    ModelImporter,
    RemoteContext,
    SupportTable,
    Version,
    VersionReporter,
    hookimpl,
)
from template_plugin.blob import read_blob
from template_plugin.compiled_model import TemplateCompiledModel
from template_plugin.config import make_config
from template_plugin.kernels import kernel_types
from template_plugin.transformations import transform_model

__all__ = ["TemplatePlugin"]


class TemplatePlugin(ConfiguredDevice):
    """The TEMPLATE reference device.

    :param num_devices: how many device ids it shows (``TEMPLATE.0`` ...); by default the
        ``HETERO_SDK_TEMPLATE_DEVICES`` environment variable, else 1. Several ids let HETERO split a
        model across two TEMPLATE devices on one machine.
    """

    def __init__(self, num_devices: int | None = None) -> None:
        count = num_devices if num_devices is not None else int(os.environ.get("HETERO_SDK_TEMPLATE_DEVICES", "1"))
        if count < 1:
            raise ValueError(f"TEMPLATE needs at least one device, got num_devices={count}")
        self._ids = [str(i) for i in range(count)]
        self.config = make_config(lambda: list(self._ids))
        self._exclusive_executor: Executor | None = None
        self._lock = threading.Lock()

    @hookimpl
    def get_version(self, device_name: str) -> Version:
        return Version(__version__, "TEMPLATE reference device (numpy kernels)")

    @hookimpl
    def compile_model(
        self, model: Model, properties: dict[str, Any], context: RemoteContext | None, device_name: str, core: Core
    ) -> TemplateCompiledModel:
        config = self.config.resolve(properties)
        return TemplateCompiledModel(
            model, self.device_with_id(device_name, config), config, self._executor_for(config)
        )

    @hookimpl
    def query_model(self, model: Model, properties: dict[str, Any], device_name: str, core: Core) -> dict[str, str]:
        config = self.config.resolve(properties)
        transform = (lambda m: None) if config["TEMPLATE_DISABLE_TRANSFORMATIONS"] else transform_model
        return self.support_table().query(model, transform).claims(self.claiming_name(device_name, properties, config))

    @hookimpl
    def import_model(
        self, blob: bytes, properties: dict[str, Any], context: RemoteContext | None, device_name: str, core: Core
    ) -> TemplateCompiledModel:
        model, stored = read_blob(blob)
        config = self.config.resolve({**self.config.from_blob(stored, "TEMPLATE blob frame 'config'"), **properties})
        device, executor = self.device_with_id(device_name, config), self._executor_for(config)
        try:
            return TemplateCompiledModel(model, device, config, executor)
        except Exception as exc:  # the frames parse, and yet the model does not compile: the blob is crafted
            raise BlobFormatError(
                f"TEMPLATE blob frame 'model' does not compile on {device_name}: {type(exc).__name__}: {exc}; "
                "export the model again"
            ) from exc

    @hookimpl
    def create_context(self, properties: dict[str, Any], device_name: str, core: Core) -> RemoteContext:
        return HostContext(self.device_with_id(device_name, self.config.resolve(properties)), properties)

    @hookimpl
    def get_default_context(self, properties: dict[str, Any], device_name: str, core: Core) -> RemoteContext:
        return HostContext(self.device_with_id(device_name, self.config.resolve(properties)))

    def make_support_table(self) -> SupportTable:
        """What TEMPLATE runs: every op type of the kernel registry, on every element type its kernel takes."""
        return SupportTable("TEMPLATE").add(kernel_types())

    def _executor_for(self, config: dict[str, Any]) -> Executor | None:
        if not config[props.exclusive_async_requests]:
            return None  # the compiled model's own pool of NUM_STREAMS threads
        with self._lock:
            if self._exclusive_executor is None:
                self._exclusive_executor = ThreadPoolExecutor(1, thread_name_prefix="TEMPLATE-exclusive")
            return self._exclusive_executor


if TYPE_CHECKING:  # mypy checks the hook methods against the contract's Protocols

    def _typed(plugin: TemplatePlugin) -> tuple[DevicePlugin, ModelImporter, ContextProvider, VersionReporter]:
        return plugin, plugin, plugin, plugin
