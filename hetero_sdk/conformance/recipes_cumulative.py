"""Case recipes of the cumulative family: CumSum and CumProd."""

from __future__ import annotations

import numpy as np

from hetero_sdk import opset
from hetero_sdk.conformance.case_builder import I64, Builder, OpCase, recipe


@recipe("CumSum", "CumProd")
def _cum_sum(b: Builder, op_type: str) -> OpCase:
    shape = b.shape(1, 3)
    axis = b.integer(-len(shape), len(shape) - 1)
    exclusive, reverse = bool(b.integer(0, 1)), bool(b.integer(0, 1))
    axis_node = opset.constant(np.array(axis, I64), name="axis")
    data = b.values(shape, b.pick((np.float32, np.int32, np.int64)), -9, 9)
    factory = opset.cum_sum if op_type == "CumSum" else opset.cum_prod
    node = factory(b.input(data, "x"), axis_node, exclusive, reverse, name="op")
    return b.case(op_type, node, "accumulate", shape[axis], axis=axis, exclusive=exclusive, reverse=reverse)
