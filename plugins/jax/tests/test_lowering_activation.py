"""Unary math, activations and Convert on XLA match the reference."""

from __future__ import annotations

import numpy as np
from hetero_sdk import Type, opset
from hypothesis import given
from hypothesis import strategies as st
from xla_helpers import OPS, check_against_reference, floats, ints, many_ops, param, run_xla, shapes, single_op

ANY_REAL = ["relu", "abs", "negative", "sigmoid", "tanh", "exp", "erf", "hswish", "floor", "ceiling", "sin", "cos"]
POSITIVE = ["log", "sqrt"]


@OPS
@given(
    data=st.data(), shape=shapes(min_dims=0, max_dims=4, max_side=5), dtype=st.sampled_from([np.float32, np.float16])
)
def test_unary_math_and_activations(data: st.DataObject, shape: tuple[int, ...], dtype: type) -> None:
    x = data.draw(floats(shape, dtype, -8, 8))
    y = data.draw(floats(shape, dtype, 0.01, 50))
    px, py = param(x, "x"), param(y, "y")
    nodes = [getattr(opset, f)(px, name=f) for f in ANY_REAL]
    nodes += [getattr(opset, f)(py, name=f) for f in POSITIVE]
    nodes += [
        opset.gelu(px, "ERF", name="gelu_erf"),
        opset.gelu(px, "TANH", name="gelu_tanh"),
        opset.swish(px, name="swish"),
        opset.swish(px, beta=np.array(0.75, dtype), name="swish_beta"),
        opset.clamp(px, -1.5, 2.25, name="clamp"),
    ]
    rtol, atol = (2e-3, 2e-3) if dtype == np.float16 else (1e-5, 2e-6)  # transcendental: a few ulp
    check_against_reference(many_ops(nodes, [px, py]), [x, y], rtol=rtol, atol=atol)


@OPS
@given(
    data=st.data(),
    shape=shapes(min_dims=1, max_dims=3, max_side=5),
    dtype=st.sampled_from([np.int32, np.int8, np.uint8, np.int64]),
)
def test_integer_activations_and_clamp_rounds_bounds_inward(
    data: st.DataObject, shape: tuple[int, ...], dtype: type
) -> None:
    x = data.draw(ints(shape, dtype))
    px = param(x)
    nodes = [
        opset.relu(px, name="relu"),
        opset.negative(px, name="negative"),
        opset.clamp(px, -3.5, 100.2, name="clamp"),
    ]
    if np.dtype(dtype).kind == "i":
        nodes.append(opset.abs(px, name="abs"))
    check_against_reference(many_ops(nodes, [px]), [x])


def test_clamp_integer_bounds_closed_form() -> None:
    x = np.array([-5, -3, 0, 2, 3, 7], np.int32)
    p = param(x)
    np.testing.assert_array_equal(run_xla(single_op(opset.clamp(p, -3.5, 2.5), [p]), [x])[0], [-3, -3, 0, 2, 2, 2])


def test_swish_with_a_runtime_beta() -> None:
    x = np.linspace(-4, 4, 9, dtype=np.float32)
    beta = np.array(1.5, np.float32)
    px, pb = param(x, "x"), param(beta, "beta")
    expected = x / (1 + np.exp(-1.5 * x))
    np.testing.assert_allclose(run_xla(single_op(opset.swish(px, pb), [px, pb]), [x, beta])[0], expected, rtol=1e-6)


CONVERSIONS = [
    (np.float32, Type.i32), (np.float32, Type.u8), (np.float32, Type.i8), (np.float32, Type.boolean),
    (np.float32, Type.f16), (np.float32, Type.bf16), (np.int32, Type.i8), (np.int32, Type.u8), (np.int32, Type.f32),
    (np.uint8, Type.i8), (np.int8, Type.u8), (np.bool_, Type.f32), (np.int64, Type.i32), (np.float64, Type.f32),
]  # fmt: skip


@OPS
@given(data=st.data(), shape=shapes(min_dims=0, max_dims=3, max_side=5))
def test_convert_truncates_and_saturates(data: st.DataObject, shape: tuple[int, ...]) -> None:
    inputs, nodes, params = [], [], []
    for i, (source, _) in enumerate(CONVERSIONS):
        kind = np.dtype(source).kind
        if kind == "f":
            value = data.draw(floats(shape, source, -300, 300))
        elif kind == "b":
            value = data.draw(st.from_type(bool).map(lambda b, s=shape: np.full(s, b)))
        else:
            info = np.iinfo(source)
            value = data.draw(ints(shape, source, max(int(info.min), -1000), min(int(info.max), 1000)))
        inputs.append(value)
        params.append(param(value, f"in{i}"))
    for i, (_, target) in enumerate(CONVERSIONS):
        nodes.append(opset.convert(params[i], target, name=f"convert{i}"))
    check_against_reference(many_ops(nodes, params), inputs, rtol=1e-2, atol=1e-2)


def test_convert_closed_forms() -> None:
    x = np.array([-300.7, -1.9, -0.5, 0.5, 1.9, 255.4, 300.2], np.float32)
    p = param(x)
    model = many_ops([opset.convert(p, Type.u8, name="u8"), opset.convert(p, Type.i8, name="i8")], [p])
    u8, i8 = run_xla(model, [x])
    np.testing.assert_array_equal(u8, [0, 0, 0, 0, 1, 255, 255])
    np.testing.assert_array_equal(i8, [-128, -1, 0, 0, 1, 127, 127])


NUMPY_MATH = {
    # factory: (numpy function, lowest input, highest input)
    "tan": (np.tan, -1.4, 1.4),
    "asin": (np.asin, -1, 1),
    "acos": (np.acos, -1, 1),
    "atan": (np.atan, -8, 8),
    "sinh": (np.sinh, -4, 4),
    "cosh": (np.cosh, -4, 4),
    "asinh": (np.asinh, -8, 8),
    "acosh": (np.acosh, 1, 50),
    "atanh": (np.atanh, -0.9, 0.9),
    "sign": (np.sign, -8, 8),
}


@OPS
@given(
    data=st.data(), shape=shapes(min_dims=0, max_dims=3, max_side=5), dtype=st.sampled_from([np.float32, np.float16])
)
def test_trigonometric_and_sign_match_numpy(data: st.DataObject, shape: tuple[int, ...], dtype: type) -> None:
    inputs = [data.draw(floats(shape, dtype, low, high)) for _, low, high in NUMPY_MATH.values()]
    params = [param(x, f"x{i}") for i, x in enumerate(inputs)]
    nodes = [getattr(opset, f)(p, name=f) for f, p in zip(NUMPY_MATH, params)]
    got = run_xla(many_ops(nodes, params), inputs)
    rtol, atol = (2e-3, 2e-3) if dtype == np.float16 else (1e-5, 2e-6)
    for (fn, _, _), x, out in zip(NUMPY_MATH.values(), inputs, got):
        want = fn(x.astype(np.float32)).astype(dtype)
        assert out.dtype == dtype
        np.testing.assert_allclose(out.astype(np.float64), want.astype(np.float64), rtol=rtol, atol=atol)


def test_round_modes_and_out_of_domain_nans_match_numpy() -> None:
    x = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 0.49, -3.7], np.float32)
    p = param(x)
    even, away = (
        run_xla(single_op(opset.round(p), [p]), [x])[0],
        run_xla(single_op(opset.round(p, mode="half_away_from_zero"), [p]), [x])[0],
    )
    np.testing.assert_array_equal(even, np.round(x))
    np.testing.assert_array_equal(away, np.sign(x) * np.floor(np.abs(x) + 0.5))
    outside = np.array([-2.0, 1.5, 0.25], np.float32)
    q = param(outside)
    got = run_xla(many_ops([opset.acos(q, name="acos"), opset.acosh(q, name="acosh")], [q]), [outside])
    with np.errstate(invalid="ignore"):
        np.testing.assert_allclose(got[0], np.acos(outside), rtol=1e-6)
        np.testing.assert_allclose(got[1], np.acosh(outside), rtol=1e-6)


def _hswish(x: np.ndarray) -> np.ndarray:
    """``x * min(max(x + 3, 0), 6) / 6`` in float64."""
    wide = x.astype(np.float64)
    return wide * np.clip(wide + 3, 0, 6) / 6


@OPS
@given(data=st.data(), dtype=st.sampled_from([np.float16, np.float32, np.float64]))
def test_hswish_values_and_edges(data: st.DataObject, dtype: type) -> None:
    """HSwish against numpy, with the gate's corners (-3, 3), zero and infinities among the values."""
    drawn = data.draw(floats((11,), dtype, -8, 8))
    x = np.concatenate([drawn, np.array([-3, 3, 0, -0.0, np.inf, 6, -6], dtype)])
    px = param(x)
    got = run_xla(single_op(opset.hswish(px), [px]), [x])[0]
    assert got.dtype == dtype
    rtol = 2e-3 if dtype == np.float16 else 1e-6
    np.testing.assert_allclose(got.astype(np.float64), _hswish(x), rtol=rtol, atol=rtol)


def test_hswish_before_pooling() -> None:
    """HSwish feeding a spatial mean and an average pool (MobileNetV3's and PP-OCR rec's blocks)."""
    rng = np.random.default_rng(4)
    x = (rng.standard_normal((1, 6, 6, 8)) * 4).astype(np.float32)
    w = rng.standard_normal((5, 6, 1, 1)).astype(np.float32)
    px = param(x)
    act = opset.hswish(opset.convolution(px, w, [1, 1], [0, 0], [0, 0], [1, 1]))
    mean = opset.reduce_mean(act, np.array([2, 3], np.int64), keep_dims=True)
    pooled = opset.avg_pool(act, [3, 2], [0, 0], [0, 0], [3, 2], exclude_pad=True)
    got_mean, got_pooled = run_xla(many_ops([mean, pooled], [px]), [x])
    expected = _hswish(np.einsum("oc,nchw->nohw", w[:, :, 0, 0].astype(np.float64), x.astype(np.float64)))
    np.testing.assert_allclose(got_mean, expected.mean(axis=(2, 3), keepdims=True), rtol=1e-5, atol=1e-5)
    windows = expected.reshape(1, 5, 2, 3, 4, 2).mean(axis=(3, 5))
    np.testing.assert_allclose(got_pooled, windows, rtol=1e-5, atol=1e-5)
