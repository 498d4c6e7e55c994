"""Lowerings of the elementwise ops: arithmetic, comparison, logic and Select (numpy broadcasting)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax.numpy as jnp
from hetero_sdk import Node
from jax import lax

from hetero_sdk_jax.lowering.registry import lowering

_SIMPLE: dict[str, Callable[..., Any]] = {
    "Add": jnp.add,
    "Subtract": jnp.subtract,
    "Multiply": jnp.multiply,
    "Maximum": jnp.maximum,
    "Minimum": jnp.minimum,
    "Equal": jnp.equal,
    "NotEqual": jnp.not_equal,
    "Less": jnp.less,
    "LessEqual": jnp.less_equal,
    "Greater": jnp.greater,
    "GreaterEqual": jnp.greater_equal,
    "LogicalAnd": jnp.logical_and,
    "LogicalOr": jnp.logical_or,
    "Mod": jnp.fmod,
}


@lowering(*_SIMPLE)
def binary(node: Node, a: jnp.ndarray, b: jnp.ndarray) -> jnp.ndarray:
    return _SIMPLE[node.type_name](a, b)


@lowering("SquaredDifference")
def squared_difference(node: Node, a: jnp.ndarray, b: jnp.ndarray) -> jnp.ndarray:
    difference = a - b
    return difference * difference


@lowering("Divide")
def divide(node: Node, a: jnp.ndarray, b: jnp.ndarray) -> jnp.ndarray:
    if not jnp.issubdtype(a.dtype, jnp.integer):
        return jnp.true_divide(a, b)
    if node.attrs.get("python_division", True):
        return jnp.floor_divide(a, b)
    a, b = jnp.broadcast_arrays(a, b)
    return lax.div(a, b)  # rounds toward zero


@lowering("Power")
def power(node: Node, a: jnp.ndarray, b: jnp.ndarray) -> jnp.ndarray:
    if not jnp.issubdtype(a.dtype, jnp.integer):
        return jnp.power(a, b)
    a, b = jnp.broadcast_arrays(a, b)
    exact = jnp.power(a, jnp.maximum(b, 0))
    if not jnp.issubdtype(a.dtype, jnp.signedinteger):
        return exact
    # a ** -k truncated toward zero: 1 stays 1, -1 alternates sign, anything else is 0.
    odd = (b % 2) != 0
    reciprocal = jnp.where(a == 1, 1, jnp.where(a == -1, jnp.where(odd, -1, 1), 0)).astype(a.dtype)
    return jnp.where(b >= 0, exact, reciprocal)


@lowering("LogicalNot")
def logical_not(node: Node, x: jnp.ndarray) -> jnp.ndarray:
    return jnp.logical_not(x)


@lowering("Select")
def select(node: Node, cond: jnp.ndarray, then: jnp.ndarray, otherwise: jnp.ndarray) -> jnp.ndarray:
    return jnp.where(cond, then, otherwise)
