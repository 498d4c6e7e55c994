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
