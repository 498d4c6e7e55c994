"""The TEMPLATE device plugin: the optimised CPU reference device, computing with numpy kernels
(:mod:`template_plugin.kernels`); ``plugins/tutorial`` is the device to copy."""

from __future__ import annotations

import os
import threading
from concurrent.futures import Executor, ThreadPoolExecutor
from typing import Any

from hetero_sdk import Model, __version__
from hetero_sdk import properties as props
from hetero_sdk.device_name import format_device_name
from hetero_sdk.errors import BlobFormatError
from hetero_sdk.extensions import generation as extension_generation
from hetero_sdk.plugin import (
    ConfiguredDevice,
    HostContext,
    RemoteContext,
    SupportTable,
    Version,
    hookimpl,
)
from template_plugin.blob import read_blob
from template_plugin.compiled_model import TemplateCompiledModel
from template_plugin.config import make_config
from template_plugin.kernels import kernel_types
from template_plugin.transformations import transform_model

__all__ = ["TemplatePlugin", "support_table"]


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
    def get_version(self) -> Version:
        return Version(__version__, "TEMPLATE reference device (numpy kernels)")

    @hookimpl
    def compile_model(self, model: Model, properties: dict[str, Any], device_name: str) -> TemplateCompiledModel:
        config = self.config.resolve(properties)
        return TemplateCompiledModel(model, self._device(device_name, config), config, self._executor_for(config))

    @hookimpl
    def query_model(self, model: Model, properties: dict[str, Any], device_name: str) -> dict[str, str]:
        config = self.config.resolve(properties)
        transform = (lambda m: None) if config["TEMPLATE_DISABLE_TRANSFORMATIONS"] else transform_model
        name = self._device(device_name, config) if props.device.id in properties else device_name
        return support_table().query(model, transform).claims(name)

    @hookimpl
    def import_model(self, blob: bytes, properties: dict[str, Any], device_name: str) -> TemplateCompiledModel:
        model, stored = read_blob(blob)
        config = self.config.resolve({**self.config.from_blob(stored, "TEMPLATE blob frame 'config'"), **properties})
        device, executor = self._device(device_name, config), self._executor_for(config)
        try:
            return TemplateCompiledModel(model, device, config, executor)
        except Exception as exc:  # the frames parse, and yet the model does not compile: the blob is crafted
            raise BlobFormatError(
                f"TEMPLATE blob frame 'model' does not compile on {device_name}: {type(exc).__name__}: {exc}; "
                "export the model again"
            ) from exc

    @hookimpl
    def create_context(self, properties: dict[str, Any], device_name: str) -> RemoteContext:
        return HostContext(self._device(device_name, self.config.resolve(properties)), properties)

    @hookimpl
    def get_default_context(self, properties: dict[str, Any], device_name: str) -> RemoteContext:
        return HostContext(self._device(device_name, self.config.resolve(properties)))

    def _device(self, device_name: str, config: dict[str, Any]) -> str:
        return format_device_name(device_name, config[props.device.id])

    def _executor_for(self, config: dict[str, Any]) -> Executor | None:
        if not config[props.exclusive_async_requests]:
            return None  # the compiled model's own pool of NUM_STREAMS threads
        with self._lock:
            if self._exclusive_executor is None:
                self._exclusive_executor = ThreadPoolExecutor(1, thread_name_prefix="TEMPLATE-exclusive")
            return self._exclusive_executor


_table: SupportTable | None = None
_table_generation = -1


def support_table() -> SupportTable:
    """What TEMPLATE runs: every op type of the kernel registry, on every element type its kernel takes."""
    global _table, _table_generation
    if _table is None or _table_generation != extension_generation():  # extensions add ops
        _table_generation = extension_generation()
        _table = SupportTable("TEMPLATE").add(kernel_types())
    return _table
