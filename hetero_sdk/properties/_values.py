"""Enum-valued properties read in either case: ``"throughput"`` is ``"THROUGHPUT"``, as OpenVINO's
``benchmark_app`` spells it and its Python API reads it. Only the values of the keys listed here are
rewritten, and only when they name one of the key's values; device names (``MULTI_DEVICE_PRIORITIES``)
stay case-sensitive, and anything else reaches the device unchanged, which names the allowed values
when it refuses one."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hetero_sdk.properties import hetero, hint
from hetero_sdk.properties._key import Property

__all__ = ["ENUM_VALUES", "canonical_config"]

_DEVICE_PROPERTIES = "DEVICE_PROPERTIES"

ENUM_VALUES: Mapping[str, tuple[str, ...]] = {
    hint.performance_mode: tuple(hint.PerformanceMode),
    hint.execution_mode: tuple(hint.ExecutionMode),
    hint.model_distribution_policy: tuple(hint.ModelDistributionPolicy),
    hetero.placement_policy: ("PRIORITY", "LATENCY"),
    Property("HETERO_FALLBACK_POLICY"): ("NONE", "NEXT_DEVICE"),
    Property("NUM_STREAMS"): ("AUTO", "NUMA"),  # OpenVINO's words beside the numbers
}
"""Each enum-valued key and its values as spelled canonically (upper case)."""


def canonical_config(config: Mapping[str, Any]) -> dict[str, Any]:
    """``config`` with each enum value of :data:`ENUM_VALUES` in its canonical spelling, also inside
    ``DEVICE_PROPERTIES``'s per-device configs (a set or list of values, as ``MODEL_DISTRIBUTION_POLICY``
    takes, value by value)."""
    return {key: _canonical(key, value) for key, value in config.items()}


def _canonical(key: Any, value: Any) -> Any:
    if key == _DEVICE_PROPERTIES and isinstance(value, Mapping):
        return {
            device: canonical_config(inner) if isinstance(inner, Mapping) else inner for device, inner in value.items()
        }
    values = ENUM_VALUES.get(key) if isinstance(key, str) else None
    if values is None:
        return value
    if isinstance(value, (set, frozenset, list, tuple)):
        return type(value)(_spelled(item, values) for item in value)
    return _spelled(value, values)


def _spelled(value: Any, values: tuple[str, ...]) -> Any:
    if not isinstance(value, str) or value in values:
        return value
    return next((v for v in values if v.upper() == value.upper()), value)
