"""Dense 2-D f32 convolutions of channels-last data through the XLA device's native direct-convolution kernel
(``hetero_sdk_conv2d``, :mod:`hetero_sdk_jax.native`, ``native/src/conv2d.cc``).

The kernel computes ``[N, H, W, Cin]`` by ``[kh, kw, Cin, Cout]`` (one group, dilation 1, strides 1 or 2,
non-negative pads handled in the kernel, no padded copy) as an indirect GEMM: a tile of 12 output pixels by
16 or 32 output channels in AVX-512 registers, each pixel's input read in place, one run of ``kw * Cin``
channels-last floats per kernel row. :func:`native_conv2d` is used by the dense convolution lowering where
:func:`runs_natively` says so; elsewhere XLA's convolution runs.

The kernel reads the filter in blocks of :data:`BLOCK` output channels. :func:`prepare` (the lowering's
compile-time hook) replaces a Constant f32 filter of a convolution in the kernel's class by
:func:`blocked_filter` once, so the kernel reads it in place; a filter computed at run time is copied
into blocks by the kernel on each call. A blocked filter that reaches XLA's convolution after all (a
16-bit precision, a layer left channels-first) is put back by :func:`unblocked_filter`.

The second target, :data:`FUSED_TARGET`, also adds a per-channel bias and applies an activation
(:data:`ACTIVATIONS`) to each tile before it is stored: the lowering of
:data:`~hetero_sdk_jax.convolution_fusion.CONVOLUTION_OP` calls it (``native_conv2d(..., bias=...)``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from hetero_sdk import Node, Type

from hetero_sdk_jax.lowering.weight_layout import PreparedByIdentity, aligned_read_only
from hetero_sdk_jax.native import use_native

__all__ = [
    "ACTIVATIONS", "BLOCK", "CONVOLUTIONS", "FUSED_TARGET", "TARGET", "blocked_filter", "faster_natively",
    "is_blocked", "native_conv2d", "prepare", "runs_natively", "unblocked_filter",
]  # fmt: skip

TARGET = "hetero_sdk_conv2d"
"""The native kernel's FFI target."""

FUSED_TARGET = "hetero_sdk_conv2d_bias"
"""The kernel's target that adds a per-channel bias and applies an activation before storing (a second
handler of the same source: blobs calling :data:`TARGET` keep running)."""

ACTIVATIONS = {"none": 0, "relu": 1, "silu": 2}
"""The fused target's activations, by name, and the codes the kernel takes (silu: ``v * sigmoid(v)``)."""

BLOCK = 32
"""Output channels per block of the filter as the kernel reads it (two 16-lane vectors)."""

_FILTER = 1
"""Convolution's filter input."""


def blocked_filter(w: np.ndarray) -> np.ndarray:
    """A filter ``[O, I, kh, kw]`` as the kernel reads it, ``[ceil(O / 32), kh, kw, I, 32]``:
    ``[o // 32, i, j, c, o % 32] = w[o, c, i, j]``, zero past ``O``; read-only and aligned
    (:func:`~.weight_layout.aligned_read_only`)."""
    outputs, inputs, kernel_h, kernel_w = w.shape
    blocks = -(-outputs // BLOCK)
    padded = np.zeros((blocks * BLOCK, inputs, kernel_h, kernel_w), np.float32)
    padded[:outputs] = w
    return aligned_read_only(padded.reshape(blocks, BLOCK, inputs, kernel_h, kernel_w).transpose(0, 3, 4, 2, 1))


def unblocked_filter(blocked: Any, outputs: int) -> Any:
    """:func:`blocked_filter`'s result in XLA as the convolution lowering reads filters, ``[kh, kw, I, O]``."""
    blocks, kernel_h, kernel_w, inputs, block = blocked.shape
    moved = jnp.transpose(blocked, (1, 2, 3, 0, 4)).reshape(kernel_h, kernel_w, inputs, blocks * block)
    return moved[..., :outputs]


def is_blocked(node: Node, w: Any) -> bool:
    """True when ``w``, the filter the Convolution ``node``'s lowering received, is :func:`blocked_filter`'s
    form (five axes for a 2-D convolution's four)."""
    return (
        node.type_name in CONVOLUTIONS
        and getattr(w, "ndim", 0) == 5
        and node.input_value(_FILTER).partial_shape.rank == 4
    )


CONVOLUTIONS = frozenset({"Convolution", "XlaConvolution"})
"""The ops whose filter (input 1) :func:`prepare` may block: Convolution and its fused form with a bias
and activation (:mod:`hetero_sdk_jax.convolution_fusion`)."""

_BLOCKED = PreparedByIdentity(blocked_filter)


def prepare(node: Node, values: Sequence[np.ndarray | None]) -> dict[int, np.ndarray | None]:
    """The filter blocked for the kernel (:func:`blocked_filter`) in place of a Convolution's filter when it
    is a read-only f32 Constant ``[O, I, kh, kw]``, the layer is in the kernel's class (:func:`faster_natively`,
    strides 1 or 2, dilation 1, f32 data) and the lowering being traced may call the kernel; ``{}`` otherwise."""
    if node.type_name not in CONVOLUTIONS or len(values) <= _FILTER:
        return {}
    w = values[_FILTER]
    if w is None or w.dtype != np.float32 or w.ndim != 4 or w.flags.writeable:
        return {}
    strides, dilations = list(node.attrs["strides"]), list(node.attrs["dilations"])
    if node.input_value(0).element_type is not Type.f32 or any(d != 1 for d in dilations):
        return {}
    outputs, inputs, kernel_h, kernel_w = w.shape
    if any(s not in (1, 2) for s in strides) or not faster_natively(inputs, outputs, kernel_h, kernel_w, strides):
        return {}
    if not use_native(TARGET):
        return {}
    return {_FILTER: _BLOCKED.get(w)}


def runs_natively(
    x: Any,
    w: Any,
    strides: Sequence[int],
    padding: Sequence[tuple[int, int]],
    dilations: Sequence[int],
    fused: bool = False,
) -> bool:
    """True when the lowering being traced may run this convolution of channels-last ``x`` by ``w``
    ``[kh, kw, Cin, Cout]`` (one group) through the kernel: f32 2-D data, strides 1 or 2, dilation 1, no
    negative pads, and the shape in the class where the kernel measured faster than XLA's convolution;
    with ``fused``, through :data:`FUSED_TARGET` (a bias and an activation after the sum)."""
    if x.ndim != 4 or w.ndim != 4 or x.dtype != jnp.float32 or w.dtype != jnp.float32:
        return False
    if any(s not in (1, 2) for s in strides) or any(d != 1 for d in dilations):
        return False
    if any(v < 0 for pads in padding for v in pads):
        return False
    if not faster_natively(x.shape[-1], w.shape[-1], w.shape[0], w.shape[1], strides):
        return False
    return use_native(FUSED_TARGET if fused else TARGET)


def faster_natively(inputs: int, outputs: int, kernel_h: int, kernel_w: int, strides: Sequence[int]) -> bool:
    """The class of convolutions where the kernel measured faster than XLA's convolution and its loop of the
    bias and SiLU after it, at YOLOv8n's and YOLOX's layers (``bench/bench_native_conv.py --cpu-time``, one
    thread, CPU time, load 3.8): 3x3 kernels with at least 16 input channels, strides 1 and 2 (0.65-0.98x,
    96->96 0.71-0.73x, 24->24 at 104x104 0.95-0.98x; against XLA's convolution alone 0.67-1.18x), or at
    stride 1 with at most 16 output channels. Issue 31's rows with it: YOLOX 1.05-1.07x the faster peer
    against 1.12-1.15x with 96+ input channels only, YOLOv8n 1.06-1.09x against 1.10-1.11x. Not taken:
    fewer than 16 input channels at stride 2 or with more than 16 outputs (the stems: YOLOX's 12 -> 24 at
    208x208 0.98x XLA's convolution and loop, level; YOLOv8n's 3 -> 16 runs the few-channel route), kernels
    other than 3x3 (not measured). The class is unchanged since the kernel's tiles in one output row clear of
    the pads find their runs one step apart and its last 16 channels there broadcast each input value once
    for the pixels that read it (issue 31, seventh round): with the bias and SiLU, before -> after, two rounds
    of ``--cpu-time --runs 40`` each (load 2.6-3.1), 16->16 at 80x80 358-391 -> 290-300 us, 16->32 stride 2
    at 160x160 648-688 -> 622-625, 24->24 at 104x104 1311-1410 -> 1237-1264, 48->48 at 52x52 834-918 ->
    820, 24->48 and 48->96 stride 2 0.88-0.98, the layers of 64-192 channels 0.89-1.05 (level)."""
    if (kernel_h, kernel_w) != (3, 3):
        return False
    return inputs >= 16 or (tuple(strides) == (1, 1) and outputs <= 16)


def native_conv2d(
    x: Any,
    w: Any,
    strides: Sequence[int],
    padding: Sequence[tuple[int, int]],
    outputs: int | None = None,
    bias: Any = None,
    activation: str = "none",
) -> Any:
    """The convolution of ``x`` ``[N, H, W, Cin]`` by ``w`` ``[kh, kw, Cin, Cout]``, or by ``w`` blocked
    (:func:`blocked_filter`) for ``outputs`` channels, through the kernel, ``[N, OH, OW, Cout]`` (pads
    ``((top, bottom), (left, right))``, none negative; strides 1 or 2). With ``bias`` (f32 ``[Cout]``),
    ``activation(sum + bias)`` (:data:`ACTIVATIONS`) through :data:`FUSED_TARGET`."""
    batch, height, width, _ = x.shape
    if w.ndim == 5:
        if outputs is None:
            raise ValueError("native_conv2d: a blocked filter needs its number of output channels")
        kernel_h, kernel_w = w.shape[1:3]
    else:
        kernel_h, kernel_w, _, outputs = w.shape
    (top, bottom), (left, right) = padding
    out_h = (height + top + bottom - kernel_h) // strides[0] + 1
    out_w = (width + left + right - kernel_w) // strides[1] + 1
    result = jax.ShapeDtypeStruct((batch, out_h, out_w, outputs), jnp.float32)
    window = {
        "stride_h": np.int64(strides[0]), "stride_w": np.int64(strides[1]),
        "pad_top": np.int64(top), "pad_left": np.int64(left),
    }  # fmt: skip
    if bias is None:
        return jax.ffi.ffi_call(TARGET, result)(x, w, **window)
    return jax.ffi.ffi_call(FUSED_TARGET, result)(x, w, bias, activation=np.int64(ACTIVATIONS[activation]), **window)
