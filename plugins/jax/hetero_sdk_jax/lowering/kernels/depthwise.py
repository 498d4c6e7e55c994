"""Depthwise 2-D convolutions of channels-last f32 data through the XLA device's native CPU kernel
(``hetero_sdk_depthwise_conv``, :mod:`hetero_sdk_jax.native`, source ``native/src/depthwise_conv.cc``).

XLA's own loop for :func:`~.convolution.depthwise_conv` runs 16 channels at a time with a separate multiply
and add per tap; the kernel multiplies and adds with FMAs over 16-channel vectors, for filters 3, 5 or 7
wide a sliding window of 16 output columns (each input vector loaded once per filter row), reading the
borders in place (no padded copy); it may add a per-channel bias and apply an activation before storing
each vector (:mod:`hetero_sdk_jax.depthwise_fusion`). :func:`native_depthwise` is called where
:func:`runs_natively` says yes; elsewhere the pure-XLA form runs.
"""

from __future__ import annotations

from collections.abc import Sequence

import jax
import jax.numpy as jnp
import numpy as np

from hetero_sdk_jax.native import use_native

__all__ = [
    "ACTIVATIONS", "FUSED_TARGET", "MIN_CHANNELS", "MIN_FUSED_CHANNELS", "TARGET", "native_depthwise", "runs_natively"
]  # fmt: skip

TARGET = "hetero_sdk_depthwise_conv"
"""The native kernel's FFI target."""

FUSED_TARGET = "hetero_sdk_depthwise_conv_bias"
"""The same kernel's FFI target with a bias operand and an activation (blobs calling :data:`TARGET` with two
operands keep running)."""

ACTIVATIONS = {"none": 0, "relu": 1, "hswish": 2}
"""The activations the kernel applies to each biased output vector before storing it, by its code:
``hswish`` is ``x * min(max(x / 6 + 1/2, 0), 1)`` (the division a multiply by 1/6, as
:func:`~hetero_sdk_jax.lowering.activation.hswish` computes it)."""

MIN_CHANNELS = 17
"""Layers with fewer channels keep XLA's loop: the bias and activation after the kernel then run as a
loop of their own, and XLA's loops over 16 or fewer channels cost more than the kernel saves (PP-OCR det's
16-channel 3x3 layer at 160x160 with its bias and hardswish: 455 us native, 366 XLA's fused loop)."""


MIN_FUSED_CHANNELS = 8
"""The same for a layer whose bias and activation the kernel applies
(:mod:`hetero_sdk_jax.depthwise_fusion`): nothing runs after it, and it measured faster down to 8
channels (``bench/bench_native_depthwise.py --cpu-time``, fused / XLA's fused loop: det's 16 channels
at 160x160 0.66x, rec's 16 at 24x160 0.78x, cls's 8 at 24x96 0.92x)."""


def _output_sizes(
    x: jnp.ndarray, w: jnp.ndarray, strides: Sequence[int], padding: Sequence[tuple[int, int]], dilations: Sequence[int]
) -> list[int]:
    return [
        (size + b + e - (k - 1) * d - 1) // s + 1
        for size, k, s, (b, e), d in zip(x.shape[1:3], w.shape[:2], strides, padding, dilations)
    ]


def runs_natively(
    x: jnp.ndarray,
    w: jnp.ndarray,
    strides: Sequence[int],
    padding: Sequence[tuple[int, int]],
    dilations: Sequence[int],
    channels_last: bool,
    fused: bool = False,
) -> bool:
    """True when the kernel computes this depthwise convolution: f32 ``[N, H, W, C]`` data, an f32
    ``[KH, KW, 1, C]`` filter (multiplier 1), at least :data:`MIN_CHANNELS` channels (:data:`MIN_FUSED_CHANNELS`
    when ``fused``: the kernel adds the bias and applies the activation), a non-empty result,
    and the lowering being traced may call the native kernel (:data:`FUSED_TARGET` when ``fused``, else
    :data:`TARGET`: :func:`~hetero_sdk_jax.native.use_native`)."""
    return (
        channels_last
        and x.ndim == 4
        and w.ndim == 4
        and x.dtype == jnp.float32
        and w.dtype == jnp.float32
        and w.shape[2] == 1
        and w.shape[3] == x.shape[3]
        and x.shape[3] >= (MIN_FUSED_CHANNELS if fused else MIN_CHANNELS)
        and min(_output_sizes(x, w, strides, padding, dilations)) > 0
        and use_native(FUSED_TARGET if fused else TARGET)
    )


def native_depthwise(
    x: jnp.ndarray,
    w: jnp.ndarray,
    strides: Sequence[int],
    padding: Sequence[tuple[int, int]],
    dilations: Sequence[int],
    bias: jnp.ndarray | None = None,
    activation: str = "none",
) -> jnp.ndarray:
    """The depthwise cross-correlation of ``x`` ``[N, H, W, C]`` with ``w`` ``[KH, KW, 1, C]`` (pads of any
    sign: negative ones crop), plus ``bias`` (f32 ``[C]``, or None), through ``activation`` (a key of
    :data:`ACTIVATIONS`): ``[N, OH, OW, C]``, through the native kernel."""
    out_h, out_w = _output_sizes(x, w, strides, padding, dilations)
    result = jax.ShapeDtypeStruct((x.shape[0], out_h, out_w, x.shape[3]), jnp.float32)
    window = {
        "stride_h": np.int64(strides[0]), "stride_w": np.int64(strides[1]), "pad_top": np.int64(padding[0][0]),
        "pad_left": np.int64(padding[1][0]), "dilation_h": np.int64(dilations[0]), "dilation_w": np.int64(dilations[1]),
    }  # fmt: skip
    if bias is None and activation == "none":
        return jax.ffi.ffi_call(TARGET, result)(x, w, **window)
    per_channel = jnp.zeros((x.shape[3],), jnp.float32) if bias is None else jnp.asarray(bias, jnp.float32)
    return jax.ffi.ffi_call(FUSED_TARGET, result)(
        x, w, per_channel.reshape(-1), **window, activation=np.int64(ACTIVATIONS[activation])
    )
