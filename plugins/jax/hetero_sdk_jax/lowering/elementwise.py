"""XLA's lowerings of Divide, Power, Mod and Multiply (the other elementwise ops trace their definitions'
array-API kernels)."""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar
from typing import cast

import jax.numpy as jnp
from hetero_sdk import Node

from hetero_sdk_jax.lowering.registry import lowering, widened


@lowering("Mod")
def mod(node: Node, a: jnp.ndarray, b: jnp.ndarray) -> jnp.ndarray:
    return jnp.fmod(a, b)


EXACT_DIVISION: ContextVar[bool] = ContextVar("exact_division", default=False)
"""Set while lowering for a backend whose f32 division is not correctly rounded (see
:attr:`Backend.divides_inexactly`): Divide then corrects the quotient."""


@lowering("Divide")
def divide(node: Node, a: jnp.ndarray, b: jnp.ndarray) -> jnp.ndarray:
    """Divide as its definition computes it (:attr:`~hetero_sdk.ops.OpDef.evaluate`, the reference's kernel
    too: true division for reals, floor or truncating division for integers), its f32 quotient corrected
    where the backend divides inexactly. An integer division by zero, which the reference refuses, gives
    jax's value."""
    quotient = cast(Callable[..., jnp.ndarray], node.op.evaluate)(node, a, b)  # Divide's definition has one
    if EXACT_DIVISION.get() and quotient.dtype == jnp.float32:
        return corrected_quotient(a, b, quotient)
    return quotient


def corrected_quotient(a: jnp.ndarray, b: jnp.ndarray, quotient: jnp.ndarray) -> jnp.ndarray:
    """``quotient`` (``a / b`` within a few ulp) made correctly rounded: one Newton step on the residual
    ``a - quotient * b``, computed exactly whether or not the device fuses multiply-adds (the product
    split into its rounded value and error, Dekker's two-product), kept only where finite so that
    infinities, NaNs and divisions by zero keep the plain quotient. Quotients near the subnormal range
    stay as they are (devices flush a subnormal residual to zero)."""
    product = quotient * b
    q_high, q_low = _halves(quotient)
    b_high, b_low = _halves(b)
    error = ((q_high * b_high - product) + q_high * b_low + q_low * b_high) + q_low * b_low
    residual = (a - product) - error
    better = quotient + residual / b
    return jnp.where(jnp.isfinite(better), better, quotient)


def _halves(x: jnp.ndarray) -> tuple[jnp.ndarray, jnp.ndarray]:
    """``x`` as ``high + low``, each with at most 12 significant bits (Veltkamp's split of an f32)."""
    scaled = x * jnp.float32(4097.0)
    high = scaled - (scaled - x)
    return high, x - high


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


@lowering("Multiply")
def multiply(node: Node, a: jnp.ndarray, b: jnp.ndarray) -> jnp.ndarray:
    """Multiply as its definition computes it, except a SiLU of floats up to 32 bits (``x * Sigmoid(x)``,
    either order: every activation of YOLOv5 to v8 and YOLOX), computed in f32 from ``x`` as
    ``x * (0.5 + 0.5 * tanh(x / 2))``.

    XLA:CPU's tanh is a rational function, cheaper than the definition's ``1 / (1 + exp(-x))`` (a
    range-reduced exp, then a division): 2-3 % of YOLOv8n and YOLOX on one thread. Its error stays
    that of f32 arithmetic: within 1.8e-7 * max(1, |x|) of the exact SiLU on XLA:CPU (the exp form:
    1.5e-7), ONNX Runtime's own logistic being a rational approximation too; only the relative error of
    the tiny values of large negative ``x`` grows (3e-4 at x = -8, where SiLU is -2.7e-3). The Sigmoid
    node still computes its own output, which XLA drops when nothing else reads it.
    """
    gated = _silu_input(node)
    if gated is not None and jnp.issubdtype(a.dtype, jnp.floating) and jnp.dtype(a.dtype).itemsize <= 4:
        x = widened((a, b)[gated])
        return x * (0.5 + 0.5 * jnp.tanh(0.5 * x))
    return cast(Callable[..., jnp.ndarray], node.op.evaluate)(node, a, b)


def _silu_input(node: Node) -> int | None:
    """Which input of ``node`` (a Multiply) is ``x`` when the other is ``Sigmoid(x)``; None otherwise."""
    for index in (0, 1):
        gate = node.input_value(1 - index).node
        if gate.type_name == "Sigmoid":
            source, x = gate.input_value(0), node.input_value(index)
            if source.node is x.node and source.index == x.index:
                return index
    return None
