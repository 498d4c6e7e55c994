"""Dense 2-D f32 convolutions of channels-last data through the XLA device's native direct-convolution kernel
(``hetero_sdk_conv2d``, :mod:`hetero_sdk_jax.native`, ``native/src/conv2d.cc``).

The kernel computes ``[N, H, W, Cin]`` by ``[kh, kw, Cin, Cout]`` (one group, dilation 1, strides 1 or 2,
non-negative pads handled in the kernel, no padded copy) with the classic register tiling: a tile of output
pixels by 16 or 32 output channels in AVX-512 registers. :func:`native_conv2d` is used by the dense
convolution lowering where :func:`runs_natively` says so; elsewhere XLA's convolution runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from hetero_sdk_jax.native import use_native

__all__ = ["TARGET", "faster_natively", "native_conv2d", "runs_natively"]

TARGET = "hetero_sdk_conv2d"
"""The native kernel's FFI target."""


def runs_natively(
    x: Any, w: Any, strides: Sequence[int], padding: Sequence[tuple[int, int]], dilations: Sequence[int]
) -> bool:
    """True when the lowering being traced may run this convolution of channels-last ``x`` by ``w``
    ``[kh, kw, Cin, Cout]`` (one group) through the kernel: f32 2-D data, strides 1 or 2, dilation 1, no
    negative pads, and the shape in the class where the kernel measured faster than XLA's convolution."""
    if x.ndim != 4 or w.ndim != 4 or x.dtype != jnp.float32 or w.dtype != jnp.float32:
        return False
    if any(s not in (1, 2) for s in strides) or any(d != 1 for d in dilations):
        return False
    if any(v < 0 for pads in padding for v in pads):
        return False
    if not faster_natively(x.shape[-1], w.shape[-1], w.shape[0], w.shape[1], strides):
        return False
    return use_native(TARGET)


def faster_natively(inputs: int, outputs: int, kernel_h: int, kernel_w: int, strides: Sequence[int]) -> bool:
    """The class of convolutions where the kernel measured faster than XLA's convolution at YOLOv8n's and
    YOLOX's layers (``bench/bench_native_conv.py``, one thread, CPU time): 3x3 kernels with at least 96
    input channels (0.80-0.92x XLA's time at strides 1 and 2), or at stride 1 with at most 16 output
    channels (0.60-0.85x: XLA:CPU leaves its YNNPACK kernel there). Not taken: 24-64 input channels
    (0.97-1.31x), stride 2 below 96 input channels (the kernel transposes every input row for a
    quarter of the outputs), kernels other than 3x3 (not measured)."""
    if (kernel_h, kernel_w) != (3, 3):
        return False
    return inputs >= 96 or (tuple(strides) == (1, 1) and outputs <= 16)


def native_conv2d(x: Any, w: Any, strides: Sequence[int], padding: Sequence[tuple[int, int]]) -> Any:
    """The convolution of ``x`` ``[N, H, W, Cin]`` by ``w`` ``[kh, kw, Cin, Cout]`` through the kernel,
    ``[N, OH, OW, Cout]`` (pads ``((top, bottom), (left, right))``, none negative; strides 1 or 2)."""
    batch, height, width, _ = x.shape
    kernel_h, kernel_w, _, outputs = w.shape
    (top, bottom), (left, right) = padding
    out_h = (height + top + bottom - kernel_h) // strides[0] + 1
    out_w = (width + left + right - kernel_w) // strides[1] + 1
    call = jax.ffi.ffi_call(TARGET, jax.ShapeDtypeStruct((batch, out_h, out_w, outputs), jnp.float32))
    return call(
        x, w,
        stride_h=np.int64(strides[0]), stride_w=np.int64(strides[1]), pad_top=np.int64(top), pad_left=np.int64(left),
    )  # fmt: skip
