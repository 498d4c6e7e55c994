"""Case recipes of the basic family's conversions: Convert's values must fit the destination type, BitCast's
destination has the source's width."""

from __future__ import annotations

import numpy as np

from hetero_sdk import opset
from hetero_sdk.conformance.case_builder import BOOL, F16, F32, I32, I64, Builder, OpCase, recipe

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
