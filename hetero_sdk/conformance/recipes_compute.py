"""Case recipes of the compute families: MatMul, Einsum, reductions, normalizations, convolutions, pooling, TopK,
Unique, STFT."""

from __future__ import annotations

import math

import numpy as np

from hetero_sdk import opset
from hetero_sdk.conformance.case_builder import F16, F32, FLOATS, I32, I64, Builder, OpCase, key_case, recipe
from hetero_sdk.element_type import Type
from hetero_sdk.ops.linear_algebra import einsum_terms

_REDUCE = {
    "ReduceSum": (opset.reduce_sum, (F32, F16, I32), -3, 3, "accumulate"),
    "ReduceMean": (opset.reduce_mean, (F32, F16), -3, 3, "accumulate"),
    "ReduceMax": (opset.reduce_max, (F32, F16, I32), -3, 3, "exact"),
    "ReduceMin": (opset.reduce_min, (F32, F16, I32), -3, 3, "exact"),
    "ReduceProd": (opset.reduce_prod, (F32,), 0.5, 1.5, "accumulate"),
}


def _axes(b: Builder, rank: int, *, allow_negative: bool = True) -> list[int]:
    """A non-empty set of distinct axes of ``rank``, some possibly negative."""
    chosen = sorted({b.integer(0, rank - 1) for _ in range(b.integer(1, rank))})
    return [a - rank if allow_negative and b.integer(0, 3) == 0 else a for a in chosen]


@recipe("MatMul")
def _matmul(b: Builder, op_type: str) -> OpCase:
    dtype = b.pick(FLOATS)
    m, k, n = b.integer(1, 5), b.integer(1, 6), b.integer(1, 5)
    ta, tb = b.flag(), b.flag()
    batch = b.shape(0, 2, 1, 3)
    batch_b = [1 if b.integer(0, 3) == 0 else d for d in batch[len(batch) - b.integer(0, len(batch)) :]]
    vector = b.integer(0, 5)
    a_shape = [k] if vector == 0 else [*batch, *([k, m] if ta else [m, k])]
    b_shape = [k] if vector == 1 else [*batch_b, *([n, k] if tb else [k, n])]
    x, y = b.values(a_shape, dtype, -2, 2), b.values(b_shape, dtype, -2, 2)
    node = opset.matmul(b.input(x, "a"), b.operand(y, "b"), transpose_a=ta, transpose_b=tb, name="op")
    return b.case(op_type, node, "accumulate", k, transpose_a=ta, transpose_b=tb)


@key_case("MatMul")
def _matmul_transposed_a_times_vector() -> OpCase:
    """A transposed A times a 1-D B (a wrong result here once passed the ci profile's drawn cases)."""
    b = Builder.fixed(1)
    a = b.input(b.values([2, 4, 3], F32, -2, 2), "a")  # [batch, k, m], transposed to [batch, m, k]
    node = opset.matmul(a, b.input(b.values([4], F32, -2, 2), "b"), transpose_a=True, name="op")
    return b.case("MatMul", node, "accumulate", 4, transpose_a=True, transpose_b=False)


@key_case("MatMul")
def _matmul_vector_times_transposed_b() -> OpCase:
    """A 1-D A times a transposed B: the mirror case."""
    b = Builder.fixed(2)
    a = b.input(b.values([4], F32, -2, 2), "a")
    node = opset.matmul(a, b.input(b.values([3, 4], F32, -2, 2), "b"), transpose_b=True, name="op")
    return b.case("MatMul", node, "accumulate", 4, transpose_a=False, transpose_b=True)


_EINSUM = (
    "ij,jk->ik", "bij,bjk->bik", "ii->i", "ij->ji", "ij->", "i,i", "i,j->ij", "...ij,...jk->...ik", "abc,cd,de->abe",
)  # fmt: skip


@recipe("Einsum")
def _einsum(b: Builder, op_type: str) -> OpCase:
    dtype = b.pick(FLOATS)
    equation = b.pick(_EINSUM)
    terms, output = einsum_terms(equation)
    sizes = {label: b.integer(1, 4) for label in sorted(set(equation) - set(",->."))}
    batch = b.shape(0, 2, 1, 3)
    operands = []
    for index, term in enumerate(terms):
        shape = [*(batch if "..." in term else []), *(sizes[c] for c in term.replace("...", ""))]
        values = b.values(shape, dtype, -2, 2)
        operands.append(b.input(values, "a") if index == 0 else b.operand(values, f"x{index}"))
    node = opset.einsum(operands, equation, name="op")
    summed = math.prod(sizes[c] for c in set(sizes) - set(output))
    return b.case(op_type, node, "accumulate", summed, equation=equation)


@recipe("Det")
def _det(b: Builder, op_type: str) -> OpCase:
    dtype = b.pick(FLOATS)
    size = b.integer(1, 4)
    shape = [*b.shape(0, 2, 1, 3), size, size]
    # diagonally dominant: well conditioned, so the determinant is not a cancellation of large terms
    x = (b.values(shape, F32, -1, 1) + 2 * size * np.eye(size, dtype=F32)).astype(dtype)
    return b.case(op_type, opset.det(b.input(x, "x"), name="op"), "accumulate", 2 * size**2)


@recipe(*_REDUCE)
def _reduce(b: Builder, op_type: str) -> OpCase:
    fn, dtypes, low, high, kind = _REDUCE[op_type]
    dtype = b.pick(dtypes)
    shape = b.shape(1, 4)
    axes = _axes(b, len(shape))
    keep_dims = b.flag()
    x = b.values(shape, dtype, low, high)
    axes_node = opset.constant(np.array(axes, b.pick((I64, I32))), name="axes")
    node = fn(b.input(x, "x"), axes_node, keep_dims=keep_dims, name="op")
    terms = math.prod(shape[a] for a in axes)
    return b.case(op_type, node, kind, terms, axes=axes, keep_dims=keep_dims)


@recipe("Softmax", "LogSoftmax")
def _softmax(b: Builder, op_type: str) -> OpCase:
    shape = b.shape(1, 4)
    axis = b.integer(-len(shape), len(shape) - 1)
    x = b.values(shape, b.pick(FLOATS), -5, 5)
    fn = opset.softmax if op_type == "Softmax" else opset.log_softmax
    return b.case(op_type, fn(b.input(x, "x"), axis=axis, name="op"), "transcendental", shape[axis], axis=axis)


@recipe("MVN")
def _mvn(b: Builder, op_type: str) -> OpCase:
    shape = b.shape(2, 4, 1, 5)
    axes = _axes(b, len(shape))
    normalize, eps = b.flag(), b.pick((1e-9, 1e-5, 1e-3))
    eps_mode = b.pick(("inside_sqrt", "outside_sqrt"))
    x = b.values(shape, F32, -3, 3)
    node = opset.mvn(
        b.input(x, "x"), opset.constant(np.array(axes, I64), name="axes"), normalize, eps, eps_mode, name="op"
    )
    terms = math.prod(shape[a] for a in axes)
    return b.case(
        op_type, node, "accumulate", 4 * terms, axes=axes, normalize_variance=normalize, eps=eps, eps_mode=eps_mode
    )


@recipe("LRN")
def _lrn(b: Builder, op_type: str) -> OpCase:
    dtype = b.pick(FLOATS)
    shape = b.shape(2, 4, 1, 5)
    axes = _axes(b, len(shape))
    size = b.integer(1, 5)
    alpha, beta, bias = b.pick((1e-4, 0.1, 1.0)), b.pick((0.5, 0.75, 1.0)), b.pick((1.0, 2.0))
    x = b.values(shape, dtype, -3, 3)
    node = opset.lrn(
        b.input(x, "x"), opset.constant(np.array(axes, I64), name="axes"), alpha, beta, bias, size, name="op"
    )
    terms = size ** len(axes)
    return b.case(op_type, node, "transcendental", terms, axes=axes, alpha=alpha, beta=beta, bias=bias, size=size)


@recipe("BatchNormInference")
def _batch_norm(b: Builder, op_type: str) -> OpCase:
    dtype = b.pick(FLOATS)
    shape = [b.integer(1, 3), b.integer(1, 4), *b.shape(0, 2, 1, 4)]
    channels = shape[1]
    epsilon = b.pick((1e-5, 1e-3, 0.01))
    x = b.values(shape, dtype, -3, 3)
    gamma, beta, mean = (b.operand(b.values([channels], dtype, -2, 2), n) for n in ("gamma", "beta", "mean"))
    variance = b.operand(b.values([channels], dtype, 0.1, 2), "variance")
    node = opset.batch_norm_inference(b.input(x, "x"), gamma, beta, mean, variance, epsilon, name="op")
    return b.case(op_type, node, "accumulate", 8, epsilon=epsilon)


def _window(b: Builder, spatial: int, max_kernel: int = 3) -> tuple[list[int], list[int], list[int]]:
    kernel = [b.integer(1, max_kernel) for _ in range(spatial)]
    strides = [b.integer(1, 2) for _ in range(spatial)]
    dilations = [b.integer(1, 2) for _ in range(spatial)]
    return kernel, strides, dilations


def _pads(b: Builder, kernel: list[int]) -> tuple[list[int], list[int]]:
    return [b.integer(0, k - 1) for k in kernel], [b.integer(0, k - 1) for k in kernel]


def _sizes(b: Builder, kernel: list[int], dilations: list[int]) -> list[int]:
    """Spatial sizes at least as large as the dilated kernel (no empty windows)."""
    return [d * (k - 1) + 1 + b.integer(0, 3) for k, d in zip(kernel, dilations)]


@recipe("Convolution", "GroupConvolution")
def _convolution(b: Builder, op_type: str) -> OpCase:
    dtype = b.pick(FLOATS)
    spatial = b.integer(1, 3) if b.integer(0, 4) else 3
    kernel, strides, dilations = _window(b, spatial, 3 if spatial < 3 else 2)
    pads_begin, pads_end = _pads(b, kernel)
    auto_pad = b.pick(("explicit", "valid", "same_upper", "same_lower"))
    groups, c_in, c_out = (
        (b.integer(1, 3), b.integer(1, 2), b.integer(1, 2))
        if op_type == "GroupConvolution"
        else (1, b.integer(1, 3), b.integer(1, 3))
    )
    data = b.values([b.integer(1, 2), groups * c_in, *_sizes(b, kernel, dilations)], dtype, -2, 2)
    shape = [groups, c_out, c_in, *kernel] if op_type == "GroupConvolution" else [c_out, c_in, *kernel]
    filters = b.operand(b.values(shape, dtype, -1, 1), "filters")
    fn = opset.group_convolution if op_type == "GroupConvolution" else opset.convolution
    node = fn(b.input(data, "x"), filters, strides, pads_begin, pads_end, dilations, auto_pad=auto_pad, name="op")
    attrs = {"strides": strides, "pads": (pads_begin, pads_end), "dilations": dilations, "auto_pad": auto_pad}
    return b.case(op_type, node, "accumulate", c_in * math.prod(kernel), **attrs)


@recipe("ConvolutionBackpropData")
def _backprop(b: Builder, op_type: str) -> OpCase:
    dtype = b.pick(FLOATS)
    spatial = b.integer(1, 2)
    kernel, strides, dilations = _window(b, spatial)
    pads_begin, pads_end = _pads(b, kernel)
    output_padding = [b.integer(0, s - 1) for s in strides]
    auto_pad = b.pick(("explicit", "valid"))
    c_in, c_out = b.integer(1, 3), b.integer(1, 3)
    sizes = [b.integer(1, 4) for _ in range(spatial)]
    for i, (k, s, d) in enumerate(zip(kernel, strides, dilations)):
        if s * (sizes[i] - 1) + d * (k - 1) + 1 + output_padding[i] - pads_begin[i] - pads_end[i] < 1:
            pads_begin[i] = pads_end[i] = 0
    data = b.values([b.integer(1, 2), c_in, *sizes], dtype, -2, 2)
    filters = b.operand(b.values([c_in, c_out, *kernel], dtype, -1, 1), "filters")
    node = opset.convolution_backprop_data(
        b.input(data, "x"), filters, strides, pads_begin=pads_begin, pads_end=pads_end, dilations=dilations,
        auto_pad=auto_pad, output_padding=output_padding, name="op",
    )  # fmt: skip
    attrs = {
        "strides": strides,
        "pads": (pads_begin, pads_end),
        "dilations": dilations,
        "output_padding": output_padding,
    }
    return b.case(op_type, node, "accumulate", c_in * math.prod(kernel), auto_pad=auto_pad, **attrs)


def _distinct(b: Builder, shape: list[int], dtype: np.dtype) -> np.ndarray:
    """Values without ties (argmax/argmin and sort orders are then unambiguous)."""
    size = math.prod(shape)
    return (b.rng.permutation(size).reshape(shape) * (4.0 / max(size, 1)) - 2).astype(dtype)


@recipe("MaxPool")
def _max_pool(b: Builder, op_type: str) -> OpCase:
    dtype = b.pick(FLOATS)
    spatial = b.integer(1, 2)
    kernel, strides, dilations = _window(b, spatial)
    pads_begin, pads_end = _pads(b, kernel)
    rounding, auto_pad = b.pick(("floor", "ceil")), b.pick(("explicit", "valid", "same_upper", "same_lower"))
    index_type, axis = b.pick((I64, I32)), b.pick((0, 2))
    data = _distinct(b, [b.integer(1, 2), b.integer(1, 3), *_sizes(b, kernel, dilations)], dtype)
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
    kernel, strides, _ = _window(b, spatial)
    pads_begin, pads_end = _pads(b, kernel)
    exclude_pad, rounding = b.flag(), b.pick(("floor", "ceil"))
    auto_pad = b.pick(("explicit", "valid", "same_upper", "same_lower"))
    data = b.values([b.integer(1, 2), b.integer(1, 3), *_sizes(b, kernel, [1] * spatial)], dtype, -2, 2)
    node = opset.avg_pool(
        b.input(data, "x"), strides, pads_begin, pads_end, kernel, exclude_pad, rounding_type=rounding,
        auto_pad=auto_pad, name="op",
    )  # fmt: skip
    attrs = {"kernel": kernel, "strides": strides, "pads": (pads_begin, pads_end), "exclude_pad": exclude_pad}
    return b.case(op_type, node, "accumulate", math.prod(kernel), rounding=rounding, auto_pad=auto_pad, **attrs)


@recipe("TopK")
def _topk(b: Builder, op_type: str) -> OpCase:
    dtype = b.pick((F32, I32, F16))
    shape = b.shape(1, 3, 1, 5)
    axis = b.integer(-len(shape), len(shape) - 1)
    k = b.integer(1, shape[axis])
    mode, sort = b.pick(("max", "min")), b.pick(("value", "index"))
    data = _distinct(b, shape, np.dtype(F32))
    data = (data * 100).astype(dtype) if dtype == I32 else data.astype(dtype)
    k_node = opset.constant(np.array(k, b.pick((I64, I32))), name="k")
    node = opset.topk(b.input(data, "x"), k_node, axis, mode, sort, index_element_type=b.pick((I32, I64)), name="op")
    return b.case(op_type, [node.output(0), node.output(1)], "exact", k=k, axis=axis, mode=mode, sort=sort)


@recipe("Unique")
def _unique(b: Builder, op_type: str) -> OpCase:
    shape = b.shape(1, 3)
    data = b.values(shape, I64, -2, 2).astype(b.pick((F32, I64)))  # few distinct values: repeats are the point
    axis = b.pick([None, *range(-len(shape), len(shape))])
    axis_node = None if axis is None else opset.constant(np.array(axis, b.pick((I64, I32))), name="axis")
    sort = b.flag()
    index_type, count_type = b.pick((I32, I64)), b.pick((I32, I64))
    node = opset.unique(b.input(data, "x"), axis_node, sort, index_type, count_type, name="op")
    return b.case(op_type, [node.output(i) for i in range(4)], "exact", axis=axis, sorted=sort)


@recipe("STFT")
def _stft(b: Builder, op_type: str) -> OpCase:
    dtype = b.pick(FLOATS)
    size = b.integer(1, 10)
    batch = [b.integer(1, 2)] if b.flag() else []
    signal = b.values([*batch, b.integer(size, 24)], dtype, -2, 2)
    window = b.operand(b.values([b.integer(1, size)], dtype, 0, 1), "window")
    transpose = b.flag()
    node = opset.stft(b.input(signal, "x"), window, np.array(size, I64), np.array(b.integer(1, 4), I64), transpose,
                      name="op")  # fmt: skip
    return b.case(op_type, node, "accumulate", size, frame_size=size, transpose_frames=transpose)


@recipe("MelWeightMatrix")
def _mel_weight_matrix(b: Builder, op_type: str) -> OpCase:
    mels, length = b.integer(1, 8), b.pick((8, 16, 20, 32))
    rate = b.pick((8000, 16000, 22050))
    low, high = b.pick((0.0, 60.0, 125.5)), b.pick((rate / 2, 3000.0, 3800.0))
    integer = b.pick((I64, I32))
    real = b.pick((F32, np.float64))
    count, size, per_second, lowest, highest = (
        b.operand(np.array(v, t), n, constant=True)
        for v, t, n in ((mels, integer, "mels"), (length, integer, "length"), (rate, integer, "rate"),
                        (low, real, "low"), (high, real, "high"))
    )  # fmt: skip
    output_type = Type.of(b.pick((F32, F16)))
    node = opset.mel_weight_matrix(count, size, per_second, lowest, highest, output_type=output_type, name="op")
    return b.case(
        op_type, node, "transcendental", 1, mels=mels, dft_length=length, sample_rate=rate, low=low, high=high
    )


@recipe("ScaledDotProductAttention")
def _attention(b: Builder, op_type: str) -> OpCase:
    dtype = b.pick(FLOATS)
    batch = b.shape(1, 2, 1, 2)
    length, sources, size, value_size = b.integer(1, 4), b.integer(1, 4), b.integer(1, 4), b.integer(1, 4)
    query = b.input(b.values([*batch, length, size], dtype, -2, 2), "q")
    key = b.operand(b.values([*batch, sources, size], dtype, -2, 2), "k")
    value = b.operand(b.values([*batch, sources, value_size], dtype, -2, 2), "v")
    causal = b.integer(0, 3) == 0
    masking = b.pick(("none", "additive", "boolean"))
    mask = None
    if masking == "additive":
        mask = b.operand(b.values([length, sources], dtype, -3, 0), "mask")
    elif masking == "boolean":
        keep = b.rng.random([length, sources]) < 0.6
        keep[np.arange(length), b.rng.integers(0, sources, length)] = True  # every query sees some key
        mask = b.operand(keep, "mask")
    scale = b.operand(np.array(b.pick((0.5, 1.0, 0.125)), dtype), "scale") if b.flag() else None
    node = opset.scaled_dot_product_attention(query, key, value, mask, scale, causal, name="op")
    return b.case(
        op_type, node, "transcendental", size + sources, causal=causal, mask=masking, scaled=scale is not None
    )
