"""Unary math and activations: values against closed forms from ``math``, types, and malformed nodes."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import hetero_sdk as hs
from hetero_sdk import opset
from hetero_sdk.errors import ModelValidationError
from hetero_sdk.reference import evaluate

FAST = settings(max_examples=40, deadline=None)
FLOATS = [np.float32, np.float16, ml_dtypes.bfloat16, np.float64]
TOLERANCE = {np.float64: 1e-12, np.float32: 2e-6, np.float16: 2e-3, ml_dtypes.bfloat16: 1.6e-2}


def sigmoid(x: float) -> float:
    return 1 / (1 + math.exp(-x))


CLOSED_FORMS: dict[str, tuple[Callable[[float], float], float, float]] = {
    # name: (closed form, lowest input, highest input)
    "relu": (lambda x: max(x, 0.0), -8, 8),
    "abs": (abs, -8, 8),
    "negative": (lambda x: -x, -8, 8),
    "sigmoid": (sigmoid, -8, 8),
    "tanh": (math.tanh, -4, 4),
    "exp": (math.exp, -4, 4),
    "log": (math.log, 0.05, 50),
    "sqrt": (math.sqrt, 0, 50),
    "erf": (math.erf, -3, 3),
    "floor": (math.floor, -8, 8),
    "ceiling": (math.ceil, -8, 8),
    "sin": (math.sin, -6, 6),
    "cos": (math.cos, -6, 6),
    "tan": (math.tan, -1.4, 1.4),
    "asin": (math.asin, -1, 1),
    "acos": (math.acos, -1, 1),
    "atan": (math.atan, -8, 8),
    "sinh": (math.sinh, -4, 4),
    "cosh": (math.cosh, -4, 4),
    "asinh": (math.asinh, -8, 8),
    "acosh": (math.acosh, 1, 50),
    "atanh": (math.atanh, -0.9, 0.9),
    "sign": (lambda x: float((x > 0) - (x < 0)), -8, 8),
    "hswish": (lambda x: x * min(max(x + 3, 0), 6) / 6, -6, 6),
    "gelu": (lambda x: 0.5 * x * (1 + math.erf(x / math.sqrt(2))), -5, 5),
}


def run(factory: Callable[..., hs.Node], x: np.ndarray, *extra: Any, **attrs: Any) -> tuple[hs.Node, np.ndarray]:
    data = opset.parameter(x.shape, x.dtype, name="x")
    node = factory(data, *extra, **attrs)
    (out,) = evaluate(hs.Model([node], [data]), [x])
    assert node.get_output_partial_shape(0) == list(out.shape)
    return node, out


@st.composite
def tensors(draw: st.DrawFn, low: float, high: float, dtypes: list[type] = FLOATS) -> np.ndarray:
    dtype = draw(st.sampled_from(dtypes))
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=3, max_side=4))
    return draw(hnp.arrays(np.float64, shape, elements=st.floats(low, high))).astype(dtype)


def assert_close(out: np.ndarray, want: list[float], dtype: type) -> None:
    """Equal up to the rounding of ``dtype`` (the input was already in ``dtype``; the result is rounded once)."""
    tol = TOLERANCE[dtype]
    np.testing.assert_allclose(out.astype(np.float64).ravel(), want, rtol=tol, atol=tol)


@FAST
@given(st.sampled_from(sorted(CLOSED_FORMS)), st.data())
def test_unary_ops_follow_their_closed_forms(name: str, data: st.DataObject) -> None:
    fn, low, high = CLOSED_FORMS[name]
    x = data.draw(tensors(low, high))
    node, out = run(getattr(opset, name), x)
    assert out.dtype == x.dtype and node.get_output_element_type(0) is hs.Type.of(x.dtype)
    assert_close(out, [fn(float(v)) for v in x.astype(np.float64).ravel()], x.dtype.type)


@FAST
@given(tensors(-5, 5))
def test_gelu_tanh_approximation(x: np.ndarray) -> None:
    _, out = run(opset.gelu, x, approximation_mode="tanh")
    want = [
        0.5 * v * (1 + math.tanh(math.sqrt(2 / math.pi) * (v + 0.044715 * v**3))) for v in x.astype(np.float64).ravel()
    ]
    assert_close(out, want, x.dtype.type)


@FAST
@given(tensors(-6, 6), st.one_of(st.none(), st.floats(0.25, 3)))
def test_swish_with_and_without_beta(x: np.ndarray, beta: float | None) -> None:
    if beta is None:
        _, out = run(opset.swish, x)
        b = 1.0
    else:
        b = float(np.array(beta).astype(x.dtype).astype(np.float64))  # beta as stored in the model's type
        _, out = run(opset.swish, x, beta)
    assert_close(out, [v * sigmoid(b * v) for v in x.astype(np.float64).ravel()], x.dtype.type)


def test_swish_beta_may_be_a_one_element_tensor_input() -> None:
    x = opset.parameter([3], hs.Type.f32, name="x")
    beta = opset.parameter([1], hs.Type.f32, name="beta")
    model = hs.Model([opset.swish(x, beta)], [x, beta])
    values = np.array([-1.0, 0.0, 2.0], np.float32)
    (out,) = evaluate(model, [values, np.array([2.0], np.float32)])
    np.testing.assert_allclose(out, [v * sigmoid(2 * v) for v in values.tolist()], rtol=1e-6)


@FAST
@given(tensors(-10, 10), st.floats(-8, 8), st.floats(0, 8))
def test_clamp_of_floats(x: np.ndarray, low: float, width: float) -> None:
    high = low + width
    _, out = run(opset.clamp, x, low, high)
    lo, hi = (float(np.array(v).astype(x.dtype).astype(np.float64)) for v in (low, high))
    assert_close(out, [min(max(float(v), lo), hi) for v in x.astype(np.float64).ravel()], x.dtype.type)


@FAST
@given(
    hnp.arrays(
        st.sampled_from([np.int8, np.uint8, np.int32, np.int64]),
        hnp.array_shapes(max_dims=2),
        elements=st.integers(0, 100),
    ),
    st.floats(-3.5, 40.5),
    st.floats(4, 40),  # keeps ceil(min) <= floor(max), and max >= 0 for u8
)
def test_clamp_of_integers_rounds_the_bounds_inward(x: np.ndarray, low: float, width: float) -> None:
    _, out = run(opset.clamp, x, low, low + width)
    lo, hi = math.ceil(low), math.floor(low + width)
    assert out.dtype == x.dtype
    assert out.ravel().tolist() == [min(max(int(v), lo), hi) for v in x.ravel()]


def test_clamp_bounds_outside_an_integer_type_saturate() -> None:
    _, out = run(opset.clamp, np.array([0, 7, 255], np.uint8), -5.0, -1.0)
    assert out.tolist() == [0, 0, 0]
    _, out = run(opset.clamp, np.array([-128, 0, 127], np.int8), -300.0, 200.5)
    assert out.tolist() == [-128, 0, 127]
    _, out = run(opset.clamp, np.array([-128, 0, 127], np.int8), 100.5, 1e20)
    assert out.tolist() == [101, 101, 127]


@pytest.mark.parametrize("name", ["relu", "abs", "negative"])
def test_sign_ops_accept_integers(name: str) -> None:
    values = np.array([-3, 0, 4], np.int32)
    _, out = run(getattr(opset, name), values)
    fn = CLOSED_FORMS[name][0]
    assert out.dtype == np.int32 and out.tolist() == [fn(v) for v in values.tolist()]


def test_shapes_and_dynamic_dims_pass_through() -> None:
    x = opset.parameter([-1, 3], hs.Type.f16)
    for name in sorted(CLOSED_FORMS):
        node = getattr(opset, name)(x)
        assert node.get_output_partial_shape(0) == [-1, 3]
        assert node.get_output_element_type(0) is hs.Type.f16
    assert opset.ceil is opset.ceiling


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: opset.relu(opset.parameter([2], hs.Type.boolean), name="bad"),
         "Relu 'bad': input 0 has element type boolean"),
        (lambda: opset.sigmoid(opset.parameter([2], hs.Type.i32), name="bad"),
         "Sigmoid 'bad': input 0 has element type i32; expected one of: bf16, f16, f32, f64"),
        (lambda: opset.erf(opset.parameter([2], hs.Type.u8), name="bad"), "Erf 'bad': input 0 has element type u8"),
        (lambda: opset.gelu(opset.parameter([2]), approximation_mode="sigmoid", name="bad"),
         "Gelu 'bad': attribute approximation_mode='SIGMOID' is invalid; expected one of: 'ERF', 'TANH'"),
        (lambda: opset.swish(opset.parameter([2]), np.float16(1.0), name="bad"),
         r"Swish 'bad': beta must be a scalar of type f32, got f16\[\]"),
        (lambda: opset.swish(opset.parameter([2]), np.ones(2, np.float32), name="bad"),
         r"Swish 'bad': beta must be a scalar of type f32, got f32\[2\]"),
        (lambda: opset.clamp(opset.parameter([2]), 3.0, 1.0, name="bad"),
         "Clamp 'bad': attributes min=3.0 and max=1.0 must be numbers with min <= max"),
        (lambda: hs.Node("Clamp", [opset.parameter([2]).output(0)], {"min": "a", "max": 1.0}, name="bad"),
         "Clamp 'bad': attribute min='a' must be a number"),
        (lambda: opset.clamp(opset.parameter([2], hs.Type.boolean), 0, 1, name="bad"),
         "Clamp 'bad': input 0 has element type boolean"),
        (lambda: hs.Node("Tanh", [], {}, name="bad"), r"Tanh 'bad': expects 1 input\(s\), got 0"),
    ],
)  # fmt: skip
def test_malformed_activations_name_the_node(build: Callable[[], hs.Node], message: str) -> None:
    with pytest.raises(ModelValidationError, match=message):
        build()


def test_f32_erf_and_gelu_are_accurate_over_the_whole_range_including_tails() -> None:
    x = np.linspace(-9, 9, 4001).astype(np.float32)
    _, erf_out = run(opset.erf, x)
    _, gelu_out = run(opset.gelu, x)
    xs = x.astype(np.float64)
    erf_want = np.array([math.erf(v) for v in xs])
    gelu_want = np.array([0.5 * v * math.erfc(-v / math.sqrt(2)) for v in xs])
    np.testing.assert_allclose(erf_out, erf_want, rtol=0, atol=2e-7)
    np.testing.assert_allclose(gelu_out, gelu_want, rtol=1e-6, atol=1e-30)


@pytest.mark.parametrize(
    ("low", "high", "expected"),
    [(-math.inf, 2.5, [-128, -3, 0, 2, 2]), (-1.5, math.inf, [-1, -1, 0, 3, 127]), (-math.inf, math.inf, None)],
)
def test_integer_clamp_rounds_bounds_inward_and_saturates_infinite_ones(low, high, expected) -> None:
    x = np.array([-128, -3, 0, 3, 127], np.int8)
    node = opset.clamp(opset.parameter([5], np.int8), low, high)
    got = node.op.evaluate(node, x)
    assert got.dtype == np.int8 and got.tolist() == (expected if expected is not None else x.tolist())


def test_inverse_trig_is_nan_outside_its_domain() -> None:
    x = np.array([-2.0, 1.5, 0.5], np.float32)
    for factory, numpy_fn in ((opset.acos, np.acos), (opset.asin, np.asin), (opset.atanh, np.atanh)):
        with np.errstate(invalid="ignore"):
            np.testing.assert_array_equal(run(factory, x)[1], numpy_fn(x))
    np.testing.assert_array_equal(run(opset.acosh, np.array([0.5, 1.0], np.float32))[1], [np.nan, 0.0])


@FAST
@given(tensors(-6, 6, [np.float32, np.float64]), st.booleans())
def test_round_halves_to_even_or_away_from_zero(x: np.ndarray, to_even: bool) -> None:
    x = np.concatenate([x.ravel(), np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5], x.dtype)])
    mode = "half_to_even" if to_even else "half_away_from_zero"
    _, out = run(opset.round, x, mode=mode)
    want = np.round(x) if to_even else np.sign(x) * np.floor(np.abs(x) + 0.5)
    np.testing.assert_array_equal(out, want)
    assert out.dtype == x.dtype


def test_round_leaves_integers_and_rejects_unknown_modes() -> None:
    x = np.array([-3, 0, 7], np.int32)
    np.testing.assert_array_equal(run(opset.round, x)[1], x)
    with pytest.raises(ModelValidationError, match="mode"):
        opset.round(opset.parameter([2], np.float32), mode="up")


def test_sign_of_unsigned_integers_is_zero_or_one() -> None:
    x = np.array([0, 1, 200], np.uint8)
    np.testing.assert_array_equal(run(opset.sign, x)[1], np.sign(x))
