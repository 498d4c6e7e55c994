"""The TEMPLATE device's properties: OpenVINO's TEMPLATE plugin Configuration plus the read-only identity keys."""

from __future__ import annotations

from collections.abc import Callable

from hetero_sdk import Type
from hetero_sdk.plugin import DeviceConfig, PropertySpec, as_bool, read_only, standard

__all__ = ["CAPABILITIES", "make_config"]

CAPABILITIES = ["FP32", "EXPORT_IMPORT"]


def make_config(device_ids: Callable[[], list[str]]) -> DeviceConfig:
    """The TEMPLATE device's property table."""
    return DeviceConfig(
        [
            standard.device_id(),
            standard.perf_count(),
            standard.performance_hint(),
            standard.performance_hint_num_requests(),
            standard.num_streams(),
            standard.inference_num_threads(),
            standard.execution_mode_hint(),
            standard.inference_precision_hint(Type.f32),
            PropertySpec("TEMPLATE_DISABLE_TRANSFORMATIONS", default=False, convert=as_bool, allowed="True, False"),
            standard.exclusive_async_requests(),
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
