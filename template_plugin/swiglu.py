"""``TemplateSwiGLU``: a gated MLP's ``(a * sigmoid(a)) * b`` (SiLU of the gate times the up projection, as
Llama and Qwen2 export it: a Sigmoid and two Multiplies) as one op, and its fusion.

The kernel makes TEMPLATE's numpy calls for those ops in order (its Sigmoid is ``1 / (1 + exp(-a))``),
so the values are the unfused ops', bit for bit.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from hetero_sdk import Node, PartialShape
from hetero_sdk.plugin import (
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
)

if TYPE_CHECKING:
    from hetero_sdk import Model

__all__ = ["SWIGLU", "SWIGLU_OP", "SwiGLUFusion", "swiglu"]

SWIGLU = "TemplateSwiGLU"
"""The op type name."""

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def swiglu(gate: Any, up: Any, output_shape: PartialShape, name: str | None = None) -> Node:
    """``(gate * sigmoid(gate)) * up`` (numpy broadcasting) as one op.

    :param output_shape: the result's shape (the gating Multiply's), ``-1`` where dynamic.
    """
    return Node(SWIGLU_OP, [as_output(gate), as_output(up)], {"output_shape": list(output_shape.dims)}, name)


def _infer(node: Node) -> list[OutputSpec]:
    element_type = expect_same_types(node, 0, 1)
    gate, up, shape = node.input_value(0).partial_shape, node.input_value(1).partial_shape, node.attrs["output_shape"]
    if len(shape) != max(gate.rank, up.rank):
        raise node.error(f"output_shape {shape} must have the rank of gate {gate} and up {up} broadcast")
    return [(element_type, PartialShape(shape))]


SWIGLU_OP = define(
    OpDef(
        SWIGLU,
        "template",
        _infer,
        inputs=(Input("gate", REAL_TYPES), Input("up", REAL_TYPES)),
        attrs=(Attr("output_shape", INTS, [], doc="the result's shape, -1 where dynamic"),),
        version="template",
        doc="(gate * sigmoid(gate)) * up in one kernel.",
    )
)


@kernel(SWIGLU)
def _swiglu_kernel(node: Node, gate: Any, up: Any) -> Any:
    gate, up = np.asarray(gate), np.asarray(up)
    if gate.dtype not in _FLOATS:
        sigmoid = get_kernel("Sigmoid")(node, gate)
        return np.multiply(np.multiply(gate, sigmoid), up)
    s = np.negative(gate)  # TEMPLATE's Sigmoid: 1 / (1 + exp(-gate))
    np.exp(s, out=s)
    np.add(1, s, out=s)
    np.divide(1, s, out=s)
    np.multiply(gate, s, out=s)  # the SiLU, then the gating product: one numpy call each, as unfused
    return np.multiply(s, up)


class SwiGLUFusion(MatcherPass):
    """Fuses ``Multiply(Multiply(a, Sigmoid(a)), b)`` of f32 or f64 (either operand order of each Multiply,
    numpy broadcasting) into ``TemplateSwiGLU`` when the Sigmoid and the inner Multiply have one use and
    the inner Multiply keeps ``a``'s shape. The fused op takes the outer Multiply's friendly name and
    tensor names and records the block in ``fused_names``."""

    name = "TemplateSwiGLUFusion"
    anchors = ("Sigmoid",)

    def apply(self, model: Model, sigmoid: Node, users: ConsumerMap) -> bool:
        gate = sigmoid.input_value(0)
        if gate.element_type.value not in ("f32", "f64"):
            return False
        found = _only_use(sigmoid, users)
        if found is None or found[0].type_name != "Multiply" or found[0].input_value(1 - found[1]) != gate:
            return False
        silu = found[0]
        if silu.attrs.get("auto_broadcast", "numpy") != "numpy" or silu.output(0).partial_shape != gate.partial_shape:
            return False
        found = _only_use(silu, users)
        if found is None or found[0].type_name != "Multiply":
            return False
        gated, index = found
        if gated.attrs.get("auto_broadcast", "numpy") != "numpy":
            return False
        fused = swiglu(gate, gated.input_value(1 - index), gated.output(0).partial_shape)
        replace_node(model, gated, fused, fused=[sigmoid, silu], consumers=users)
        return True


def _only_use(node: Node, users: ConsumerMap) -> tuple[Node, int] | None:
    uses = users.of(node.output(0))
    return uses[0] if len(uses) == 1 else None
