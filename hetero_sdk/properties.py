"""Typed property names, mirroring ``openvino.properties``.

Each name is a :class:`Property`: a ``str`` equal to the OpenVINO key, so ``{properties.enable_profiling:
True}`` and ``{"PERF_COUNT": True}`` are the same config. Calling a property builds a config entry:
``properties.enable_profiling(True) == ("PERF_COUNT", True)``; calling it with no argument gives the key.
"""

from __future__ import annotations

import enum
from types import SimpleNamespace
from typing import Any, overload

__all__ = [
    "Mutability", "Property", "available_devices", "cache_dir", "caching_properties", "device",
    "enable_profiling", "exclusive_async_requests", "execution_devices", "hetero", "hint",
    "inference_num_threads", "loaded_from_cache", "model_name", "num_streams",
    "optimal_number_of_infer_requests", "range_for_async_infer_requests", "supported_properties",
]  # fmt: skip


class Mutability(enum.StrEnum):
    """Whether a property can be read (RO), read and written (RW), or only written (WO)."""

    RO = "RO"
    RW = "RW"
    WO = "WO"


class Property(str):
    """A property key that can also build a ``(key, value)`` config entry when called."""

    __slots__ = ()

    @overload
    def __call__(self) -> str: ...
    @overload
    def __call__(self, value: Any, /, *more: Any) -> tuple[str, Any]: ...
    def __call__(self, *value: Any) -> str | tuple[str, Any]:
        if not value:
            return str(self)
        if len(value) > 1:
            return (str(self), ",".join(map(str, value)))  # device.priorities("GPU", "CPU")
        return (str(self), value[0])


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

device = SimpleNamespace(
    full_name=Property("FULL_DEVICE_NAME"),
    architecture=Property("DEVICE_ARCHITECTURE"),
    capabilities=Property("OPTIMIZATION_CAPABILITIES"),
    id=Property("DEVICE_ID"),
    priorities=Property("MULTI_DEVICE_PRIORITIES"),
    properties=Property("DEVICE_PROPERTIES"),
    total_mem_size=Property("DEVICE_TOTAL_MEM_SIZE"),
)
"""Device identity and HETERO's per-device settings (``properties.device.priorities`` ...)."""

hint = SimpleNamespace(
    performance_mode=Property("PERFORMANCE_HINT"),
    num_requests=Property("PERFORMANCE_HINT_NUM_REQUESTS"),
    inference_precision=Property("INFERENCE_PRECISION_HINT"),
    execution_mode=Property("EXECUTION_MODE_HINT"),
    model_distribution_policy=Property("MODEL_DISTRIBUTION_POLICY"),
)
"""High-level hints (``properties.hint.performance_mode`` ...)."""

hetero = SimpleNamespace(
    number_of_submodels=Property("HETERO_NUMBER_OF_SUBMODELS"),
    placement_policy=Property("HETERO_PLACEMENT_POLICY"),
)
"""HETERO's own properties."""
