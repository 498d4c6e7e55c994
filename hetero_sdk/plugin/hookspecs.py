# mypy: disable-error-code="empty-body"
# (hookspecs are signatures with docstrings; pluggy never calls their bodies)
"""The device plugin contract: every hook a device plugin implements, mirroring ``ov::IPlugin``.

A device plugin is an object whose methods are marked with :data:`hookimpl` and named as the hooks
below. Each method takes every argument of its hook, by the hook's names
(``def compile_model(self, model, properties, context, device_name, core)``): registration rejects one
that leaves an argument out with a :class:`~hetero_sdk.errors.PluginValidationError` naming the hook
and the argument, and :class:`hetero_sdk.plugin.DevicePlugin` states the signatures for mypy. (pluggy
itself would accept any subset; hetero-sdk is before 1.0 and made this rule without a deprecation
period.) Hook wrappers (cross-cutting plugins) may still take any subset.

**Dispatch: one PluginManager per device.** Each registered device gets its own
``pluggy.PluginManager`` holding its plugin and any cross-cutting wrappers (tracing, logging,
caching). A call for ``TEMPLATE`` therefore reaches exactly TEMPLATE's implementation, never
another device's, and every hook is ``firstresult``: the device plugin's answer is the answer.
The alternative, a single manager with a ``device`` argument, would make every plugin filter calls
meant for others and let one broken plugin fail calls for every device; per-device managers keep a
broken plugin's failures inside its own device.

Every hook receives, when it asks for them, ``device_name`` (the name the plugin is registered
under, e.g. ``TEMPLATE``: a plugin class can serve several names) and ``core`` (the calling
:class:`~hetero_sdk.Core`, which meta-plugins such as HETERO use to compile submodels).

Required hooks: :func:`get_property`, :func:`set_property`, :func:`compile_model`,
:func:`query_model`. Optional: :func:`import_model`, :func:`create_context`,
:func:`get_default_context`, :func:`get_version`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pluggy

if TYPE_CHECKING:
    from hetero_sdk.core import Core
    from hetero_sdk.graph.model import Model
    from hetero_sdk.runtime.compiled_model import CompiledModel
    from hetero_sdk.runtime.context import RemoteContext
    from hetero_sdk.runtime.version import Version

__all__ = ["PROJECT_NAME", "REQUIRED_HOOKS", "hookimpl", "hookspec"]

PROJECT_NAME = "hetero_sdk"
hookspec = pluggy.HookspecMarker(PROJECT_NAME)
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)
"""Marks a plugin method as the implementation of the hook of the same name."""

REQUIRED_HOOKS = ("get_property", "set_property", "compile_model", "query_model")


# -------------------------------------------------------------------------------------------------
# Identity and properties
# -------------------------------------------------------------------------------------------------


@hookspec(firstresult=True)
def get_version(device_name: str) -> Version | None:
    """Describe the plugin's build: ``core.get_versions(device)`` returns it.

    Stops at the first non-None result.

    :param device_name: the name the plugin is registered under.
    :returns: a :class:`~hetero_sdk.plugin.Version` with a build number and description. ``None``
        (not implemented) makes the Core report the plugin's distribution version.
    """


@hookspec(firstresult=True)
def get_property(name: str, arguments: dict[str, Any], device_name: str, core: Core) -> Any:
    """Read one property of the device (``ov::IPlugin::get_property``).

    Must answer at least ``SUPPORTED_PROPERTIES`` (a dict of key to ``"RO"``/``"RW"``/``"WO"``),
    ``AVAILABLE_DEVICES`` (the device ids; empty for a device without hardware of its own),
    ``FULL_DEVICE_NAME``, ``DEVICE_ARCHITECTURE``, ``OPTIMIZATION_CAPABILITIES`` (``EXPORT_IMPORT``
    when :func:`import_model` is implemented) and ``RANGE_FOR_ASYNC_INFER_REQUESTS``.
    Stops at the first non-None result.

    :class:`~hetero_sdk.plugin.DeviceConfig` does the bookkeeping.

    :param name: the property key (an OpenVINO key string).
    :param arguments: extra arguments; ``DEVICE_ID`` selects a device id.
    :returns: the value (never None).
    :raises UnsupportedPropertyError: for an unknown or write-only key.
    """


@hookspec(firstresult=True)
def set_property(properties: dict[str, Any], device_name: str, core: Core) -> None:
    """Store property values used by later compiles (``ov::IPlugin::set_property``).

    Validate every entry before storing any: a wrong entry must leave all values unchanged.
    ``DEVICE_ID`` in ``properties`` selects the device id the values apply to; ``DEVICE_ID`` alone
    makes that id the default one (``core.set_property("DEV", {"DEVICE_ID": "1"})``).

    Returns None.

    :param properties: key to value.
    :raises UnsupportedPropertyError: for an unknown or read-only key.
    :raises PropertyValueError: for a wrong value, listing the allowed ones.
    """


# -------------------------------------------------------------------------------------------------
# Compiling and querying models
# -------------------------------------------------------------------------------------------------


@hookspec(firstresult=True)
def compile_model(
    model: Model, properties: dict[str, Any], context: RemoteContext | None, device_name: str, core: Core
) -> CompiledModel:
    """Compile ``model`` for the device (``ov::IPlugin::compile_model``).

    Work on a clone: the caller's model must not change. The configuration is the plugin's stored
    values overridden by ``properties`` (which must not change the stored values); unknown keys
    are rejected as in :func:`set_property`.

    Stops at the first non-None result.

    :param model: the model to compile.
    :param properties: this compile's configuration (``DEVICE_ID`` selects a device id).
    :param context: a remote context of this device to compile into, or None for the default.
    :returns: a :class:`~hetero_sdk.plugin.CompiledModel`.
    :raises CompilationError: when the device cannot compile the model (name the device).
    :raises UnsupportedOperationError: naming the ops the device cannot run.
    """


@hookspec(firstresult=True)
def query_model(model: Model, properties: dict[str, Any], device_name: str, core: Core) -> dict[str, str]:
    """Report which ops of ``model`` the device runs (``ov::IPlugin::query_model``).

    HETERO asks every device this before splitting a model (by default each op goes to the first
    device of the user's priority list that claims it), so claim exactly the ops your
    ``compile_model`` can compile and run, and no others. Judge the model as your device would see
    it after its own graph rewrites (op fusions, constant folding): an op that a rewrite fuses into
    something the device runs is claimed, one that it turns into something the device cannot run is
    not. Then answer with the names of the ops of the model you were given, not of your rewritten copy.

    The easy way: declare what the device runs in a :class:`hetero_sdk.plugin.SupportTable` (op
    types, element types, attribute limits) and return
    ``table.query(model, transform).claims(device_name)``, where ``transform`` is the function your
    ``compile_model`` rewrites the graph with (or None).
    It works on a copy, maps the answer back to the original names through the fused-names records
    your rewrites keep, and knows why each other op is declined.
    :func:`hetero_sdk.plugin.get_supported_nodes` does the same with a plain ``is_supported(node)``
    predicate.

    Parameters, Constants and Results are claimed together with the ops they feed or are fed by (the
    table and ``get_supported_nodes`` do this for you).

    Stops at the first non-None result.

    :param model: the model to examine; must not be changed.
    :param properties: configuration as for :func:`compile_model`.
    :returns: op friendly name to the device name that runs it (``device_name`` with its id).
    """


@hookspec(firstresult=True)
def import_model(
    blob: bytes, properties: dict[str, Any], context: RemoteContext | None, device_name: str, core: Core
) -> CompiledModel:
    """Rebuild a compiled model from :meth:`CompiledModel.export_model` bytes (``import_model``).

    Parsing must never execute code from the blob (no pickle, no eval).

    Stops at the first non-None result. Not implementing it means the device cannot import.

    :param blob: the exported bytes.
    :param properties: configuration as for :func:`compile_model`.
    :param context: a remote context, or None.
    :returns: the compiled model.
    :raises BlobFormatError: for a truncated, corrupted, foreign or newer-version blob.
    """


# -------------------------------------------------------------------------------------------------
# Remote contexts
# -------------------------------------------------------------------------------------------------


@hookspec(firstresult=True)
def create_context(properties: dict[str, Any], device_name: str, core: Core) -> RemoteContext:
    """Create a remote context: a handle on device memory (``ov::IPlugin::create_context``).

    Stops at the first non-None result.

    :param properties: context parameters (``DEVICE_ID`` selects the device).
    :returns: a :class:`~hetero_sdk.plugin.RemoteContext`.
    """


@hookspec(firstresult=True)
def get_default_context(properties: dict[str, Any], device_name: str, core: Core) -> RemoteContext:
    """Return the device's default remote context (``ov::IPlugin::get_default_context``).

    Stops at the first non-None result.

    :param properties: context parameters (``DEVICE_ID`` selects the device).
    :returns: a :class:`~hetero_sdk.plugin.RemoteContext`.
    """
