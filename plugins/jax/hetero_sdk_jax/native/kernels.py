"""The native kernels the XLA device ships (:data:`KERNELS`), built and registered with XLA once per process.

A kernel is one of this package's C++ sources (``src/``) exporting an XLA FFI handler. On first use it is
built (:func:`~hetero_sdk_jax.native.build.build`), loaded with ``ctypes`` and registered as an FFI target
for the CPU platform (``jax.ffi.register_ffi_target``); later uses find it registered. Only names of
:data:`KERNELS` are ever built or loaded: a blob names kernels, it never supplies or chooses code.

Where a kernel cannot be had (no compiler, the build fails, native kernels turned off), :func:`available`
says no and logs the reason once per kernel; lowerings then take their pure-XLA path.
"""

from __future__ import annotations

import ctypes
import logging
import os
import threading
from dataclasses import dataclass
from pathlib import Path

import jax.ffi

from hetero_sdk_jax.native.build import BuildError, build

__all__ = ["ENV_VAR", "KERNELS", "NativeKernel", "available", "enabled_by_environment", "register", "registered"]

ENV_VAR = "HETERO_SDK_NATIVE_KERNELS"
"""Set to ``0`` (or ``false``, ``off``, ``no``) to turn native kernels off: every lowering takes its pure-XLA path."""

_OFF = frozenset({"0", "false", "off", "no"})
_SOURCES = Path(__file__).resolve().parent / "src"
_log = logging.getLogger("hetero_sdk_jax.native")


@dataclass(frozen=True)
class NativeKernel:
    """One native kernel.

    :ivar target: the FFI target name the StableHLO custom call carries (``hetero_sdk_*``).
    :ivar source: its C++ source, a file of ``src/``.
    :ivar symbol: the handler symbol the source exports (``XLA_FFI_DEFINE_HANDLER_SYMBOL``).
    """

    target: str
    source: str
    symbol: str

    @property
    def path(self) -> Path:
        """The source file."""
        return _SOURCES / self.source


KERNELS: dict[str, NativeKernel] = {
    kernel.target: kernel
    for kernel in (
        NativeKernel("hetero_sdk_matmul_nbits", "matmul_nbits.cc", "HeteroSdkMatMulNBits"),
        NativeKernel("hetero_sdk_depthwise_conv", "depthwise_conv.cc", "HeteroSdkDepthwiseConv"),
        NativeKernel("hetero_sdk_depthwise_conv_bias", "depthwise_conv.cc", "HeteroSdkDepthwiseConvBias"),
        NativeKernel("hetero_sdk_lstm_sequence", "lstm_sequence.cc", "HeteroSdkLstmSequence"),
        NativeKernel("hetero_sdk_conv2d", "conv2d.cc", "HeteroSdkConv2d"),
        NativeKernel("hetero_sdk_conv2d_bias", "conv2d.cc", "HeteroSdkConv2dBias"),
        NativeKernel("hetero_sdk_gemm_f32", "gemm_f32.cc", "HeteroSdkGemmF32"),
        NativeKernel("hetero_sdk_gemm_f32_bias", "gemm_f32.cc", "HeteroSdkGemmF32Bias"),
        NativeKernel("hetero_sdk_gemm_f32_fused", "gemm_f32.cc", "HeteroSdkGemmF32Fused"),
        NativeKernel("hetero_sdk_gemm_f32_fused_concat", "gemm_f32.cc", "HeteroSdkGemmF32FusedConcat"),
        NativeKernel("hetero_sdk_softmax_f32", "softmax_f32.cc", "HeteroSdkSoftmaxF32"),
        NativeKernel("hetero_sdk_softmax_expectation_f32", "softmax_f32.cc", "HeteroSdkSoftmaxExpectationF32"),
        NativeKernel("hetero_sdk_level_lookup", "level_lookup.cc", "HeteroSdkLevelLookup"),
        NativeKernel("hetero_sdk_stem_conv", "stem_conv.cc", "HeteroSdkStemConv"),
    )
}
"""Every native kernel, by target name."""

_lock = threading.Lock()
_registered: set[str] = set()
_failures: dict[str, str] = {}
_logged: set[str] = set()  # kernels whose unavailability was logged
_libraries: list[ctypes.CDLL] = []  # kept loaded for the process's life


def enabled_by_environment() -> bool:
    """False when :data:`ENV_VAR` turns native kernels off."""
    return os.environ.get(ENV_VAR, "1").strip().lower() not in _OFF


def register(target: str) -> None:
    """Builds (when not cached), loads and registers kernel ``target`` for the CPU, once per process.

    :raises KeyError: for a name that is not one of :data:`KERNELS`.
    :raises BuildError: when it cannot be built or loaded (again on each call: the reason is kept).
    """
    kernel = KERNELS[target]
    with _lock:
        if target in _registered:
            return
        if target in _failures:
            raise BuildError(_failures[target])
        try:
            library = ctypes.cdll.LoadLibrary(str(build(kernel.path)))
            handler = getattr(library, kernel.symbol)
        except (BuildError, OSError, AttributeError) as exc:
            _failures[target] = str(exc)
            raise BuildError(str(exc)) from exc
        jax.ffi.register_ffi_target(target, jax.ffi.pycapsule(handler), platform="cpu")
        _libraries.append(library)
        _registered.add(target)


def available(target: str) -> bool:
    """True when kernel ``target`` is registered (built and registered now if needed); False when native
    kernels are off or it cannot be built, the reason logged (warning) the first time."""
    if not enabled_by_environment():
        return False
    try:
        register(target)
    except BuildError as exc:
        with _lock:
            first = target not in _logged
            _logged.add(target)
        if first:
            _log.warning("native kernel %s unavailable, XLA's own lowering runs instead: %s", target, exc)
        return False
    return True


def registered() -> frozenset[str]:
    """The kernels registered in this process."""
    with _lock:
        return frozenset(_registered)
