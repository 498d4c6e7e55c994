"""Convolutions of an image with few channels, read channels-first as the model hands it, through the XLA device's
native direct-convolution kernel (``hetero_sdk_stem_conv``, :mod:`hetero_sdk_jax.native`, ``native/src/stem_conv.cc``).

A network's first layer reads the image ``[N, C, H, W]`` with 3 (or a few) channels. XLA's convolution moves it
channels-last first and then has little to vectorise over 3 channels; the few-channel route of the dense lowering
(:func:`~hetero_sdk_jax.lowering.convolution.few_channel_conv`) sums shifted slices in one XLA loop. The kernel
vectorises over 16 output pixels of a row instead, one accumulator per output channel, each tap one FMA per
channel with the weight broadcast, and stores ``[N, OH, OW, O]`` (channels last, what the next native conv2d layer
reads) with the bias and activation applied in registers. :func:`native_stem_conv` runs it where
:func:`runs_natively` says so (the rule: :func:`faster_natively`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from hetero_sdk_jax.native import use_native

__all__ = [
    "ACTIVATIONS", "LOOP_TERMS", "MAX_CHANNELS", "TARGET", "faster_natively", "native_stem_conv", "runs_natively",
]  # fmt: skip

TARGET = "hetero_sdk_stem_conv"
"""The native kernel's FFI target."""

ACTIVATIONS = {"none": 0, "relu": 1, "silu": 2, "hswish": 3}
"""The activations the kernel applies to the biased sum, by the code it takes (silu: ``v * sigmoid(v)``; hswish:
``v * min(max(v + 3, 0), 6) / 6``, the division a product by 1/6, as the XLA lowering of HSwish computes it)."""

LOOP_TERMS = 64
"""The most input channels x kernel taps of a layer the dense lowering's few-channel loop takes
(:func:`~hetero_sdk_jax.lowering.convolution.few_channel_conv`); larger ones go to XLA's convolution."""

MAX_CHANNELS = 4
"""The most input channels the kernel takes (an RGB or RGBA image)."""


def faster_natively(inputs: int, outputs: int, kernel: Sequence[int], strides: Sequence[int]) -> bool:
    """The layers where the kernel measured faster than the pure-XLA routes: at most :data:`MAX_CHANNELS` input
    channels, strides 1 or 2, kernels up to 7x7, and more than :data:`LOOP_TERMS` channel-taps (whose other route
    is XLA's convolution of the image moved channels-last; smaller layers keep the few-channel loop).

    Measured (``bench/bench_stem_conv.py --cpu-time``, one thread, load 2-4; docs/xla.md, "Native kernels",
    *Stems*): YOLOX's stem after the Focus rewrite (3 -> 24, 6x6 stride 2 at 416x416, 108 channel-taps, SiLU)
    2.7 ms in isolation against 3.0 for the Focus, XLA's 12-channel convolution and its loop; in the model's per-op
    profile at p0 2.7 ms against 3.5 (ONNX Runtime's SpaceToDepth, Conv and QuickGelu: 4.6); the whole model
    0.95 of its time. Not taken: the 27-channel-tap stems with their activation inside (YOLOv8n's 3 -> 16 with
    SiLU, PP-OCR cls's 3 -> 8 with HSwish, the CRNN's 1 -> 24 with SiLU): 0.56 of the few-channel loop's time in
    isolation but level in the models (1.01, 1.02, 1.01 of their time, and YOLOv8n's stem 0.60-0.74 ms against
    0.56-0.62 at p0), where the loop's SiLU costs as much as the kernel's and the sum is a small part; the stems
    whose bias alone the kernel would add (PP-OCRv4 det's and rec's, whose scale, shift and HSwish XLA fuses into
    the few-channel loop: 1.03-1.04 with the kernel and a loop after it)."""
    if inputs > MAX_CHANNELS or outputs < 1 or max(kernel) > 7 or any(s not in (1, 2) for s in strides):
        return False
    return inputs * math.prod(kernel) > LOOP_TERMS


def _output_sizes(
    x: Any, kernel: Sequence[int], strides: Sequence[int], padding: Sequence[tuple[int, int]]
) -> list[int]:
    return [(size + b + e - k) // s + 1 for size, k, s, (b, e) in zip(x.shape[2:], kernel, strides, padding)]


def runs_natively(
    x: Any, w: Any, strides: Sequence[int], padding: Sequence[tuple[int, int]], dilations: Sequence[int]
) -> bool:
    """True when the lowering being traced may run this convolution of channels-first ``x`` ``[N, C, H, W]`` by
    ``w`` ``[KH, KW, C, O]`` through the kernel: f32, 2-D, dilation 1, no negative pads, a non-empty result, in
    :func:`faster_natively`'s class, and the kernel built (:func:`~hetero_sdk_jax.native.use_native`)."""
    if x.ndim != 4 or len(w.shape) != 4 or x.dtype != jnp.float32 or w.dtype != jnp.float32 or w.shape[2] != x.shape[1]:
        return False
    if any(d != 1 for d in dilations) or any(v < 0 for pads in padding for v in pads):
        return False
    if min(_output_sizes(x, w.shape[:2], strides, padding)) <= 0:
        return False
    return faster_natively(x.shape[1], w.shape[3], w.shape[:2], strides) and use_native(TARGET)


def native_stem_conv(
    x: Any,
    w: Any,
    strides: Sequence[int],
    padding: Sequence[tuple[int, int]],
    bias: Any = None,
    activation: str = "none",
) -> Any:
    """``activation(conv(x, w) + bias)`` of ``x`` ``[N, C, H, W]`` by ``w`` ``[KH, KW, C, O]`` (pads
    ``((top, bottom), (left, right))``, none negative), ``[N, OH, OW, O]``, through the kernel; ``bias`` f32
    ``[O]`` or None (zeros), ``activation`` a key of :data:`ACTIVATIONS`."""
    out_h, out_w = _output_sizes(x, w.shape[:2], strides, padding)
    outputs = w.shape[3]
    shift = jnp.zeros((outputs,), jnp.float32) if bias is None else jnp.asarray(bias, jnp.float32).reshape(outputs)
    result = jax.ShapeDtypeStruct((x.shape[0], out_h, out_w, outputs), jnp.float32)
    return jax.ffi.ffi_call(TARGET, result)(
        x, w, shift,
        stride_h=np.int64(strides[0]), stride_w=np.int64(strides[1]),
        pad_top=np.int64(padding[0][0]), pad_left=np.int64(padding[1][0]),
        activation=np.int64(ACTIVATIONS[activation]),
    )  # fmt: skip
