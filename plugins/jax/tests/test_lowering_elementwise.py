"""Elementwise ops on XLA match the reference: arithmetic, comparisons, logic and Select, with broadcasting."""

from __future__ import annotations

import jax
import numpy as np
from hetero_sdk import opset
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from xla_helpers import OPS, check_against_reference, floats, ints, many_ops, param, run_xla, single_op

from hetero_sdk_jax.backend import Backend
from hetero_sdk_jax.lowering.elementwise import corrected_quotient
from hetero_sdk_jax.lowering.graph import lower

ARITHMETIC = ["add", "subtract", "multiply", "maximum", "minimum", "squared_difference"]
COMPARISON = ["equal", "not_equal", "less", "less_equal", "greater", "greater_equal"]
BROADCASTING = hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=4, max_side=4)


def _values(dtype: type, shape: tuple[int, ...]) -> st.SearchStrategy[np.ndarray]:
    if np.dtype(dtype).kind == "f":
        return floats(shape, dtype, -100, 100)
    return ints(shape, dtype)


def _binary_model(factories: list[str], a: np.ndarray, b: np.ndarray, **attrs: object):
    pa, pb = param(a, "a"), param(b, "b")
    return many_ops([getattr(opset, f)(pa, pb, name=f, **attrs) for f in factories], [pa, pb])


@OPS
@given(
    data=st.data(),
    shapes=BROADCASTING,
    dtype=st.sampled_from([np.float32, np.float16, np.int32, np.int8, np.uint8, np.int64]),
)
def test_arithmetic_and_comparisons_broadcast_like_numpy(data: st.DataObject, shapes, dtype: type) -> None:
    a = data.draw(_values(dtype, shapes.input_shapes[0]))
    b = data.draw(_values(dtype, shapes.input_shapes[1]))
    rtol = 1e-3 if dtype == np.float16 else 1e-6
    check_against_reference(_binary_model(ARITHMETIC + COMPARISON, a, b), [a, b], rtol=rtol)


@OPS
@given(data=st.data(), shapes=BROADCASTING, dtype=st.sampled_from([np.int32, np.int8, np.int64]))
def test_integer_divide_floors_or_truncates_and_mod_keeps_the_dividend_sign(
    data: st.DataObject, shapes, dtype: type
) -> None:
    a = data.draw(ints(shapes.input_shapes[0], dtype, -100, 100))
    b = data.draw(ints(shapes.input_shapes[1], dtype, -9, 9).filter(lambda v: bool(np.all(v != 0))))
    pa, pb = param(a, "a"), param(b, "b")
    nodes = [
        opset.divide(pa, pb, python_division=True, name="floor"),
        opset.divide(pa, pb, python_division=False, name="trunc"),
        opset.mod(pa, pb, name="mod"),
        opset.floor_mod(pa, pb, name="floor_mod"),
    ]
    check_against_reference(many_ops(nodes, [pa, pb]), [a, b])


@OPS
@given(data=st.data(), shapes=BROADCASTING)
def test_float_divide_mod_and_power(data: st.DataObject, shapes) -> None:
    a = data.draw(floats(shapes.input_shapes[0], np.float32, 0.1, 50))
    b = data.draw(floats(shapes.input_shapes[1], np.float32, 0.5, 3))
    pa, pb = param(a, "a"), param(b, "b")
    nodes = [
        opset.divide(pa, pb, name="divide"),
        opset.mod(opset.negative(pa), pb, name="mod"),
        opset.power(pa, opset.negative(pb), name="power"),
    ]
    check_against_reference(many_ops(nodes, [pa, pb]), [a, b], rtol=2e-6, atol=1e-6)


@OPS
@given(data=st.data(), shapes=BROADCASTING, dtype=st.sampled_from([np.int32, np.int8]))
def test_integer_power_truncates_negative_exponents(data: st.DataObject, shapes, dtype: type) -> None:
    a = data.draw(ints(shapes.input_shapes[0], dtype, -4, 4).filter(lambda v: bool(np.all(v != 0))))
    b = data.draw(ints(shapes.input_shapes[1], dtype, -3, 5))
    check_against_reference(_binary_model(["power"], a, b), [a, b])


def test_integer_power_closed_forms() -> None:
    a = np.array([2, -2, 1, -1, -1, 3, 5], np.int32)
    b = np.array([10, 3, -5, -3, -4, 0, -1], np.int32)
    np.testing.assert_array_equal(run_xla(_binary_model(["power"], a, b), [a, b])[0], [1024, -8, 1, -1, 1, 1, 0])


@OPS
@given(data=st.data(), shapes=hnp.mutually_broadcastable_shapes(num_shapes=3, max_dims=4, max_side=4))
def test_logic_and_select(data: st.DataObject, shapes) -> None:
    cond = data.draw(hnp.arrays(np.bool_, shapes.input_shapes[0]))
    other = data.draw(hnp.arrays(np.bool_, shapes.input_shapes[1]))
    values = data.draw(floats(shapes.input_shapes[2]))
    pc, po, pv = param(cond, "c"), param(other, "o"), param(values, "v")
    nodes = [
        opset.logical_and(pc, po, name="and"),
        opset.logical_or(pc, po, name="or"),
        opset.logical_not(pc, name="not"),
        opset.select(pc, pv, opset.negative(pv), name="select"),
    ]
    check_against_reference(many_ops(nodes, [pc, po, pv]), [cond, other, values])


def test_auto_broadcast_none_with_equal_shapes() -> None:
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.full((2, 3), 2, np.float32)
    np.testing.assert_array_equal(run_xla(_binary_model(["multiply"], a, b, auto_broadcast="none"), [a, b])[0], a * 2)


def test_uint8_arithmetic_wraps() -> None:
    a = np.array([250, 3, 0], np.uint8)
    b = np.array([10, 5, 1], np.uint8)
    add, subtract = run_xla(_binary_model(["add", "subtract"], a, b), [a, b])
    np.testing.assert_array_equal(add, [4, 8, 1])
    np.testing.assert_array_equal(subtract, [240, 254, 255])


def test_scalar_operands_become_constants() -> None:
    x = np.array([1.5, -2.0], np.float32)
    p = param(x)
    np.testing.assert_allclose(run_xla(single_op(opset.multiply(p, 2.0), [p]), [x])[0], [3.0, -4.0])


ALL_INTS = [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64]


@OPS
@given(data=st.data(), shapes=BROADCASTING, dtype=st.sampled_from(ALL_INTS))
def test_bitwise_ops_and_shifts_match_numpy(data: st.DataObject, shapes: object, dtype: type) -> None:
    a = data.draw(ints(shapes.input_shapes[0], dtype))  # type: ignore[attr-defined]
    b = data.draw(ints(shapes.input_shapes[1], dtype))  # type: ignore[attr-defined]
    bits = np.dtype(dtype).itemsize * 8
    counts = data.draw(ints(shapes.input_shapes[1], dtype, 0, bits - 1))  # type: ignore[attr-defined]
    pa, pb, pc = param(a, "a"), param(b, "b"), param(counts, "counts")
    nodes = [
        opset.bitwise_and(pa, pb, name="and"),
        opset.bitwise_or(pa, pb, name="or"),
        opset.bitwise_xor(pa, pb, name="xor"),
        opset.bitwise_not(pa, name="not"),
        opset.bitwise_left_shift(pa, pc, name="left"),
        opset.bitwise_right_shift(pa, pc, name="right"),
    ]
    got = run_xla(many_ops(nodes, [pa, pb, pc]), [a, b, counts])
    wants = [a & b, a | b, a ^ b, ~a, np.left_shift(a, counts), np.right_shift(a, counts)]
    for out, want in zip(got, wants):
        assert out.dtype == want.dtype
        np.testing.assert_array_equal(out, want)


def test_shifts_past_the_width_give_zero_or_minus_one() -> None:
    a = np.array([5, -5, 1, -1], np.int8)
    counts = np.array([8, 9, 100, 8], np.int8)
    pa, pc = param(a, "a"), param(counts, "counts")
    model = many_ops(
        [opset.bitwise_left_shift(pa, pc, name="l"), opset.bitwise_right_shift(pa, pc, name="r")], [pa, pc]
    )
    left, right = run_xla(model, [a, counts])
    np.testing.assert_array_equal(left, [0, 0, 0, 0])
    np.testing.assert_array_equal(right, [0, -1, 0, -1])


# -- correctly rounded division where XLA's is not (CUDA: div.full.f32, within 2 ulp) ------------------

_MAGNITUDE = st.floats(2.0**-50, 2.0**50, exclude_min=True, width=32)
_NORMAL_F32 = _MAGNITUDE | _MAGNITUDE.map(lambda v: -v)  # built, not filtered: hypothesis rejects heavy filtering
"""Operands whose quotients are normal numbers (devices flush subnormal residuals to zero)."""


@given(
    a=hnp.arrays(np.float32, 64, elements=_NORMAL_F32),
    b=hnp.arrays(np.float32, 64, elements=_NORMAL_F32),
    toward=st.sampled_from([np.inf, -np.inf]),
)
def test_a_quotient_one_ulp_off_is_corrected_to_the_correctly_rounded_one(a, b, toward) -> None:
    # what a GPU's division hands over, simulated: each quotient moved one ulp off numpy's IEEE one
    exact = a / b
    off = np.nextafter(exact, np.float32(toward))
    got = np.asarray(jax.jit(corrected_quotient)(a, b, off))
    np.testing.assert_array_equal(got, exact)


def test_exact_division_keeps_infinities_nans_and_zeros_of_ieee_division() -> None:
    a = np.array([1, -1, 0, np.inf, np.inf, 3, np.nan, 1e-38, 2.5], np.float32)
    b = np.array([0, 0, 0, np.inf, 2, np.inf, 1, 1e10, -0.5], np.float32)
    pa, pb = param(a, "a"), param(b, "b")
    lowered = lower(single_op(opset.divide(pa, pb), [pa, pb]), exact_division=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        expected = a / b
    np.testing.assert_array_equal(np.asarray(jax.jit(lowered)(a, b)[0]), expected)


def test_only_cuda_divides_inexactly() -> None:
    assert Backend("gpu", "cuda", ()).divides_inexactly
    assert not any(Backend(name, platform, ()).divides_inexactly for name, platform in
                   [("cpu", "cpu"), ("gpu", "rocm"), ("tpu", "tpu")])  # fmt: skip


def test_integer_divide_of_every_int8_pair_is_the_definitions() -> None:
    """Every int8 dividend by every nonzero divisor (-128 / -1 wraps to -128) in both modes, against Python's
    floor division and division toward zero, wrapped to int8."""
    values = np.arange(-128, 128)
    a, b = (v.reshape(-1).astype(np.int8) for v in np.meshgrid(values, values[values != 0]))
    floor = [x // y for x, y in zip(a.tolist(), b.tolist())]
    trunc = [abs(x) // abs(y) * (1 if (x < 0) == (y < 0) else -1) for x, y in zip(a.tolist(), b.tolist())]
    pa, pb = param(a, "a"), param(b, "b")
    nodes = [opset.divide(pa, pb, python_division=True), opset.divide(pa, pb, python_division=False)]
    got = run_xla(many_ops(nodes, [pa, pb]), [a, b])
    for result, expected in zip(got, (floor, trunc)):
        np.testing.assert_array_equal(result, np.array(expected, np.int64).astype(np.int8))


def _silu(x: np.ndarray) -> np.ndarray:
    """The exact SiLU, in f64."""
    wide = x.astype(np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        return wide / (1 + np.exp(-wide))


@OPS
@given(data=st.data(), shape=hnp.array_shapes(min_dims=1, max_dims=4, max_side=5))
def test_silu_of_any_float_within_f32_error_of_the_exact_value(data: st.DataObject, shape: tuple[int, ...]) -> None:
    """``x * Sigmoid(x)`` in either order (XLA's tanh form, within 2.5e-7 * max(1, |x|) of the exact
    SiLU), while Sigmoid's own output and a Multiply by the Sigmoid of another tensor stay the
    definition's ``1 / (1 + exp(-x))``."""
    x = data.draw(floats(shape, low=-120, high=120))
    y = data.draw(floats(shape, low=-20, high=20))
    px, py = param(x, "x"), param(y, "y")
    gate = opset.sigmoid(px)
    outs = [opset.multiply(px, gate), opset.multiply(gate, px), gate, opset.multiply(py, opset.sigmoid(px))]
    got = run_xla(many_ops(outs, [px, py]), [x, y])
    bound = 2.5e-7 * np.maximum(1, np.abs(x.astype(np.float64)))
    for value in got[:2]:
        assert value.dtype == np.float32
        assert np.all(np.abs(value - _silu(x)) <= bound), np.max(np.abs(value - _silu(x)) / bound)
    exact_gate = 1 / (1 + np.exp(-x.astype(np.float64)))
    np.testing.assert_allclose(got[2], exact_gate, rtol=2e-7, atol=1e-30)
    np.testing.assert_allclose(got[3], y * exact_gate, rtol=5e-7, atol=1e-30)


def test_silu_is_computed_from_tanh_and_narrow_floats_in_f32() -> None:
    """The SiLU reads x alone (a tanh, XLA's cheap rational function), for f16 too, computed in f32
    and rounded once; special values: inf stays inf, -inf gives NaN (inf * 0), as the definition does."""
    x = np.array([-np.inf, -80, -8, -1, -0.0, 0, 1e-30, 0.5, 8, 80, np.inf, np.nan], np.float16)
    px = param(x)
    model = single_op(opset.multiply(opset.sigmoid(px), px), [px])
    assert "tanh" in {e.primitive.name for e in jax.make_jaxpr(lower(model))(x).eqns}
    (got,) = run_xla(model, [x])
    assert got.dtype == np.float16
    expected = _silu(x.astype(np.float32)).astype(np.float16)
    np.testing.assert_array_equal(
        np.isnan(got), [True, False, False, False, False, False, False, False, False, False, False, True]
    )
    finite = ~np.isnan(got)
    np.testing.assert_allclose(
        got[finite].astype(np.float64), expected[finite].astype(np.float64), rtol=1e-3, atol=1e-7
    )


def test_a_multiply_by_the_sigmoid_of_another_output_of_the_same_node_is_no_silu() -> None:
    """``b * Sigmoid(a)`` where a and b are two outputs of one Split: the product of both."""
    z = np.array([[-3.0, 0.5, 2.0], [4.0, -1.0, 0.25]], np.float32)
    pz = param(z)
    first, second = opset.split(pz, np.int64(0), 2).outputs()
    (got,) = run_xla(single_op(opset.multiply(second, opset.sigmoid(first)), [pz]), [z])
    np.testing.assert_allclose(got, z[1:] / (1 + np.exp(-z[:1].astype(np.float64))), rtol=1e-6)
