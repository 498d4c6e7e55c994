"""Case recipes of the elementwise ops whose operands constrain each other beyond their declared
types: Swish's optional beta is a scalar, Clamp's bounds are ordered, Convert's values must fit the
destination type, BitCast's destination has the source's width. The other elementwise and activation
ops derive their cases (``derived_cases``)."""

from __future__ import annotations

import numpy as np

from hetero_sdk import opset
from hetero_sdk.conformance.case_builder import BOOL, F16, F32, FLOATS, I32, I64, Builder, OpCase, recipe


@recipe("Swish")
def _swish(b: Builder, op_type: str) -> OpCase:
    dtype = b.pick(FLOATS)
    x = b.values(b.shape(0, 4), dtype, -5, 5)
    beta = None
    if b.flag():
        beta = b.operand(np.array(b.pick((1.0, 0.5, 2.0, 1.5)), dtype), "beta")
    return b.case(op_type, opset.swish(b.input(x, "x"), beta, name="op"), "transcendental")


@recipe("Clamp")
def _clamp(b: Builder, op_type: str) -> OpCase:
    dtype = b.pick((F32, F16, I32))
    low = float(b.integer(-3, 1)) if dtype == I32 else b.pick((-1.5, -0.25, 0.0, -3.0))
    high = low + (float(b.integer(0, 4)) if dtype == I32 else b.pick((0.5, 2.0, 3.5)))
    x = b.values(b.shape(0, 4), dtype, -5, 5)
    node = opset.clamp(b.input(x, "x"), low, high, name="op")
    return b.case(op_type, node, "simple", min=low, max=high)


_CONVERT_RANGES = {np.dtype(np.uint8): (0, 100), np.dtype(np.int8): (-100, 100)}


@recipe("Convert")
def _convert(b: Builder, op_type: str) -> OpCase:
    source = np.dtype(b.pick((F32, I32, F16, np.int8, np.uint8, BOOL)))
    target = np.dtype(b.pick((F32, I32, F16, I64, np.int8, np.uint8, BOOL)))
    low, high = _CONVERT_RANGES.get(target, _CONVERT_RANGES.get(source, (-100, 100)))
    x = b.values(b.shape(0, 4), source, low, high)
    if source.kind == "f" and target.kind in "iub":
        x = b.away_from(x, [0.0], 1e-3)
    node = opset.convert(b.input(x, "x"), target, name="op")
    return b.case(op_type, node, "simple", destination_type=target.name)


_SAME_WIDTH = ((F32, I32, np.uint32), (F16, np.int16, np.uint16), (np.int8, np.uint8, BOOL), (I64, np.float64))


@recipe("BitCast")
def _bit_cast(b: Builder, op_type: str) -> OpCase:
    group = b.pick(_SAME_WIDTH)
    source, target = np.dtype(b.pick(group)), np.dtype(b.pick(group))
    shape = b.shape(0, 4)
    # floats and booleans: the bits of normal floats (no NaN payloads, no flushed subnormals), or of 0 and 1
    x = b.values(shape, target).view(source) if target.kind in "fb" else b.values(shape, source, -100, 100)
    node = opset.bit_cast(b.input(x, "x"), target, name="op")
    return b.case(op_type, node, "exact", destination_type=target.name)


@recipe("HardSigmoid")
def _hard_sigmoid(b: Builder, op_type: str) -> OpCase:
    dtype = b.pick(FLOATS)
    x = b.values(b.shape(0, 4), dtype, -5, 5)
    shape = b.pick(([], [1]))
    alpha, beta = b.pick((0.2, 0.5, 1.0)), b.pick((0.5, 0.0, 0.25))
    alpha_node, beta_node = (b.operand(np.full(shape, v, dtype), n) for v, n in ((alpha, "alpha"), (beta, "beta")))
    node = opset.hard_sigmoid(b.input(x, "x"), alpha_node, beta_node, name="op")
    return b.case(op_type, node, "simple", 2, alpha=alpha, beta=beta)


@recipe("FakeQuantize")
def _fake_quantize(b: Builder, op_type: str) -> OpCase:
    dtype = b.pick(FLOATS)
    shape = [b.integer(1, 2), b.integer(1, 3), *b.shape(0, 2, 1, 3)]
    levels = b.pick((256, 2, 3, 16))
    per_channel = b.flag()
    bounds = [1, shape[1], *([1] * (len(shape) - 2))] if per_channel else []
    low = b.values(bounds, F32, -3, -0.5)
    high = low + b.values(bounds, F32, 1, 4)
    out_low, out_high = b.values(bounds, F32, -2, 0), b.values(bounds, F32, 0.5, 2)
    steps = levels - 1
    # levels a quarter step from the rounding points, and some values outside the input range
    t = b.rng.integers(0, steps + 1, shape) + b.rng.uniform(-0.3, 0.3, shape)
    t = np.where(b.rng.random(shape) < 0.15, np.where(b.rng.random(shape) < 0.5, -1.5, steps + 1.5), t)
    x = (low + t / steps * (high - low)).astype(dtype)
    il, ih, ol, oh = (
        b.operand(v.astype(dtype), n) for v, n in ((low, "il"), (high, "ih"), (out_low, "ol"), (out_high, "oh"))
    )
    node = opset.fake_quantize(b.input(x, "x"), il, ih, ol, oh, levels, name="op")
    return b.case(op_type, node, "accumulate", 8, levels=levels, per_channel=per_channel)
