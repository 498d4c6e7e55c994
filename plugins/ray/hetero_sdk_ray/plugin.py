"""The RAY device plugin: each device id is a Ray actor holding a device plugin of its host."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

import ray
from hetero_sdk import Core, Model
from hetero_sdk import properties as props
from hetero_sdk.errors import CompilationError, DeviceUnavailableError, HeteroSDKError
from hetero_sdk.plugin import (
    ConfiguredDevice,
    ContextProvider,
    DevicePlugin,
    HostContext,
    ModelImporter,
    RemoteContext,
    Version,
    VersionReporter,
    format_device_name,
    hookimpl,
    model_from_bytes,
    model_to_bytes,
    parse_device_name,
)

from hetero_sdk_ray.compiled_model import RayCompiledModel, read_blob
from hetero_sdk_ray.config import (
    FORWARDED,
    LOCAL_NUM_CPUS,
    NUM_ACTORS,
    RAY_ADDRESS,
    TARGET_DEVICE,
    TIMEOUT,
    make_config,
    placement_of,
)
from hetero_sdk_ray.link import ActorLink, ActorLost, connect

PLUGIN_VERSION = "0.1.0"
"""The version of hetero-sdk-ray (``hetero_sdk_ray.__version__``)."""

__all__ = ["PLUGIN_VERSION", "RayPlugin"]


class RayPlugin(ConfiguredDevice):
    """The RAY device: ``RAY.0`` ... ``RAY.<RAY_NUM_ACTORS - 1>``, one Ray actor each.

    Constructing it starts nothing: Ray is joined (``RAY_ADDRESS``) or started locally, and an id's
    actor started, on the first call that needs them. A dead actor is replaced at the next compile.
    """

    def __init__(self) -> None:
        self.config = make_config(self._ids, self._memory)
        self._links: dict[str, ActorLink] = {}
        self._lock = threading.Lock()

    @hookimpl
    def get_version(self, device_name: str) -> Version:
        return Version(PLUGIN_VERSION, f"RAY remote device (ray {ray.__version__})")

    @hookimpl
    def compile_model(
        self, model: Model, properties: dict[str, Any], context: RemoteContext | None, device_name: str, core: Core
    ) -> RayCompiledModel:
        config = self.config.resolve(properties)
        payload = model_to_bytes(model)
        info, link = self._on_actor(config, device_name, "compile", payload, default=CompilationError)
        return RayCompiledModel(model.clone(), link.device_name, config, link, info)

    @hookimpl
    def import_model(
        self, blob: bytes, properties: dict[str, Any], context: RemoteContext | None, device_name: str, core: Core
    ) -> RayCompiledModel:
        header, inner = read_blob(blob)
        config = self.config.resolve({TARGET_DEVICE: header[TARGET_DEVICE], **properties})
        # the device kind the blob was compiled for (its id on the exporting host may not exist here),
        # unless this import names a target itself
        target = properties.get(TARGET_DEVICE) or parse_device_name(header["target"]).name
        info, link = self._on_actor(config, device_name, "import_blob", inner, default=CompilationError, target=target)
        model = model_from_bytes(info["model"], source=f"{link.device_name} imported model")
        return RayCompiledModel(model, link.device_name, config, link, info)

    @hookimpl
    def query_model(self, model: Model, properties: dict[str, Any], device_name: str, core: Core) -> dict[str, str]:
        config = self.config.resolve(properties)
        ops, link = self._on_actor(config, device_name, "query", model_to_bytes(model), default=CompilationError)
        name = link.device_name if props.device.id in properties else device_name
        return {op: name for op in ops}

    @hookimpl
    def create_context(self, properties: dict[str, Any], device_name: str, core: Core) -> RemoteContext:
        return HostContext(
            format_device_name(device_name, self.config.resolve(properties)[props.device.id]), properties
        )

    @hookimpl
    def get_default_context(self, properties: dict[str, Any], device_name: str, core: Core) -> RemoteContext:
        return HostContext(format_device_name(device_name, self.config.resolve(properties)[props.device.id]))

    # -- actors ---------------------------------------------------------------------------------------

    def _on_actor(
        self,
        config: dict[str, Any],
        device_name: str,
        method: str,
        payload: bytes,
        *,
        default: type,
        target: str | None = None,
    ) -> tuple[Any, ActorLink]:
        """Calls ``method`` on the id's actor; a dead actor is replaced once and the call retried."""
        forwarded = {k: config[k] for k in FORWARDED if k in config}
        chosen = config[TARGET_DEVICE] if target is None else target
        for attempt in (1, 2):
            link = self._link(config, device_name)
            try:
                return link.call(method, payload, chosen, forwarded, timeout_s=config[TIMEOUT], default=default), link
            except ActorLost as exc:
                if attempt == 2:
                    raise default(f"{link.device_name}: {exc}") from None
        raise AssertionError("unreachable")

    def _link(self, config: dict[str, Any], device_name: str) -> ActorLink:
        """The live actor of the configured id and placement, started when there is none."""
        connect(str(config[RAY_ADDRESS]), int(config[LOCAL_NUM_CPUS]))
        name = format_device_name(device_name, config[props.device.id])
        placement = placement_of(config)
        with self._lock:
            link = self._links.get(name)
            if link is None or link.dead is not None or link.placement != placement:
                try:
                    link = ActorLink(name, placement, float(config[TIMEOUT]))
                except ActorLost as exc:
                    raise DeviceUnavailableError(str(exc)) from None
                self._links[name] = link
            return link

    def _ids(self) -> list[str]:
        return [str(i) for i in range(int(self.config.get(NUM_ACTORS)))]

    def _memory(self, device_id: str | None) -> int:
        config = self.config.resolve({props.device.id: device_id} if device_id is not None else {})
        link = self._link(config, "RAY")
        try:
            return int(link.call("memory", config[TARGET_DEVICE], timeout_s=config[TIMEOUT]))
        except (ActorLost, HeteroSDKError) as exc:
            raise DeviceUnavailableError(f"{link.device_name} cannot report DEVICE_TOTAL_MEM_SIZE: {exc}") from None


if TYPE_CHECKING:  # mypy checks the hook methods against the contract's Protocols

    def _typed(plugin: RayPlugin) -> tuple[DevicePlugin, ModelImporter, ContextProvider, VersionReporter]:
        return plugin, plugin, plugin, plugin
