"""TEMPLATE's own ReduceMean (float32 sums by BLAS over trailing axes, float64 accumulation without a
widened copy over others) against numpy's mean in float64, and the reference kernel's answers where it
defers to it; its elementwise ops writing into the
request's arena (over their dying inputs) against numpy written here; its Reshape, Squeeze and Unsqueeze
keeping their output shapes against numpy's."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import hetero_sdk as hs
from hetero_sdk import opset
from template_plugin.compiled_model import PEAK_MEMORY
from template_plugin.fused_ops import fully_connected
from template_plugin.plan_kernels import bind_pad, bind_view


def _template_mean(x: np.ndarray, axes: list[int], keep: bool) -> np.ndarray:
    data = opset.parameter(list(x.shape), hs.Type(str(x.dtype).replace("float", "f").replace("int", "i")))
    model = hs.Model([opset.reduce_mean(data, np.array(axes, np.int64), keep)], [data])
    compiled = hs.Core().compile_model(model, "TEMPLATE", {"TEMPLATE_DISABLE_TRANSFORMATIONS": True})
    return np.asarray(compiled(x)[0])


@settings(max_examples=40, deadline=None)
@given(
    x=hnp.arrays(np.float32, hnp.array_shapes(min_dims=1, max_dims=4, max_side=7),
                 elements=st.floats(-1e6, 1e6, width=32)),
    keep=st.booleans(), data=st.data(),
)  # fmt: skip
def test_reduce_mean_equals_numpy_in_float64(x, keep, data) -> None:
    axes = data.draw(st.lists(st.integers(-x.ndim, x.ndim - 1), min_size=1, max_size=x.ndim, unique=True))
    reduced = tuple(sorted({a % x.ndim for a in axes}))
    exact = np.mean(x.astype(np.float64), axis=reduced, keepdims=keep)
    result = _template_mean(x, axes, keep)
    assert result.dtype == np.float32 and result.shape == exact.shape
    if reduced == tuple(range(x.ndim - len(reduced), x.ndim)):  # float32 sums: the summation error bound
        count = int(np.prod([x.shape[a] for a in reduced]))
        eps = float(np.finfo(np.float32).eps)
        magnitude = np.mean(np.abs(x.astype(np.float64)), axis=reduced, keepdims=keep)
        bound = (count - 1) * eps * magnitude + eps * np.abs(exact) + np.finfo(np.float32).smallest_subnormal
        assert np.all(np.abs(result - exact) <= bound), np.max(np.abs(result - exact) - bound)
    else:
        np.testing.assert_allclose(result, exact.astype(np.float32), rtol=1e-6, atol=1e-6)


@settings(max_examples=20, deadline=None)
@given(
    shape=st.sampled_from([(1, 96, 80, 80), (2, 200, 2, 96), (3, 768)]), seed=st.integers(0, 2**16),
)  # fmt: skip
def test_reduce_mean_over_trailing_axes_stays_within_float32_rounding_of_the_mean(shape, seed) -> None:
    """Global average pooling and a layer norm's statistics: sums of thousands of activations."""
    x = np.random.default_rng(seed).standard_normal(shape).astype(np.float32) + 0.5
    axes = list(range(1, len(shape)))
    exact = np.mean(x.astype(np.float64), axis=tuple(axes), keepdims=True)
    np.testing.assert_allclose(_template_mean(x, axes, True), exact, rtol=2e-6, atol=2e-7)


def test_reduce_mean_of_integers_and_of_nothing_keeps_the_reference_answers() -> None:
    ints = np.array([[-7, 2], [3, 3]], np.int32)
    np.testing.assert_array_equal(_template_mean(ints, [1], False), np.array([-2, 3], np.int32))  # truncates
    empty = np.zeros((2, 0), np.float32)
    np.testing.assert_array_equal(_template_mean(empty, [1], False), np.zeros(2, np.float32))  # 0, not NaN


BINARY = {
    "Add": (opset.add, np.add),
    "Multiply": (opset.multiply, np.multiply),
    "Subtract": (opset.subtract, np.subtract),
}
UNARY = {
    "Relu": (opset.relu, lambda x: np.where(x > 0, x, 0 * x) if x.dtype.kind == "f" else np.maximum(x, 0)),
    "Sigmoid": (opset.sigmoid, lambda x: 1 / (1 + np.exp(-x))),
    "Clamp": (lambda x: opset.clamp(x, -0.5, 2.0), lambda x: np.minimum(np.maximum(x, -0.5), 2.0).astype(x.dtype)),
}
TYPES = {np.float32: hs.Type.f32, np.float64: hs.Type.f64, np.float16: hs.Type.f16, np.int32: hs.Type.i32}


@settings(max_examples=60, deadline=None)
@given(
    op=st.sampled_from(sorted(BINARY)),
    dtype=st.sampled_from(sorted(TYPES, key=str)),
    shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=4, max_side=5),
    seed=st.integers(0, 2**16),
)
def test_elementwise_binary_ops_write_the_numpy_values_into_the_arena(op, dtype, shapes, seed) -> None:
    """Add, Multiply and Subtract of f32/f64 write into the request's arena; other types take the
    reference kernel. Twice on one request (the second reuses the buffers), against numpy in the test."""
    rng = np.random.default_rng(seed)
    a, b = ((rng.standard_normal(s) * 10).astype(dtype) for s in shapes.input_shapes)
    build, numpy_op = BINARY[op]
    pa, pb = (
        opset.parameter(list(a.shape), TYPES[dtype], name="a"),
        opset.parameter(list(b.shape), TYPES[dtype], name="b"),
    )
    model = hs.Model([opset.relu(build(pa, pb))], [pa, pb])  # an op after it: its result is an intermediate
    request = hs.Core().compile_model(model, "TEMPLATE").create_infer_request()
    expected = UNARY["Relu"][1](numpy_op(a, b))
    for _ in range(2):
        got = np.asarray(request.infer([a, b])[0])
        assert got.dtype == np.dtype(dtype) and got.shape == expected.shape
        np.testing.assert_array_equal(got, expected)


@settings(max_examples=40, deadline=None)
@given(
    op=st.sampled_from(sorted(UNARY)),
    dtype=st.sampled_from([np.float32, np.float64, np.float16]),
    x=hnp.arrays(np.float64, hnp.array_shapes(max_dims=4, max_side=6), elements=st.floats(-50, 50)),
)
def test_elementwise_unary_ops_write_the_numpy_values_into_the_arena(op, dtype, x) -> None:
    x = x.astype(dtype)
    build, numpy_op = UNARY[op]
    data = opset.parameter(list(x.shape), TYPES[dtype], name="x")
    model = hs.Model([opset.multiply(build(data), np.ones((), dtype))], [data])
    request = (
        hs.Core().compile_model(model, "TEMPLATE", {"TEMPLATE_DISABLE_TRANSFORMATIONS": True}).create_infer_request()
    )
    with np.errstate(over="ignore"):
        expected = numpy_op(x.astype(np.float32) if dtype == np.float16 else x).astype(dtype)
    for _ in range(2):
        got = np.asarray(request.infer([x])[0])
        assert got.dtype == np.dtype(dtype)
        np.testing.assert_allclose(got, expected, rtol=1e-3 if dtype == np.float16 else 1e-7, atol=0)


def _compiled(model: hs.Model) -> hs.CompiledModel:
    return hs.Core().compile_model(model, "TEMPLATE", {"TEMPLATE_DISABLE_TRANSFORMATIONS": True})


def test_an_elementwise_chain_writes_over_its_dying_inputs() -> None:
    """Each op of the chain takes the buffer of the value that dies with it: one buffer for the whole
    chain (the peak is the input and that buffer; two alternating buffers without), and the numpy values."""
    x = np.random.default_rng(0).standard_normal((64, 64)).astype(np.float32)
    data = opset.parameter([64, 64], name="x")
    y = opset.add(opset.multiply(data, np.float32(2)), np.float32(1))
    y = opset.clamp(opset.subtract(opset.sigmoid(opset.relu(y)), np.float32(0.5)), -0.25, 0.25)
    compiled = _compiled(hs.Model([opset.add(y, data)], [data]))  # the input lives to the end
    request = compiled.create_infer_request()
    expected = np.clip(1 / (1 + np.exp(-np.maximum(x * 2 + 1, 0))) - np.float32(0.5), -0.25, 0.25) + x
    for _ in range(2):
        np.testing.assert_array_equal(request.infer([x])[0], expected)
    assert compiled.get_property(PEAK_MEMORY) == 2 * x.nbytes


def test_a_value_read_again_later_or_a_model_input_is_never_written_over() -> None:
    x = np.random.default_rng(1).standard_normal((8, 16)).astype(np.float32)
    original = x.copy()
    data = opset.parameter([8, 16], name="x")
    shared = opset.relu(opset.multiply(data, np.float32(3)))
    first, second = opset.add(shared, np.float32(1)), opset.multiply(shared, np.float32(2))
    direct = opset.relu(data)  # the input dies here, but it is the caller's array
    request = _compiled(hs.Model([first, second, opset.sigmoid(direct)], [data])).create_infer_request()
    for _ in range(2):
        got = request.infer([x])
        np.testing.assert_array_equal(got[0], np.maximum(x * 3, 0) + 1)
        np.testing.assert_array_equal(got[1], np.maximum(x * 3, 0) * 2)
        np.testing.assert_array_equal(got[2], 1 / (1 + np.exp(-np.maximum(x, 0))))
        np.testing.assert_array_equal(x, original)


@settings(max_examples=40, deadline=None)
@given(
    x=hnp.arrays(
        np.float32, hnp.array_shapes(min_dims=1, max_dims=4, max_side=6), elements=st.floats(-30, 30, width=32)
    ),
    dtype=st.sampled_from([np.float32, np.float64]),
    data=st.data(),
)
def test_softmax_writes_the_numpy_values_into_the_arena(x, dtype, data) -> None:
    """Softmax of f32/f64 into a lent buffer (over its input when that dies with it)."""
    x = x.astype(dtype)
    axis = data.draw(st.integers(-x.ndim, x.ndim - 1))
    param = opset.parameter(list(x.shape), TYPES[dtype], name="x")
    model = hs.Model([opset.softmax(opset.multiply(param, np.ones((), dtype)), axis)], [param])
    request = _compiled(model).create_infer_request()
    shifted = np.exp(x - x.max(axis=axis, keepdims=True))
    expected = shifted / shifted.sum(axis=axis, keepdims=True)
    for _ in range(2):
        np.testing.assert_allclose(request.infer([x])[0], expected, rtol=1e-6 if dtype == np.float32 else 1e-12)


@settings(max_examples=40, deadline=None)
@given(
    batch=st.sampled_from([(), (2,), (1, 3)]),
    m=st.integers(1, 5), k=st.integers(1, 6), n=st.integers(1, 7),
    transpose_a=st.booleans(), transpose_b=st.booleans(),
    activation=st.sampled_from(["none", "relu", "sigmoid"]),
    dtype=st.sampled_from([np.float32, np.float64, np.float16]),
    seed=st.integers(0, 2**16),
)  # fmt: skip
def test_fused_matmul_writes_the_numpy_values_into_the_arena(
    batch, m, k, n, transpose_a, transpose_b, activation, dtype, seed
) -> None:
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((*batch, m, k)).astype(dtype)
    b = rng.standard_normal((k, n)).astype(dtype)
    bias = rng.standard_normal(n).astype(dtype)
    stored_a = np.swapaxes(a, -1, -2).copy() if transpose_a else a
    stored_b = b.T.copy() if transpose_b else b
    param = opset.parameter(list(stored_a.shape), TYPES[dtype], name="a")
    fused = fully_connected(param, stored_b, bias, transpose_a, transpose_b, activation)
    request = _compiled(hs.Model([opset.multiply(fused, np.ones((), dtype))], [param])).create_infer_request()
    wide = np.float32 if dtype == np.float16 else dtype
    y = a.astype(wide) @ b.astype(wide) + bias.astype(wide)
    expected = {"none": y, "relu": np.maximum(y, 0), "sigmoid": 1 / (1 + np.exp(-y))}[activation].astype(dtype)
    tolerance = {np.float16: 2e-3, np.float32: 1e-6, np.float64: 1e-12}[dtype]
    for _ in range(2):
        np.testing.assert_allclose(request.infer([stored_a])[0], expected, rtol=tolerance, atol=tolerance)


INTEGERS = [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64]
INTEGER_TYPES = dict(zip(INTEGERS, [hs.Type.i8, hs.Type.u8, hs.Type.i16, hs.Type.u16, hs.Type.i32, hs.Type.u32,
                                     hs.Type.i64, hs.Type.u64]))  # fmt: skip


@settings(max_examples=60, deadline=None)
@given(
    source=st.sampled_from(INTEGERS),
    target=st.sampled_from([*INTEGERS, np.float32]),
    shape=hnp.array_shapes(min_dims=0, max_dims=3, max_side=5),
    data=st.data(),
)
def test_integer_convert_saturates_at_the_destination_limits(source, target, shape, data) -> None:
    """Every integer type to every other (and to f32, the reference kernel's): each value clipped to the
    destination's range, in Python integers here."""
    info = np.iinfo(source)
    values = data.draw(hnp.arrays(source, shape, elements=st.integers(int(info.min), int(info.max))))
    param = opset.parameter(list(shape), INTEGER_TYPES[source], name="x")
    destination = hs.Type.f32 if target is np.float32 else INTEGER_TYPES[target]
    model = hs.Model([opset.convert(param, destination)], [param])
    got = np.asarray(hs.Core().compile_model(model, "TEMPLATE")(values)[0])
    if target is np.float32:
        expected = values.astype(np.float32)
    else:
        low, high = int(np.iinfo(target).min), int(np.iinfo(target).max)
        expected = np.array([min(max(int(v), low), high) for v in values.reshape(-1)], target).reshape(shape)
    assert got.dtype == np.dtype(target) and got.shape == tuple(shape)
    np.testing.assert_array_equal(got, expected)


@settings(max_examples=40, deadline=None)
@given(
    x=hnp.arrays(np.float32, hnp.array_shapes(min_dims=1, max_dims=3, max_side=5), elements=st.floats(-9, 9, width=32)),
    data=st.data(),
)
def test_gather_takes_the_numpy_values_and_zeros_out_of_range(x, data) -> None:
    """In-range indices (negative ones count from the end) take np.take's values; a model whose indices
    stray out of range gets zeros there, as OpenVINO's Gather gives."""
    axis = data.draw(st.integers(-x.ndim, x.ndim - 1))
    size = x.shape[axis]
    stray = data.draw(st.booleans())
    low, high = (-size - 3, size + 2) if stray else (-size, size - 1)
    indices = data.draw(hnp.arrays(np.int64, hnp.array_shapes(max_dims=2, max_side=4), elements=st.integers(low, high)))
    param = opset.parameter(list(x.shape), name="x")
    model = hs.Model([opset.gather(param, indices, np.int64(axis))], [param])
    got = np.asarray(_compiled(model)(x)[0])
    inside = (indices >= -size) & (indices < size)
    taken = np.take(x, np.where(inside, indices, 0), axis=axis)
    mask = inside.reshape((1,) * (axis % x.ndim) + indices.shape + (1,) * (x.ndim - axis % x.ndim - 1))
    np.testing.assert_array_equal(got, np.where(mask, taken, np.float32(0)))


@settings(max_examples=40, deadline=None)
@given(
    shapes=st.lists(st.tuples(st.integers(1, 3), st.integers(1, 4), st.integers(1, 3)), min_size=1, max_size=4),
    seed=st.integers(0, 2**16),
)
def test_reshape_squeeze_and_unsqueeze_with_constant_shapes_give_numpy_views(shapes, seed) -> None:
    """Reshape (a 0 copying a dimension, a -1), Squeeze at a negative and a positive axis, Unsqueeze at
    two axes, each keeping its output shape per input shape, on a model with dynamic dimensions fed
    several shapes (repeats included): the numpy results."""
    x = opset.parameter([1, -1, -1, -1], name="x")
    reshaped = opset.reshape(x, np.array([0, -1, 1], np.int64), special_zero=True, name="reshape")
    squeezed = opset.squeeze(opset.squeeze(reshaped, np.array([-1], np.int64)), np.array([0], np.int64))
    unsqueezed = opset.unsqueeze(squeezed, np.array([0, -1], np.int64), name="unsqueeze")
    nodes = (reshaped, squeezed, unsqueezed)
    assert all(bind_view(node) is not None for node in nodes)
    request = hs.Core().compile_model(hs.Model(list(nodes), [x]), "TEMPLATE").create_infer_request()
    rng = np.random.default_rng(seed)
    for shape in [*shapes, shapes[0]]:
        value = rng.standard_normal((1, *shape)).astype(np.float32)
        first = value.reshape(1, -1, 1)
        expected = [first, first.reshape(-1), first.reshape(1, -1, 1)]
        for got, want in zip(request.infer([value]).to_tuple(), expected):
            assert got.shape == want.shape
            np.testing.assert_array_equal(got, want)


def test_a_squeeze_without_axes_drops_every_one() -> None:
    x = opset.parameter([1, 3, 1, 2], name="x")
    squeezed = opset.squeeze(x)
    assert bind_view(squeezed) is not None
    value = np.arange(6, dtype=np.float32).reshape(1, 3, 1, 2)
    got = hs.Core().compile_model(hs.Model([opset.relu(squeezed)], [x]), "TEMPLATE")(value)[0]
    np.testing.assert_array_equal(got, np.squeeze(value))


def test_a_reshape_to_a_computed_shape_keeps_the_reference_kernel() -> None:
    x = opset.parameter([2, 3], name="x")
    assert bind_view(opset.reshape(x, opset.shape_of(x), special_zero=False)) is None
    assert bind_view(opset.relu(x)) is None


@settings(max_examples=40, deadline=None)
@given(
    shapes=st.lists(st.tuples(st.integers(1, 6), st.integers(1, 6)), min_size=1, max_size=3),
    bounds=st.tuples(st.integers(-7, 7), st.integers(-8, 8), st.sampled_from([-2, -1, 1, 3])),
    seed=st.integers(0, 2**16),
)
def test_slices_with_constant_bounds_give_numpy_slices(shapes, bounds, seed) -> None:
    """Slice along a negative axis (bounds past the ends clamp, negative steps), and StridedSlice with
    a new axis, a shrunk axis and an ignored end, keeping their index per input shape, on a model with
    dynamic dimensions fed several shapes: numpy's slices of the same bounds."""
    start, stop, step = bounds
    x = opset.parameter([-1, -1], name="x")
    sliced = opset.slice(x, [start], [stop], [step], [-1], name="slice")
    strided = opset.strided_slice(x, [0, 0, 1], [0, 0, 9], [1, 1, 2], begin_mask=[0, 0, 0], end_mask=[0, 0, 1],
                                  new_axis_mask=[1], shrink_axis_mask=[0, 1])  # fmt: skip
    assert bind_view(sliced) is not None and bind_view(strided) is not None
    request = hs.Core().compile_model(hs.Model([sliced, strided], [x]), "TEMPLATE").create_infer_request()
    rng = np.random.default_rng(seed)
    for shape in [*shapes, shapes[0]]:
        value = rng.standard_normal(shape).astype(np.float32)
        got = request.infer([value]).to_tuple()
        for result, expected in zip(got, (value[:, start:stop:step], value[np.newaxis, 0, 1::2])):
            assert result.shape == expected.shape
            np.testing.assert_array_equal(result, expected)


@settings(max_examples=60, deadline=None)
@given(
    mode=st.sampled_from(["constant", "edge", "reflect", "symmetric"]),
    pads=st.lists(st.tuples(st.integers(-2, 4), st.integers(-2, 4)), min_size=2, max_size=2),
    shapes=st.lists(st.tuples(st.integers(3, 6), st.integers(3, 6)), min_size=1, max_size=3),
    fill=st.floats(-5, 5, width=32),
    seed=st.integers(0, 2**16),
)
def test_pad_with_constant_pads_gives_numpys_pad_then_the_crop(mode, pads, shapes, fill, seed) -> None:
    """Every mode, pads of either sign (negative ones crop after padding, so mirrors see the original
    borders), a fill value, on a model with dynamic dimensions fed several shapes."""
    begin, end = [p for p, _ in pads], [q for _, q in pads]
    x = opset.parameter([-1, -1], name="x")
    value = np.float32(fill) if mode == "constant" else None
    padded = opset.pad(x, np.array(begin, np.int64), np.array(end, np.int64), mode, value, name="pad")
    assert bind_pad(padded) is not None
    request = hs.Core().compile_model(hs.Model([padded], [x]), "TEMPLATE").create_infer_request()
    rng = np.random.default_rng(seed)
    for shape in [*shapes, shapes[0]]:
        data = rng.standard_normal(shape).astype(np.float32)
        widths = [(max(p, 0), max(q, 0)) for p, q in pads]
        options = {"constant_values": np.float32(fill)} if mode == "constant" else {}
        full = np.pad(data, widths, mode=mode, **options)
        expected = full[tuple(slice(max(-p, 0), n - max(-q, 0)) for (p, q), n in zip(pads, full.shape))]
        got = request.infer([data])[0]
        assert got.shape == expected.shape
        np.testing.assert_array_equal(got, expected)
