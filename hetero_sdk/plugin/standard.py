"""OpenVINO's standard device properties, declared once, and the property hooks every device writes.

Each factory returns the :class:`~hetero_sdk.plugin.PropertySpec` of one standard key, with its
OpenVINO name, default, converter and the allowed values quoted in errors, so that every device
accepts and rejects the same values with the same messages. A device lists the ones it supports next
to its own keys and lets :class:`ConfiguredDevice` answer ``get_property`` and ``set_property``:

    class MyPlugin(ConfiguredDevice):
        def __init__(self) -> None:
            self.config = DeviceConfig([standard.device_id(), standard.perf_count(), read_only(...)])
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from hetero_sdk.device_name import format_device_name, parse_device_name
from hetero_sdk.element_type import Type
from hetero_sdk.extensions import generation as extension_generation
from hetero_sdk.plugin.config import (
    INT_MAX,
    Converter,
    DeviceConfig,
    PropertySpec,
    as_bool,
    as_element_type,
    as_int,
    one_of,
)
from hetero_sdk.plugin.hookspecs import hookimpl
from hetero_sdk.plugin.support import SupportTable

if TYPE_CHECKING:
    from hetero_sdk.core import Core

__all__ = [
    "ConfiguredDevice", "device_id", "device_priorities", "device_properties", "exclusive_async_requests",
    "execution_mode_hint", "inference_num_threads", "inference_precision_hint", "num_streams", "perf_count",
    "performance_hint", "performance_hint_num_requests",
]  # fmt: skip

_PERFORMANCE_MODES = ("LATENCY", "THROUGHPUT", "CUMULATIVE_THROUGHPUT")
_EXECUTION_MODES = ("PERFORMANCE", "ACCURACY")
_BOOLEANS = "True, False"
_STREAMS_WORDS = ("AUTO", "NUMA")  # ov::streams::AUTO, and NUMA (deprecated there), both "from the hint" here


def _spec(key: str, default: Any, convert: Converter, allowed: str) -> PropertySpec:
    spec = PropertySpec(key, default=default, convert=convert, allowed=allowed)
    spec.check(default)  # a wrong default fails where the device declares it, not at first use
    return spec


def _choice(key: str, values: tuple[str, ...], default: str) -> PropertySpec:
    return _spec(key, default, one_of(*values), ", ".join(values))


def device_id(default: str = "0") -> PropertySpec:
    """``DEVICE_ID``: which device id a call applies to; set alone, it makes that id the default.

    :class:`~hetero_sdk.plugin.DeviceConfig` checks values against its ``device_ids``.

    :param default: the id used when none is given.
    """
    return PropertySpec("DEVICE_ID", default=default, allowed="an id of AVAILABLE_DEVICES")


def perf_count(default: bool = False) -> PropertySpec:
    """``PERF_COUNT``: collect per-op profiling rows; ``True``/``False`` or ``"YES"``/``"NO"``.

    :param default: whether profiling is on before any ``set_property``.
    """
    return _spec("PERF_COUNT", default, as_bool, _BOOLEANS)


def performance_hint(default: str = "LATENCY") -> PropertySpec:
    """``PERFORMANCE_HINT``: ``LATENCY``, ``THROUGHPUT`` or ``CUMULATIVE_THROUGHPUT``.

    :param default: the mode before any ``set_property``.
    :raises PropertyValueError: when ``default`` is not one of the modes.
    """
    return _choice("PERFORMANCE_HINT", _PERFORMANCE_MODES, default)


def performance_hint_num_requests(default: int = 0) -> PropertySpec:
    """``PERFORMANCE_HINT_NUM_REQUESTS``: how many requests the application keeps in flight (0: no limit).

    :param default: the value before any ``set_property``.
    """
    return _spec("PERFORMANCE_HINT_NUM_REQUESTS", default, as_int(0), f"integers 0..{INT_MAX}")


def num_streams(default: int = 0, maximum: int = 64) -> PropertySpec:
    """``NUM_STREAMS``: how many requests a compiled model runs at once, 0 meaning "from
    ``PERFORMANCE_HINT``" (1 for ``LATENCY``, more for the throughput modes).

    OpenVINO's special values are accepted and read back as 0: ``"AUTO"`` (streams chosen from the
    performance hint) and the deprecated ``"NUMA"``, which this SDK treats as ``AUTO``.

    :param default: the value before any ``set_property``.
    :param maximum: the largest number of streams the device accepts.
    """
    allowed = f"integers 0..{maximum}, AUTO or NUMA (0, AUTO and NUMA: from PERFORMANCE_HINT)"
    return _spec("NUM_STREAMS", default, _streams(as_int(0, maximum)), allowed)


def inference_num_threads(default: int = 0) -> PropertySpec:
    """``INFERENCE_NUM_THREADS``: threads for one inference (0: the device decides).

    :param default: the value before any ``set_property``.
    """
    return _spec("INFERENCE_NUM_THREADS", default, as_int(0), f"integers 0..{INT_MAX} (0: auto)")


def execution_mode_hint(default: str = "PERFORMANCE") -> PropertySpec:
    """``EXECUTION_MODE_HINT``: ``PERFORMANCE`` or ``ACCURACY`` (keep the model's own precision).

    :param default: the mode before any ``set_property``.
    :raises PropertyValueError: when ``default`` is not one of the modes.
    """
    return _choice("EXECUTION_MODE_HINT", _EXECUTION_MODES, default)


def inference_precision_hint(*types: Type, default: Type | None = None) -> PropertySpec:
    """``INFERENCE_PRECISION_HINT``: the element type the device computes f32 tensors in.

    Values are a :class:`~hetero_sdk.Type`, a numpy dtype or a type name, read back as a ``Type``.

    :param types: the element types the device computes in; ``f32`` alone when none are given.
    :param default: the type before any ``set_property``; the first of ``types`` when None.
    :raises PropertyValueError: when ``default`` is not one of ``types``.
    """
    types = types or (Type.f32,)
    chosen = types[0] if default is None else default
    return _spec("INFERENCE_PRECISION_HINT", chosen, as_element_type(*types), ", ".join(t.value for t in types))


def exclusive_async_requests(default: bool = False) -> PropertySpec:
    """``EXCLUSIVE_ASYNC_REQUESTS``: run every async request of the device on one shared worker.

    :param default: whether it is on before any ``set_property``.
    """
    return _spec("EXCLUSIVE_ASYNC_REQUESTS", default, as_bool, _BOOLEANS)


def device_priorities() -> PropertySpec:
    """``MULTI_DEVICE_PRIORITIES``: a meta-device's candidate devices, in order (``"A,B"`` or ``["A", "B"]``,
    read back as ``"A,B"``); each name is checked as a device name, none set by default."""
    return PropertySpec("MULTI_DEVICE_PRIORITIES", default="", convert=_device_list, allowed="'A,B,...'")


def device_properties() -> PropertySpec:
    """``DEVICE_PROPERTIES``: the properties a meta-device passes on to each of its devices,
    ``{device: {key: value}}``; none by default."""
    return PropertySpec("DEVICE_PROPERTIES", default={}, convert=_per_device, allowed="{device: {key: value}}")


def _streams(count: Converter) -> Converter:
    def convert(value: Any) -> int:
        return 0 if isinstance(value, str) and value in _STREAMS_WORDS else count(value)

    return convert


def _device_list(value: Any) -> str:
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        text = ",".join(value)
    elif isinstance(value, str):
        text = value
    else:
        raise TypeError(f"expected 'A,B,...' or a list of device names, got {type(value).__name__}")
    for name in filter(None, text.split(",")):
        parse_device_name(name)
    return text


def _per_device(value: Any) -> dict[str, dict[str, Any]]:
    if not isinstance(value, Mapping) or not all(isinstance(v, Mapping) for v in value.values()):
        raise TypeError("expected {device: {key: value}}")
    return {str(k): dict(v) for k, v in value.items()}


class ConfiguredDevice:
    """A mixin implementing the ``get_property`` and ``set_property`` hooks over ``self.config``.

    A device class that derives from it and sets ``self.config`` (a
    :class:`~hetero_sdk.plugin.DeviceConfig`) in ``__init__`` needs no property hooks of its own:
    ``get_property`` reads ``self.config`` for the ``DEVICE_ID`` in the call's arguments (the
    plugin-wide value when there is none), and ``set_property`` validates and stores through it. A
    subclass may still override either hook (marked with ``@hookimpl``).
    """

    config: DeviceConfig
    """The device's property table."""

    @hookimpl
    def get_property(self, name: str, arguments: dict[str, Any], device_name: str, core: Core) -> Any:
        """The value of ``name`` for ``arguments["DEVICE_ID"]`` (when given); see the hook."""
        return self.config.get(name, arguments.get("DEVICE_ID"))

    @hookimpl
    def set_property(self, properties: dict[str, Any], device_name: str, core: Core) -> None:
        """Validates every entry of ``properties``, then stores them all; see the hook."""
        self.config.set(properties)

    def make_support_table(self) -> SupportTable:
        """What the device runs (op types, element types, limits): a device that answers ``query_model``
        with :meth:`support_table` overrides it; it is called once per plugin instance.

        :raises NotImplementedError: when the device declares no table.
        """
        raise NotImplementedError(f"{type(self).__name__} declares no SupportTable: override make_support_table")

    def support_table(self) -> SupportTable:
        """The device's :class:`~hetero_sdk.plugin.SupportTable`, made by :meth:`make_support_table` on
        first use and kept for the plugin instance's life, made again when an extension has added (or
        removed) ops since."""
        table: SupportTable | None = getattr(self, "_support_table", None)
        if table is None or getattr(self, "_support_generation", None) != extension_generation():
            self._support_generation = extension_generation()
            table = self._support_table = self.make_support_table()
        return table

    def device_with_id(self, device_name: str, config: Mapping[str, Any]) -> str:
        """``device_name`` with the ``DEVICE_ID`` of a resolved ``config`` (``TEMPLATE.1``): the name a
        compiled model or a context of that device id carries."""
        return format_device_name(device_name, config["DEVICE_ID"])

    def claiming_name(self, device_name: str, properties: Mapping[str, Any], config: Mapping[str, Any]) -> str:
        """The device name ``query_model`` answers with: with its id when the call's ``properties``
        select one (``TEMPLATE.1``), else the name the plugin is registered under (``TEMPLATE``)."""
        return self.device_with_id(device_name, config) if "DEVICE_ID" in properties else device_name
