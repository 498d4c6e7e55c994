"""The RAY device's properties: which device each actor runs, where actors are placed, how many ids."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from hetero_sdk import Type
from hetero_sdk import properties as props
from hetero_sdk.plugin import DeviceConfig, PropertySpec, as_int, parse_device_name, read_only, standard

__all__ = [
    "FORWARDED", "NUM_ACTORS", "NODE_ID", "NUM_CPUS", "NUM_GPUS", "RAY_ADDRESS", "RESOURCES", "TARGET_DEVICE",
    "TIMEOUT", "LOCAL_NUM_CPUS", "Placement", "make_config", "placement_of",
]  # fmt: skip

TARGET_DEVICE = "TARGET_DEVICE"
"""RW str: the device each actor runs on its host (``TEMPLATE``, ``XLA``, ``XLA.1``...). Empty (the
default, or the ``HETERO_SDK_RAY_TARGET_DEVICE`` environment variable) means ``XLA`` when hetero-sdk-jax
is installed on the actor's host, else ``TEMPLATE``."""

RAY_ADDRESS = "RAY_ADDRESS"
"""RW str: the Ray cluster to join (``ray://host:10001`` or ``host:6379``); default the ``RAY_ADDRESS``
environment variable; empty starts a local Ray instance. Read when the plugin first connects."""

NUM_ACTORS = "RAY_NUM_ACTORS"
"""RW int (1 to 1024): how many device ids the device shows (``RAY.0`` ... ``RAY.N-1``), one actor each;
default the ``HETERO_SDK_RAY_ACTORS`` environment variable, else 2."""

NUM_CPUS = "RAY_NUM_CPUS"
"""RW float >= 0: the CPUs an actor reserves in Ray's scheduler (default 0, so several ids share a host)."""

NUM_GPUS = "RAY_NUM_GPUS"
"""RW float >= 0: the GPUs an actor reserves (default 0); Ray then places it on a host with a GPU."""

NODE_ID = "RAY_NODE_ID"
"""RW str: the Ray node (hex id, from ``ray.nodes()``) the actor must run on; empty: any node."""

RESOURCES = "RAY_RESOURCES"
"""RW dict of custom Ray resource to amount (``{"host_b": 1}``) the actor reserves; default none."""

LOCAL_NUM_CPUS = "RAY_LOCAL_NUM_CPUS"
"""RW int >= 1: ``num_cpus`` of the local Ray instance started when there is no ``RAY_ADDRESS``."""

TIMEOUT = "RAY_TIMEOUT"
"""RW float > 0 (seconds, default 120): the longest wait for an actor's answer (start, compile, one
inference). An actor that does not answer in time is killed and the request fails."""

FORWARDED = (
    props.enable_profiling,
    props.hint.performance_mode,
    props.hint.num_requests,
    props.num_streams,
    props.hint.execution_mode,
    props.hint.inference_precision,
)
"""The standard keys passed on to the target device (those it supports)."""


@dataclass(frozen=True)
class Placement:
    """Where an actor runs: the Ray resources it asks for. Two compiles with equal placements share an actor."""

    num_cpus: float = 0.0
    num_gpus: float = 0.0
    node_id: str = ""
    resources: tuple[tuple[str, float], ...] = ()

    def describe(self) -> str:
        """The placement as a user wrote it, for messages."""
        return (
            f"{NUM_CPUS}={self.num_cpus}, {NUM_GPUS}={self.num_gpus}, {NODE_ID}={self.node_id or 'any'}, "
            f"{RESOURCES}={dict(self.resources)}"
        )


def placement_of(config: Mapping[str, Any]) -> Placement:
    """The placement a resolved configuration asks for."""
    return Placement(
        float(config[NUM_CPUS]), float(config[NUM_GPUS]), str(config[NODE_ID]), tuple(sorted(config[RESOURCES].items()))
    )


def _amount(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise TypeError(f"expected a number, got {type(value).__name__}")
    number = float(value)
    if not number >= 0:
        raise ValueError("must be >= 0")
    return number


def _seconds(value: Any) -> float:
    number = _amount(value)
    if number <= 0:
        raise ValueError("must be > 0")
    return number


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(f"expected a string, got {type(value).__name__}")
    return value


def _target(value: Any) -> str:
    text = _text(value)
    if text:
        parsed = parse_device_name(text)
        if parsed.name == "RAY" or parsed.targets:
            raise ValueError("a RAY actor runs one plain device of its host")
    return text


def _resources(value: Any) -> dict[str, float]:
    if not isinstance(value, Mapping):
        raise TypeError("expected {resource: amount}")
    return {_text(k): _amount(v) for k, v in value.items()}


def make_config(device_ids: Callable[[], list[str]], memory: Callable[[str | None], int]) -> DeviceConfig:
    """The RAY device's property table.

    :param device_ids: the current ids (``RAY_NUM_ACTORS`` of them).
    :param memory: ``DEVICE_TOTAL_MEM_SIZE`` of an id (asks its actor).
    """
    return DeviceConfig(
        [
            standard.device_id(),
            standard.perf_count(),
            standard.performance_hint(),
            standard.performance_hint_num_requests(),
            standard.num_streams(),
            standard.execution_mode_hint(),
            standard.inference_precision_hint(Type.f32),
            PropertySpec(
                TARGET_DEVICE,
                default=os.environ.get("HETERO_SDK_RAY_TARGET_DEVICE", ""),
                convert=_target,
                allowed="a plain device name of the actor's host (TEMPLATE, XLA, XLA.1), or '' for XLA if installed "
                "there, else TEMPLATE",
            ),
            PropertySpec(
                RAY_ADDRESS, default=os.environ.get("RAY_ADDRESS", ""), convert=_text, allowed="a Ray address, or ''"
            ),
            PropertySpec(
                NUM_ACTORS,
                default=int(os.environ.get("HETERO_SDK_RAY_ACTORS", "2")),
                convert=as_int(1, 1024),
                allowed="integers 1..1024",
            ),
            PropertySpec(NUM_CPUS, default=0.0, convert=_amount, allowed="numbers >= 0"),
            PropertySpec(NUM_GPUS, default=0.0, convert=_amount, allowed="numbers >= 0"),
            PropertySpec(NODE_ID, default="", convert=_text, allowed="a node id of ray.nodes(), or ''"),
            PropertySpec(RESOURCES, default={}, convert=_resources, allowed="{resource name: amount >= 0}"),
            PropertySpec(LOCAL_NUM_CPUS, default=os.cpu_count() or 1, convert=as_int(1), allowed="integers >= 1"),
            PropertySpec(TIMEOUT, default=120.0, convert=_seconds, allowed="seconds > 0"),
            read_only(props.available_devices, compute=lambda _: device_ids()),
            read_only(
                props.device.full_name, compute=lambda i: f"Ray actor {i or '0'} (a remote device on a Ray cluster)"
            ),
            read_only(props.device.architecture, "ray"),
            read_only(props.device.capabilities, ["FP32", "EXPORT_IMPORT"]),
            read_only(props.caching_properties, [props.device.architecture, TARGET_DEVICE]),
            read_only(props.range_for_async_infer_requests, (1, 8, 1)),
            read_only(props.execution_devices, compute=lambda i: [f"RAY.{i or '0'}"]),
            read_only(props.device.total_mem_size, compute=memory),
        ],
        device_ids=device_ids,
    )
