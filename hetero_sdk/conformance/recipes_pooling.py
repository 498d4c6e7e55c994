"""Case recipes of the pooling family: MaxPool and AvgPool (windows that fit the data)."""

from __future__ import annotations

import math

from hetero_sdk import opset
from hetero_sdk.conformance.case_builder import FLOATS, I32, I64, Builder, OpCase, recipe
from hetero_sdk.conformance.recipe_parts import distinct_values, draw_pads, draw_sizes, draw_window


@recipe("MaxPool")
def _max_pool(b: Builder, op_type: str) -> OpCase:
    dtype = b.pick(FLOATS)
    spatial = b.integer(1, 2)
    kernel, strides, dilations = draw_window(b, spatial)
    pads_begin, pads_end = draw_pads(b, kernel)
    rounding, auto_pad = b.pick(("floor", "ceil")), b.pick(("explicit", "valid", "same_upper", "same_lower"))
    index_type, axis = b.pick((I64, I32)), b.pick((0, 2))
    data = distinct_values(b, [b.integer(1, 2), b.integer(1, 3), *draw_sizes(b, kernel, dilations)], dtype)
    node = opset.max_pool(
        b.input(data, "x"), strides, dilations, pads_begin, pads_end, kernel, rounding_type=rounding,
        auto_pad=auto_pad, index_element_type=index_type, axis=axis, name="op",
    )  # fmt: skip
    attrs = {"kernel": kernel, "strides": strides, "dilations": dilations, "pads": (pads_begin, pads_end)}
    return b.case(op_type, [node.output(0), node.output(1)], "exact", rounding=rounding, auto_pad=auto_pad, **attrs)


@recipe("AvgPool")
def _avg_pool(b: Builder, op_type: str) -> OpCase:
    dtype = b.pick(FLOATS)
    spatial = b.integer(1, 2)
    kernel, strides, _ = draw_window(b, spatial)
    pads_begin, pads_end = draw_pads(b, kernel)
    exclude_pad, rounding = b.flag(), b.pick(("floor", "ceil"))
    auto_pad = b.pick(("explicit", "valid", "same_upper", "same_lower"))
    data = b.values([b.integer(1, 2), b.integer(1, 3), *draw_sizes(b, kernel, [1] * spatial)], dtype, -2, 2)
    node = opset.avg_pool(
        b.input(data, "x"), strides, pads_begin, pads_end, kernel, exclude_pad, rounding_type=rounding,
        auto_pad=auto_pad, name="op",
    )  # fmt: skip
    attrs = {"kernel": kernel, "strides": strides, "pads": (pads_begin, pads_end), "exclude_pad": exclude_pad}
    return b.case(op_type, node, "accumulate", math.prod(kernel), rounding=rounding, auto_pad=auto_pad, **attrs)
