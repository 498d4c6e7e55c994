"""The XLA device's properties: the seeds' configuration plus the read-only identity keys."""

from __future__ import annotations

import os
from typing import Any

from hetero_sdk import Type
from hetero_sdk import properties as props
from hetero_sdk.plugin import DeviceConfig, PropertySpec, as_bool, as_int, format_device_name, read_only, standard

from hetero_sdk_jax.backend import Backend
from hetero_sdk_jax.shape_buckets import BUCKET_POLICIES
from hetero_sdk_jax.transformations import DISABLE_TRANSFORMATIONS

__all__ = [
    "CACHE_DIR", "DEFAULT_SHAPE_CACHE_SIZE", "NATIVE_KERNELS", "SHAPE_BUCKETS", "SHAPE_CACHE_SIZE", "compute_precision",
    "make_config",
]  # fmt: skip

CACHE_DIR = "CACHE_DIR"
"""RW path: the folder the device caches its executables in when it compiles them
(:mod:`hetero_sdk_jax.persistent_cache`); ``""``: no cache. Listed among the device's properties, so the
Core passes its ``CACHE_DIR`` here instead of storing a blob of the compiled model."""

SHAPE_CACHE_SIZE = "XLA_SHAPE_CACHE_SIZE"
"""RW int (1 to 1024): how many executables a model with dynamic input dimensions keeps, one per
combination of input shapes (for a model specialised on input values, one per combination of input
shapes and those values), least recently used first out. Each executable holds device memory."""

DEFAULT_SHAPE_CACHE_SIZE = 8
"""The default of ``XLA_SHAPE_CACHE_SIZE``."""

SHAPE_BUCKETS = "XLA_SHAPE_BUCKETS"
"""RW string, ``POW2`` (default) or ``EXACT``: how a model with dynamic input dimensions is compiled.
``POW2`` pads each dynamic dimension that the graph proves independent (no op mixes its elements: see
:mod:`hetero_sdk_jax.shape_buckets`) with zeros up to the next power of two and slices the outputs back,
so its values share one executable per bucket; other dimensions, and every one under ``EXACT``, compile
one executable per value."""

NATIVE_KERNELS = "XLA_NATIVE_KERNELS"
"""RW bool (default True): whether lowerings on the CPU platform may call the device's native kernels
(:mod:`hetero_sdk_jax.native`, built on first use with the system C++ compiler). False: the pure-XLA
lowering everywhere (also what the environment variable ``HETERO_SDK_NATIVE_KERNELS=0`` does for every
device). Ignored on other platforms."""

_CACHING = (props.device.architecture, props.hint.inference_precision, props.hint.execution_mode)
"""The properties a cached blob depends on."""


def _as_policy(value: Any) -> str:
    policy = str(value).upper()
    if policy not in BUCKET_POLICIES:
        raise ValueError(value)
    return policy


def _as_folder(value: Any) -> str:
    return os.fsdecode(value) if value else ""


def compute_precision(config: dict[str, Any]) -> Type:
    """The element type f32 tensors are computed in: ``INFERENCE_PRECISION_HINT``, except that
    ``EXECUTION_MODE_HINT=ACCURACY`` keeps the model's own precision (as OpenVINO does)."""
    if config.get(props.hint.execution_mode) == "ACCURACY":
        return Type.f32
    return Type.of(config.get(props.hint.inference_precision, Type.f32))


def make_config(backend: Backend, device_name: str) -> DeviceConfig:
    """The property table of a device on ``backend`` registered as ``device_name``."""
    precisions = (Type.f32, Type.bf16) if backend.supports_bf16() else (Type.f32,)
    capabilities = ["FP32", *(["BF16"] if Type.bf16 in precisions else []), "EXPORT_IMPORT", props.device.STATIC_SHAPES]
    memory = [read_only(props.device.total_mem_size, compute=backend.memory_limit)] if backend.reports_memory() else []
    return DeviceConfig(
        [
            standard.device_id(),
            standard.perf_count(),
            standard.performance_hint(),
            standard.performance_hint_num_requests(),
            standard.num_streams(),
            standard.execution_mode_hint(),
            standard.inference_precision_hint(*precisions),
            PropertySpec(
                SHAPE_CACHE_SIZE, default=DEFAULT_SHAPE_CACHE_SIZE, convert=as_int(1, 1024), allowed="integers 1..1024"
            ),
            PropertySpec(SHAPE_BUCKETS, default="POW2", convert=_as_policy, allowed=" or ".join(BUCKET_POLICIES)),
            PropertySpec(CACHE_DIR, default="", convert=_as_folder, allowed="a folder path, or '' for no cache"),
            PropertySpec(DISABLE_TRANSFORMATIONS, default=False, convert=as_bool, allowed="True, False"),
            PropertySpec(NATIVE_KERNELS, default=True, convert=as_bool, allowed="True, False"),
            read_only(props.available_devices, compute=lambda _: backend.ids),
            read_only(props.device.full_name, compute=backend.full_name),
            read_only(props.device.architecture, backend.platform),
            read_only(props.device.capabilities, capabilities),
            read_only(
                props.caching_properties,
                [
                    props.device.architecture,
                    props.hint.inference_precision,
                    props.hint.execution_mode,
                    DISABLE_TRANSFORMATIONS,
                    NATIVE_KERNELS,
                ],
            ),
            read_only(props.range_for_async_infer_requests, (1, 8, 1)),
            read_only(props.execution_devices, compute=lambda i: [format_device_name(device_name, i or "0")]),
            *memory,
        ],
        device_ids=lambda: backend.ids,
    )
