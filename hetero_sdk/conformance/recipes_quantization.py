"""Case recipes of the quantization family: FakeQuantize, its values a quarter step from the rounding points."""

from __future__ import annotations

import numpy as np

from hetero_sdk import opset
from hetero_sdk.conformance.case_builder import F32, FLOATS, Builder, OpCase, recipe


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
