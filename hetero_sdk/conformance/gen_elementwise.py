"""Generators of the elementwise family: binary arithmetic, comparisons, logic, Select, unary math
and activations, Clamp, Convert."""

from __future__ import annotations

from typing import Any

import numpy as np

from hetero_sdk import opset
from hetero_sdk.conformance.op_cases import BOOL, F16, F32, FLOATS, I32, I64, Builder, OpCase, generator

_ARITH = {
    "Add": opset.add,
    "Subtract": opset.subtract,
    "Multiply": opset.multiply,
    "Maximum": opset.maximum,
    "Minimum": opset.minimum,
    "SquaredDifference": opset.squared_difference,
}
_COMPARE = {
    "Equal": opset.equal,
    "NotEqual": opset.not_equal,
    "Less": opset.less,
    "LessEqual": opset.less_equal,
    "Greater": opset.greater,
    "GreaterEqual": opset.greater_equal,
}
_UNARY = {
    "Relu": (opset.relu, (F32, F16, I32), -3, 3, "simple"),
    "Abs": (opset.abs, (F32, F16, I32), -3, 3, "simple"),
    "Negative": (opset.negative, (F32, F16, I32), -3, 3, "simple"),
    "Sigmoid": (opset.sigmoid, FLOATS, -6, 6, "transcendental"),
    "Tanh": (opset.tanh, FLOATS, -4, 4, "transcendental"),
    "Exp": (opset.exp, FLOATS, -5, 5, "transcendental"),
    "Log": (opset.log, FLOATS, 0.05, 20, "transcendental"),
    "Sqrt": (opset.sqrt, FLOATS, 0, 20, "simple"),
    "Erf": (opset.erf, FLOATS, -3, 3, "transcendental"),
    "HSwish": (opset.hswish, FLOATS, -5, 5, "transcendental"),
    "Floor": (opset.floor, FLOATS, -5, 5, "exact"),
    "Ceiling": (opset.ceiling, FLOATS, -5, 5, "exact"),
    "Sin": (opset.sin, FLOATS, -6, 6, "transcendental"),
    "Cos": (opset.cos, FLOATS, -6, 6, "transcendental"),
}


def _broadcast_shapes(b: Builder) -> tuple[list[int], list[int]]:
    """Two shapes that broadcast by numpy rules (one may have fewer dims and dims of 1)."""
    shape = b.shape(0, 4)
    keep = b.integer(0, len(shape))
    other = [1 if b.integer(0, 3) == 0 else d for d in shape[len(shape) - keep :]]
    return (other, shape) if b.flag() else (shape, other)


def _pair(b: Builder, dtype: Any, low: float, high: float) -> tuple[np.ndarray, np.ndarray]:
    first, second = _broadcast_shapes(b)
    return b.values(first, dtype, low, high), b.values(second, dtype, low, high)


@generator(*_ARITH)
def _arith(b: Builder, op_type: str) -> OpCase:
    dtype = b.pick((F32, F16, I32))
    x, y = _pair(b, dtype, -20 if dtype == I32 else -3, 20 if dtype == I32 else 3)
    node = _ARITH[op_type](b.input(x, "a"), b.operand(y, "b"), name="op")
    return b.case(op_type, node, "simple", 2)


@generator("Divide")
def _divide(b: Builder, op_type: str) -> OpCase:
    dtype = b.pick((F32, F16, I32))
    python_division = b.flag()
    x, y = _pair(b, dtype, -20 if dtype == I32 else -3, 20 if dtype == I32 else 3)
    y = np.where(y == 0, 1, y).astype(dtype) if dtype == I32 else b.away_from(y, [0.0], 0.25)
    node = opset.divide(b.input(x, "a"), b.operand(y, "b"), python_division=python_division, name="op")
    return b.case(op_type, node, "simple", 2, python_division=python_division)


@generator("Power")
def _power(b: Builder, op_type: str) -> OpCase:
    dtype = b.pick(FLOATS)
    first, second = _broadcast_shapes(b)
    x, y = b.values(first, dtype, 0.1, 3), b.values(second, dtype, -2, 2)
    node = opset.power(b.input(x, "a"), b.operand(y, "b"), name="op")
    return b.case(op_type, node, "transcendental")


@generator("Mod")
def _mod(b: Builder, op_type: str) -> OpCase:
    dtype = b.pick((F32, I32))
    x, y = _pair(b, dtype, -20 if dtype == I32 else -6, 20 if dtype == I32 else 6)
    y = np.where(y == 0, 3, y).astype(dtype) if dtype == I32 else b.away_from(y, [0.0], 0.5)
    node = opset.mod(b.input(x, "a"), b.operand(y, "b"), name="op")
    return b.case(op_type, node, "simple")


@generator(*_COMPARE)
def _compare(b: Builder, op_type: str) -> OpCase:
    dtype = b.pick((F32, I32, F16))
    first, second = _broadcast_shapes(b)
    x = b.values(first, I32, -2, 2).astype(dtype)
    y = b.values(second, I32, -2, 2).astype(dtype)
    node = _COMPARE[op_type](b.input(x, "a"), b.operand(y, "b"), name="op")
    return b.case(op_type, node, "exact")


@generator("LogicalAnd", "LogicalOr")
def _logical(b: Builder, op_type: str) -> OpCase:
    x, y = _pair(b, BOOL, 0, 1)
    fn = opset.logical_and if op_type == "LogicalAnd" else opset.logical_or
    return b.case(op_type, fn(b.input(x, "a"), b.operand(y, "b"), name="op"), "exact")


@generator("LogicalNot")
def _logical_not(b: Builder, op_type: str) -> OpCase:
    x = b.values(b.shape(0, 4), BOOL)
    return b.case(op_type, opset.logical_not(b.input(x, "a"), name="op"), "exact")


@generator("Select")
def _select(b: Builder, op_type: str) -> OpCase:
    dtype = b.pick((F32, I32, F16))
    first, second = _broadcast_shapes(b)
    cond_shape = first[len(first) - b.integer(0, len(first)) :]
    cond = b.values(cond_shape, BOOL)
    node = opset.select(
        b.input(cond, "cond"),
        b.operand(b.values(first, dtype), "then"),
        b.operand(b.values(second, dtype), "else"),
        name="op",
    )
    return b.case(op_type, node, "exact")


@generator(*_UNARY)
def _unary(b: Builder, op_type: str) -> OpCase:
    fn, dtypes, low, high, kind = _UNARY[op_type]
    dtype = b.pick(dtypes)
    x = b.values(b.shape(0, 4), dtype, low, high)
    return b.case(op_type, fn(b.input(x, "x"), name="op"), kind)


@generator("Gelu")
def _gelu(b: Builder, op_type: str) -> OpCase:
    mode = b.pick(("ERF", "TANH"))
    x = b.values(b.shape(0, 4), b.pick(FLOATS), -4, 4)
    return b.case(op_type, opset.gelu(b.input(x, "x"), approximation_mode=mode, name="op"), "transcendental", mode=mode)


@generator("Swish")
def _swish(b: Builder, op_type: str) -> OpCase:
    dtype = b.pick(FLOATS)
    x = b.values(b.shape(0, 4), dtype, -5, 5)
    beta = None
    if b.flag():
        beta = b.operand(np.array(b.pick((1.0, 0.5, 2.0, 1.5)), dtype), "beta")
    return b.case(op_type, opset.swish(b.input(x, "x"), beta, name="op"), "transcendental")


@generator("Clamp")
def _clamp(b: Builder, op_type: str) -> OpCase:
    dtype = b.pick((F32, F16, I32))
    low = float(b.integer(-3, 1)) if dtype == I32 else b.pick((-1.5, -0.25, 0.0, -3.0))
    high = low + (float(b.integer(0, 4)) if dtype == I32 else b.pick((0.5, 2.0, 3.5)))
    x = b.values(b.shape(0, 4), dtype, -5, 5)
    node = opset.clamp(b.input(x, "x"), low, high, name="op")
    return b.case(op_type, node, "simple", min=low, max=high)


_CONVERT_RANGES = {np.dtype(np.uint8): (0, 100), np.dtype(np.int8): (-100, 100)}


@generator("Convert")
def _convert(b: Builder, op_type: str) -> OpCase:
    source = np.dtype(b.pick((F32, I32, F16, np.int8, np.uint8, BOOL)))
    target = np.dtype(b.pick((F32, I32, F16, I64, np.int8, np.uint8, BOOL)))
    low, high = _CONVERT_RANGES.get(target, _CONVERT_RANGES.get(source, (-100, 100)))
    x = b.values(b.shape(0, 4), source, low, high)
    if source.kind == "f" and target.kind in "iub":
        x = b.away_from(x, [0.0], 1e-3)
    node = opset.convert(b.input(x, "x"), target, name="op")
    return b.case(op_type, node, "simple", destination_type=target.name)
