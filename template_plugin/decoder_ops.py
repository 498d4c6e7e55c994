"""TEMPLATE's ops for a decoder's small blocks: ``TemplateRMSNorm``, ``TemplateRotateHalf`` and ``TemplateGeluTanh``.

A token of a small decoder runs a few hundred ops on arrays of a few dozen elements, where each step's
cost (a kernel call, the plan's bookkeeping) outweighs its arithmetic. An RMS norm as exporters write it
is seven ops, ``weight * (x * (1 / sqrt(mean(x ** 2) + eps))))``; a rotary embedding's rotate-half is
seven, ``x * cos + concat(-x[..., h:], x[..., :h]) * sin``; GPT-2's tanh GELU eight,
``(x * 0.5) * (tanh((x + x ** 3 * 0.044715) * sqrt(2 / pi)) + 1)``; a layer norm three,
``MVN(x) * gamma + beta``. Fused, each is one step. Produced by
:class:`template_plugin.transformations.RMSNormFusion`, :class:`~template_plugin.transformations.RotateHalfFusion`,
:class:`~template_plugin.transformations.GeluTanhFusion` and :class:`~template_plugin.transformations.LayerNormFusion`;
each kernel does the numpy operations of TEMPLATE's kernels for the ops it replaces, in the same order
(bit-identical results).
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

from hetero_sdk import Node, PartialShape
from hetero_sdk.plugin import (
    BOOL,
    DYNAMIC,
    FLOAT,
    INDEX_TYPES,
    INT,
    LOWER_STRING,
    REAL_TYPES,
    Attr,
    Input,
    OpDef,
    OutputSpec,
    as_output,
    define,
    expect_same_types,
    get_kernel,
    kernel,
)
from template_plugin.kernels import binder
from template_plugin.reductions import ones_of

__all__ = [
    "GELU_TANH",
    "GELU_TANH_OP",
    "LAYER_NORM",
    "LAYER_NORM_OP",
    "RMS_NORM",
    "RMS_NORM_OP",
    "ROTATE_HALF",
    "ROTATE_HALF_OP",
    "fits_onto",
    "gelu_tanh_block",
    "layer_norm",
    "layer_norm_of",
    "rms_norm",
    "rotate_half",
]

RMS_NORM = "TemplateRMSNorm"
"""The RMS norm's op type name."""

ROTATE_HALF = "TemplateRotateHalf"
"""The rotary embedding's op type name."""

LAYER_NORM = "TemplateLayerNorm"
"""The layer norm's op type name."""

GELU_TANH = "TemplateGeluTanh"
"""The tanh GELU's op type name."""


def rms_norm(data: Any, exponent: Any, eps: Any, one: Any, weight: Any, name: str | None = None) -> Node:
    """``weight * (data * (one / sqrt(mean(data ** exponent over the last axis) + eps)))`` as one op.

    :param data: the normalised tensor, of a real element type, its last dimension static and positive.
    :param exponent: the Power's exponent (2 as exporters write it), one value.
    :param eps: added to the mean, one value.
    :param one: the Divide's numerator (1), one value.
    :param weight: the scale; its dimensions all 1 but the last, which is 1 or the data's last.
    :param name: the node's friendly name.
    """
    x = as_output(data)
    inputs = [x, *(as_output(v, like=x) for v in (exponent, eps, one, weight))]
    return Node(RMS_NORM_OP, inputs, {}, name)


def _rms_norm_infer(node: Node) -> list[OutputSpec]:
    element_type = expect_same_types(node, *range(5))
    data = node.input_value(0).partial_shape
    if data.rank < 1 or data[-1] <= 0:
        raise node.error(f"data {data} must have a rank of 1 or more and a static, positive last dimension")
    for index, what in ((1, "exponent"), (2, "eps"), (3, "one")):
        shape = node.input_value(index).partial_shape
        if shape.rank > data.rank or any(d != 1 for d in shape.dims):
            raise node.error(f"{what} {shape} must be one value of rank <= {data.rank}")
    weight = node.input_value(4).partial_shape
    last_fits = weight.rank == 0 or weight[-1] in (1, data[-1])
    if weight.rank > data.rank or any(d != 1 for d in weight.dims[:-1]) or not last_fits:
        raise node.error(f"weight {weight} must have dims of 1 but the last, which is 1 or {data[-1]} (data {data})")
    return [(element_type, data)]


RMS_NORM_OP = define(
    OpDef(
        RMS_NORM,
        "template",
        _rms_norm_infer,
        inputs=(
            Input("data", REAL_TYPES, doc="normalised over its last axis"),
            Input("exponent", REAL_TYPES, doc="one value: the Power's exponent"),
            Input("eps", REAL_TYPES, doc="one value added to the mean"),
            Input("one", REAL_TYPES, doc="one value: the Divide's numerator"),
            Input("weight", REAL_TYPES, doc="the scale along the last axis"),
        ),
        version="template",
        doc="weight * (data * (one / sqrt(mean(data ** exponent, last axis) + eps))) in one kernel.",
    )
)


@kernel(RMS_NORM)
def _rms_norm_kernel(
    node: Node, x: np.ndarray, exponent: np.ndarray, eps: np.ndarray, one: np.ndarray, weight: np.ndarray
) -> np.ndarray:
    x = np.asarray(x)
    squares = np.power(x, exponent)  # TEMPLATE's Power
    count = squares.shape[-1]  # TEMPLATE's ReduceMean over the trailing axis of a fresh array:
    sums = np.matmul(squares.reshape(-1, count), ones_of(count, squares.dtype))
    np.divide(sums, count, out=sums)
    scale = sums.reshape((*squares.shape[:-1], 1)).astype(x.dtype, copy=False)
    np.add(scale, eps, out=scale)  # then Add, Sqrt and Divide, each one numpy call as unfused
    np.sqrt(scale, out=scale)
    np.divide(one, scale, out=scale)
    y = np.multiply(x, scale)
    return np.multiply(weight, y, out=y)


def rotate_half(data: Any, cos: Any, sin: Any, half: int, name: str | None = None) -> Node:
    """``data * cos + concat(-data[..., half:], data[..., :half]) * sin`` as one op (a rotary embedding).

    :param data: queries or keys, of a real element type, their last dimension static and ``2 * half``.
    :param cos: broadcast onto ``data`` (numpy rules) without enlarging it (:func:`fits_onto`).
    :param sin: as ``cos``.
    :param half: half the last dimension.
    :param name: the node's friendly name.
    """
    x = as_output(data)
    return Node(ROTATE_HALF_OP, [x, as_output(cos, like=x), as_output(sin, like=x)], {"half": int(half)}, name)


def _rotate_half_infer(node: Node) -> list[OutputSpec]:
    element_type = expect_same_types(node, 0, 1, 2)
    data = node.input_value(0).partial_shape
    half = node.attrs["half"]
    if data.rank < 1 or half < 1 or data[-1] != 2 * half:
        raise node.error(f"data {data} must have a static last dimension of 2 * half = {2 * half}")
    cos, sin = node.input_value(1).partial_shape, node.input_value(2).partial_shape
    if not (fits_onto(cos, data) and fits_onto(sin, data)):
        raise node.error(f"cos {cos} and sin {sin} must broadcast onto data {data} without enlarging it")
    return [(element_type, data)]


def fits_onto(table: PartialShape, data: PartialShape) -> bool:
    """True when ``table`` may broadcast onto ``data`` (numpy rules) and the result keeps ``data``'s shape:
    a rank of at most ``data``'s, each dimension 1 or ``data``'s (either dynamic, unless ``data``'s is 1)."""
    if table.rank > data.rank:
        return False
    aligned = data.dims[data.rank - table.rank :]
    return all(t in (1, d) or (DYNAMIC in (t, d) and d != 1) for t, d in zip(table.dims, aligned))


ROTATE_HALF_OP = define(
    OpDef(
        ROTATE_HALF,
        "template",
        _rotate_half_infer,
        inputs=(
            Input("data", REAL_TYPES, doc="queries or keys, [..., 2 * half]"),
            Input("cos", REAL_TYPES, doc="broadcast onto data"),
            Input("sin", REAL_TYPES, doc="broadcast onto data"),
        ),
        attrs=(Attr("half", INT, 1, doc="half the last dimension"),),
        version="template",
        doc="data * cos + concat(-data[..., half:], data[..., :half]) * sin in one kernel.",
    )
)


@kernel(ROTATE_HALF)
def _rotate_half_kernel(node: Node, x: np.ndarray, cos: np.ndarray, sin: np.ndarray) -> np.ndarray:
    x = np.asarray(x)
    half = node.attrs["half"]
    rotated = np.concat((np.negative(x[..., half:]), x[..., :half]), axis=-1)
    return np.add(np.multiply(x, cos), np.multiply(rotated, sin))


GELU_CONSTANTS = ("half", "cube", "coefficient", "scale", "one")
"""The tanh GELU's constants, in input order after ``data``."""


def gelu_tanh_block(data: Any, constants: Any, name: str | None = None) -> Node:
    """``(data * half) * (tanh((data + data ** cube * coefficient) * scale) + one)`` as one op.

    :param data: a real element type.
    :param constants: ``half`` (0.5), ``cube`` (3), ``coefficient`` (0.044715), ``scale`` (sqrt(2 / pi)) and
        ``one`` (1), each one value.
    :param name: the node's friendly name.
    """
    x = as_output(data)
    return Node(GELU_TANH_OP, [x, *(as_output(v, like=x) for v in constants)], {}, name)


def _gelu_tanh_infer(node: Node) -> list[OutputSpec]:
    element_type = expect_same_types(node, *range(6))
    data = node.input_value(0).partial_shape
    for index, what in enumerate(GELU_CONSTANTS, 1):
        shape = node.input_value(index).partial_shape
        if shape.rank > data.rank or any(d != 1 for d in shape.dims):
            raise node.error(f"{what} {shape} must be one value of rank <= {data.rank}")
    return [(element_type, data)]


GELU_TANH_OP = define(
    OpDef(
        GELU_TANH,
        "template",
        _gelu_tanh_infer,
        inputs=(
            Input("data", REAL_TYPES),
            *(Input(what, REAL_TYPES, doc="one value") for what in GELU_CONSTANTS),
        ),
        version="template",
        doc="(data * half) * (tanh((data + data ** cube * coefficient) * scale) + one) in one kernel.",
    )
)


@kernel(GELU_TANH)
def _gelu_tanh_kernel(node: Node, x: np.ndarray, *constants: np.ndarray) -> np.ndarray:
    x = np.asarray(x)
    half, cube, coefficient, scale, one = constants
    halved = np.multiply(x, half)
    y = np.power(x, cube)  # each step one numpy call on the same operands as unfused, in place
    np.multiply(y, coefficient, out=y)
    np.add(x, y, out=y)
    np.multiply(y, scale, out=y)
    np.tanh(y, out=y)
    np.add(y, one, out=y)
    return np.multiply(halved, y, out=y)


def layer_norm(data: Any, axes: Any, gamma: Any, beta: Any, mvn_attrs: dict[str, Any], name: str | None = None) -> Node:
    """``MVN(data, axes) * gamma + beta`` as one op.

    :param data: a real element type.
    :param axes: the MVN's axes.
    :param gamma: the scale; its dimensions all 1 but the last, which is 1 or the data's last.
    :param beta: the shift, shaped as ``gamma`` may be.
    :param mvn_attrs: the MVN's ``normalize_variance``, ``eps`` and ``eps_mode``.
    :param name: the node's friendly name.
    """
    x = as_output(data)
    inputs = [x, as_output(axes), as_output(gamma, like=x), as_output(beta, like=x)]
    attrs = {key: mvn_attrs[key] for key in ("normalize_variance", "eps", "eps_mode")}
    return Node(LAYER_NORM_OP, inputs, attrs, name)


def _layer_norm_infer(node: Node) -> list[OutputSpec]:
    element_type = expect_same_types(node, 0, 2, 3)
    data = node.input_value(0).partial_shape
    for index, what in ((2, "gamma"), (3, "beta")):
        shape = node.input_value(index).partial_shape
        last_fits = shape.rank == 0 or shape[-1] in (1, data[-1])
        if shape.rank > data.rank or any(d != 1 for d in shape.dims[:-1]) or not last_fits:
            raise node.error(f"{what} {shape} must have dims of 1 but the last, which is 1 or the data's ({data})")
    return [(element_type, data)]


LAYER_NORM_OP = define(
    OpDef(
        LAYER_NORM,
        "template",
        _layer_norm_infer,
        inputs=(
            Input("data", REAL_TYPES),
            Input("axes", INDEX_TYPES, doc="the MVN's axes"),
            Input("gamma", REAL_TYPES, doc="the scale along the last axis"),
            Input("beta", REAL_TYPES, doc="the shift along the last axis"),
        ),
        attrs=(
            Attr("normalize_variance", BOOL, True, doc="as MVN's"),
            Attr("eps", FLOAT, 1e-9, doc="as MVN's"),
            Attr("eps_mode", LOWER_STRING, "inside_sqrt", ("inside_sqrt", "outside_sqrt"), doc="as MVN's"),
        ),
        version="template",
        doc="MVN(data, axes) * gamma + beta in one kernel.",
    )
)


@kernel(LAYER_NORM)
def _layer_norm_kernel(node: Node, x: np.ndarray, axes: np.ndarray, gamma: np.ndarray, beta: np.ndarray) -> np.ndarray:
    x = np.asarray(x)
    if x.dtype in _FLOATS and type(axes) is np.ndarray and x.size:
        y = _mvn(x, *_geometry(x.shape, x.dtype, tuple(axes.reshape(-1).tolist())), node.attrs)
    else:  # the MVN kernel, its result as the plan casts it
        y = np.array(get_kernel("MVN")(node, x, axes), dtype=x.dtype)
    np.multiply(y, gamma, out=y)
    return np.add(y, beta, out=y)


def layer_norm_of(axes: tuple[int, ...], eps: float, inside: bool) -> Any:
    """``values(x, gamma, beta)``: what ``TemplateLayerNorm`` of these (Constant) ``axes``, ``eps`` and
    ``eps_mode`` (``inside``: ``inside_sqrt``) that normalises the variance computes for a non-empty f32 or
    f64 numpy array ``x``: :func:`_mvn`'s numpy calls, each input shape's axes and count kept."""
    add, divide, multiply, sqrt, total = np.add, np.true_divide, np.multiply, np.sqrt, np.add.reduce

    def values(x: np.ndarray, gamma: Any, beta: Any) -> np.ndarray:
        axis, count = _geometry(x.shape, x.dtype, axes)
        mean = total(x, axis=axis, keepdims=True)
        divide(mean, count, out=mean, casting="unsafe")
        y = np.subtract(x, mean)
        variance = total(multiply(y, y), axis=axis, keepdims=True)
        divide(variance, count, out=variance, casting="unsafe")
        if inside:
            sqrt(add(variance, eps, out=variance), out=variance)
        else:
            add(sqrt(variance, out=variance), eps, out=variance)
        divide(y, variance, out=y)
        multiply(y, gamma, out=y)
        return add(y, beta, out=y)

    return values


def _bind_layer_norm(node: Node) -> Any:
    """``TemplateLayerNorm``'s kernel for ``node`` whose axes are a Constant and that normalises the
    variance (:func:`layer_norm_of`)."""
    axes = node.input_value(1).node
    if axes.type_name != "Constant" or not node.attrs["normalize_variance"]:
        return None
    given = tuple(int(v) for v in np.asarray(axes.attrs["value"]).reshape(-1))
    values = layer_norm_of(given, node.attrs["eps"], node.attrs["eps_mode"] == "inside_sqrt")

    def layer_norm(node: Node, x: Any, axes: Any, gamma: Any, beta: Any) -> Any:
        if type(x) is not np.ndarray or x.dtype not in _FLOATS or not x.size:
            return _layer_norm_kernel(node, x, axes, gamma, beta)
        return values(x, gamma, beta)

    return layer_norm


_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


@functools.lru_cache(maxsize=64)
def _geometry(shape: tuple[int, ...], dtype: np.dtype[Any], axes: tuple[int, ...]) -> tuple[tuple[int, ...], Any]:
    """MVN's axes as its kernel normalises them and the count each mean divides by: ``np.mean`` divides
    the sum by the ``intp`` count in f64 and rounds into the sum's type, which is one division in that
    type where the count is exact in it (a correctly rounded quotient either way)."""
    axis = tuple(sorted({a % len(shape) for a in axes}))  # as the MVN kernel normalises them
    size = math.prod(shape[a] for a in axis)
    return axis, dtype.type(size) if size < _EXACT[dtype.itemsize] else np.intp(size)


def _mvn(x: np.ndarray, axis: tuple[int, ...], count: Any, attrs: dict[str, Any]) -> np.ndarray:
    """The MVN reference kernel's values for a f32 or f64 numpy array, with fewer temporaries."""
    mean = np.add.reduce(x, axis=axis, keepdims=True)
    np.true_divide(mean, count, out=mean, casting="unsafe")
    centered = np.subtract(x, mean)
    if not attrs["normalize_variance"]:
        return centered
    variance = np.add.reduce(np.multiply(centered, centered), axis=axis, keepdims=True)
    np.true_divide(variance, count, out=variance, casting="unsafe")
    eps = attrs["eps"]
    if attrs["eps_mode"] == "inside_sqrt":
        np.sqrt(np.add(variance, eps, out=variance), out=variance)
    else:
        np.add(np.sqrt(variance, out=variance), eps, out=variance)
    return np.true_divide(centered, variance, out=centered)


_EXACT = {4: 2**24, 8: 2**53}
"""Counts below these are exact in f32 and f64."""


binder.register(LAYER_NORM, lambda node, read: _bind_layer_norm(node))
