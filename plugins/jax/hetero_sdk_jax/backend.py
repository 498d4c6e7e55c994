"""Which JAX backend a device runs on, and what its devices are called."""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jax
from hetero_sdk.errors import DeviceUnavailableError

__all__ = ["Backend", "open_backend"]

_INSTALL_HINTS = {
    "gpu": "install jax[cuda12] (NVIDIA) or jax[rocm] (AMD) and check that the driver sees the GPU",
    "tpu": "install jax[tpu] on a machine with TPU cores",
}

_GRAPH_MIN_SIZE = "xla_gpu_graph_min_graph_size"
_VECTOR_WIDTH = "xla_cpu_prefer_vector_width"


@dataclass(frozen=True)
class Backend:
    """A JAX backend and its devices.

    :ivar name: what ``jax.devices()`` takes (``cpu``, ``gpu``, ``tpu``).
    :ivar platform: the platform as ``jax.export`` names it (``cpu``, ``cuda``, ``rocm``, ``tpu``).
    :ivar devices: the backend's devices; a device id is an index into this tuple.
    """

    name: str
    platform: str
    devices: tuple[jax.Device, ...]

    @property
    def ids(self) -> list[str]:
        """The device ids (``"0"``, ``"1"``...)."""
        return [str(i) for i in range(len(self.devices))]

    def device(self, device_id: str | int | None) -> jax.Device:
        """The device with ``device_id`` (the first when None)."""
        return self.devices[int(device_id or 0)]

    def full_name(self, device_id: str | int | None) -> str:
        """``FULL_DEVICE_NAME``: the device's kind (the CPU model on the host platform) and platform."""
        device = self.device(device_id)
        kind = _cpu_model() if self.platform == "cpu" else None
        return f"{kind or device.device_kind} (XLA {self.platform}, device {device.id})"

    def memory_limit(self, device_id: str | int | None) -> int | None:
        """``DEVICE_TOTAL_MEM_SIZE``: the bytes JAX's allocator may use on the device
        (``memory_stats()["bytes_limit"]``), None where JAX keeps no statistics (the CPU)."""
        stats = self.device(device_id).memory_stats()
        return int(stats["bytes_limit"]) if stats and "bytes_limit" in stats else None

    def reports_memory(self) -> bool:
        """True when the backend's devices report their memory (GPUs and TPUs do, the CPU does not)."""
        try:
            return self.memory_limit(0) is not None
        except (RuntimeError, NotImplementedError):
            return False

    @property
    def divides_inexactly(self) -> bool:
        """True where XLA's f32 division is not correctly rounded: CUDA GPUs, where it emits
        ``div.full.f32`` (within 2 ulp; about a third of random quotients are 1 ulp off, openxla/xla#37181)."""
        return self.platform == "cuda"

    @property
    def compiler_options(self) -> dict[str, Any]:
        """The XLA options every executable on this backend is compiled with (``Lowered.compile``).

        On CUDA GPUs: command buffers (CUDA graphs) from one op on, where XLA's default waits for five in
        a row (``xla_gpu_graph_min_graph_size``): launched one by one, the kernels between two library
        calls cost a launch each. On an H100 (one process per setting, medians of 200 runs) PP-OCR det
        2296 -> 1347 us, cls 1570 -> 1059 us, LCNet 1195 -> 1004 us.

        On CPUs with AVX-512: loops vectorised 512 bits wide (``xla_cpu_prefer_vector_width``; XLA's
        default is 256). XLA:CPU computes depthwise convolutions and the element-wise ops between its
        library calls as its own loops; on a Xeon with AVX-512 (one thread, one process, interleaved
        repeats) every model of the performance issue ran faster: PP-OCRv4 det 320x320 -5 %, rec
        48x320 -4 to -7 %, cls -5 %, magika -3 %, YOLOv8n -3 %, the LSTM CRNN -2 %.

        An option already set in ``XLA_FLAGS`` stays the user's.
        """
        flags = os.environ.get("XLA_FLAGS", "")
        if self.platform == "cpu":
            return {_VECTOR_WIDTH: 512} if _has_avx512() and _VECTOR_WIDTH not in flags else {}
        if self.platform != "cuda" or _GRAPH_MIN_SIZE in flags:
            return {}
        return {_GRAPH_MIN_SIZE: 1}

    def supports_bf16(self) -> bool:
        """True where XLA computes bf16: CPU, TPU, ROCm and CUDA GPUs of compute capability 8.0 or newer."""
        if self.platform != "cuda":
            return True
        capability = getattr(self.devices[0], "compute_capability", "0")
        try:
            return float(capability) >= 8.0
        except (TypeError, ValueError):
            return False


def open_backend(kind: str | None) -> Backend:
    """The backend of a device kind: None for JAX's default backend, ``gpu`` or ``tpu``.

    :raises DeviceUnavailableError: when JAX has no such backend, saying what to install.
    """
    name = kind or jax.default_backend()
    try:
        devices = tuple(jax.devices(name))
    except RuntimeError as exc:
        hint = _INSTALL_HINTS.get(name, f"check that JAX supports the {name!r} backend")
        raise DeviceUnavailableError(f"no {name.upper()} backend: jax.devices({name!r}) failed: {exc}; {hint}") from exc
    if not devices:
        raise DeviceUnavailableError(f"no {name.upper()} backend: jax.devices({name!r}) returned no device")
    return Backend(name, _export_platform(devices[0]), devices)


def _export_platform(device: jax.Device) -> str:
    platform = str(device.platform).lower()
    if platform != "gpu":
        return platform
    version = str(getattr(device.client, "platform_version", "")).lower()
    return "rocm" if "rocm" in version else "cuda"


@functools.cache
def _has_avx512() -> bool:
    """Whether this host's CPU has AVX-512 (Linux's ``/proc/cpuinfo`` flags; False where it cannot tell)."""
    try:
        return any(
            line.startswith("flags") and "avx512f" in line.split()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
        )
    except OSError:
        return False


def _cpu_model() -> str | None:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return None
