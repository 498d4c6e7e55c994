"""HardSigmoid (opset1) and IsNaN (opset10), as OpenVINO writes them into IR files, of the activation
family (re-exported by :mod:`hetero_sdk.ops`); one array-API kernel each for every device."""

from __future__ import annotations

from typing import Any

from hetero_sdk.array_api import namespace
from hetero_sdk.element_type import Type
from hetero_sdk.graph.node import Node
from hetero_sdk.graph.op_def import Input, OpDef, OutputSpec, define
from hetero_sdk.ops.basic import as_output
from hetero_sdk.ops.checks import REAL_TYPES, expect_same_types

__all__ = ["HARD_SIGMOID", "IS_NAN", "hard_sigmoid", "is_nan"]


def hard_sigmoid(data: Any, alpha: Any, beta: Any, name: str | None = None) -> Node:
    """``max(0, min(1, alpha * x + beta))`` (``HardSigmoid``, opset1); ``alpha`` and ``beta`` are scalars."""
    return Node(HARD_SIGMOID, [as_output(data), as_output(alpha), as_output(beta)], {}, name)


def is_nan(data: Any, name: str | None = None) -> Node:
    """Whether each element is NaN (``IsNaN``, opset10): a boolean tensor of ``data``'s shape."""
    return Node(IS_NAN, [as_output(data)], {}, name)


def _infer_hard_sigmoid(node: Node) -> list[OutputSpec]:
    element_type = expect_same_types(node, 0, 1, 2)
    for index in (1, 2):
        if node.input_value(index).partial_shape.rank > 1 or any(d > 1 for d in node.input_value(index).partial_shape):
            raise node.error(f"input {index} must be a scalar")
    return [(element_type, node.input_value(0).partial_shape)]


def _hard_sigmoid(node: Node, x: Any, alpha: Any, beta: Any) -> Any:
    xp = namespace(x)
    a, b = xp.reshape(alpha, ()), xp.reshape(beta, ())
    return xp.astype(xp.clip(a * x + b, 0.0, 1.0), x.dtype)


def _infer_is_nan(node: Node) -> list[OutputSpec]:
    return [(Type.boolean, node.input_value(0).partial_shape)]


def _is_nan(node: Node, x: Any) -> Any:
    return namespace(x).isnan(x)


# -- ScaledDotProductAttention ----------------------------------------------------------------------------


HARD_SIGMOID = define(
    OpDef(
        "HardSigmoid",
        "activation",
        _infer_hard_sigmoid,
        inputs=(Input("data", REAL_TYPES), Input("alpha", REAL_TYPES), Input("beta", REAL_TYPES)),
        version="opset1",
        evaluate=_hard_sigmoid,
        doc="max(0, min(1, alpha * x + beta)).",
    )
)
IS_NAN = define(
    OpDef(
        "IsNaN",
        "activation",
        _infer_is_nan,
        inputs=(Input("data", REAL_TYPES),),
        version="opset10",
        evaluate=_is_nan,
        doc="Whether each element is NaN.",
    )
)
