"""f32 matrix products by a constant matrix through the XLA device's native GEMM kernel (``hetero_sdk_gemm_f32``,
:mod:`hetero_sdk_jax.native`, ``native/src/gemm_f32.cc``).

The kernel computes ``A [M, K]`` by ``B [K, N]`` with ``B`` packed in panels of :data:`PANEL` columns
(:func:`packed_b`), ``A`` packed per call, in AVX-512 register tiles of up to 12 rows by 32 columns
(optionally adding a bias ``[N]``: ``hetero_sdk_gemm_f32_bias``). :func:`prepare` (MatMul's compile-time
hook) replaces a read-only f32 Constant ``B`` (either orientation: ``transpose_b``) of a MatMul in the
kernel's class (:func:`faster_natively`) by its packed form once; the MatMul lowering then calls
:func:`native_matmul` (so does :data:`~hetero_sdk_jax.matmul_bias.MATMUL_BIAS`'s, a MatMul and its
per-column bias Add as one op, the bias added in the kernel). A packed ``B`` that reaches XLA's dot after all
(a 16-bit precision) is put back by :func:`unpacked_b`.

The kernel's in-place path (:data:`FUSED_TARGET`, :func:`native_fused_matmul`) reads ``A`` where it lies (no
packing per call: any number of rows), in register tiles of 12 rows by 32 columns, 8 by 48 or 6 by 64, and adds
a bias and applies an activation (:data:`ACTIVATIONS`) to the registers before the store. The fused 1x1
convolutions (:data:`FUSED_CONVOLUTION`, stride 1, no pads) run on it: :func:`prepare_pointwise` (the fused
op's compile-time hook) packs the filter ``[O, I, 1, 1]`` as ``B`` ``[I, O]`` (:func:`packed_filter`), and the
convolution lowering multiplies the channels-last pixels ``[N H W, I]`` by it; where those pixels are a channel
concatenate, the same path reads its parts in place (:mod:`.concat_pointwise`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from hetero_sdk import Node, Type

from hetero_sdk_jax.lowering.weight_layout import PreparedByIdentity, aligned_read_only
from hetero_sdk_jax.native import use_native

__all__ = [
    "ACTIVATIONS", "FUSED_TARGET", "MATMUL_BIAS", "MAX_DEPTH", "MAX_ROWS", "MIN_IN_PLACE_DEPTH", "MIN_WEIGHT", "PANEL",
    "PRODUCTS",
    "TARGET", "TARGET_BIAS", "columns", "faster_in_place", "faster_natively", "is_packed", "is_packed_filter",
    "native_fused_matmul",
    "native_matmul", "packed_b", "packed_filter", "pointwise_filter", "prepare", "prepare_pointwise", "unpacked_b",
]  # fmt: skip

TARGET = "hetero_sdk_gemm_f32"
"""The native kernel's FFI target."""

TARGET_BIAS = "hetero_sdk_gemm_f32_bias"
"""The same kernel adding a bias ``[N]`` to each row."""

FUSED_TARGET = "hetero_sdk_gemm_f32_fused"
"""The kernel's in-place path: ``A`` read where it lies (no packing per call), a bias ``[N]`` added and an
activation (:data:`ACTIVATIONS`) applied to the registers before the store (:func:`native_fused_matmul`)."""

ACTIVATIONS = {"none": 0, "relu": 1, "silu": 2, "hswish": 3}
""":data:`FUSED_TARGET`'s activations, by name, and the codes the kernel takes (silu: ``v * sigmoid(v)``;
hswish: ``v * min(max(v + 3, 0), 6) / 6``)."""

MIN_IN_PLACE_DEPTH = 128
"""From this depth (K) the in-place path is taken at any number of rows (:func:`faster_in_place`)."""

PANEL = 32
"""Columns of ``B`` per packed panel (two 16-lane vectors)."""

MAX_ROWS = 128
"""The most rows of ``A`` (all its axes but the last) the kernel is used for (:func:`faster_natively`)."""

MIN_WEIGHT = 4096
"""The fewest elements of ``B`` the kernel is used for (:func:`faster_natively`)."""

MAX_DEPTH = 1 << 24
"""The largest ``K`` the kernel takes (it gathers ``A``'s columns with 32-bit offsets)."""

_B = 1
"""MatMul's second input."""

MATMUL_BIAS = "XlaMatMulBias"
"""The type name of :data:`~hetero_sdk_jax.matmul_bias.MATMUL_BIAS_OP`, a MatMul and its per-column bias as one op."""

PRODUCTS = frozenset({"MatMul", MATMUL_BIAS})
"""The op types whose second input the kernel may read packed: MatMul and :data:`MATMUL_BIAS` (MatMul's inputs
and attributes, plus a bias)."""


def packed_b(b: np.ndarray) -> np.ndarray:
    """``B`` ``[K, N]`` as the kernel reads it, ``[ceil(N / 32), K, 32]``: ``[n // 32, k, n % 32] = B[k, n]``,
    zero past ``N``; read-only and aligned (:func:`~.weight_layout.aligned_read_only`)."""
    depth, columns = b.shape
    panels = -(-columns // PANEL)
    padded = np.zeros((depth, panels * PANEL), np.float32)
    padded[:, :columns] = b
    return aligned_read_only(padded.reshape(depth, panels, PANEL).transpose(1, 0, 2))


def unpacked_b(packed: Any, columns: int) -> Any:
    """:func:`packed_b`'s result back as ``B`` ``[K, N]``, in XLA."""
    panels, depth, panel = packed.shape
    return jnp.transpose(packed, (1, 0, 2)).reshape(depth, panels * panel)[:, :columns]


_PACKED = PreparedByIdentity(packed_b)
_PACKED_TRANSPOSED = PreparedByIdentity(lambda w: packed_b(np.asarray(w).T))


def faster_natively(rows: int, depth: int, columns: int) -> bool:
    """The products ``[rows, depth] x [depth, columns]`` where the kernel measured faster than XLA's dot
    (``bench/bench_native_gemm.py``, one thread, CPU time): up to :data:`MAX_ROWS` rows, where reading ``B``
    dominates (0.46-0.75x XLA's time at the CRNN's, PP-OCRv4 rec's and magika's products, 20-40 rows;
    0.71x at 128 rows by 512x512), of a ``B`` of at least :data:`MIN_WEIGHT` elements and ``K`` up to
    :data:`MAX_DEPTH`. Not taken: more rows, where the product is bound by arithmetic and XLA's dot was
    level or faster for some shapes (256 rows 0.84-1.09x by the shape, 1.09x at 1024x128; 400-1024 rows
    1.16-1.17x), and smaller weights (a call's fixed cost against a dot XLA may fuse with its neighbours)."""
    return 1 <= rows <= MAX_ROWS and 1 <= depth <= MAX_DEPTH and depth * columns >= MIN_WEIGHT and columns >= 1


def columns(node: Node) -> int:
    """``N``, the columns of the MatMul ``node``'s constant second input (``[K, N]``, ``[N, K]`` transposed)."""
    return node.input_value(_B).partial_shape.dims[0 if node.attrs["transpose_b"] else 1]


def is_packed(node: Node, b: Any) -> bool:
    """True when ``b``, the second input the MatMul ``node``'s lowering received, is :func:`packed_b`'s form
    (three axes for the graph's two)."""
    return node.type_name in PRODUCTS and getattr(b, "ndim", 0) == 3 and node.input_value(_B).partial_shape.rank == 2


def prepare(node: Node, values: Sequence[np.ndarray | None]) -> dict[int, np.ndarray | None]:
    """``B`` packed for the kernel (:func:`packed_b`) in place of the second input of a MatMul (or another of
    :data:`PRODUCTS`) when it is a read-only f32 Constant ``[K, N]`` (``[N, K]`` with ``transpose_b``), the
    first input is f32 of static shape and not transposed, the product is in the kernel's class
    (:func:`faster_natively`) and the lowering being traced may call the kernel; ``{}`` otherwise."""
    if node.type_name not in PRODUCTS or len(values) <= _B:
        return {}
    w = values[_B]
    if w is None or w.dtype != np.float32 or w.ndim != 2 or w.flags.writeable:
        return {}
    a = node.input_value(0)
    if a.element_type is not Type.f32 or not a.partial_shape.is_static or node.attrs["transpose_a"]:
        return {}
    shape = a.partial_shape.to_shape()
    transposed = bool(node.attrs["transpose_b"])
    depth, columns = w.shape[::-1] if transposed else w.shape
    if len(shape) < 2 or shape[-1] != depth or not faster_natively(math.prod(shape[:-1]), depth, columns):
        return {}
    if not use_native(TARGET if node.type_name == "MatMul" else TARGET_BIAS):
        return {}
    return {_B: (_PACKED_TRANSPOSED if transposed else _PACKED).get(w)}


def native_matmul(a: Any, packed: Any, columns: int, bias: Any = None) -> Any:
    """``a @ B (+ bias)`` for ``a`` ``[..., K]`` f32 and ``B`` ``[K, columns]`` packed (:func:`packed_b`),
    through the kernel: ``[..., columns]``."""
    lead, depth = a.shape[:-1], a.shape[-1]
    flat = jnp.reshape(a, (math.prod(lead), depth))
    result = jax.ShapeDtypeStruct((flat.shape[0], columns), jnp.float32)
    if bias is None:
        out = jax.ffi.ffi_call(TARGET, result)(flat, packed)
    else:
        out = jax.ffi.ffi_call(TARGET_BIAS, result)(flat, packed, jnp.asarray(bias, jnp.float32))
    return jnp.reshape(out, (*lead, columns))


def native_fused_matmul(a: Any, packed: Any, columns: int, bias: Any, activation: str = "none") -> Any:
    """``activation(a @ B + bias)`` for ``a`` ``[..., K]`` f32, ``B`` ``[K, columns]`` packed (:func:`packed_b`)
    and ``bias`` ``[columns]``, through :data:`FUSED_TARGET` (``A`` read in place): ``[..., columns]``."""
    lead, depth = a.shape[:-1], a.shape[-1]
    flat = jnp.reshape(a, (math.prod(lead), depth))
    result = jax.ShapeDtypeStruct((flat.shape[0], columns), jnp.float32)
    call = jax.ffi.ffi_call(FUSED_TARGET, result)
    out = call(flat, packed, jnp.asarray(bias, jnp.float32), activation=np.int64(ACTIVATIONS[activation]))
    return jnp.reshape(out, (*lead, columns))


def faster_in_place(rows: int, depth: int, columns: int, activation: str) -> bool:
    """The products with a bias and ``activation`` (:data:`ACTIVATIONS`) where :data:`FUSED_TARGET` measured faster than
    XLA's dot followed by its bias and activation loop and than the dot alone (``bench/bench_native_gemm.py --fused
    --cpu-time``, one thread, interleaved, load 3.8): at least :data:`MIN_IN_PLACE_DEPTH` deep at any number of rows
    (0.75-0.95 of the dot and loop, 0.79-1.0 of the dot: PP-OCRv4 rec's 128-480 channel 1x1 layers with HSwish,
    YOLOv8n's and YOLOX's with SiLU), or up to :data:`MAX_ROWS` rows (rec's 40-row and 1-row layers: 0.48-0.80 and
    0.56-0.86), or with SiLU at any depth and number of rows: shallower products over more rows (YOLO's 24-96 channels
    at 676-10816 pixels) are 0.73-0.90 of XLA's dot and loop but 1.03-1.19 of the dot alone, and XLA's loop after the
    dot stays where the SiLU is written as ``tanh`` (YOLOX's 10816x48 pairs' loop: bias, SiLU, slices, residual add and
    concat, 437 us at p0, keeps the slices, add and concat at 309 us). Whole models, every such SiLU layer taken against
    the rule without them (``--fused --take-all --models yolov8n yolox --runs 40-100``, five runs, three of them with
    the heads' few layers without activation taken too; load 1.9-2.5): YOLOv8n 0.98-0.99, YOLOX 0.97-1.00; XLA's per-op
    p0 sums of products, native kernels and loops (``bench_op_profile.py --percentile 0``, main's build against this
    one's with the kernel's prefetch): YOLOv8n 4485 -> 4333 us, YOLOX 13497 -> 12945 us. Not taken: HSwish and ReLU
    below :data:`MIN_IN_PLACE_DEPTH` over more rows (PP-OCRv4 rec's 16-64 channels at 1920-3840 pixels: 0.69-0.94 of the
    dot and loop but 0.86-1.09 of the dot, XLA's loop of them cheap or fused onward; rec 1.02 with them taken, det
    1.01). Whole models with the rule of depth and rows alone, on / off in one process (``--models ppocr-rec yolov8n
    yolox``, 300 runs, load 4.1-4.4): rec 1.00, YOLOv8n 0.99-1.01, YOLOX 1.00."""
    if rows < 1 or not 1 <= depth <= MAX_DEPTH or columns < 1 or activation not in ACTIVATIONS:
        return False
    return depth >= MIN_IN_PLACE_DEPTH or rows <= MAX_ROWS or activation == "silu"


FUSED_CONVOLUTION = "XlaConvolution"
"""The op (:data:`~hetero_sdk_jax.convolution_fusion.CONVOLUTION_OP`, a convolution with its bias and activation)
whose 1x1 filter :func:`prepare_pointwise` packs."""

_FILTER = 1


def packed_filter(w: np.ndarray) -> np.ndarray:
    """A 1x1 filter ``[O, I, 1, 1]`` as ``B`` ``[I, O]`` packed for the kernel (:func:`packed_b`)."""
    outputs, inputs = w.shape[:2]
    return packed_b(np.asarray(w).reshape(outputs, inputs).T)


_PACKED_FILTER = PreparedByIdentity(packed_filter)


def is_packed_filter(node: Node, w: Any) -> bool:
    """True when ``w``, the filter the fused convolution ``node``'s lowering received, is :func:`packed_filter`'s
    form (three axes for the graph's four)."""
    return (
        node.type_name == FUSED_CONVOLUTION
        and getattr(w, "ndim", 0) == 3
        and node.input_value(_FILTER).partial_shape.rank == 4
    )


def pointwise_filter(packed: Any, inputs: int, outputs: int) -> Any:
    """:func:`packed_filter`'s result back as the convolution lowering reads filters, ``[1, 1, I, O]``, in XLA."""
    return unpacked_b(packed, outputs).reshape(1, 1, inputs, outputs)


def prepare_pointwise(node: Node, values: Sequence[np.ndarray | None]) -> dict[int, np.ndarray | None]:
    """The filter packed for :data:`FUSED_TARGET` (:func:`packed_filter`) in place of the filter of a fused 1x1
    convolution (:data:`FUSED_CONVOLUTION`) when it is a read-only f32 Constant ``[O, I, 1, 1]``, the data f32
    ``[N, I, H, W]`` of static shape, strides 1 and no pads, the product ``[N H W, I] x [I, O]`` in the in-place
    path's class (:func:`faster_in_place`) and the lowering being traced may call the kernel; ``{}`` otherwise."""
    if node.type_name != FUSED_CONVOLUTION or len(values) <= _FILTER:
        return {}
    w = values[_FILTER]
    if w is None or w.dtype != np.float32 or w.ndim != 4 or w.shape[2:] != (1, 1) or w.flags.writeable:
        return {}
    attrs = node.attrs
    if any(s != 1 for s in attrs["strides"]) or any(p != 0 for p in (*attrs["pads_begin"], *attrs["pads_end"])):
        return {}
    x = node.input_value(0)
    if x.element_type is not Type.f32 or not x.partial_shape.is_static or x.partial_shape.rank != 4:
        return {}
    batch, channels, height, width = (int(d) for d in x.partial_shape.to_shape())
    outputs = w.shape[0]
    if channels != w.shape[1] or not faster_in_place(batch * height * width, channels, outputs, attrs["activation"]):
        return {}
    if not use_native(FUSED_TARGET):
        return {}
    return {_FILTER: _PACKED_FILTER.get(w)}
