"""Case recipes of the reduction family: ReduceSum, ReduceMean, ReduceMax, ReduceMin and ReduceProd."""

from __future__ import annotations

import math

import numpy as np

from hetero_sdk import opset
from hetero_sdk.conformance.case_builder import F16, F32, I32, I64, Builder, OpCase, recipe
from hetero_sdk.conformance.recipe_parts import draw_axes

_REDUCE = {
    "ReduceSum": (opset.reduce_sum, (F32, F16, I32), -3, 3, "accumulate"),
    "ReduceMean": (opset.reduce_mean, (F32, F16), -3, 3, "accumulate"),
    "ReduceMax": (opset.reduce_max, (F32, F16, I32), -3, 3, "exact"),
    "ReduceMin": (opset.reduce_min, (F32, F16, I32), -3, 3, "exact"),
    "ReduceProd": (opset.reduce_prod, (F32,), 0.5, 1.5, "accumulate"),
}


@recipe(*_REDUCE)
def _reduce(b: Builder, op_type: str) -> OpCase:
    fn, dtypes, low, high, kind = _REDUCE[op_type]
    dtype = b.pick(dtypes)
    shape = b.shape(1, 4)
    axes = draw_axes(b, len(shape))
    keep_dims = b.flag()
    x = b.values(shape, dtype, low, high)
    axes_node = opset.constant(np.array(axes, b.pick((I64, I32))), name="axes")
    node = fn(b.input(x, "x"), axes_node, keep_dims=keep_dims, name="op")
    terms = math.prod(shape[a] for a in axes)
    return b.case(op_type, node, kind, terms, axes=axes, keep_dims=keep_dims)
