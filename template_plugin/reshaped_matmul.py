"""``TemplateReshapedMatMul``: a MatMul between the Reshapes around it, as one op, and its fusion.

Exporters write a linear layer of a ``[batch, seq, features]`` tensor as ONNX's 2-D Gemm: a Reshape to
``[-1, features]``, the product, a Reshape back to ``[batch, seq, outputs]`` (GPT-2: four a layer). Each
Reshape is a numpy view, but one more step of the plan; fused, the product and its views are one step
that makes the same numpy calls (the same values, bit for bit).
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

import numpy as np

from hetero_sdk import Node, PartialShape
from hetero_sdk.plugin import (
    BOOL,
    FLOAT,
    INDEX_TYPES,
    INTS,
    REAL_TYPES,
    Attr,
    ConsumerMap,
    Input,
    MatcherPass,
    OpDef,
    OutputSpec,
    as_output,
    define,
    expect_same_types,
    get_kernel,
    kernel,
    replace_node,
    reshape_dims,
)
from template_plugin.decoder_ops import GELU_TANH, LAYER_NORM, layer_norm_of
from template_plugin.kernels import binder

if TYPE_CHECKING:
    from hetero_sdk import Model

__all__ = ["RESHAPED_MATMUL", "RESHAPED_MATMUL_OP", "ReshapedMatMulFusion", "reshaped_matmul"]

RESHAPED_MATMUL = "TemplateReshapedMatMul"
"""The op type name."""

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def reshaped_matmul(
    data: Any,
    weights: Any,
    before: Any,
    after: Any,
    *,
    zero_before: bool = False,
    zero_after: bool = False,
    order: list[int] | None = None,
    gelu: list[Any] | None = None,
    addend: Any = None,
    norm: Node | None = None,
    output_shape: PartialShape | None = None,
    name: str | None = None,
) -> Node:
    """``Add(Reshape(G(MatMul(Reshape(Transpose(data, order), before), weights)), after), addend)`` as one op (no
    transposes in the MatMul), the Transpose, the tanh GELU ``G`` and the Add each when given.

    :param data: a real element type.
    :param weights: the MatMul's second operand.
    :param before: the first Reshape's pattern (a 1-D integer tensor).
    :param after: the second Reshape's pattern.
    :param zero_before: the first Reshape's ``special_zero``.
    :param zero_after: the second Reshape's ``special_zero``.
    :param order: a Transpose of the data first, by this order.
    :param gelu: the product through ``TemplateGeluTanh`` of these five constants (elementwise, so before or
        after the second Reshape alike).
    :param addend: added to the result (numpy broadcasting: a residual).
    :param norm: a ``TemplateLayerNorm`` of Constant axes normalising the variance, whose data is ``data``:
        the data goes through it first (its axes and eps become attributes, gamma and beta the last inputs).
    :param output_shape: the result's shape, when the fusion knows it (else dynamic).
    :param name: the node's friendly name.
    """
    attrs: dict[str, Any] = {
        "zero_before": zero_before, "zero_after": zero_after, "order": list(order or []),
        "gelu": gelu is not None, "add": addend is not None, "norm_axes": [], "norm_eps": 0.0, "norm_inside": True,
    }  # fmt: skip
    if norm is not None:
        attrs["norm_axes"] = [int(v) for v in np.asarray(norm.input_value(1).node.attrs["value"]).reshape(-1)]
        attrs["norm_eps"] = norm.attrs["eps"]
        attrs["norm_inside"] = norm.attrs["eps_mode"] == "inside_sqrt"
    if output_shape is not None:
        attrs["output_shape"] = list(output_shape.dims)
    inputs = [as_output(data), as_output(weights), as_output(before), as_output(after)]
    if addend is not None:
        inputs.append(as_output(addend))
    inputs += [as_output(c, like=inputs[0]) for c in gelu or []]
    inputs += [] if norm is None else [norm.input_value(2), norm.input_value(3)]
    return Node(RESHAPED_MATMUL_OP, inputs, attrs, name)


def _infer(node: Node) -> list[OutputSpec]:
    element_type = expect_same_types(node, 0, 1)
    for index, what in ((2, "before"), (3, "after")):
        shape = node.input_value(index).partial_shape
        if shape.rank != 1 or shape[0] < 0:
            raise node.error(f"pattern {what} {shape} must be 1-D of a static length")
    normed = bool(node.attrs["norm_axes"])
    extra = 4 + int(node.attrs["add"]) + 5 * int(node.attrs["gelu"]) + 2 * int(normed)
    if node.get_input_size() != extra:
        raise node.error(
            f"takes {extra} inputs with add={node.attrs['add']}, gelu={node.attrs['gelu']} and norm_axes "
            f"{node.attrs['norm_axes']}"
        )
    order = node.attrs["order"]
    if order and sorted(order) != list(range(node.input_value(0).partial_shape.rank)):
        raise node.error(f"order {order} must permute the axes of data {node.input_value(0).partial_shape}")
    dims = node.attrs.get("output_shape") or [-1] * node.input_value(3).partial_shape[0]
    return [(element_type, PartialShape(dims))]


RESHAPED_MATMUL_OP = define(
    OpDef(
        RESHAPED_MATMUL,
        "template",
        _infer,
        inputs=(
            Input("data", REAL_TYPES),
            Input("weights", REAL_TYPES),
            Input("before", INDEX_TYPES, doc="the first Reshape's pattern"),
            Input("after", INDEX_TYPES, doc="the second Reshape's pattern"),
            Input(
                "extras",
                variadic=True,
                optional=True,
                doc="the addend (add), the GELU's constants (gelu), the layer norm's gamma and beta (norm_axes)",
            ),
        ),
        attrs=(
            Attr("zero_before", BOOL, False, doc="the first Reshape's special_zero"),
            Attr("zero_after", BOOL, False, doc="the second Reshape's special_zero"),
            Attr("order", INTS, [], doc="a Transpose of the data first, by this order (none when empty)"),
            Attr("gelu", BOOL, False, doc="the product through TemplateGeluTanh"),
            Attr("add", BOOL, False, doc="the result plus the addend"),
            Attr("norm_axes", INTS, [], doc="the data through TemplateLayerNorm over these axes first (none: empty)"),
            Attr("norm_eps", FLOAT, 0.0, doc="that layer norm's eps"),
            Attr("norm_inside", BOOL, True, doc="that layer norm's eps inside the square root"),
            Attr("output_shape", INTS, [], doc="the result's shape, -1 where dynamic"),
        ),
        version="template",
        doc="Add(Reshape(GELU(MatMul(Reshape(Transpose(data), before), weights)), after), addend) in one kernel.",
    )
)


@functools.lru_cache(maxsize=64)
def _dims(shape: tuple[int, ...], pattern: tuple[int, ...], special_zero: bool) -> tuple[int, ...]:
    return reshape_dims(shape, pattern, special_zero)


_GELU = get_kernel(GELU_TANH)


@kernel(RESHAPED_MATMUL)
def _reshaped_matmul_kernel(node: Node, x: Any, w: Any, before: Any, after: Any, *extras: Any) -> Any:
    attrs = node.attrs
    x = np.asarray(x)
    if attrs["norm_axes"]:
        x = _norm_of(node)(x, *extras[-2:])
        extras = extras[:-2]
    if attrs["order"]:
        x = x.transpose(attrs["order"])
    flat = x.reshape(_dims(x.shape, tuple(np.asarray(before).tolist()), attrs["zero_before"]))
    y = np.matmul(flat, w)  # what TEMPLATE's MatMul computes for operands of rank 2 or more
    if attrs["gelu"]:
        y = _GELU(node, y, *extras[-5:])
    y = y.reshape(_dims(y.shape, tuple(np.asarray(after).tolist()), attrs["zero_after"]))
    return np.add(y, extras[0]) if attrs["add"] else y  # TEMPLATE's Add on floats


def _norm_of(node: Node) -> Any:
    """The layer norm before the product, as :func:`~template_plugin.decoder_ops.layer_norm_of` computes it."""
    attrs = node.attrs
    return layer_norm_of(tuple(attrs["norm_axes"]), attrs["norm_eps"], attrs["norm_inside"])


def _bind(node: Node) -> Any:
    """``TemplateReshapedMatMul``'s kernel for ``node``: its attributes and Constant first pattern read once,
    each input shape's reshapes kept (the last 16)."""
    attrs = node.attrs
    order = tuple(attrs["order"]) or None
    gelu, add, zero_before, zero_after = attrs["gelu"], attrs["add"], attrs["zero_before"], attrs["zero_after"]
    pattern = node.input_value(2).node
    if pattern.type_name != "Constant":
        return None
    before = tuple(int(v) for v in np.asarray(pattern.attrs["value"]).reshape(-1))
    norm = _norm_of(node) if attrs["norm_axes"] else None

    @functools.lru_cache(maxsize=16)
    def flat_dims(shape: tuple[int, ...]) -> tuple[int, ...]:
        return reshape_dims(shape, before, zero_before)

    def reshaped_matmul(node: Node, x: Any, w: Any, _: Any, after: Any, *extras: Any) -> Any:
        if type(x) is not np.ndarray:
            return _reshaped_matmul_kernel(node, x, w, _, after, *extras)
        if norm is not None:
            x = norm(x, *extras[-2:])
            extras = extras[:-2]
        if order is not None:
            x = x.transpose(order)
        y = np.matmul(x.reshape(flat_dims(x.shape)), w)
        if gelu:
            y = _GELU(node, y, *extras[-5:])
        y = y.reshape(_dims(y.shape, tuple(after.tolist()), zero_after))
        return np.add(y, extras[0]) if add else y

    return reshaped_matmul


binder.register(RESHAPED_MATMUL, lambda node, read: _bind(node))


class ReshapedMatMulFusion(MatcherPass):
    """Fuses ``Reshape(MatMul(Reshape(x, before), w), after)`` of f32 or f64, without transposes, the inner
    Reshape and the MatMul each with one use, ``before`` a Constant, both operands of the MatMul of rank 2
    or more, into ``TemplateReshapedMatMul``; with it a Transpose of ``x`` by a Constant order (one use), then
    a ``TemplateGeluTanh`` of the result and an Add to it (numpy broadcasting, a residual), each the only
    use of what precedes it. The fused op takes the last node's friendly name, tensor names and output
    shape and records the block in ``fused_names``."""

    name = "TemplateReshapedMatMulFusion"
    anchors = ("Reshape",)

    def apply(self, model: Model, outer: Node, users: ConsumerMap) -> bool:
        matmul = outer.input_value(0).node
        if matmul.type_name != "MatMul" or len(users.of(matmul.output(0))) != 1:
            return False
        if matmul.attrs.get("transpose_a") or matmul.attrs.get("transpose_b"):
            return False
        inner = matmul.input_value(0).node
        if inner.type_name != "Reshape" or len(users.of(inner.output(0))) != 1:
            return False
        before, after = inner.input_value(1), outer.input_value(1)
        if before.node.type_name != "Constant" or after.partial_shape.rank != 1 or after.partial_shape[0] < 0:
            return False
        data = inner.input_value(0)
        if data.element_type.value not in ("f32", "f64"):
            return False
        if inner.output(0).partial_shape.rank < 2 or matmul.input_value(1).partial_shape.rank < 2:
            return False
        block, order, norm = [inner, matmul], None, None
        source = data.node
        if source.type_name == "Transpose" and len(users.of(source.output(0))) == 1:
            order = _constant_order(source)
            if order is not None:
                block.insert(0, source)
                data = source.input_value(0)
        elif source.type_name == LAYER_NORM and len(users.of(source.output(0))) == 1 and _fixed_norm(source):
            norm = source
            block.insert(0, source)
            data = source.input_value(0)
        last, gelu, addend = outer, None, None
        follower = _only_use(last, users)
        if follower is not None and follower[0].type_name == GELU_TANH and follower[1] == 0:
            block.append(last)
            last = follower[0]
            gelu = last.input_values()[1:]
            follower = _only_use(last, users)
        if follower is not None and follower[0].type_name == "Add":
            add, index = follower
            if add.attrs.get("auto_broadcast", "numpy") == "numpy" and add.get_input_size() == 2:
                block.append(last)
                last = add
                addend = add.input_value(1 - index)
        fused = reshaped_matmul(
            data, matmul.input_value(1), before, after,
            zero_before=bool(inner.attrs["special_zero"]), zero_after=bool(outer.attrs["special_zero"]),
            order=order, gelu=gelu, addend=addend, norm=norm, output_shape=last.output(0).partial_shape,
        )  # fmt: skip
        replace_node(model, last, fused, fused=block, consumers=users)
        return True


def _fixed_norm(norm: Node) -> bool:
    """True for a layer norm of f32 or f64 over Constant axes that normalises the variance."""
    axes = norm.input_value(1).node
    return (
        axes.type_name == "Constant"
        and bool(norm.attrs["normalize_variance"])
        and (norm.input_value(0).element_type.value in ("f32", "f64"))
    )


def _only_use(node: Node, users: ConsumerMap) -> tuple[Node, int] | None:
    uses = users.of(node.output(0))
    return uses[0] if len(uses) == 1 else None


def _constant_order(transpose: Node) -> list[int] | None:
    order = transpose.input_value(1).node
    if order.type_name != "Constant":
        return None
    values = [int(v) for v in np.asarray(order.attrs["value"]).reshape(-1)]
    rank = transpose.input_value(0).partial_shape.rank
    return values if sorted(values) == list(range(rank)) else None
