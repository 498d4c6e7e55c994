"""TEMPLATE's variants of reference kernels that call numpy directly on numpy arrays, for the many small
ops of a decoder's step (a token of a small decoder runs ~350 ops on arrays of a few dozen elements,
where the reference kernels' array-API dispatch, integer-list conversions and shape arithmetic cost
more than the arithmetic). Each computes exactly what the reference kernel computes (the same numpy
function on the same operands) and hands every other input (other element types, jax arrays) to it."""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from hetero_sdk import Node
from hetero_sdk.plugin import get_kernel, reshape_dims
from template_plugin.bound_depthwise import GEOMETRIES_KEPT

__all__ = ["DIRECT_KERNELS", "bind_direct", "broadcast_shape"]

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


@functools.lru_cache(maxsize=256)
def broadcast_shape(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    """``np.broadcast_shapes(a, b)``, kept per pair of shapes (it costs ~2 us a call)."""
    return np.broadcast_shapes(a, b)


def _unary(ufunc: np.ufunc, op: str) -> Callable[..., Any]:
    """``op``'s kernel: ``ufunc`` on an f32/f64 numpy array (the reference's array-API function is it)."""
    reference = get_kernel(op)

    def unary(node: Node, x: Any) -> Any:
        if type(x) is np.ndarray and x.dtype in _FLOATS:
            return ufunc(x)
        return reference(node, x)

    return unary


def _binary(ufunc: np.ufunc, op: str) -> Callable[..., Any]:
    """``op``'s kernel: ``ufunc`` on two f32/f64 numpy arrays of one element type."""
    reference = get_kernel(op)

    def binary(node: Node, a: Any, b: Any) -> Any:
        if type(a) is np.ndarray and type(b) is np.ndarray and a.dtype in _FLOATS and b.dtype == a.dtype:
            return ufunc(a, b)
        return reference(node, a, b)

    return binary


def _matmul(node: Node, a: Any, b: Any) -> Any:
    """``MatMul`` of two f32 (or two f64) numpy matrices or stacks without transposes: ``np.matmul``."""
    if (
        type(a) is np.ndarray and type(b) is np.ndarray and a.dtype in _FLOATS and b.dtype == a.dtype
        and a.ndim > 1 and b.ndim > 1 and not node.attrs["transpose_a"] and not node.attrs["transpose_b"]
    ):  # fmt: skip
        return np.matmul(a, b)
    return get_kernel("MatMul")(node, a, b)


def _concat(node: Node, *xs: Any) -> Any:
    """``Concat`` of numpy arrays: ``np.concat``, the array-API function the reference calls."""
    for x in xs:
        if type(x) is not np.ndarray:
            return get_kernel("Concat")(node, *xs)
    return np.concat(xs, axis=node.attrs["axis"])


def _broadcast(node: Node, x: Any, target: Any, *mapping: Any) -> Any:
    """``Broadcast`` of a numpy array in ``numpy`` or ``bidirectional`` mode: a fresh copy of the
    broadcast, as the reference's, written by one ``np.copyto``."""
    mode = node.attrs["mode"]
    if type(x) is not np.ndarray or type(target) is not np.ndarray or mode not in ("numpy", "bidirectional"):
        return get_kernel("Broadcast")(node, x, target, *mapping)
    shape = tuple(target.reshape(-1).tolist())
    if mode == "bidirectional":
        shape = broadcast_shape(x.shape, shape)
    out = np.empty(shape, x.dtype)
    np.copyto(out, x)  # raises, as the reference's broadcast_to, when x does not broadcast to shape
    return out


def _range(node: Node, start: Any, stop: Any, step: Any) -> Any:
    """``Range`` of numpy integers to an integer type: the reference's arithmetic (bounds as floats, the
    count rounded up, ``start + arange(count) * step`` in int64) without its truncations, which integers
    do not need; other inputs (floats, a step of 0) go to the reference kernel."""
    values = (start, stop, step)
    if node.attrs["output_type"].is_integral and all(
        type(v) is np.ndarray and v.dtype.kind in "iu" and v.size == 1 for v in values
    ):
        first, last, delta = (float(v.reshape(-1)[0]) for v in values)
        if delta:
            count = max(math.ceil((last - first) / delta), 0)
            if first == 0 and delta == 1:
                return np.arange(count, dtype=np.int64)  # 0 + arange * 1
            return int(first) + np.arange(count, dtype=np.int64) * int(delta)
    return get_kernel("Range")(node, start, stop, step)


@functools.lru_cache(maxsize=64)
def _parts(rank: int, dim: int, size: int, parts: int) -> tuple[tuple[slice, ...], ...]:
    """The index of each part of ``Split``: ``parts`` slices of ``size // parts`` along ``dim``."""
    step = size // parts
    return tuple((slice(None),) * dim + (slice(k * step, (k + 1) * step),) for k in range(parts))


def _split(node: Node, x: Any, axis: Any) -> Any:
    """``Split`` of a numpy array: views of its equal parts, as the reference's slices."""
    if type(x) is not np.ndarray or type(axis) is not np.ndarray or x.ndim == 0:
        return get_kernel("Split")(node, x, axis)
    dim = int(axis.reshape(-1)[0]) % x.ndim
    return tuple(x[index] for index in _parts(x.ndim, dim, x.shape[dim], node.attrs["num_splits"]))


DIRECT_KERNELS: dict[str, Any] = {
    "Sqrt": _unary(np.sqrt, "Sqrt"),
    "Negative": _unary(np.negative, "Negative"),
    "Exp": _unary(np.exp, "Exp"),
    "Cos": _unary(np.cos, "Cos"),
    "Sin": _unary(np.sin, "Sin"),
    "Tanh": _unary(np.tanh, "Tanh"),
    "Divide": _binary(np.divide, "Divide"),
    "Power": _binary(np.power, "Power"),
    "MatMul": _matmul,
    "Concat": _concat,
    "Broadcast": _broadcast,
    "Range": _range,
    "Split": _split,
}
"""Kernels with the reference's signature (``kernel(node, *inputs)``); float Divide is true division and
float Power ``np.power`` in the reference too."""


def bind_direct(node: Node) -> Any:
    """The kernel of a Transpose whose order is a Constant (one numpy ``transpose``, a view, as the
    reference's ``permute_dims``) or of a Reshape whose pattern is computed (its output shape kept per
    input shape and pattern, the last 16); None for other nodes."""
    if node.type_name == "Transpose" and node.input_value(1).node.type_name == "Constant":
        order = tuple(int(v) for v in np.asarray(node.input_value(1).node.attrs["value"]).reshape(-1))

        def transpose(node: Node, x: Any, perm: Any) -> Any:
            if type(x) is np.ndarray and len(order) in (x.ndim, 0):
                return x.transpose(order or None)
            return get_kernel("Transpose")(node, x, perm)

        return transpose
    if node.type_name == "Reshape" and node.input_value(1).node.type_name != "Constant":
        special_zero = node.attrs["special_zero"]
        dims = functools.lru_cache(maxsize=GEOMETRIES_KEPT)(
            lambda shape, pattern: reshape_dims(shape, pattern, special_zero)
        )

        def reshape(node: Node, x: Any, pattern: Any) -> Any:
            if type(x) is np.ndarray and type(pattern) is np.ndarray:
                return x.reshape(dims(x.shape, tuple(pattern.reshape(-1).tolist())))
            return get_kernel("Reshape")(node, x, pattern)

        return reshape
    return None
