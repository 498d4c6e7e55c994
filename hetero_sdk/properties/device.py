"""Device identity and the per-device settings of meta-devices, as ``openvino.properties.device``."""

from __future__ import annotations

from hetero_sdk.properties._key import Property

__all__ = [
    "STATIC_SHAPES", "architecture", "capabilities", "full_name", "id", "priorities", "properties", "total_mem_size",
]  # fmt: skip

full_name = Property("FULL_DEVICE_NAME")
architecture = Property("DEVICE_ARCHITECTURE")
capabilities = Property("OPTIMIZATION_CAPABILITIES")
id = Property("DEVICE_ID")  # noqa: A001  (OpenVINO's name)
priorities = Property("MULTI_DEVICE_PRIORITIES")
properties = Property("DEVICE_PROPERTIES")
total_mem_size = Property("DEVICE_TOTAL_MEM_SIZE")

STATIC_SHAPES = "STATIC_SHAPES"
"""An ``OPTIMIZATION_CAPABILITIES`` entry (as OpenVINO's ``device.Capability`` values): the device compiles
one executable per input shape, so the SDK keeps the growing state of stateful models (a decoder's KV
cache) in fixed-capacity buffers for it."""
