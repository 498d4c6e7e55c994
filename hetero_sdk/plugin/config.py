"""Declaring and validating a plugin's properties: :class:`PropertySpec` and :class:`DeviceConfig`.

A plugin lists its properties once; :class:`DeviceConfig` then answers ``SUPPORTED_PROPERTIES``, keeps
values per device id, rejects unknown keys, read-only keys and wrong values with typed errors, and
merges a ``compile_model`` config over the stored values without changing them.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from hetero_sdk.element_type import Type
from hetero_sdk.errors import (
    BlobFormatError,
    HeteroSDKError,
    PropertyValueError,
    UnsupportedPropertyError,
    did_you_mean,
)
from hetero_sdk.properties import Mutability

__all__ = ["INT_MAX", "DeviceConfig", "PropertySpec", "as_bool", "as_element_type", "as_int", "one_of"]

Converter = Callable[[Any], Any]


@dataclass(frozen=True)
class PropertySpec:
    """One property a plugin supports.

    :ivar key: the OpenVINO key (``PERF_COUNT``).
    :ivar mutability: RO, RW or WO.
    :ivar default: the value before any ``set_property``; for RO properties, the value.
    :ivar convert: normalises a value and raises ``ValueError``/``TypeError`` for a wrong one.
    :ivar allowed: a description of the allowed values, quoted in errors.
    :ivar compute: for RO properties whose value is computed on read (takes the device id or None).
    """

    key: str
    mutability: Mutability = Mutability.RW
    default: Any = None
    convert: Converter | None = None
    allowed: str = ""
    compute: Callable[[str | None], Any] | None = None

    def check(self, value: Any) -> Any:
        """``value`` normalised. :raises PropertyValueError: naming the key and the allowed values."""
        if self.convert is None:
            return value
        try:
            return self.convert(value)
        except (TypeError, ValueError) as exc:
            reason = f"allowed: {self.allowed}" if self.allowed else str(exc)
            raise PropertyValueError(f"{value!r} is not a valid value for {self.key}; {reason}") from None


def as_bool(value: Any) -> bool:
    """Accepts bools and OpenVINO's ``YES``/``NO`` (and ``true``/``false``) strings."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.upper() in ("YES", "TRUE", "NO", "FALSE"):
        return value.upper() in ("YES", "TRUE")
    raise ValueError("expected True/False or 'YES'/'NO'")


INT_MAX = 2**31 - 1
"""The largest value :func:`as_int` accepts by default: OpenVINO's integer properties are 32-bit."""


def as_int(minimum: int = 0, maximum: int = INT_MAX) -> Converter:
    """A converter accepting integers (or their strings) in ``[minimum, maximum]``."""

    def convert(value: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, (int, str)):
            raise TypeError(f"expected an integer, got {type(value).__name__}")
        number = int(value)
        if not minimum <= number <= maximum:
            raise ValueError(f"must be in [{minimum}, {maximum}]")
        return number

    return convert


def one_of(*values: str) -> Converter:
    """A converter accepting one of ``values`` (strings or ``str`` enums)."""

    def convert(value: Any) -> str:
        text = value.value if hasattr(value, "value") and not isinstance(value, str) else str(value)
        if text not in values:
            raise ValueError(f"expected one of {', '.join(values)}")
        return text

    return convert


def as_element_type(*types: Type) -> Converter:
    """A converter accepting the given element types (a ``Type``, a numpy dtype or a name)."""

    def convert(value: Any) -> Type:
        element_type = Type.of(value)
        if element_type not in types:
            raise ValueError(f"expected one of {', '.join(t.value for t in types)}")
        return element_type

    return convert


class DeviceConfig:
    """The property values of one plugin, per device id; thread-safe.

    :param specs: every property the plugin supports (``SUPPORTED_PROPERTIES`` is added for you).
    :param device_ids: a callable returning the valid device ids (for ``DEVICE_ID``).
    """

    def __init__(self, specs: Iterable[PropertySpec], device_ids: Callable[[], list[str]] = lambda: ["0"]) -> None:
        self._specs = {s.key: s for s in specs}
        self._specs.setdefault(
            "SUPPORTED_PROPERTIES",
            PropertySpec("SUPPORTED_PROPERTIES", Mutability.RO, compute=lambda _: self.supported()),
        )
        self._device_ids = device_ids
        self._values: dict[str | None, dict[str, Any]] = {None: {}}
        self._lock = threading.Lock()

    @property
    def specs(self) -> Mapping[str, PropertySpec]:
        """The declared properties by key."""
        return self._specs

    def supported(self) -> dict[str, str]:
        """``SUPPORTED_PROPERTIES``: every key with its mutability (``"RO"``, ``"RW"`` or ``"WO"``)."""
        return {k: s.mutability.value for k, s in self._specs.items()}

    def spec(self, key: str) -> PropertySpec:
        """The spec of ``key``. :raises UnsupportedPropertyError: listing close matches."""
        try:
            return self._specs[key]
        except KeyError:
            hint = did_you_mean(key, self._specs, listing="supported")
            raise UnsupportedPropertyError(f"unsupported property {key!r}; {hint}") from None

    def get(self, key: str, device_id: str | None = None) -> Any:
        """The current value of ``key`` for ``device_id`` (or the plugin-wide value)."""
        spec = self.spec(key)
        if spec.mutability is Mutability.WO:
            raise UnsupportedPropertyError(f"property {key!r} is write-only")
        if spec.compute is not None:
            return spec.compute(device_id)
        return self._stored(spec, device_id)

    def set(self, properties: Mapping[str, Any]) -> None:
        """Validates every entry, then stores them all (a wrong one changes nothing).

        ``DEVICE_ID`` in ``properties`` selects the device the values apply to; ``DEVICE_ID`` alone
        makes that id the default one (what ``DEVICE_ID`` then reads, and the id compiles use).
        """
        device_id, values = self._validated(properties)
        if device_id is not None and not values:
            device_id, values = None, {"DEVICE_ID": device_id}
        with self._lock:
            self._values.setdefault(device_id, {}).update(values)

    def resolve(self, properties: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """The full configuration for one compile: defaults, then stored values, then ``properties``.

        Stored values are not changed. The result holds every RW and WO key, and ``DEVICE_ID`` (the
        one in ``properties``, else the default id) when the plugin declares it.
        """
        device_id, overrides = self._validated(properties or {})
        if device_id is None and "DEVICE_ID" in self._specs:
            device_id = str(self._stored(self._specs["DEVICE_ID"], None))
        merged = {
            k: self._stored(s, device_id)
            for k, s in self._specs.items()
            if s.mutability is not Mutability.RO and s.compute is None
        }
        merged.update(overrides)
        return merged

    def from_blob(self, stored: Any, where: str) -> dict[str, Any]:
        """The property values an exported blob stores (``DEVICE_ID`` left out: the importing call
        picks the device), checked as :meth:`set` checks them.

        :param stored: the parsed JSON value the blob holds.
        :param where: the blob and frame or field, for the message (``"TEMPLATE blob frame 'config'"``).
        :raises BlobFormatError: when ``stored`` is not a JSON object, or holds a key or value this
            device rejects (naming the key, chained to the property error).
        """
        if not isinstance(stored, Mapping):
            raise BlobFormatError(
                f"{where} is {type(stored).__name__}, not a JSON object of property values; export the model again"
            )
        try:
            _, values = self._validated({k: v for k, v in stored.items() if k != "DEVICE_ID"})
        except HeteroSDKError as exc:
            raise BlobFormatError(
                f"{where} holds a configuration this device rejects: {exc}; export the model again"
            ) from exc
        return values

    def _stored(self, spec: PropertySpec, device_id: str | None) -> Any:
        if spec.key == "DEVICE_ID" and device_id is not None:
            return device_id
        with self._lock:
            for slot in (device_id, None):
                if spec.key in self._values.get(slot, {}):
                    return self._values[slot][spec.key]
        return spec.default

    def _validated(self, properties: Mapping[str, Any]) -> tuple[str | None, dict[str, Any]]:
        values: dict[str, Any] = {}
        device_id: str | None = None
        for key, value in properties.items():
            spec = self.spec(key)
            if spec.mutability is Mutability.RO:
                raise UnsupportedPropertyError(f"property {key!r} is read-only and cannot be set")
            if key == "DEVICE_ID":
                device_id = self._check_device_id(value)
                continue
            values[str(key)] = spec.check(value)
        return device_id, values

    def _check_device_id(self, value: Any) -> str:
        ids = self._device_ids()
        text = str(value)
        if text not in ids:
            raise PropertyValueError(f"DEVICE_ID {value!r} does not exist; available ids: {', '.join(ids)}")
        return text


def read_only(key: str, value: Any = None, compute: Callable[[str | None], Any] | None = None) -> PropertySpec:
    """A read-only property with a fixed ``value`` or a ``compute`` function."""
    return PropertySpec(key, Mutability.RO, default=value, compute=compute)


def flags(values: Collection[str]) -> list[str]:
    """A sorted list copy (for list-valued RO properties)."""
    return sorted(values)
