"""ORT: a hetero-sdk device that runs a (sub)model with ONNX Runtime, written against the public API only.

``compile_model`` exports the model with the public ONNX exporter and opens one
``onnxruntime.InferenceSession`` on the bytes (one intra-op thread unless ``INFERENCE_NUM_THREADS``
says otherwise); ``query_model`` claims the ops the exporter writes and ONNX Runtime loads, so that
``HETERO:ORT,TEMPLATE`` runs the rest on TEMPLATE; a profiled inference reports one row for the whole
session; an exported blob stores the ONNX bytes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hetero_sdk import Core, Model
from hetero_sdk import properties as props
from hetero_sdk.plugin import (
    ConfiguredDevice,
    DevicePlugin,
    ModelImporter,
    RemoteContext,
    Version,
    VersionReporter,
    hookimpl,
)

from hetero_sdk_ort.compiled_model import OrtCompiledModel, read_blob
from hetero_sdk_ort.config import FULL_NAME, make_config
from hetero_sdk_ort.session import onnx_bytes
from hetero_sdk_ort.support import TABLE, Prober

__all__ = ["OrtCompiledModel", "OrtPlugin"]

__version__ = "0.1.0"


class OrtPlugin(ConfiguredDevice):
    """The ORT device: ``get_property``/``set_property`` come from :class:`ConfiguredDevice`."""

    def __init__(self) -> None:
        self.config = make_config()

    @hookimpl
    def get_version(self, device_name: str) -> Version:
        return Version(__version__, f"ORT device: {FULL_NAME}")

    @hookimpl
    def query_model(self, model: Model, properties: dict[str, Any], device_name: str, core: Core) -> dict[str, str]:
        self.config.resolve(properties)  # rejects unknown keys and wrong values, as compile_model does
        return TABLE.query(model, in_context=Prober(model)).claims(device_name)

    @hookimpl
    def compile_model(
        self, model: Model, properties: dict[str, Any], context: RemoteContext | None, device_name: str, core: Core
    ) -> OrtCompiledModel:
        config = self.config.resolve(properties)
        TABLE.check(model, device_name)  # the cheap test: ONNX Runtime itself is tried once, on the whole model
        return OrtCompiledModel(model, onnx_bytes(model), device_name, config)

    @hookimpl
    def import_model(
        self, blob: bytes, properties: dict[str, Any], context: RemoteContext | None, device_name: str, core: Core
    ) -> OrtCompiledModel:
        model, model_bytes, stored = read_blob(blob)
        stored.pop(props.device.id, None)
        return OrtCompiledModel(model, model_bytes, device_name, self.config.resolve({**stored, **properties}))


if TYPE_CHECKING:  # mypy checks the hook methods against the contract's Protocols

    def _typed(plugin: OrtPlugin) -> tuple[DevicePlugin, ModelImporter, VersionReporter]:
        return plugin, plugin, plugin
