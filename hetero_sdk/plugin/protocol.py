"""The hook signatures as typing Protocols: what mypy checks a device plugin class against.

pluggy checks a plugin when it is registered (:mod:`hetero_sdk.plugin.hookspecs` is the contract);
these Protocols say the same for mypy, before anything runs. A plugin module states it once::

    if TYPE_CHECKING:
        _: DevicePlugin = MyPlugin()

and mypy reports a hook method whose arguments or return type differ from the hook's. The optional
hooks have Protocols of their own (:class:`ModelImporter`, :class:`ContextProvider`,
:class:`VersionReporter`), for a plugin that implements them. ``tests/plugin/test_protocol.py`` holds
these signatures equal to the hookspecs'.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from hetero_sdk.core import Core
    from hetero_sdk.graph.model import Model
    from hetero_sdk.runtime.compiled_model import CompiledModel
    from hetero_sdk.runtime.context import RemoteContext
    from hetero_sdk.runtime.version import Version

__all__ = ["ContextProvider", "DevicePlugin", "ModelImporter", "VersionReporter"]


class DevicePlugin(Protocol):
    """A device plugin: the four required hooks (each also marked with ``@hookimpl``)."""

    def get_property(self, name: str, arguments: dict[str, Any], device_name: str, core: Core) -> Any:
        """:func:`hetero_sdk.plugin.hookspecs.get_property`."""
        ...

    def set_property(self, properties: dict[str, Any], device_name: str, core: Core) -> None:
        """:func:`hetero_sdk.plugin.hookspecs.set_property`."""
        ...

    def compile_model(
        self, model: Model, properties: dict[str, Any], context: RemoteContext | None, device_name: str, core: Core
    ) -> CompiledModel:
        """:func:`hetero_sdk.plugin.hookspecs.compile_model`."""
        ...

    def query_model(self, model: Model, properties: dict[str, Any], device_name: str, core: Core) -> dict[str, str]:
        """:func:`hetero_sdk.plugin.hookspecs.query_model`."""
        ...


class ModelImporter(Protocol):
    """A device that imports exported compiled models (the optional ``import_model`` hook)."""

    def import_model(
        self, blob: bytes, properties: dict[str, Any], context: RemoteContext | None, device_name: str, core: Core
    ) -> CompiledModel:
        """:func:`hetero_sdk.plugin.hookspecs.import_model`."""
        ...


class ContextProvider(Protocol):
    """A device with remote contexts (the optional ``create_context`` and ``get_default_context`` hooks)."""

    def create_context(self, properties: dict[str, Any], device_name: str, core: Core) -> RemoteContext:
        """:func:`hetero_sdk.plugin.hookspecs.create_context`."""
        ...

    def get_default_context(self, properties: dict[str, Any], device_name: str, core: Core) -> RemoteContext:
        """:func:`hetero_sdk.plugin.hookspecs.get_default_context`."""
        ...


class VersionReporter(Protocol):
    """A device that describes its build (the optional ``get_version`` hook)."""

    def get_version(self, device_name: str) -> Version | None:
        """:func:`hetero_sdk.plugin.hookspecs.get_version`."""
        ...
