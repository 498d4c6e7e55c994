"""The TEMPLATE device's properties: the seeds' Configuration plus the read-only identity keys."""

from __future__ import annotations

from collections.abc import Callable

from hetero_sdk import Type
from hetero_sdk.plugin import DeviceConfig, PropertySpec, as_bool, as_element_type, as_int, one_of, read_only

__all__ = ["CAPABILITIES", "make_config"]

CAPABILITIES = ["FP32", "EXPORT_IMPORT"]


def make_config(device_ids: Callable[[], list[str]]) -> DeviceConfig:
    """The TEMPLATE device's property table."""
    return DeviceConfig(
        [
            PropertySpec("DEVICE_ID", default="0"),
            PropertySpec("PERF_COUNT", default=False, convert=as_bool, allowed="True, False"),
            PropertySpec(
                "PERFORMANCE_HINT",
                default="LATENCY",
                convert=one_of("LATENCY", "THROUGHPUT", "CUMULATIVE_THROUGHPUT"),
                allowed="LATENCY, THROUGHPUT, CUMULATIVE_THROUGHPUT",
            ),
            PropertySpec("PERFORMANCE_HINT_NUM_REQUESTS", default=0, convert=as_int(0), allowed="integers >= 0"),
            PropertySpec(
                "NUM_STREAMS", default=0, convert=as_int(0, 64), allowed="integers 0..64 (0: from PERFORMANCE_HINT)"
            ),
            PropertySpec("INFERENCE_NUM_THREADS", default=0, convert=as_int(0), allowed="integers >= 0 (0: auto)"),
            PropertySpec(
                "EXECUTION_MODE_HINT",
                default="PERFORMANCE",
                convert=one_of("PERFORMANCE", "ACCURACY"),
                allowed="PERFORMANCE, ACCURACY",
            ),
            PropertySpec(
                "INFERENCE_PRECISION_HINT", default=Type.f32, convert=as_element_type(Type.f32), allowed="f32"
            ),
            PropertySpec("TEMPLATE_DISABLE_TRANSFORMATIONS", default=False, convert=as_bool, allowed="True, False"),
            PropertySpec("EXCLUSIVE_ASYNC_REQUESTS", default=False, convert=as_bool, allowed="True, False"),
            read_only("AVAILABLE_DEVICES", compute=lambda _: device_ids()),
            read_only("FULL_DEVICE_NAME", compute=lambda i: f"Template reference device {i or '0'} (numpy)"),
            read_only("DEVICE_ARCHITECTURE", "numpy"),
            read_only("OPTIMIZATION_CAPABILITIES", CAPABILITIES),
            read_only("CACHING_PROPERTIES", ["DEVICE_ARCHITECTURE", "TEMPLATE_DISABLE_TRANSFORMATIONS"]),
            read_only("RANGE_FOR_ASYNC_INFER_REQUESTS", (1, 8, 1)),
            read_only("EXECUTION_DEVICES", compute=lambda i: [f"TEMPLATE.{i or '0'}"]),
        ],
        device_ids=device_ids,
    )
