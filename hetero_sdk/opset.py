"""The public opset: one factory per op, named as the snake_case of the OpenVINO op type.

This module is the reviewable list of what the SDK offers; each factory is defined with its op's
shape and type inference in the family module under :mod:`hetero_sdk.ops`.
"""

from hetero_sdk.ops.activation import (
    abs, ceiling, clamp, cos, erf, exp, floor, gelu, hswish, log, negative, relu, sigmoid, sin, sqrt,
    swish, tanh,
)  # fmt: skip
from hetero_sdk.ops.basic import constant, convert, parameter, result
from hetero_sdk.ops.elementwise import (
    add, divide, equal, greater, greater_equal, less, less_equal, logical_and, logical_not, logical_or,
    maximum, minimum, mod, multiply, not_equal, power, select, squared_difference, subtract,
)  # fmt: skip

# -- linear_algebra, convolution, pooling, normalization (begin) --
# -- linear_algebra, convolution, pooling, normalization (end) --
# -- reduction, shape_manipulation (begin) --
# -- reduction, shape_manipulation (end) --
# -- detection, image (begin) --
# -- detection, image (end) --

ceil = ceiling
"""Alias of :func:`ceiling` (OpenVINO's op is named Ceiling)."""

__all__ = [
    "abs", "add", "ceil", "ceiling", "clamp", "constant", "convert", "cos", "divide", "equal", "erf",
    "exp", "floor", "gelu", "greater", "greater_equal", "hswish", "less", "less_equal", "log",
    "logical_and", "logical_not", "logical_or", "maximum", "minimum", "mod", "multiply", "negative",
    "not_equal", "parameter", "power", "relu", "result", "select", "sigmoid", "sin", "sqrt",
    "squared_difference", "subtract", "swish", "tanh",
]  # fmt: skip
