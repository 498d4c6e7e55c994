"""``TemplateAttention``: a decoder layer's attention over its key/value cache as one op.

torch's exporter writes scaled dot-product attention as fifteen ops a layer: the query and the transposed
key each multiplied by the square root of the scale, a MatMul, the additive mask, a Softmax whose
fully-masked rows (NaN) a NotEqual/Select pair sets to 0, and a MatMul by the values; with grouped-query
attention the key and the value are first repeated per query head by an Unsqueeze, a Broadcast and a
Reshape each. Produced by :class:`template_plugin.attention_fusion.AttentionFusion`.

The op's definition (its reference kernel) is those ops' numpy calls in order. TEMPLATE's kernel computes
the same values without repeating the key and value: the queries of a group of heads are one matrix
product with their shared key, the mask added, the softmax taken and the NaNs replaced in place; it falls
back to the definition whenever the shapes at run time are not those of such an attention (a mask that
would enlarge the scores, shape vectors that do not repeat the key per head).
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from hetero_sdk import Node, PartialShape
from hetero_sdk.plugin import (
    BOOL,
    DYNAMIC,
    INDEX_TYPES,
    LOWER_STRING,
    REAL_TYPES,
    Attr,
    Input,
    OpDef,
    OutputSpec,
    as_output,
    define,
    expect_same_types,
    kernel,
    reshape_dims,
)
from template_plugin.direct_kernels import broadcast_shape

__all__ = [
    "ATTENTION",
    "ATTENTION_OP",
    "CACHED_ATTENTION",
    "CACHED_ATTENTION_OP",
    "attention",
    "attention_definition",
    "attention_kernel",
    "cached_attention",
]

ATTENTION = "TemplateAttention"
"""The attention's op type name."""

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def attention(
    query: Any,
    query_scale: Any,
    key: Any,
    key_scale: Any,
    bias: Any,
    value: Any,
    nan_value: Any = None,
    repeats: tuple[Any, Any, Any, Any] | None = None,
    *,
    broadcast_mode: str = "bidirectional",
    special_zero: bool = False,
    name: str | None = None,
) -> Node:
    """``softmax((query * query_scale) @ (K^T * key_scale) + bias) @ V`` over the last axis, as one op.

    :param query: ``[b, h, s, d]`` of f32 or f64.
    :param query_scale: one value multiplying the query.
    :param key: ``[b, kv, T, d]``; transposed (its last two axes swapped) then multiplied by ``key_scale``.
    :param key_scale: one value.
    :param bias: added to the scores (numpy broadcasting), the attention mask.
    :param value: ``[b, kv, T, dv]``.
    :param nan_value: when given, one value that replaces the NaNs of the softmax (``Select(NotEqual(p, p),
        nan_value, p)``, as exporters write it for fully masked rows).
    :param repeats: for grouped-query attention, ``(key_target, key_pattern, value_target, value_pattern)``:
        K is ``Reshape(Broadcast(Unsqueeze(key, 2), key_target), key_pattern)``, V likewise; else K is the
        key and V the value.
    :param broadcast_mode: the Broadcasts' mode (``numpy`` or ``bidirectional``).
    :param special_zero: the Reshapes' ``special_zero``.
    :param name: the node's friendly name.
    """
    q = as_output(query)
    inputs = [q, as_output(query_scale, like=q), as_output(key), as_output(key_scale, like=q), as_output(bias)]
    inputs.append(as_output(value))
    inputs.append(as_output(nan_value if nan_value is not None else np.zeros((), q.element_type.numpy), like=q))
    attrs: dict[str, Any] = {"nan_to_value": nan_value is not None, "grouped": repeats is not None}
    if repeats is not None:
        inputs.extend(as_output(v) for v in repeats)
        attrs.update(broadcast_mode=broadcast_mode, special_zero=special_zero)
    return Node(ATTENTION_OP, inputs, attrs, name)


def _attention_infer(node: Node) -> list[OutputSpec]:
    element_type = expect_same_types(node, 0, 1, 2, 3, 4, 5, 6)
    query, key, value = (node.input_value(i).partial_shape for i in (0, 2, 5))
    for what, shape in (("query", query), ("key", key), ("value", value)):
        if shape.rank != 4:
            raise node.error(f"{what} {shape} must have rank 4 ([batch, heads, positions, features])")
    for index, what in ((1, "query_scale"), (3, "key_scale"), (6, "nan_value")):
        shape = node.input_value(index).partial_shape
        if shape.rank > 4 or any(d != 1 for d in shape.dims):
            raise node.error(f"{what} {shape} must be one value of rank <= 4")
    if node.attrs["grouped"] != (node.get_input_size() == 11):
        raise node.error("a grouped attention takes 11 inputs (the key's and value's shape vectors), another 7")
    batch = query[0] if value[0] in (1, DYNAMIC) else value[0]
    return [(element_type, PartialShape([batch, query[1], query[2], value[3]]))]


_TAIL_INPUTS = (
    Input("nan_value", REAL_TYPES, doc="one value replacing the softmax's NaNs (when nan_to_value)"),
    Input("key_target", INDEX_TYPES, optional=True, doc="grouped: the key's Broadcast target"),
    Input("key_pattern", INDEX_TYPES, optional=True, doc="grouped: the key's Reshape pattern"),
    Input("value_target", INDEX_TYPES, optional=True, doc="grouped: the value's Broadcast target"),
    Input("value_pattern", INDEX_TYPES, optional=True, doc="grouped: the value's Reshape pattern"),
)
"""The inputs both attention ops end with: the softmax's NaN replacement, then the grouped-query key/value
Broadcast targets and Reshape patterns (absent without grouped-query repeats)."""


ATTENTION_OP = define(
    OpDef(
        ATTENTION,
        "template",
        _attention_infer,
        inputs=(
            Input("query", REAL_TYPES, doc="[batch, heads, positions, features]"),
            Input("query_scale", REAL_TYPES, doc="one value"),
            Input("key", REAL_TYPES, doc="[batch, key heads, total positions, features]"),
            Input("key_scale", REAL_TYPES, doc="one value"),
            Input("bias", REAL_TYPES, doc="added to the scores"),
            Input("value", REAL_TYPES, doc="[batch, key heads, total positions, value features]"),
            *_TAIL_INPUTS,
        ),
        attrs=(
            Attr("nan_to_value", BOOL, False, doc="replace the softmax's NaNs by nan_value"),
            Attr("grouped", BOOL, False, doc="repeat the key and value per query head (grouped-query attention)"),
            Attr("broadcast_mode", LOWER_STRING, "bidirectional", ("numpy", "bidirectional"), doc="grouped"),
            Attr("special_zero", BOOL, False, doc="grouped: the Reshapes' special_zero"),
        ),
        version="template",
        doc="softmax((query * query_scale) @ (K^T * key_scale) + bias) @ V in one kernel.",
    )
)


def _repeated(x: np.ndarray, target: np.ndarray, pattern: np.ndarray, attrs: dict[str, Any]) -> np.ndarray:
    """``Reshape(Broadcast(Unsqueeze(x, 2), target), pattern)`` as TEMPLATE's kernels compute it."""
    x = x.reshape((*x.shape[:2], 1, *x.shape[2:]))
    shape = tuple(target.reshape(-1).tolist())
    if attrs["broadcast_mode"] == "bidirectional":
        shape = broadcast_shape(x.shape, shape)
    out = np.empty(shape, x.dtype)
    np.copyto(out, x)
    return out.reshape(reshape_dims(out.shape, pattern.reshape(-1).tolist(), attrs["special_zero"]))


def _softmax_in_place(y: np.ndarray) -> np.ndarray:
    """``exp(y - max) / sum`` over the last axis, as TEMPLATE's Softmax computes it (``max`` and ``sum``
    are these reductions), written over ``y``."""
    np.subtract(y, np.maximum.reduce(y, axis=-1, keepdims=True), out=y)
    np.exp(y, out=y)
    return np.divide(y, np.add.reduce(y, axis=-1, keepdims=True), out=y)


def attention_definition(node: Node, q: Any, q_scale: Any, k: Any, k_scale: Any, bias: Any, v: Any, *rest: Any) -> Any:
    """The values of the ops the attention replaces: their numpy calls, in order (TEMPLATE's kernel for
    shapes that are not an attention's)."""
    q, k, v, bias = (np.asarray(a) for a in (q, k, v, bias))
    attrs = node.attrs
    if attrs["grouped"]:
        k, v = _repeated(k, rest[1], rest[2], attrs), _repeated(v, rest[3], rest[4], attrs)
    scores = np.matmul(np.multiply(q, q_scale), np.multiply(np.swapaxes(k, -1, -2), k_scale))
    p = _softmax_in_place(np.add(scores, bias))
    if attrs["nan_to_value"]:
        p = np.where(np.not_equal(p, p), rest[0], p)
    return np.matmul(p, v)


@functools.lru_cache(maxsize=64)
def _groups(key: tuple[int, ...], target: bytes, pattern: bytes, types: str, special_zero: bool) -> int:
    """How many query heads share each key head, when the shape vectors ``target`` and ``pattern`` (their
    bytes, of the integer types ``types``) repeat a key of shape ``key`` ``[b, kv, T, d]`` per head as
    ``[b, kv * g, T, d]``; else 0."""
    b, kv, total, d = key
    dims = tuple(np.frombuffer(target, types[0]).tolist())
    if len(dims) != 5 or dims[2] < 1 or dims != (b, kv, dims[2], total, d):
        return 0
    try:
        repeated = reshape_dims(dims, np.frombuffer(pattern, types[1]).tolist(), special_zero)
    except IndexError:  # a 0 past the target's rank: the definition raises the Reshape's error
        return 0
    return dims[2] if tuple(repeated) == (b, kv * dims[2], total, d) else 0


def _group_count(node: Node, k: np.ndarray, v: np.ndarray, vectors: tuple[Any, ...]) -> int:
    """The heads per key head that the grouped attention's shape vectors give both the key and the value
    (0 when they do not repeat them per head); 1 for an attention without groups."""
    if not node.attrs["grouped"]:
        return 1
    special_zero = node.attrs["special_zero"]
    found = []
    for x, target, pattern in ((k, vectors[1], vectors[2]), (v, vectors[3], vectors[4])):
        target, pattern = np.asarray(target), np.asarray(pattern)
        types = target.dtype.char + pattern.dtype.char
        found.append(_groups(x.shape, target.tobytes(), pattern.tobytes(), types, special_zero))
    return found[0] if found[0] == found[1] else 0


@kernel(ATTENTION)
def attention_kernel(node: Node, q: Any, q_scale: Any, k: Any, k_scale: Any, bias: Any, v: Any, *rest: Any) -> Any:
    """TEMPLATE's kernel: the definition's values with each group of heads' queries in one product with
    their shared key and value, the softmax written over the scores; the definition for other shapes and
    element types (the op's inputs share one element type)."""
    if type(q) is not np.ndarray or type(k) is not np.ndarray or type(v) is not np.ndarray or q.dtype not in _FLOATS:
        return attention_definition(node, q, q_scale, k, k_scale, bias, v, *rest)
    b, h, s, d = q.shape
    kv, total = k.shape[1], k.shape[2]
    groups = _group_count(node, k, v, rest) if k.ndim == v.ndim == 4 else 0
    if (
        not groups or kv * groups != h or k.shape[0] != b or k.shape[3] != d or v.shape[:3] != k.shape[:3]
        or type(bias) is not np.ndarray or broadcast_shape(bias.shape, (b, h, s, total)) != (b, h, s, total)
    ):  # fmt: skip
        return attention_definition(node, q, q_scale, k, k_scale, bias, v, *rest)
    queries = np.multiply(q, q_scale).reshape(b, kv, groups * s, d)
    keys = np.multiply(k, k_scale)
    scores = np.matmul(queries, keys.swapaxes(-1, -2)).reshape(b, h, s, total)
    p = _softmax_in_place(np.add(scores, bias, out=scores))
    if node.attrs["nan_to_value"]:
        nan = np.not_equal(p, p)
        if nan.any():
            p[nan] = np.asarray(rest[0]).reshape(-1)[0]
    return np.matmul(p.reshape(b, kv, groups * s, total), v).reshape(b, h, s, v.shape[3])


CACHED_ATTENTION = "TemplateCachedAttention"
"""The op type name of an attention that first appends the new keys and values to the cache."""


def cached_attention(attention_node: Node, past_key: Any, new_key: Any, past_value: Any, new_value: Any) -> Node:
    """``TemplateAttention``'s computation with its key ``Concat(past_key, new_key, axis=2)`` and its value
    ``Concat(past_value, new_value, axis=2)``, as one op whose outputs are the attention, then both
    concatenations (the cache a decoder step returns).

    :param attention_node: the ``TemplateAttention`` whose other inputs and attributes it takes.
    """
    inputs = attention_node.input_values()
    given = [inputs[0], inputs[1], as_output(past_key), as_output(new_key), inputs[3], inputs[4]]
    given += [as_output(past_value), as_output(new_value), *inputs[6:]]
    return Node(CACHED_ATTENTION_OP, given, dict(attention_node.attrs))


def _joined(node: Node, past: int) -> PartialShape:
    """The shape of ``Concat(input past, input past + 1, axis=2)`` of rank 4."""
    a, b = node.input_value(past).partial_shape, node.input_value(past + 1).partial_shape
    if a.rank != 4 or b.rank != 4:
        raise node.error(f"past {a} and new {b} must have rank 4")
    dims = []
    for axis, (x, y) in enumerate(zip(a.dims, b.dims)):
        if axis == 2:
            dims.append(x + y if DYNAMIC not in (x, y) else DYNAMIC)
        elif DYNAMIC not in (x, y) and x != y:
            raise node.error(f"past {a} and new {b} must match but along axis 2")
        else:
            dims.append(y if x == DYNAMIC else x)
    return PartialShape(dims)


def _cached_attention_infer(node: Node) -> list[OutputSpec]:
    element_type = expect_same_types(node, 0, 1, 2, 3, 4, 5, 6, 7, 8)
    key, value = _joined(node, 2), _joined(node, 6)
    query = node.input_value(0).partial_shape
    if query.rank != 4:
        raise node.error(f"query {query} must have rank 4 ([batch, heads, positions, features])")
    if node.attrs["grouped"] != (node.get_input_size() == 13):
        raise node.error("a grouped attention takes 13 inputs (the key's and value's shape vectors), another 9")
    batch = query[0] if value[0] in (1, DYNAMIC) else value[0]
    attended = PartialShape([batch, query[1], query[2], value[3]])
    return [(element_type, attended), (element_type, key), (element_type, value)]


CACHED_ATTENTION_OP = define(
    OpDef(
        CACHED_ATTENTION,
        "template",
        _cached_attention_infer,
        inputs=(
            Input("query", REAL_TYPES, doc="[batch, heads, positions, features]"),
            Input("query_scale", REAL_TYPES, doc="one value"),
            Input("past_key", REAL_TYPES, doc="[batch, key heads, past positions, features]"),
            Input("new_key", REAL_TYPES, doc="[batch, key heads, positions, features]"),
            Input("key_scale", REAL_TYPES, doc="one value"),
            Input("bias", REAL_TYPES, doc="added to the scores"),
            Input("past_value", REAL_TYPES, doc="[batch, key heads, past positions, value features]"),
            Input("new_value", REAL_TYPES, doc="[batch, key heads, positions, value features]"),
            *_TAIL_INPUTS,
        ),
        attrs=ATTENTION_OP.attrs,
        version="template",
        doc="TemplateAttention over the cache with the new keys and values appended; outputs the attention "
        "and both appended caches.",
    )
)


@kernel(CACHED_ATTENTION)
def _cached_attention_kernel(
    node: Node, q: Any, q_scale: Any, past_k: Any, new_k: Any, k_scale: Any, bias: Any, past_v: Any, new_v: Any,
    *rest: Any,
) -> tuple[Any, Any, Any]:  # fmt: skip
    k = np.concat((np.asarray(past_k), np.asarray(new_k)), axis=2)  # what TEMPLATE's Concat computes
    v = np.concat((np.asarray(past_v), np.asarray(new_v)), axis=2)
    return attention_kernel(node, q, q_scale, k, k_scale, bias, v, *rest), k, v
