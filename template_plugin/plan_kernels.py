"""TEMPLATE's own variants of reference kernels, registered in its kernel registry
(:mod:`template_plugin.kernels`), which its execution plan picks over them: the convolutions, the common
float elementwise ops, Softmax and the fused MatMul writing into the request's arena, ReduceMean without a
widened copy of its input, MaxPool without the indices nobody reads, Convert to floats and between integers
without per-call type look-ups, the views and pads bound to their constant inputs, and the numpy calls of
:mod:`template_plugin.direct_kernels`."""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from operator import itemgetter, methodcaller
from typing import Any

import numpy as np

from hetero_sdk import Node
from hetero_sdk.plugin import (
    get_kernel,
    integer_saturation,
    reduced_axes,
    reshape_dims,
    slice_index,
    squeezed_dims,
    strided_slice_index,
    unsqueezed_dims,
)
from template_plugin.bound_conv import bind_convolution, kept_plans
from template_plugin.bound_depthwise import GEOMETRIES_KEPT
from template_plugin.convolution import convolution_backprop_data, grouped_convolution, run_convolution
from template_plugin.direct_kernels import DIRECT_KERNELS, bind_direct, broadcast_shape
from template_plugin.fused_conv import CONVOLUTION, convolution_into, finish
from template_plugin.fused_ops import FULLY_CONNECTED
from template_plugin.interpolate import interpolate
from template_plugin.kernels import LENDING_KERNELS, binder, kernel, lending_kernel
from template_plugin.pooling import max_pool_without_indices
from template_plugin.reductions import mean, ones_of
from template_plugin.squeeze_excitation import SQUEEZE_EXCITATION, squeeze_excitation_into
from template_plugin.workspace import Workspace

__all__ = [
    "IN_PLACE",
    "bind_pad",
    "bind_plain_convolution",
    "bind_view",
    "convert",
    "gather",
    "reduce_mean",
]


def _compact(y: np.ndarray, workspace: Workspace) -> np.ndarray:
    """``y``, or a copy into a lent buffer when it is a view (of a workspace temporary, maybe)."""
    if y.flags.c_contiguous and (y.base is None or workspace.lent(y)):
        return y
    out = workspace.output(y.shape, y.dtype)
    np.copyto(out, y)
    return out


def _convolution(node: Node, workspace: Workspace, x: np.ndarray, w: np.ndarray) -> np.ndarray:
    return _compact(grouped_convolution(node, x, w[np.newaxis], workspace), workspace)


def _group_convolution(node: Node, workspace: Workspace, x: np.ndarray, w: np.ndarray) -> np.ndarray:
    return _compact(grouped_convolution(node, x, w, workspace), workspace)


def bind_plain_convolution(node: Node, filters: Any) -> Any:
    """The kernel of a Convolution or GroupConvolution (one without a bias to fuse: an STFT written as a convolution):
    with constant f32/f64 ``filters``, one that keeps its plans (:func:`~template_plugin.bound_conv.kept_plans`,
    ``kernel.plans``); else the general one."""
    general = LENDING_KERNELS.get(node.type_name)
    if not isinstance(filters, np.ndarray) or filters.dtype not in _FLOATS:
        return general
    plans = kept_plans(filters if node.type_name == "GroupConvolution" else filters[np.newaxis])

    def convolution(node: Node, workspace: Workspace, x: np.ndarray, w: np.ndarray) -> np.ndarray:
        if w is not filters:
            return general(node, workspace, x, w)
        return _compact(run_convolution(plans(node, x.shape), x, workspace), workspace)

    convolution.plans = plans  # type: ignore[attr-defined]
    return convolution


_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
SMALL = 1024
"""Elementwise results of at most this many elements are fresh arrays, not lent buffers: allocating a few
KiB faults in no pages, and a decoder's step runs dozens of such ops on one token's vectors."""
_STANDARD = frozenset(
    np.dtype(t) for t in (np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64)
) | frozenset(_FLOATS)
"""Element types Convert reads as they are (not through f32 or i8, as it reads the narrow ones)."""


def _binary(ufunc: np.ufunc, op: str) -> Any:
    """``op``'s kernel writing into a lent buffer for f32 and f64 (the reference kernel for the rest)."""
    reference = get_kernel(op)

    def binary(node: Node, workspace: Workspace, a: np.ndarray, b: np.ndarray) -> Any:
        if a.dtype not in _FLOATS or b.dtype != a.dtype:
            return reference(node, a, b)
        if a.shape == b.shape:
            shape, size = a.shape, a.size
        else:
            shape = broadcast_shape(a.shape, b.shape)
            size = math.prod(shape)
        if size <= SMALL:
            return ufunc(a, b)  # a small fresh array costs less than the arena's bookkeeping
        return ufunc(a, b, out=workspace.output(shape, a.dtype))

    return binary


def _relu(node: Node, workspace: Workspace, x: np.ndarray) -> Any:
    if x.dtype not in _FLOATS:
        return get_kernel("Relu")(node, x)
    zeros = np.zeros(x.shape[-1:], x.dtype)  # a row of zeros: numpy's maximum is 2-3x slower with a scalar
    return np.maximum(x, zeros, out=workspace.output(x.shape, x.dtype))


def _clamp(node: Node, workspace: Workspace, x: np.ndarray) -> Any:
    if x.dtype not in _FLOATS:
        return get_kernel("Clamp")(node, x)
    return np.clip(x, node.attrs["min"], node.attrs["max"], out=workspace.output(x.shape, x.dtype))


def _sigmoid(node: Node, workspace: Workspace, x: np.ndarray) -> Any:
    if x.dtype not in _FLOATS:
        return get_kernel("Sigmoid")(node, x)
    y = np.negative(x, out=workspace.output(x.shape, x.dtype))  # 1 / (1 + exp(-x)), as the reference
    np.exp(y, out=y)
    np.add(1, y, out=y)
    return np.divide(1, y, out=y)


def _softmax(node: Node, workspace: Workspace, x: np.ndarray) -> Any:
    if x.dtype not in _FLOATS:
        return get_kernel("Softmax")(node, x)
    axis = node.attrs["axis"]  # exp(x - max) / sum, as the reference
    y = np.subtract(x, x.max(axis=axis, keepdims=True), out=workspace.output(x.shape, x.dtype))
    np.exp(y, out=y)
    return np.divide(y, y.sum(axis=axis, keepdims=True), out=y)


def _fully_connected(node: Node, workspace: Workspace, a: np.ndarray, b: np.ndarray, bias: np.ndarray) -> Any:
    activation = node.attrs["activation"]
    if activation not in ("none", "relu") or min(a.ndim, b.ndim) < 2 or a.dtype not in _FLOATS:
        return get_kernel(FULLY_CONNECTED)(node, a, b, bias)
    a = np.swapaxes(a, -1, -2) if node.attrs["transpose_a"] else a
    b = np.swapaxes(b, -1, -2) if node.attrs["transpose_b"] else b
    shape = (*broadcast_shape(a.shape[:-2], b.shape[:-2]), a.shape[-2], b.shape[-1])
    y = np.matmul(a, b, out=workspace.output(shape, a.dtype))  # matmul + bias [+ relu], as the reference
    return finish(activation, workspace, np.add(y, bias, out=y), None, None)


IN_PLACE = frozenset({"Add", "Multiply", "Subtract", "Relu", "Clamp", "Sigmoid", "Softmax", SQUEEZE_EXCITATION})
"""The lending kernels that may write their result over an input of the result's shape and dtype (their
workspace's :meth:`output` may be that input: each element is read before it is written, Softmax's
after its maximum along the axis, TemplateSqueezeExcitation's after its mean over the spatial axes)."""


@functools.lru_cache(maxsize=256)
def _trailing_mean(shape: tuple[int, ...], axes: tuple[int, ...]) -> tuple[int, tuple[int, ...]] | None:
    """For a mean over ``axes`` of an array of ``shape``: the count of elements each mean takes and the
    kept dimensions, when the axes are the trailing ones and none is empty; else None."""
    axis = reduced_axes(len(shape), axes)
    if not axis or axis != tuple(range(len(shape) - len(axis), len(shape))) or 0 in (shape[a] for a in axis):
        return None
    return math.prod(shape[a] for a in axis), shape[: len(shape) - len(axis)]


def reduce_mean(node: Node, x: Any, axes: Any) -> Any:
    """``ReduceMean`` of a float32 or float64 input by :func:`template_plugin.reductions.mean` (float32
    sums by BLAS over trailing axes, float64 accumulation over others); other inputs go to the reference
    kernel. Over the trailing axes of a contiguous array (a layer norm's statistics) it computes what
    :func:`~template_plugin.reductions.mean` does with the axis arithmetic kept per shape."""
    if type(x) is np.ndarray and x.dtype in _FLOATS and x.flags.c_contiguous and type(axes) is np.ndarray:
        trailing = _trailing_mean(x.shape, tuple(axes.reshape(-1).tolist()))
        if trailing is not None:
            count, kept = trailing
            sums = np.matmul(x.reshape(-1, count), ones_of(count, x.dtype))
            np.divide(sums, count, out=sums)
            return sums.reshape(kept + (1,) * (x.ndim - len(kept)) if node.attrs["keep_dims"] else kept)
    axis = reduced_axes(x.ndim, axes)
    if type(x) is not np.ndarray or x.dtype not in _FLOATS or not axis or 0 in (x.shape[a] for a in axis):
        return get_kernel("ReduceMean")(node, x, axes)
    return mean(x, axis, node.attrs["keep_dims"])


def convert(node: Node, x: Any) -> Any:
    """``Convert`` between numpy integer types of 8 bits or more: saturated at the destination's limits
    (one clip, only where the source's range exceeds them), then cast, as the reference kernel computes it
    without its per-call type look-ups (shape subgraphs convert a few integers per inference); from a
    standard numpy type to f32 or f64, one cast, as the reference's; other conversions go to the
    reference kernel."""
    target = node.attrs["destination_type"].numpy
    if type(x) is np.ndarray and x.dtype in _STANDARD and target in _FLOATS:
        return x.astype(target)  # what the reference computes for these types
    if type(x) is not np.ndarray or x.dtype.kind not in "iu" or np.dtype(target).kind not in "iu":
        return get_kernel("Convert")(node, x)
    bounds = integer_saturation(x.dtype, np.dtype(target))
    return (x if bounds is None else np.clip(x, *bounds)).astype(target)


def gather(node: Node, x: Any, indices: Any, axis: Any) -> Any:
    """``Gather`` of numpy arrays without batch dimensions whose indices all lie in range (negative ones
    count from the end): one ``np.take``. The reference kernel, written for numpy and ``jax.numpy`` alike,
    spends more than that on a handful of elements building its masks and per-batch stacks (shape subgraphs
    and recurrent state slicing gather a few values per inference); other calls go to it."""
    if type(x) is np.ndarray and type(indices) is np.ndarray and x.ndim and indices.dtype.kind in "iu":
        batch = node.attrs["batch_dims"]
        dim = int(np.asarray(axis).reshape(-1)[0]) % x.ndim
        size = x.shape[dim]
        if (batch if batch >= 0 else batch + indices.ndim) == 0 and (
            indices.size == 0 or (size and indices.min() >= -size and indices.max() < size)
        ):
            return np.take(x, indices, axis=dim)
    return get_kernel("Gather")(node, x, indices, axis)


def _constant_ints(node: Node, inputs: slice) -> list[list[int]] | None:
    """The values of ``node``'s ``inputs`` as integer lists, or None unless every one is a Constant."""
    sources = [v.node for v in node.input_values()[inputs]]
    if any(source.type_name != "Constant" for source in sources):
        return None
    return [[int(v) for v in np.asarray(source.attrs["value"]).reshape(-1)] for source in sources]


_Take = Callable[[np.ndarray], np.ndarray]

_VIEWS: dict[str, Callable[[Node, list[list[int]], tuple[int, ...]], _Take]] = {
    "Reshape": lambda node, given, shape: methodcaller(
        "reshape", reshape_dims(shape, given[0], node.attrs["special_zero"])
    ),
    "Squeeze": lambda node, given, shape: methodcaller("reshape", squeezed_dims(shape, given[0] if given else None)),
    "Unsqueeze": lambda node, given, shape: methodcaller("reshape", unsqueezed_dims(shape, given[0])),
    "Slice": lambda node, given, shape: itemgetter(slice_index(len(shape), *given)),
    "StridedSlice": lambda node, given, shape: itemgetter(strided_slice_index(node, *given)),
}
"""How each op takes its view of an input of a given shape, from its constant inputs (as integer lists)."""


def bind_view(node: Node) -> Any:
    """The kernel of a Reshape, Squeeze, Unsqueeze, Slice or StridedSlice whose other inputs are all
    Constants: it keeps, per input shape (the last 16), how to take its result (a reshape to the output
    shape, or a numpy index), so that a call is one numpy reshape or indexing, a view of its input,
    instead of the reference kernel's shape and index arithmetic (a recurrent model runs a few dozen
    such ops per inference). None for other nodes."""
    given = _constant_ints(node, slice(1, None)) if node.type_name in _VIEWS else None
    if given is None:
        return None
    how = _VIEWS[node.type_name]
    take = functools.lru_cache(maxsize=GEOMETRIES_KEPT)(lambda shape: how(node, given, shape))

    def view(node: Node, x: Any, *constants: Any) -> Any:
        return take(x.shape)(x) if type(x) is np.ndarray else get_kernel(node.type_name)(node, x, *constants)

    return view


def bind_pad(node: Node) -> Any:
    """The kernel of a Pad whose pads are Constants: per input shape (the last 16) it keeps where every
    output element comes from, so that a call is one ``np.take`` per padded axis (edge, reflect and
    symmetric: the source positions are ``np.pad`` of each axis's positions, cropped as the reference
    kernel crops negative pads) or a fill and one copy (constant), instead of ``np.pad``'s per-call
    bookkeeping. None for other nodes."""
    pads = _constant_ints(node, slice(1, 3)) if node.type_name == "Pad" else None
    if pads is None:
        return None
    begin, end = pads
    mode = node.attrs["pad_mode"]

    @functools.lru_cache(maxsize=GEOMETRIES_KEPT)
    def sources_of(shape: tuple[int, ...]) -> list[tuple[int, np.ndarray]]:
        """Per padded or cropped axis, the input position of each output position."""
        taken = []
        for axis, (n, b, e) in enumerate(zip(shape, begin, end)):
            if b or e:
                positions = np.pad(np.arange(n), (max(b, 0), max(e, 0)), mode=mode)
                taken.append((axis, positions[max(-b, 0) : len(positions) - max(-e, 0)]))
        return taken

    @functools.lru_cache(maxsize=GEOMETRIES_KEPT)
    def windows_of(shape: tuple[int, ...]) -> tuple[tuple[int, ...], tuple[slice, ...], tuple[slice, ...]]:
        """The output shape, where the input goes in it, and which part of the input goes there."""
        out = tuple(max(n + b + e, 0) for n, b, e in zip(shape, begin, end))
        kept = tuple(max(min(n, n + e) - max(-b, 0), 0) for n, b, e in zip(shape, begin, end))
        target = tuple(slice(max(b, 0), max(b, 0) + k) for b, k in zip(begin, kept))
        source = tuple(slice(max(-b, 0), max(-b, 0) + k) for b, k in zip(begin, kept))
        return out, target, source

    def pad(node: Node, x: Any, *rest: Any) -> Any:
        if type(x) is not np.ndarray or x.ndim != len(begin) or 0 in x.shape:
            return get_kernel("Pad")(node, x, *rest)
        if mode != "constant":
            for axis, positions in sources_of(x.shape):
                x = np.take(x, positions, axis=axis)
            return x
        out, target, source = windows_of(x.shape)
        fill = np.asarray(rest[2]).reshape(()) if len(rest) > 2 else 0
        padded = np.full(out, fill, x.dtype)
        padded[target] = x[source]
        return padded

    return pad


for _type, _lending in {
    CONVOLUTION: convolution_into,
    "Convolution": _convolution,
    "GroupConvolution": _group_convolution,
    "Add": _binary(np.add, "Add"),
    "Multiply": _binary(np.multiply, "Multiply"),
    "Subtract": _binary(np.subtract, "Subtract"),
    "Relu": _relu,
    "Clamp": _clamp,
    "Sigmoid": _sigmoid,
    "Softmax": _softmax,
    FULLY_CONNECTED: _fully_connected,
    SQUEEZE_EXCITATION: squeeze_excitation_into,
}.items():
    lending_kernel.register(_type, _lending)
# The lending kernels: the convolutions, and the elementwise ones, Softmax and TemplateFullyConnected
# (without an activation or with relu) computing f32 and f64 as the reference kernels do, into a lent
# buffer (no fresh array, whose pages fault in on every inference); other element types go to the
# reference kernels.

for _type, _plain in {
    "ReduceMean": reduce_mean,
    "Convert": convert,
    "Gather": gather,
    "ConvolutionBackpropData": convolution_backprop_data,
    "Interpolate": interpolate,
    **DIRECT_KERNELS,
}.items():
    kernel.register(_type, _plain)


@binder("MaxPool")
def _bind_max_pool(node: Node, read: Sequence[bool]) -> Any:
    """MaxPool's values alone when nothing reads its indices."""
    return None if read[1] else max_pool_without_indices


@binder(CONVOLUTION, "Convolution", "GroupConvolution")
def _bind_convolution(node: Node, read: Sequence[bool]) -> Any:
    """The convolutions bound to their constant filters (:func:`~template_plugin.bound_conv.bind_convolution`,
    :func:`bind_plain_convolution`)."""
    filters = node.input_value(1).node
    value = filters.attrs["value"] if filters.type_name == "Constant" else None
    return bind_convolution(node, value) if node.type_name == CONVOLUTION else bind_plain_convolution(node, value)


@binder("Reshape", "Squeeze", "Unsqueeze", "Slice", "StridedSlice", "Pad", "Transpose")
def _bind_shaping(node: Node, read: Sequence[bool]) -> Any:
    """Views and pads bound to their constant inputs (:func:`bind_view`, :func:`bind_pad`), a Transpose to
    its constant order and a Reshape to its computed pattern's shapes
    (:func:`~template_plugin.direct_kernels.bind_direct`)."""
    return bind_view(node) or bind_pad(node) or bind_direct(node)
