"""TEMPLATE's own op: ``TemplateFullyConnected``, a MatMul, a bias Add and an activation in one kernel.

The op is produced by :class:`template_plugin.transformations.FullyConnectedFusion`; it is defined
here with the SDK's public op-definition API, as a third-party device defines its fused ops, and
computed by its numpy kernel, registered with the reference kernels so that
:func:`hetero_sdk.reference.evaluate` runs a model TEMPLATE transformed (TEMPLATE's execution plan runs
its lending variant, :mod:`template_plugin.plan_kernels`).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from hetero_sdk import Node, PartialShape
from hetero_sdk.plugin import (
    BOOL,
    NUMERIC_TYPES,
    REAL_TYPES,
    STRING,
    Attr,
    Input,
    OpDef,
    OutputSpec,
    as_output,
    define,
    erfc_values,
    expect_same_types,
    gelu_tanh,
    kernel,
    matmul_shape,
    widened,
)

__all__ = ["ACTIVATIONS", "FULLY_CONNECTED", "FULLY_CONNECTED_OP", "fully_connected"]

FULLY_CONNECTED = "TemplateFullyConnected"
"""The op type name."""

ACTIVATIONS = ("none", "relu", "sigmoid", "tanh", "gelu_erf", "gelu_tanh")
"""Values of the ``activation`` attribute; all but ``none`` and ``relu`` need a real element type."""


def fully_connected(
    data_a: Any,
    data_b: Any,
    bias: Any,
    transpose_a: bool = False,
    transpose_b: bool = False,
    activation: str = "none",
    name: str | None = None,
) -> Node:
    """``activation(matmul(data_a, data_b) + bias)`` as one op (``TemplateFullyConnected``).

    :param data_a: the left operand, as for ``MatMul``.
    :param data_b: the right operand, as for ``MatMul``, of the same element type.
    :param bias: added to the product; all its dimensions but the last are 1, its last is 1 or the
        product's last dimension, and its rank is at most the product's (it never enlarges the result).
    :param transpose_a: as ``MatMul``'s ``transpose_a``.
    :param transpose_b: as ``MatMul``'s ``transpose_b``.
    :param activation: one of :data:`ACTIVATIONS` (``gelu_erf`` and ``gelu_tanh`` are ``Gelu``'s two
        approximation modes).
    :param name: the node's friendly name.
    """
    a = as_output(data_a)
    inputs = [a, as_output(data_b, like=a), as_output(bias, like=a)]
    attrs = {"transpose_a": bool(transpose_a), "transpose_b": bool(transpose_b), "activation": activation}
    return Node(FULLY_CONNECTED_OP, inputs, attrs, name)


def bias_fits(bias: PartialShape, out: PartialShape) -> bool:
    """True when ``bias`` broadcasts onto ``out`` along the last axis only, leaving ``out``'s shape."""
    if bias.rank > out.rank or any(d != 1 for d in bias.dims[:-1]):
        return False
    if bias.rank == 0 or bias[-1] == 1:
        return True
    return bias[-1] == out[-1] and bias[-1] != -1


def _fully_connected(node: Node) -> list[OutputSpec]:
    element_type = expect_same_types(node, 0, 1, 2)
    activation = node.attrs["activation"]
    if activation not in ("none", "relu") and element_type not in REAL_TYPES:
        raise node.error(f"activation {activation!r} needs a real element type, got {element_type.value}")
    a, b = node.input_value(0).partial_shape, node.input_value(1).partial_shape
    out = matmul_shape(node, a, b, node.attrs["transpose_a"], node.attrs["transpose_b"])
    bias = node.input_value(2).partial_shape
    if not bias_fits(bias, out):
        raise node.error(
            f"bias {bias} must have rank <= {out.rank}, dims of 1 but the last, and a last dim of 1 or "
            f"{out[-1] if out.rank else 1} (the product's shape is {out})"
        )
    return [(element_type, out)]


FULLY_CONNECTED_OP = define(
    OpDef(
        FULLY_CONNECTED,
        "template",
        _fully_connected,
        inputs=(Input("data_a", NUMERIC_TYPES), Input("data_b", NUMERIC_TYPES), Input("bias", NUMERIC_TYPES)),
        attrs=(
            Attr("transpose_a", BOOL, False, doc="as MatMul's"),
            Attr("transpose_b", BOOL, False, doc="as MatMul's"),
            Attr("activation", STRING, "none", ACTIVATIONS, doc="applied to the biased product"),
        ),
        version="template",
        doc="activation(matmul(data_a, data_b) + bias) in one kernel.",
    )
)


@kernel(FULLY_CONNECTED)
def _fully_connected_kernel(node: Node, a: np.ndarray, b: np.ndarray, bias: np.ndarray) -> np.ndarray:
    if a.ndim > 1 and node.attrs["transpose_a"]:
        a = np.swapaxes(a, -1, -2)
    if b.ndim > 1 and node.attrs["transpose_b"]:
        b = np.swapaxes(b, -1, -2)
    y = np.matmul(widened(a), widened(b)) + widened(bias)
    activation = node.attrs["activation"]
    if activation == "relu":
        return np.maximum(y, np.zeros((), y.dtype))
    with np.errstate(over="ignore"):
        if activation == "sigmoid":
            return 1 / (1 + np.exp(-y))
        if activation == "tanh":
            return np.tanh(y)
    y64 = np.asarray(y, dtype=np.float64)
    if activation == "gelu_erf":
        return 0.5 * y64 * erfc_values(-y64 / math.sqrt(2), exact=y.dtype == np.float64)
    if activation == "gelu_tanh":
        return gelu_tanh(y)
    return y
