"""ORT's properties: the standard settings, ``INFERENCE_NUM_THREADS`` (ONNX Runtime's intra-op
threads) and the read-only identity every device answers."""

from __future__ import annotations

import onnxruntime as ort
from hetero_sdk import properties as props
from hetero_sdk.plugin import DeviceConfig, read_only, standard

__all__ = ["DEFAULT_THREADS", "FULL_NAME", "make_config", "session_threads"]

DEFAULT_THREADS = 1
"""Intra-op threads when ``INFERENCE_NUM_THREADS`` is 0: one, so that parallel requests and HETERO's
other devices are not starved by ONNX Runtime's default of one thread per core."""

FULL_NAME = f"ONNX Runtime {ort.__version__} (CPUExecutionProvider)"


def make_config() -> DeviceConfig:
    """ORT's property table."""
    return DeviceConfig(
        [
            standard.device_id(),
            standard.perf_count(),
            standard.performance_hint(),
            standard.execution_mode_hint(),
            standard.inference_num_threads(),
            read_only(props.available_devices, ["0"]),
            read_only(props.device.full_name, FULL_NAME),
            read_only(props.device.architecture, "onnxruntime"),
            read_only(props.device.capabilities, ["FP32", "EXPORT_IMPORT"]),
            read_only(props.range_for_async_infer_requests, (1, 4, 1)),
        ]
    )


# --8<-- [start:threads]
def session_threads(config: dict[str, object]) -> int:
    """``SessionOptions.intra_op_num_threads`` for a compile config."""
    threads = int(config.get(props.inference_num_threads) or 0)  # type: ignore[call-overload]
    return threads if threads > 0 else DEFAULT_THREADS


# --8<-- [end:threads]
