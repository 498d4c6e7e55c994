"""Typed property names, mirroring ``openvino.properties``.

Each name is a :class:`Property`: a ``str`` equal to the OpenVINO key, so ``{properties.enable_profiling:
True}`` and ``{"PERF_COUNT": True}`` are the same config. Calling a property builds a config entry:
``properties.enable_profiling(True) == ("PERF_COUNT", True)``; calling it with no argument gives the key.
The groups are modules, as OpenVINO's are: ``import hetero_sdk.properties.hint as hints``, then
``hints.performance_mode`` and ``hints.PerformanceMode.LATENCY``.
:func:`as_config` turns any accepted config form (a dict, such pairs, or a list of them) into a dict.
Enum values (hints, modes and policies) are read in either case: ``"throughput"`` is ``"THROUGHPUT"``;
device names stay case-sensitive.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, TypeAlias

from hetero_sdk.errors import PropertyValueError
from hetero_sdk.properties import device, hetero, hint
from hetero_sdk.properties._key import Mutability, Property
from hetero_sdk.properties._values import canonical_config

__all__ = [
    "Config", "Mutability", "Property", "as_config", "available_devices", "cache_dir", "caching_properties", "device",
    "enable_profiling", "exclusive_async_requests", "execution_devices", "hetero", "hint",
    "inference_num_threads", "loaded_from_cache", "model_name", "num_streams",
    "optimal_number_of_infer_requests", "range_for_async_infer_requests", "supported_properties",
]  # fmt: skip


Config: TypeAlias = (
    Mapping[str, Any] | Mapping[Property, Any] | tuple[str, Any] | Iterable[Mapping[str, Any] | tuple[str, Any]]
)
"""What a config argument accepts, as OpenVINO does: ``{key: value}``, one ``(key, value)`` pair (what a
called :class:`Property` returns), or a list or tuple of pairs and dicts."""

_CONFIG_FORMS = (
    "a dict {key: value}, a (key, value) pair such as properties.enable_profiling(True), "
    "or a list of such pairs and dicts"
)


def as_config(config: Config | None) -> dict[str, Any]:
    """``config`` as a plain dict, as ``ov.Core.set_property`` reads its argument.

    ``{"PERF_COUNT": True}``, ``properties.enable_profiling(True)`` and
    ``[properties.enable_profiling(True), properties.hint.performance_mode("LATENCY")]`` are all
    accepted; where a key appears twice the later value wins. ``None`` is the empty config. The values
    of enum-valued keys (``PERFORMANCE_HINT``, ``EXECUTION_MODE_HINT``, ``MODEL_DISTRIBUTION_POLICY``,
    ``HETERO_PLACEMENT_POLICY``, ``HETERO_FALLBACK_POLICY``, ``NUM_STREAMS``'s ``AUTO``), also inside
    ``DEVICE_PROPERTIES``, are read in either case and spelled as the enum spells them (upper case).

    :param config: a mapping, one ``(key, value)`` pair, or an iterable of pairs and mappings.
    :returns: a new ``{key: value}`` dict (keys as plain ``str``).
    :raises PropertyValueError: for anything else (a bare string, a pair whose key is not a string, a
        list holding something that is neither a pair nor a mapping), naming what was given.
    """
    if config is None:
        return {}
    if isinstance(config, Mapping):
        return canonical_config({str(k) if isinstance(k, str) else k: v for k, v in config.items()})
    if _is_pair(config):
        return canonical_config({str(config[0]): config[1]})  # type: ignore[index]
    if isinstance(config, (str, bytes)) or not isinstance(config, Iterable):
        raise PropertyValueError(f"a config must be {_CONFIG_FORMS}; got {type(config).__name__} {config!r}")
    merged: dict[str, Any] = {}
    for position, entry in enumerate(config):
        if isinstance(entry, Mapping):
            merged.update(as_config(entry))
        elif _is_pair(entry):
            merged.update(canonical_config({str(entry[0]): entry[1]}))
        else:
            raise PropertyValueError(
                f"entry {position} of the config is {type(entry).__name__} {entry!r}, not a (key, value) pair "
                f"or a dict; a config must be {_CONFIG_FORMS}"
            )
    return merged


def _is_pair(value: Any) -> bool:
    return isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], str)


supported_properties = Property("SUPPORTED_PROPERTIES")
available_devices = Property("AVAILABLE_DEVICES")
execution_devices = Property("EXECUTION_DEVICES")
range_for_async_infer_requests = Property("RANGE_FOR_ASYNC_INFER_REQUESTS")
caching_properties = Property("CACHING_PROPERTIES")
cache_dir = Property("CACHE_DIR")
loaded_from_cache = Property("LOADED_FROM_CACHE")
model_name = Property("NETWORK_NAME")
optimal_number_of_infer_requests = Property("OPTIMAL_NUMBER_OF_INFER_REQUESTS")
enable_profiling = Property("PERF_COUNT")
num_streams = Property("NUM_STREAMS")
inference_num_threads = Property("INFERENCE_NUM_THREADS")
exclusive_async_requests = Property("EXCLUSIVE_ASYNC_REQUESTS")
