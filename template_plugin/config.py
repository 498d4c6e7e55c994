"""The TEMPLATE device's properties: OpenVINO's TEMPLATE plugin Configuration plus the read-only identity keys."""

from __future__ import annotations

from collections.abc import Callable

from hetero_sdk import Type
from hetero_sdk import properties as props
from hetero_sdk.plugin import DeviceConfig, PropertySpec, as_bool, read_only, standard
from template_plugin import properties as template_props
from template_plugin.blas import describe as describe_blas

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
            read_only(props.available_devices, compute=lambda _: device_ids()),
            read_only(props.device.full_name, compute=lambda i: f"Template reference device {i or '0'} (numpy)"),
            read_only(props.device.architecture, "numpy"),
            read_only(template_props.blas, compute=lambda _: describe_blas()),
            read_only(props.device.capabilities, CAPABILITIES),
            read_only(props.caching_properties, [props.device.architecture, "TEMPLATE_DISABLE_TRANSFORMATIONS"]),
            read_only(props.range_for_async_infer_requests, (1, 8, 1)),
            read_only(props.execution_devices, compute=lambda i: [f"TEMPLATE.{i or '0'}"]),
        ],
        device_ids=device_ids,
    )
