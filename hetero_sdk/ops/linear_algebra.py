"""Linear algebra ops: MatMul, Einsum, Det (ONNX's determinant) and ScaledDotProductAttention."""

from __future__ import annotations

import math
import re
from typing import Any

import numpy as np

from hetero_sdk.array_api import namespace, widened
from hetero_sdk.element_type import Type
from hetero_sdk.graph.node import Node
from hetero_sdk.graph.op_def import BOOL, STRING, Attr, Input, OpDef, OutputSpec, define
from hetero_sdk.ops.basic import as_output
from hetero_sdk.ops.checks import NUMERIC_TYPES, REAL_TYPES, broadcast, expect_same_types, merge_dims
from hetero_sdk.shape import PartialShape, broadcast_shapes

__all__ = [
    "DET", "EINSUM", "MATMUL", "SCALED_DOT_PRODUCT_ATTENTION", "det", "einsum", "einsum_terms", "matmul",
    "matmul_shape", "scaled_dot_product_attention",
]  # fmt: skip


def matmul(
    data_a: Any, data_b: Any, transpose_a: bool = False, transpose_b: bool = False, name: str | None = None
) -> Node:
    """Matrix product with numpy's ``matmul`` semantics (``MatMul``).

    The last two dimensions of each input are the matrices; the dimensions before them are batch
    dimensions, broadcast with numpy rules. A 1-D ``data_a`` is a row vector ``[1, K]`` and a 1-D
    ``data_b`` a column vector ``[K, 1]``; the added dimension is removed from the result again.

    :param data_a: the left operand, rank >= 1.
    :param data_b: the right operand, rank >= 1, of the same element type.
    :param transpose_a: swap the last two dimensions of ``data_a`` first (ignored when it is 1-D).
    :param transpose_b: swap the last two dimensions of ``data_b`` first (ignored when it is 1-D).
    :param name: the node's friendly name.
    """
    a = as_output(data_a)
    b = as_output(data_b, like=a)
    attrs = {"transpose_a": transpose_a, "transpose_b": transpose_b}
    return Node(MATMUL, [a, b], attrs, name)


def _matmul(node: Node) -> list[OutputSpec]:
    element_type = expect_same_types(node, 0, 1)
    a, b = node.input_value(0).partial_shape, node.input_value(1).partial_shape
    return [(element_type, matmul_shape(node, a, b, node.attrs["transpose_a"], node.attrs["transpose_b"]))]


def matmul_shape(node: Node, a: PartialShape, b: PartialShape, transpose_a: bool, transpose_b: bool) -> PartialShape:
    """The output shape of MatMul on shapes ``a`` and ``b`` (numpy rules: 1-D promotion, batch
    broadcasting); raises ``node.error`` when they do not fit. Fused ops that contain a MatMul reuse it."""
    if a.rank == 0 or b.rank == 0:
        raise node.error(f"inputs must have rank >= 1 (scalars are not matrices), got {a} and {b}")
    a_dims = [1, a[0]] if a.rank == 1 else list(a.dims)
    b_dims = [b[0], 1] if b.rank == 1 else list(b.dims)
    if a.rank > 1 and transpose_a:
        a_dims[-2], a_dims[-1] = a_dims[-1], a_dims[-2]
    if b.rank > 1 and transpose_b:
        b_dims[-2], b_dims[-1] = b_dims[-1], b_dims[-2]
    merge_dims(node, a_dims[-1], b_dims[-2], f"the inner dimensions of {a} and {b} (after transposes) must match")
    batch = broadcast_shapes(PartialShape(a_dims[:-2]), PartialShape(b_dims[:-2]))
    if batch is None:
        raise node.error(f"batch dimensions of {a} and {b} do not broadcast (numpy rules)")
    dims = [*batch.dims]
    if a.rank > 1:
        dims.append(a_dims[-2])
    if b.rank > 1:
        dims.append(b_dims[-1])
    return PartialShape(dims)


MATMUL = define(
    OpDef(
        "MatMul",
        "linear_algebra",
        _matmul,
        inputs=(Input(types=NUMERIC_TYPES), Input(types=NUMERIC_TYPES)),
        attrs=(
            Attr("transpose_a", BOOL, False, doc="swap the last two dimensions of A first"),
            Attr("transpose_b", BOOL, False, doc="swap the last two dimensions of B first"),
        ),
        doc="Matrix product with numpy's matmul semantics (1-D operands promoted, batches broadcast).",
    )
)


_TERM = re.compile(r"^[a-zA-Z]*(\.\.\.)?[a-zA-Z]*$")


def einsum_terms(equation: str) -> tuple[list[str], str]:
    """The input terms and the output term of an Einsum ``equation`` (spaces removed; the output
    term is implicit without ``->``: the labels used once, in alphabetical order, after ``...``).

    :raises ValueError: when a term is not letters with at most one ``...``.
    """
    equation = equation.replace(" ", "")
    inputs_part, arrow, output = equation.partition("->")
    terms = inputs_part.split(",")
    for term in [*terms, output]:
        if not _TERM.match(term):
            raise ValueError(f"term {term!r} of equation {equation!r} is not letters with at most one '...'")
    if not arrow:
        labels = "".join(terms).replace("...", "")
        once = sorted(c for c in set(labels) if labels.count(c) == 1)
        output = ("..." if any("..." in t for t in terms) else "") + "".join(once)
    return terms, output


def _infer_einsum(node: Node) -> list[OutputSpec]:
    count = node.get_input_size()
    element_type = expect_same_types(node, *range(count))
    try:
        terms, output = einsum_terms(node.attrs["equation"])
    except ValueError as error:
        raise node.error(str(error)) from None
    if len(terms) != count:
        raise node.error(f"equation {node.attrs['equation']!r} has {len(terms)} input terms for {count} inputs")
    sizes: dict[str, int] = {}
    ellipsis = PartialShape([])
    for index, term in enumerate(terms):
        shape = node.input_value(index).partial_shape
        head, dots, tail = term.partition("...")
        if (len(head) + len(tail) != shape.rank) if not dots else (len(head) + len(tail) > shape.rank):
            raise node.error(f"term {term!r} does not fit input {index} of shape {shape}")
        dims = list(shape.dims)
        labelled = dims[: len(head)] + dims[len(dims) - len(tail) :]
        for label, dim in zip(head + tail, labelled):
            if sizes.get(label, 1) == 1:  # a size-1 dimension broadcasts, as numpy's einsum does
                sizes[label] = dim
            elif dim != 1:
                sizes[label] = merge_dims(node, sizes[label], dim, f"label {label!r} has two sizes")
        if dots:
            broadcast = broadcast_shapes(ellipsis, PartialShape(dims[len(head) : len(dims) - len(tail)]))
            if broadcast is None:
                raise node.error(f"the '...' dimensions of the inputs do not broadcast: {ellipsis} and {shape}")
            ellipsis = broadcast
    head, dots, tail = output.partition("...")
    unknown = [c for c in head + tail if c not in sizes]
    if unknown:
        raise node.error(f"output labels {unknown} of equation {node.attrs['equation']!r} are in no input term")
    dims = [sizes[c] for c in head] + (list(ellipsis.dims) if dots else []) + [sizes[c] for c in tail]
    return [(element_type, PartialShape(dims))]


def _einsum(node: Node, *inputs: Any) -> Any:
    # not in the array API standard, but numpy and jax.numpy share einsum's signature; 16-bit floats
    # are summed in f32 (numpy has no bf16 einsum) and rounded back
    return namespace(*inputs).einsum(node.attrs["equation"].replace(" ", ""), *(widened(i) for i in inputs))


EINSUM = define(
    OpDef(
        "Einsum",
        "linear_algebra",
        _infer_einsum,
        inputs=(Input("inputs", NUMERIC_TYPES, variadic=True),),
        attrs=(Attr("equation", STRING, doc="the subscripts, as numpy's einsum: 'ij,jk->ik', '...ii->...i'"),),
        version="opset7",
        evaluate=_einsum,
        doc="Sums of products of the inputs' elements over the labels the equation leaves out (numpy's einsum).",
    )
)


def einsum(inputs: Any, equation: str, name: str | None = None) -> Node:
    """Einstein summation (``Einsum``, opset7), as numpy's ``einsum``.

    :param inputs: the operands, one per input term of ``equation``, of one element type.
    :param equation: the subscripts: input terms of letters (with at most one ``...`` each) separated by
        commas, and optionally ``->`` and the output term; without it, the labels used once, in
        alphabetical order.
    :param name: the node's friendly name.
    """
    outputs = [as_output(i) for i in inputs]
    return Node(EINSUM, outputs, {"equation": equation}, name)


def _infer_det(node: Node) -> list[OutputSpec]:
    source = node.input_value(0)
    shape = source.partial_shape
    if shape.rank < 2:
        raise node.error(f"input has rank {shape.rank} ({shape}); expected [..., M, M]")
    merge_dims(node, shape[-2], shape[-1], f"the matrices of {shape} must be square")
    return [(source.element_type, PartialShape(shape.dims[:-2]))]


def _det(node: Node, x: Any) -> Any:
    return namespace(x).linalg.det(widened(x))  # the array API's linalg extension, in numpy and jax.numpy


DET = define(
    OpDef(
        "Det",
        "linear_algebra",
        _infer_det,
        inputs=(Input("data", REAL_TYPES, doc="[..., M, M]: square matrices"),),
        version="onnx11",
        evaluate=_det,
        doc="The determinant of each square matrix in the last two dimensions (ONNX's Det; not in OpenVINO's opsets).",
    )
)


def det(data: Any, name: str | None = None) -> Node:
    """The determinant of each matrix in the last two dimensions (``Det``, from ONNX opset 11).

    :param data: ``[..., M, M]``, real.
    :param name: the node's friendly name.
    :returns: a node whose output has shape ``[...]``.
    """
    return Node(DET, [as_output(data)], {}, name)


# -- ScaledDotProductAttention (OpenVINO opset13, as optimum-intel and OpenVINO's ONNX frontend write
# attention); one array-API kernel serves every device.


def scaled_dot_product_attention(
    query: Any,
    key: Any,
    value: Any,
    attention_mask: Any = None,
    scale: Any = None,
    causal: bool = False,
    name: str | None = None,
) -> Node:
    """``softmax(query @ key^T * scale + mask) @ value`` (``ScaledDotProductAttention``, opset13).

    :param attention_mask: added to the scores, or a boolean tensor (False masks out); ignored when
        ``causal``; a zero mask is added when only ``scale`` is given (the inputs are positional).
    :param scale: a scalar; ``1 / sqrt(query.shape[-1])`` by default.
    :param causal: mask out keys after each query's position (the lower triangle is kept).
    """
    inputs = [as_output(query), as_output(key), as_output(value)]
    if attention_mask is not None:
        inputs.append(as_output(attention_mask))
    if scale is not None:
        if attention_mask is None:
            attention_mask = 0.0
            inputs.append(as_output(np.zeros((), dtype=inputs[0].element_type.numpy)))
        inputs.append(as_output(scale))
    return Node(SCALED_DOT_PRODUCT_ATTENTION, inputs, {"causal": causal}, name)


# -- FakeQuantize -----------------------------------------------------------------------------------------


def _infer_attention(node: Node) -> list[OutputSpec]:
    element_type = expect_same_types(node, 0, 1, 2)
    query, key, value = (node.input_value(i).partial_shape for i in range(3))
    for index, shape in enumerate((query, key, value)):
        if shape.rank < 3:
            raise node.error(f"input {index} has rank {shape.rank}; query, key and value need rank 3 or more")
    if node.get_input_size() > 3 and node.input_value(3).element_type not in (element_type, Type.boolean):
        raise node.error(
            f"attention_mask has element type {node.input_value(3).element_type.value}; "
            f"expected {element_type.value} or boolean"
        )
    if node.get_input_size() > 4 and node.input_value(4).element_type != element_type:
        raise node.error(
            f"scale has element type {node.input_value(4).element_type.value}; expected {element_type.value}"
        )
    batch = broadcast(node, broadcast(node, query[:-2], key[:-2]), value[:-2])
    return [(element_type, PartialShape([*batch, query[-2], value[-1]]))]


def _attention(node: Node, query: Any, key: Any, value: Any, mask: Any = None, scale: Any = None) -> Any:
    xp = namespace(query)
    factor = xp.reshape(scale, ()) if scale is not None else 1.0 / math.sqrt(query.shape[-1])
    scores = xp.matmul(query, xp.matrix_transpose(key)) * factor
    length, sources = scores.shape[-2], scores.shape[-1]
    if node.attrs["causal"]:
        rows = xp.arange(length)[:, None]
        cols = xp.arange(sources)[None, :]
        scores = xp.where(cols <= rows, scores, xp.asarray(-xp.inf, dtype=scores.dtype))
    elif mask is not None:
        if mask.dtype == xp.bool:
            scores = xp.where(mask, scores, xp.asarray(-xp.inf, dtype=scores.dtype))
        else:
            scores = scores + mask
    top = xp.max(scores, axis=-1, keepdims=True)
    top = xp.where(xp.isfinite(top), top, xp.zeros_like(top))
    weights = xp.exp(scores - top)
    total = xp.sum(weights, axis=-1, keepdims=True)
    weights = weights / xp.where(total == 0, xp.ones_like(total), total)
    return xp.astype(xp.matmul(weights, value), query.dtype)


# -- definitions ----------------------------------------------------------------------------------------


SCALED_DOT_PRODUCT_ATTENTION = define(
    OpDef(
        "ScaledDotProductAttention",
        "linear_algebra",
        _infer_attention,
        inputs=(
            Input("query", REAL_TYPES, doc="[..., L, E]"),
            Input("key", REAL_TYPES, doc="[..., S, E]"),
            Input("value", REAL_TYPES, doc="[..., S, Ev]"),
            Input("attention_mask", optional=True, doc="added to the scores [..., L, S], or boolean (False masks)"),
            Input("scale", REAL_TYPES, optional=True, doc="a scalar; 1/sqrt(E) by default"),
        ),
        attrs=(Attr("causal", BOOL, False, doc="keep only keys at or before each query's position"),),
        version="opset13",
        evaluate=_attention,
        doc="softmax(Q K^T * scale + mask) V, as OpenVINO's ScaledDotProductAttention.",
    )
)
