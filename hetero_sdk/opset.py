"""The public opset: one factory per op, named as the snake_case of the OpenVINO op type.

This module is the reviewable list of what the SDK offers; each factory is defined with its op's
shape and type inference in the family module under :mod:`hetero_sdk.ops`.
"""

# ruff: noqa: A004  (abs, range and slice are OpenVINO's opset names)
from hetero_sdk.ops.activation import (
    abs,
    acos,
    acosh,
    asin,
    asinh,
    atan,
    atanh,
    ceiling,
    clamp,
    cos,
    cosh,
    erf,
    exp,
    floor,
    gelu,
    hard_sigmoid,
    hswish,
    is_nan,
    log,
    negative,
    relu,
    round,
    sigmoid,
    sign,
    sin,
    sinh,
    sqrt,
    swish,
    tan,
    tanh,
)
from hetero_sdk.ops.basic import bit_cast, constant, convert, parameter, result
from hetero_sdk.ops.control_flow import if_op, loop, scan
from hetero_sdk.ops.convolution import (
    col2im,
    convolution,
    convolution_backprop_data,
    deformable_convolution,
    group_convolution,
)
from hetero_sdk.ops.cumulative import cum_prod, cum_sum
from hetero_sdk.ops.detection import non_max_suppression, non_zero, roi_align, topk, unique
from hetero_sdk.ops.elementwise import (
    add,
    bitwise_and,
    bitwise_left_shift,
    bitwise_not,
    bitwise_or,
    bitwise_right_shift,
    bitwise_xor,
    divide,
    equal,
    floor_mod,
    greater,
    greater_equal,
    less,
    less_equal,
    logical_and,
    logical_not,
    logical_or,
    maximum,
    minimum,
    mod,
    multiply,
    not_equal,
    power,
    select,
    squared_difference,
    subtract,
)
from hetero_sdk.ops.image import grid_sample, interpolate, resize
from hetero_sdk.ops.indexing import gather_nd, reverse_sequence, scatter_elements_update, scatter_nd_update
from hetero_sdk.ops.linear_algebra import det, einsum, matmul, scaled_dot_product_attention
from hetero_sdk.ops.movement import (
    concat,
    depth_to_space,
    gather,
    gather_elements,
    pad,
    space_to_depth,
    split,
    transpose,
    variadic_split,
)
from hetero_sdk.ops.normalization import batch_norm_inference, log_softmax, lrn, mvn, softmax
from hetero_sdk.ops.pooling import avg_pool, max_pool
from hetero_sdk.ops.quantization import fake_quantize
from hetero_sdk.ops.recurrent import gru_sequence, lstm_sequence, rnn_sequence
from hetero_sdk.ops.reduction import reduce_max, reduce_mean, reduce_min, reduce_prod, reduce_sum
from hetero_sdk.ops.shape_manipulation import broadcast, range, reshape, shape_of, squeeze, tile, unsqueeze
from hetero_sdk.ops.signal import mel_weight_matrix, stft
from hetero_sdk.ops.slicing import slice, strided_slice
from hetero_sdk.ops.state import assign, read_value
from hetero_sdk.ops.text import (
    label_encoder,
    regex_full_match,
    string_concat,
    string_normalizer,
    string_split,
)

ceil = ceiling
"""Alias of :func:`ceiling` (OpenVINO's op is named Ceiling)."""

__all__ = [
    "abs", "acos", "acosh", "add", "asin", "asinh", "assign", "atan", "atanh", "avg_pool", "batch_norm_inference",
    "bit_cast", "bitwise_and", "bitwise_left_shift", "bitwise_not", "bitwise_or", "bitwise_right_shift",
    "bitwise_xor", "broadcast", "ceil", "ceiling", "clamp", "col2im", "concat", "constant", "convert", "convolution",
    "convolution_backprop_data", "cos", "cosh", "cum_prod", "cum_sum", "deformable_convolution", "depth_to_space",
    "det", "divide", "einsum", "equal", "erf", "exp", "fake_quantize", "floor", "floor_mod", "gather",
    "gather_elements", "gather_nd", "gelu", "greater", "greater_equal", "grid_sample", "group_convolution",
    "gru_sequence", "hard_sigmoid", "hswish", "if_op", "interpolate", "is_nan", "label_encoder", "less", "less_equal",
    "log", "log_softmax", "logical_and", "logical_not", "logical_or", "loop", "lrn", "lstm_sequence", "matmul",
    "max_pool", "maximum", "mel_weight_matrix", "minimum", "mod", "multiply", "mvn", "negative",
    "non_max_suppression", "non_zero", "not_equal", "pad", "parameter", "power", "range", "read_value", "reduce_max",
    "reduce_mean", "reduce_min", "reduce_prod", "reduce_sum", "regex_full_match", "relu", "reshape", "resize",
    "result", "reverse_sequence", "rnn_sequence", "roi_align", "round", "scaled_dot_product_attention", "scan",
    "scatter_elements_update", "scatter_nd_update", "select", "shape_of", "sigmoid", "sign", "sin", "sinh", "slice",
    "softmax", "space_to_depth", "split", "sqrt", "squared_difference", "squeeze", "stft", "strided_slice",
    "string_concat", "string_normalizer", "string_split", "subtract", "swish", "tan", "tanh", "tile", "topk",
    "transpose", "unique", "unsqueeze", "variadic_split",
]  # fmt: skip
