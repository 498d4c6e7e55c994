"""``Core``: finds devices, holds their settings, reads, queries, compiles and imports models."""

from __future__ import annotations

import contextlib
import functools
import inspect
import logging
import os
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, BinaryIO

from hetero_sdk.core_config import (
    agreeing_device_id,
    agreeing_priorities,
    store_in_cache,
    without_cache_dir,
)
from hetero_sdk.core_config import cache_file as cache_file_of
from hetero_sdk.core_hints import device_not_found
from hetero_sdk.device_name import DeviceName, format_device_name, parse_device_name
from hetero_sdk.errors import (
    BlobFormatError,
    CompilationError,
    DeviceNameError,
    DeviceNotFoundError,
    DeviceUnavailableError,
    HeteroSDKError,
    PluginValidationError,
    UnsupportedPropertyError,
)
from hetero_sdk.extensions import Extension, ExtensionInfo, add_extension, extension_infos
from hetero_sdk.frontend import ModelSource, read_model
from hetero_sdk.graph.model import Model
from hetero_sdk.plugin.discovery import discover, load_entry_point
from hetero_sdk.plugin.manager import RegisteredDevice, instantiate
from hetero_sdk.properties import Config, as_config
from hetero_sdk.runtime.compiled_model import CompiledModel
from hetero_sdk.runtime.context import RemoteContext
from hetero_sdk.runtime.stateful_compile import compile_stateful, import_stateful, is_stateful_blob, query_stateful
from hetero_sdk.runtime.version import SDK_VERSION, Version

__all__ = ["Core"]

_log = logging.getLogger(__name__)
_CORE_KEYS = ("CACHE_DIR",)


@dataclass
class _Slot:
    """A device known to the Core: loaded, not yet loaded (a loader), or failed (an error)."""

    loader: Callable[[], Any] | None = None
    plugin: RegisteredDevice | None = None
    error: BaseException | None = None


class Core:
    """The entry point of the SDK, like ``ov.Core``.

    :param plugins: in-process plugins to register, as ``{device_name: plugin}`` or pairs; a plugin
        is an object with hook methods, or a class or factory making one.
    :param autoload: find installed device plugins through the ``hetero_sdk.devices`` entry points.
        Each is imported and constructed on first use; one that fails is left out of
        :attr:`available_devices` and raises :class:`DeviceUnavailableError` when used.
    """

    def __init__(
        self, plugins: Mapping[str, Any] | Iterable[tuple[str, Any]] | None = None, autoload: bool = True
    ) -> None:
        self._slots: dict[str, _Slot] = {}
        self._wrappers: list[Any] = []
        self._lock = threading.RLock()
        self._cache_dir: str | None = None
        self._device_cache_dirs: dict[str, str] = {}  # CACHE_DIR set on one device; "" turns caching off
        if autoload:
            for name, ep in discover().items():
                self._slots[name] = _Slot(loader=functools.partial(load_entry_point, ep))
        items = plugins.items() if isinstance(plugins, Mapping) else (plugins or ())
        for name, plugin in items:
            self.register_plugin(plugin, name)

    # -- extensions ---------------------------------------------------------------------------------

    def add_extension(self, extension: Extension | str) -> None:
        """Registers an extension's ops, ONNX rules, device kernels and conformance recipes, as
        ``ov.Core.add_extension`` does. Op definitions are process-wide: every ``Core`` and
        ``convert_model`` see them.

        :param extension: a :class:`hetero_sdk.extensions.Extension`, or ``"package.module:attr"`` naming one.
        :raises PluginValidationError: naming the extension and the op, with the fix (see
            :func:`hetero_sdk.extensions.add_extension`); nothing is registered then.
        """
        add_extension(extension)

    @property
    def extensions(self) -> list[ExtensionInfo]:
        """Every extension, installed (loaded on first use) or added, with its ops and status."""
        return extension_infos()

    # -- devices ------------------------------------------------------------------------------------

    def register_plugin(self, plugin: Any, device_name: str) -> None:
        """Registers ``plugin`` (an object, class or factory) as ``device_name`` now.

        A class or factory whose construction fails (its hardware is absent, say) leaves the device
        registered but unavailable, as an entry-point plugin would be: it is left out of
        :attr:`available_devices` and using it raises :class:`DeviceUnavailableError`.

        :raises PluginValidationError: when the plugin breaks the hook contract; nothing is registered.
        :raises DeviceNameError: when ``device_name`` is not a plain UPPER_CASE name.
        """
        parsed = parse_device_name(device_name)
        if parsed.device_id is not None or parsed.targets:
            raise DeviceNameError(f"register a plugin under a plain name such as {parsed.name!r}, not {device_name!r}")
        try:
            slot = _Slot(plugin=self._make_device(device_name, plugin))
        except PluginValidationError:
            raise
        except Exception as exc:
            if not callable(plugin) or not (inspect.isclass(plugin) or inspect.isfunction(plugin)):
                raise
            _log.info("device %s failed to load: %s: %s", device_name, type(exc).__name__, exc)
            slot = _Slot(error=exc)
        with self._lock:
            self._slots[device_name] = slot

    def unregister_plugin(self, device_name: str) -> None:
        """Forgets a device. :raises DeviceNotFoundError: when it is not registered."""
        with self._lock:
            if self._slots.pop(device_name, None) is None:
                raise self._not_found(device_name)

    def add_hook_wrapper(self, wrapper: Any) -> None:
        """Registers a cross-cutting plugin (pluggy hook wrappers) around every device's hooks,
        those loaded later included.

        :raises PluginValidationError: when the wrapper breaks the hook contract; it is then
            registered nowhere.
        """
        with self._lock:
            loaded = [slot.plugin for slot in self._slots.values() if slot.plugin is not None]
            done: list[RegisteredDevice] = []
            try:
                RegisteredDevice.check_wrapper(wrapper)
                for device in loaded:
                    device.add_wrapper(wrapper)
                    done.append(device)
            except BaseException:
                for device in done:
                    device.remove_wrapper(wrapper)
                raise
            self._wrappers.append(wrapper)

    @property
    def registered_devices(self) -> list[str]:
        """Every registered device name, loaded or not, sorted."""
        return sorted(self._slots)

    @property
    def available_devices(self) -> list[str]:
        """The devices that loaded and have hardware: ``NAME``, or ``NAME.ID`` for each id when a
        device has several. Devices that failed to load are in :attr:`unavailable_devices`."""
        found: list[str] = []
        for name in sorted(self._slots):
            try:
                ids = self._device_ids(name)
            except Exception as exc:  # a broken third-party plugin must not break the host
                _log.info("device %s is unavailable: %s", name, exc)
                continue
            found += [name] if len(ids) == 1 else [format_device_name(name, i) for i in ids]
        return found

    def get_available_devices(self) -> list[str]:
        """Same as :attr:`available_devices`."""
        return self.available_devices

    @property
    def unavailable_devices(self) -> dict[str, str]:
        """Registered devices that failed to load or to list their ids, with the reason."""
        reasons = {}
        for name in sorted(self._slots):
            try:
                self._device_ids(name)
            except DeviceUnavailableError as exc:
                reasons[name] = str(exc)
            except Exception as exc:
                reasons[name] = f"device {name!r} failed to list its ids: {type(exc).__name__}: {exc}"
        return reasons

    def get_versions(self, device_name: str) -> dict[str, Version]:
        """``{device: Version}`` for a device (a plugin without ``get_version`` reports the SDK's)."""
        parsed = parse_device_name(device_name)
        device = self._device(parsed.name)
        version = device.call("get_version") if device.has_hook("get_version") else None
        if version is None:
            version = Version(SDK_VERSION, f"{parsed.name} device plugin")
        return {parsed.name: version}

    # -- properties ---------------------------------------------------------------------------------

    def set_property(self, device_name: str | Config, properties: Config | None = None) -> None:
        """Sets properties of a device (``set_property("TEMPLATE", {...})``) or of the Core
        (``set_property({"CACHE_DIR": path})``). Values set on a device reach later compiles.

        A config is a dict, one ``(key, value)`` pair as a called typed property returns
        (``set_property("TEMPLATE", properties.enable_profiling(True))``), or a list of pairs and dicts,
        as in OpenVINO. ``CACHE_DIR`` set on a device applies to that device's compiles (and wins over
        the Core's); ``""`` turns caching off for it.

        :raises UnsupportedPropertyError: for an unknown or read-only key.
        :raises PropertyValueError: for a wrong value, or a config of another form.
        """
        if not isinstance(device_name, str):
            for key, value in as_config(device_name).items():
                if key not in _CORE_KEYS:
                    raise UnsupportedPropertyError(
                        f"{key!r} is not a Core property (Core properties: {', '.join(_CORE_KEYS)}); "
                        "set device properties with core.set_property(DEVICE, {...})"
                    )
                self._cache_dir = str(value) if value else None
            return
        parsed = parse_device_name(device_name)
        config = as_config(properties)
        cache_dir = config.pop("CACHE_DIR", None)
        device = self._device(parsed.name)
        if config or cache_dir is None:
            device.call("set_property", properties=self._device_config(parsed, config))
        if cache_dir is not None:
            self._device_cache_dirs[parsed.name] = str(cache_dir or "")

    def get_property(self, device_name: str | None, name: str | None = None, arguments: Any = None) -> Any:
        """A property of a device (``get_property("TEMPLATE", "FULL_DEVICE_NAME")``) or of the Core
        (``get_property("CACHE_DIR")``). A device's ``CACHE_DIR`` is the one set on it, else the Core's."""
        if name is None or device_name is None:
            key = name if device_name is None else device_name
            if key == "CACHE_DIR":
                return self._cache_dir or ""
            raise UnsupportedPropertyError(f"{key!r} is not a Core property; Core properties: {', '.join(_CORE_KEYS)}")
        parsed = parse_device_name(device_name)
        device = self._device(parsed.name)
        if name == "CACHE_DIR":
            return self._device_cache_dirs.get(parsed.name, self._cache_dir or "")
        value = device.call("get_property", name=name, arguments=self._device_config(parsed, as_config(arguments)))
        if value is None:
            raise PluginValidationError(f"device {parsed.name!r} returned None for property {name!r}")
        return value

    # -- models ---------------------------------------------------------------------------------------

    def read_model(self, model: ModelSource, weights: str | os.PathLike[str] | None = None) -> Model:
        """Reads a model: ONNX (``.onnx``, its bytes or an ``onnx.ModelProto``) translated into the opset,
        OpenVINO IR (``.xml`` + ``.bin``) or the native ``.json`` + ``.bin``. Never runs code from the file.

        :param weights: the weights file of IR or the native format, when not beside the graph file.
        :raises ModelFormatError: naming the file and the place for unreadable or malformed files.
        :raises UnsupportedOperationError: listing every ONNX node no rule translates.
        :raises ModelValidationError: for an ONNX graph that fails ONNX's checks, naming the node.
        """
        return read_model(model, weights)

    def query_model(self, model: Model, device_name: str, config: Config | None = None) -> dict[str, str]:
        """Which device runs each op: ``{op friendly_name: device name}``; unsupported ops are absent."""
        if model.is_stateful():  # ReadValue and Assign go where the explicit form's Parameter and Result go
            return query_stateful(self, model, device_name, config)
        parsed = parse_device_name(device_name)
        properties = self._device_config(parsed, without_cache_dir(config))
        answer = self._device(parsed.name).call("query_model", model=model, properties=properties)
        if not isinstance(answer, Mapping):
            raise PluginValidationError(
                f"device {parsed.name!r}: query_model returned {type(answer).__name__}, not a dict of op name to device"
            )
        return dict(answer)

    def compile_model(
        self,
        model: Model | ModelSource,
        device_name: str | None = None,
        config: Config | None = None,
        *,
        context: RemoteContext | None = None,
    ) -> CompiledModel:
        """Compiles a model (or a model file) for ``device_name``, else the device of ``context`` (the
        compiled model then works in that remote context), else ``AUTO`` as in OpenVINO when AUTO is
        available, else the first of :attr:`available_devices`.

        ``config`` (any form :meth:`set_property` takes) wins over values set with :meth:`set_property`
        and does not change them. With ``CACHE_DIR`` set (in ``config``, else on the device, else on the
        Core), a compile exports its result there and the next identical compile imports it
        (``LOADED_FROM_CACHE`` is then True); a device that lists ``CACHE_DIR`` among its
        ``SUPPORTED_PROPERTIES`` gets it in its compile properties instead and caches what it compiles
        itself, when it compiles it (OpenVINO passes ``ov::cache_dir`` to such a device).

        :raises CompilationError: when the device fails, naming it.
        :raises DeviceNotFoundError: for an unknown device or id, or when no device is available.
        :raises DeviceUnavailableError: for a device that failed to load.
        :raises PropertyValueError: for a wrong value, or ``MULTI_DEVICE_PRIORITIES`` or ``DEVICE_ID``
            in ``config`` that differ from those in ``device_name``.
        """
        if not isinstance(model, Model):
            model = self.read_model(model)
        if model.is_stateful():  # the device compiles the explicit form; the wrapper keeps the state
            return compile_stateful(self, model, device_name, config, context)
        if device_name is None:
            device_name = context.device_name if context is not None else self._default_device()
        parsed = parse_device_name(device_name)
        config = as_config(config)
        cache_dir = config.pop("CACHE_DIR", self._device_cache_dirs.get(parsed.name, self._cache_dir))
        properties = self._device_config(parsed, config)
        device = self._device(parsed.name)
        if cache_dir and self._caches_itself(parsed):
            properties["CACHE_DIR"], cache_dir = cache_dir, None
        cached = context is None and device.has_hook("import_model")
        cache_file = cache_file_of(cache_dir, model, parsed, properties) if cached else None
        if cache_file is not None and cache_file.exists():
            try:
                compiled = self._call_returning_compiled(
                    device, "import_model", blob=cache_file.read_bytes(), properties=properties, context=None
                )
                compiled.loaded_from_cache = True
                return compiled
            except BlobFormatError as exc:
                _log.warning("ignoring the unreadable cache entry %s: %s", cache_file, exc)
        compiled = self._call_returning_compiled(
            device, "compile_model", model=model, properties=properties, context=context
        )
        if cache_file is not None:
            store_in_cache(cache_file, compiled.export_model())
        return compiled

    def import_model(
        self,
        blob: bytes | bytearray | memoryview | BinaryIO,
        device_name: str | None = None,
        config: Config | None = None,
        *,
        context: RemoteContext | None = None,
    ) -> CompiledModel:
        """Rebuilds a compiled model from ``compiled.export_model()`` bytes (or a binary file object
        holding them) on ``device_name`` (or on the device of ``context``, working in that remote context).

        :raises BlobFormatError: for a truncated, corrupted, foreign or newer-version blob, or a
            ``blob`` that is not bytes (a ``str``, a file opened in text mode).
        """
        if hasattr(blob, "read"):
            blob = blob.read()  # a file object, as OpenVINO accepts streams
        if not isinstance(blob, (bytes, bytearray, memoryview)):
            raise BlobFormatError(
                f"import_model takes the bytes of compiled.export_model() or a file opened in binary mode, not "
                f"{type(blob).__name__}; read a model file with core.read_model(path)"
            )
        if is_stateful_blob(blob):
            return import_stateful(self, bytes(blob), device_name, config, context)
        if device_name is None:
            if context is None:
                raise DeviceNotFoundError("import_model needs a device name or a remote context")
            device_name = context.device_name
        parsed = parse_device_name(device_name)
        properties = self._device_config(parsed, without_cache_dir(config))
        return self._call_returning_compiled(
            self._device(parsed.name), "import_model", blob=bytes(blob), properties=properties, context=context
        )

    def create_context(self, device_name: str, properties: Config | None = None) -> RemoteContext:
        """A new remote context of a device."""
        parsed = parse_device_name(device_name)
        config = self._device_config(parsed, as_config(properties))
        return self._device(parsed.name).call("create_context", properties=config)

    def get_default_context(self, device_name: str) -> RemoteContext:
        """The device's default remote context."""
        parsed = parse_device_name(device_name)
        return self._device(parsed.name).call("get_default_context", properties=self._device_config(parsed, {}))

    # -- internals ----------------------------------------------------------------------------------

    def _make_device(self, name: str, plugin: Any) -> RegisteredDevice:
        device = RegisteredDevice(name, instantiate(plugin), self)
        for wrapper in self._wrappers:
            device.add_wrapper(wrapper)
        return device

    def _device(self, name: str) -> RegisteredDevice:
        with self._lock:
            slot = self._slots.get(name)
            if slot is None:
                raise self._not_found(name)
            if slot.plugin is not None:
                return slot.plugin
            if slot.error is None:
                assert slot.loader is not None
                try:
                    slot.plugin = self._make_device(name, slot.loader())
                    return slot.plugin
                except Exception as exc:  # a broken third-party plugin must not break the host
                    slot.error = exc
                    _log.info("device %s failed to load: %s: %s", name, type(exc).__name__, exc)
            reason = slot.error
            cause = str(reason) if isinstance(reason, DeviceUnavailableError) else f"{type(reason).__name__}: {reason}"
            raise DeviceUnavailableError(f"device {name!r} is unavailable: {cause}") from slot.error

    def _device_ids(self, name: str) -> list[str]:
        ids = self._device(name).call("get_property", name="AVAILABLE_DEVICES", arguments={})
        if isinstance(ids, str):
            ids = ids.split(",") if ids else []
        return [str(i) for i in ids or []]

    def _not_found(self, name: str) -> DeviceNotFoundError:
        with self._lock:
            loaded = sorted(n for n, slot in self._slots.items() if slot.plugin is not None)
        return device_not_found(name, sorted(self._slots), loaded, self._device_ids, self.get_property)

    def _device_config(self, parsed: DeviceName, config: dict[str, Any]) -> dict[str, Any]:
        """``config`` with what ``parsed`` says: its targets as MULTI_DEVICE_PRIORITIES, its id as DEVICE_ID."""
        if parsed.targets:
            config["MULTI_DEVICE_PRIORITIES"] = agreeing_priorities(parsed, config.get("MULTI_DEVICE_PRIORITIES"))
        if parsed.device_id is not None:
            ids = self._device_ids(parsed.name)
            if parsed.device_id not in ids:
                raise DeviceNotFoundError(
                    f"device {parsed.full!r} does not exist; {parsed.name} has ids: {', '.join(ids) or 'none'}"
                )
            config["DEVICE_ID"] = agreeing_device_id(parsed, config.get("DEVICE_ID"))
        return config

    def _caches_itself(self, parsed: DeviceName) -> bool:
        """Whether the device lists ``CACHE_DIR`` among its ``SUPPORTED_PROPERTIES``: it then caches its
        compiles itself (a device that compiles per input shape caches each executable when it makes it)."""
        try:
            return "CACHE_DIR" in self.get_property(parsed.name, "SUPPORTED_PROPERTIES")
        except HeteroSDKError:
            return False

    def _default_device(self) -> str:
        """``AUTO`` when it is available (OpenVINO's default), else the first available device."""
        if "AUTO" in self._slots:
            with contextlib.suppress(DeviceUnavailableError):
                self._device("AUTO")
                return "AUTO"
        devices = self.available_devices
        if not devices:
            raise DeviceNotFoundError("no device is available; install a device plugin or register one")
        return devices[0]

    def _call_returning_compiled(self, device: RegisteredDevice, hook: str, **kwargs: Any) -> CompiledModel:
        try:
            compiled = device.call(hook, **kwargs)
        except HeteroSDKError:
            raise
        except Exception as exc:
            raise CompilationError(f"device {device.name!r} failed in {hook}: {type(exc).__name__}: {exc}") from exc
        if not isinstance(compiled, CompiledModel):
            raise PluginValidationError(
                f"device {device.name!r}: {hook} returned {type(compiled).__name__}, "
                "not a hetero_sdk.plugin.CompiledModel",
                device.plugin,
            )
        return compiled
