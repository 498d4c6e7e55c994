"""One registered device: its pluggy manager, contract validation, and calls to its hooks."""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING, Any

import pluggy

from hetero_sdk.errors import PluginValidationError, UnsupportedOperationError, did_you_mean
from hetero_sdk.plugin import hookspecs
from hetero_sdk.plugin.hookspecs import PROJECT_NAME, REQUIRED_HOOKS

if TYPE_CHECKING:
    from hetero_sdk.core import Core

__all__ = ["HOOK_NAMES", "RegisteredDevice", "instantiate"]

HOOK_NAMES = frozenset(
    name for name, value in vars(hookspecs).items() if callable(value) and hasattr(value, f"{PROJECT_NAME}_spec")
)
_IMPL_MARK = f"{PROJECT_NAME}_impl"


class RegisteredDevice:
    """A device plugin registered under ``name``, with its own ``pluggy.PluginManager``.

    :raises PluginValidationError: when the plugin breaks the contract: a method marked as a hook
        that names no hook (misspelt), a hook method without the marker, an argument the hook does
        not have, or a required hook missing. Nothing stays registered then.
    """

    def __init__(self, name: str, plugin: Any, core: Core) -> None:
        self.name = name
        self.plugin = plugin
        self._core = core
        self._pm = pluggy.PluginManager(PROJECT_NAME)
        self._pm.add_hookspecs(hookspecs)
        _check_hook_names(f"plugin for device {name!r}", plugin)
        try:
            self._pm.register(plugin, name=name)
        except pluggy.PluginValidationError as exc:
            raise PluginValidationError(f"plugin for device {name!r}: {exc}", plugin) from None
        partial = _partial_signature(self._pm, plugin)
        if partial:
            self._pm.unregister(plugin)
            raise PluginValidationError(f"plugin for device {name!r}: {partial}", plugin)
        missing = [hook for hook in REQUIRED_HOOKS if not self.has_hook(hook)]
        if missing:
            self._pm.unregister(plugin)
            raise PluginValidationError(
                f"plugin for device {name!r} does not implement the required hook(s) {', '.join(missing)}; "
                "implement them as methods marked with @hetero_sdk.plugin.hookimpl",
                plugin,
            )

    def has_hook(self, hook: str) -> bool:
        """True when the device plugin itself (not a wrapper) implements ``hook``."""
        impls = getattr(self._pm.hook, hook).get_hookimpls()
        return any(not (i.hookwrapper or i.wrapper) for i in impls)

    def add_wrapper(self, wrapper: Any) -> None:
        """Registers a cross-cutting plugin (hook wrappers) around this device's hooks.

        :raises PluginValidationError: when the wrapper breaks the contract; nothing is registered.
        """
        _check_hook_names(f"wrapper for device {self.name!r}", wrapper)
        try:
            self._pm.register(wrapper)
        except (pluggy.PluginValidationError, ValueError) as exc:
            raise PluginValidationError(f"wrapper for device {self.name!r}: {exc}", wrapper) from None

    def remove_wrapper(self, wrapper: Any) -> None:
        """Unregisters a wrapper added with :meth:`add_wrapper`."""
        if self._pm.is_registered(wrapper):
            self._pm.unregister(wrapper)

    @staticmethod
    def check_wrapper(wrapper: Any) -> None:
        """Validates a cross-cutting plugin against the hookspecs without registering it anywhere.

        :raises PluginValidationError: naming the wrapper and the hook.
        """
        _check_hook_names(f"hook wrapper {type(wrapper).__name__}", wrapper)
        pm = pluggy.PluginManager(PROJECT_NAME)
        pm.add_hookspecs(hookspecs)
        try:
            pm.register(wrapper)
        except (pluggy.PluginValidationError, ValueError) as exc:
            raise PluginValidationError(f"hook wrapper {type(wrapper).__name__}: {exc}", wrapper) from None
        plain = sorted(
            caller.name
            for caller in pm.get_hookcallers(wrapper) or ()
            for impl in caller.get_hookimpls()
            if not (impl.wrapper or impl.hookwrapper)
        )
        if plain:
            # A plain implementation would answer firstresult hooks in the device's place.
            raise PluginValidationError(
                f"hook wrapper {type(wrapper).__name__}: {', '.join(plain)} must be marked "
                "@hookimpl(wrapper=True); a cross-cutting plugin may only wrap device hooks",
                wrapper,
            )

    def call(self, hook: str, **kwargs: Any) -> Any:
        """Calls ``hook`` on this device with ``device_name`` and ``core`` added.

        :raises UnsupportedOperationError: when the device does not implement an optional hook.
        """
        if not self.has_hook(hook):
            raise UnsupportedOperationError(f"device {self.name!r} does not implement {hook}")
        return getattr(self._pm.hook, hook)(device_name=self.name, core=self._core, **kwargs)


def instantiate(obj: Any) -> Any:
    """The plugin object an entry point or ``register_plugin`` refers to: a class or factory is called."""
    if inspect.isclass(obj) or inspect.isfunction(obj):
        return obj()
    return obj


def _partial_signature(pm: pluggy.PluginManager, plugin: Any) -> str | None:
    """What a device plugin's hook implementation leaves out of its hook's arguments, or None.

    pluggy lets an implementation take any subset of the arguments; a device plugin takes all of them,
    so that its methods match :class:`hetero_sdk.plugin.DevicePlugin` and mypy checks them.
    """
    for caller in pm.get_hookcallers(plugin) or ():
        spec = caller.spec
        for impl in caller.get_hookimpls():
            if impl.plugin is not plugin or impl.wrapper or impl.hookwrapper or spec is None:
                continue
            taken = {*impl.argnames, *impl.kwargnames}
            missing = [arg for arg in spec.argnames if arg not in taken]
            if missing:
                wanted = ", ".join(("self", *spec.argnames))
                return (
                    f"hook {caller.name} leaves out the argument(s) {', '.join(missing)}; a device plugin's hook "
                    f"takes every argument of its hook: def {caller.name}({wanted})"
                )
    return None


def _check_hook_names(owner: str, plugin: Any) -> None:
    for attr in dir(plugin):
        if attr.startswith("_"):
            continue
        member = getattr(plugin, attr, None)
        if not callable(member):
            continue
        marked = hasattr(member, _IMPL_MARK)
        if marked and attr not in HOOK_NAMES:
            hint = "; " + did_you_mean(attr, HOOK_NAMES, listing="hooks")
            raise PluginValidationError(
                f"{owner}: {attr!r} is marked as a hook but no hook has that name{hint}", plugin
            )
        if not marked and attr in HOOK_NAMES:
            raise PluginValidationError(
                f"{owner}: method {attr!r} has a hook's name but is not marked; "
                "decorate it with @hetero_sdk.plugin.hookimpl",
                plugin,
            )
