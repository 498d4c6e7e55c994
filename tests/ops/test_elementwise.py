"""Elementwise binary ops, comparisons, logic and Select: broadcasting, types, and values against Python."""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from typing import Any

import ml_dtypes
import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import hetero_sdk as hs
from hetero_sdk import opset
from hetero_sdk.errors import InferenceError, ModelValidationError
from hetero_sdk.reference import evaluate

FAST = settings(max_examples=40, deadline=None)
FLOATS = [np.float32, np.float16, ml_dtypes.bfloat16, np.float64]
INTS = [np.int8, np.uint8, np.int32, np.int64]
RTOL = {np.float64: 1e-12, np.float32: 1e-6, np.float16: 1e-3, ml_dtypes.bfloat16: 8e-3}


def run(factory: Callable[..., hs.Node], *arrays: np.ndarray, **attrs: Any) -> tuple[hs.Node, np.ndarray]:
    params = [opset.parameter(a.shape, a.dtype, name=f"in{i}") for i, a in enumerate(arrays)]
    node = factory(*params, **attrs)
    (out,) = evaluate(hs.Model([node], params), list(arrays))
    assert node.get_output_partial_shape(0) == list(out.shape)
    return node, out


def elementwise(fn: Callable[..., Any], *arrays: np.ndarray) -> list[Any]:
    """``fn`` over Python scalars of the broadcast inputs, in row-major order."""
    return [
        fn(*(v.item() if hasattr(v, "item") else v for v in values))
        for values in zip(*(a.ravel() for a in np.broadcast_arrays(*arrays)))
    ]


def as_python(a: np.ndarray) -> np.ndarray:
    """Exact Python numbers (float or int) of the same shape."""
    return a.astype(np.float64) if hs.Type.of(a.dtype).is_real else a.astype(object)


@st.composite
def operands(draw: st.DrawFn, dtypes: list[type], low: int = -20, high: int = 20, count: int = 2) -> list[np.ndarray]:
    dtype = draw(st.sampled_from(dtypes))
    if dtype is np.uint8:
        low = max(low, 0)
    shapes = draw(hnp.mutually_broadcastable_shapes(num_shapes=count, max_dims=3, max_side=4)).input_shapes
    return [draw(hnp.arrays(np.int64, s, elements=st.integers(low, high))).astype(dtype) for s in shapes]


# -- arithmetic ------------------------------------------------------------------------------------

ARITHMETIC = {
    "add": operator.add,
    "subtract": operator.sub,
    "multiply": operator.mul,
    "maximum": max,
    "minimum": min,
    "squared_difference": lambda a, b: (a - b) ** 2,
}


@FAST
@given(operands(FLOATS + INTS, -10, 10), st.sampled_from(sorted(ARITHMETIC)))
def test_arithmetic_broadcasts_like_numpy(arrays: list[np.ndarray], name: str) -> None:
    a, b = arrays
    node, out = run(getattr(opset, name), a, b)
    assert out.dtype == a.dtype and node.get_output_element_type(0) is hs.Type.of(a.dtype)
    want = elementwise(ARITHMETIC[name], as_python(a), as_python(b))
    if hs.Type.of(a.dtype).is_integral:  # results wrap modulo 2**bits
        info = np.iinfo(a.dtype)
        span = int(info.max) - int(info.min) + 1
        assert out.ravel().tolist() == [(int(w) - int(info.min)) % span + int(info.min) for w in want]
    else:
        np.testing.assert_allclose(out.astype(np.float64).ravel(), want, rtol=RTOL[a.dtype.type])


@FAST
@given(operands(INTS, -50, 50), st.booleans())
def test_integer_divide_rounds_down_or_toward_zero(arrays: list[np.ndarray], python_division: bool) -> None:
    a, b = arrays
    b = np.where(b == 0, 3, b).astype(a.dtype)

    def divide(x: int, y: int) -> int:
        if python_division:
            return x // y
        return abs(x) // abs(y) * (1 if (x < 0) == (y < 0) else -1)

    _, out = run(opset.divide, a, b, python_division=python_division)
    assert out.ravel().tolist() == elementwise(divide, as_python(a), as_python(b))


def test_integer_divide_is_exact_for_large_int64() -> None:
    a = np.array([2**62 + 3, -(2**62 + 3), 7, -7], np.int64)
    b = np.array([2, 2, -2, -2], np.int64)
    _, floor = run(opset.divide, a, b)
    _, trunc = run(opset.divide, a, b, python_division=False)
    assert floor.tolist() == [2**61 + 1, -(2**61) - 2, -4, 3]
    assert trunc.tolist() == [2**61 + 1, -(2**61) - 1, -3, 3]


@FAST
@given(operands(FLOATS, 1, 20))
def test_float_divide_and_power(arrays: list[np.ndarray]) -> None:
    a, b = arrays
    _, quotient = run(opset.divide, a, b)
    np.testing.assert_allclose(
        quotient.astype(np.float64).ravel(),
        elementwise(operator.truediv, as_python(a), as_python(b)),
        rtol=RTOL[a.dtype.type],
    )
    small = (b.astype(np.float64) / 8).astype(a.dtype)  # keeps a ** b within f16's range
    _, powered = run(opset.power, a, small)
    np.testing.assert_allclose(
        powered.astype(np.float64).ravel(),
        elementwise(math.pow, as_python(a), as_python(small)),
        rtol=4 * RTOL[a.dtype.type],
    )


@FAST
@given(operands(INTS, -40, 40))
def test_mod_takes_the_sign_of_the_dividend(arrays: list[np.ndarray]) -> None:
    a, b = arrays
    b = np.where(b == 0, 7, b).astype(a.dtype)
    _, out = run(opset.mod, a, b)
    assert out.ravel().tolist() == elementwise(lambda x, y: int(math.fmod(x, y)), as_python(a), as_python(b))


def test_mod_of_floats_is_fmod() -> None:
    a = np.array([5.5, -5.5, 5.5, -5.5], np.float32)
    b = np.array([2.0, 2.0, -2.0, -2.0], np.float32)
    _, out = run(opset.mod, a, b)
    assert out.tolist() == [1.5, -1.5, 1.5, -1.5]


def test_integer_power() -> None:
    _, out = run(opset.power, np.array([2, -3, 5, 0], np.int32), np.array([10, 3, 0, 4], np.int32))
    assert out.tolist() == [1024, -27, 1, 0]


def test_integer_power_is_exact_past_float64s_precision_and_truncates_negative_exponents() -> None:
    a = np.array([3, -3, 2, -2, 1, -1, -1, 7], np.int64)
    b = np.array([39, 39, -1, 3, -5, -3, -4, 0], np.int64)
    _, out = run(opset.power, a, b)
    assert out.tolist() == [3**39, (-3) ** 39, 0, -8, 1, -1, 1, 1]


# -- comparison, logic, select ------------------------------------------------------------------------

COMPARISON = {
    "equal": operator.eq,
    "not_equal": operator.ne,
    "less": operator.lt,
    "less_equal": operator.le,
    "greater": operator.gt,
    "greater_equal": operator.ge,
}


@FAST
@given(operands(FLOATS + INTS, -3, 3), st.sampled_from(sorted(COMPARISON)))
def test_comparisons_give_booleans(arrays: list[np.ndarray], name: str) -> None:
    a, b = arrays
    node, out = run(getattr(opset, name), a, b)
    assert node.get_output_element_type(0) is hs.Type.boolean and out.dtype == np.bool_
    assert out.ravel().tolist() == elementwise(COMPARISON[name], as_python(a), as_python(b))


@FAST
@given(operands([np.bool_], 0, 1), st.sampled_from(["logical_and", "logical_or"]))
def test_logical_ops(arrays: list[np.ndarray], name: str) -> None:
    a, b = arrays
    _, out = run(getattr(opset, name), a, b)
    fn = (lambda x, y: x and y) if name == "logical_and" else (lambda x, y: x or y)
    assert out.ravel().tolist() == elementwise(fn, a, b)
    _, negated = run(opset.logical_not, a)
    assert negated.ravel().tolist() == [not v for v in a.ravel().tolist()]


@FAST
@given(operands(FLOATS + INTS, -5, 5, count=3))
def test_select_broadcasts_all_three_inputs(arrays: list[np.ndarray]) -> None:
    cond, then, otherwise = arrays
    cond = cond > 0
    node, out = run(opset.select, cond, then, otherwise)
    assert node.get_output_element_type(0) is hs.Type.of(then.dtype)
    want = elementwise(lambda c, t, e: t if c else e, cond, as_python(then), as_python(otherwise))
    assert out.astype(np.float64).ravel().tolist() == [float(w) for w in want]


# -- shapes and types ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ([2, 3], [3], [2, 3]),
        ([4, 1, 5], [3, 1], [4, 3, 5]),
        ([2, -1], [-1, 3], [2, 3]),
        ([1, -1], [4], [1, 4]),
        ([-1], [1], [-1]),
        ([-1], [3], [3]),
        ([], [2, 2], [2, 2]),
    ],
)
def test_numpy_broadcast_shapes(a: list[int], b: list[int], expected: list[int]) -> None:
    node = opset.add(opset.parameter(a), opset.parameter(b))
    assert node.get_output_partial_shape(0) == expected


def test_auto_broadcast_none_needs_equal_shapes() -> None:
    same = opset.multiply(opset.parameter([2, -1]), opset.parameter([-1, 3]), auto_broadcast="none")
    assert same.get_output_partial_shape(0) == [2, 3]
    with pytest.raises(ModelValidationError, match=r"Multiply 'm'.*auto_broadcast='none' needs equal shapes"):
        opset.multiply(opset.parameter([2, 3]), opset.parameter([3]), auto_broadcast="none", name="m")
    with pytest.raises(
        ModelValidationError, match=r"Add 'a'.*auto_broadcast='pdpd' is invalid; expected one of: 'numpy', 'none'"
    ):
        opset.add(opset.parameter([2]), opset.parameter([2]), auto_broadcast="pdpd", name="a")


def test_python_scalars_take_the_other_operands_type() -> None:
    x = opset.parameter([3], hs.Type.f16, name="x")
    assert opset.add(x, 2.0).get_output_element_type(0) is hs.Type.f16
    assert opset.subtract(1, opset.parameter([3], hs.Type.i32)).get_output_element_type(0) is hs.Type.i32
    _, out = run(lambda p: opset.multiply(p, 0.5), np.array([2, 4], np.float16))
    assert out.dtype == np.float16 and out.tolist() == [1.0, 2.0]


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: opset.add(opset.parameter([2]), opset.parameter([2], hs.Type.f16), name="bad"),
         r"Add 'bad': inputs must share one element type \(input 0: f32, input 1: f16\)"),
        (lambda: opset.subtract(opset.parameter([2, 3]), opset.parameter([4]), name="bad"),
         r"Subtract 'bad': shapes \[2,3\] and \[4\] do not broadcast"),
        (lambda: opset.logical_and(opset.parameter([2]), opset.parameter([2]), name="bad"),
         "LogicalAnd 'bad': input 0 has element type f32; expected one of: boolean"),
        (lambda: opset.logical_not(opset.parameter([2], hs.Type.i32), name="bad"),
         "LogicalNot 'bad': input 0 has element type i32"),
        (lambda: opset.add(opset.parameter([2], hs.Type.boolean), opset.parameter([2], hs.Type.boolean), name="bad"),
         "Add 'bad': input 0 has element type boolean"),
        (lambda: opset.select(opset.parameter([2]), opset.parameter([2]), opset.parameter([2]), name="bad"),
         "Select 'bad': condition has element type f32; expected one of: boolean"),
        (lambda: opset.select(opset.parameter([2], hs.Type.boolean), opset.parameter([2]),
                              opset.parameter([2], hs.Type.i32), name="bad"),
         "Select 'bad': inputs must share one element type"),
        (lambda: opset.select(opset.parameter([3], hs.Type.boolean), opset.parameter([2]), opset.parameter([2]),
                              name="bad"),
         r"Select 'bad': shapes \[2\] and \[3\] do not broadcast"),
        (lambda: hs.Node("Maximum", [opset.parameter([2]).output(0)], {}, name="bad"),
         r"Maximum 'bad': expects 2 input\(s\), got 1"),
    ],
)  # fmt: skip
def test_malformed_elementwise_nodes_name_the_node(build: Callable[[], hs.Node], message: str) -> None:
    with pytest.raises(ModelValidationError, match=message):
        build()


def test_select_scalar_branch_takes_the_other_branchs_element_type() -> None:
    cond = opset.parameter([3], hs.Type.boolean, name="c")
    x = opset.parameter([3], hs.Type.f16, name="x")
    node = opset.select(cond, 1.0, x, name="s")
    assert node.get_output_element_type(0) == hs.Type.f16
    out = evaluate(hs.Model([node], [cond, x]), {"c": np.array([True, False, True]), "x": np.full(3, 5, np.float16)})
    np.testing.assert_array_equal(out[0], np.array([1, 5, 1], np.float16))


def test_integer_division_by_zero_is_a_typed_error_naming_the_node() -> None:
    a = opset.parameter([2], hs.Type.i32, name="a")
    b = opset.parameter([2], hs.Type.i32, name="b")
    model = hs.Model([opset.divide(a, b, name="div")], [a, b])
    with pytest.raises(InferenceError, match=r"Divide 'div'.*division by zero"):
        evaluate(model, {"a": np.array([1, 2], np.int32), "b": np.array([1, 0], np.int32)})


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float32, np.float64])
def test_floor_mod_takes_the_sign_of_the_divisor_as_pythons_remainder(dtype) -> None:
    pairs = [(7, 3), (-7, 3), (7, -3), (-7, -3), (0, 5), (6, 3), (-6, 3), (5, 7), (-5, 7)]
    a = np.array([p[0] for p in pairs], dtype)
    b = np.array([p[1] for p in pairs], dtype)
    x, y = opset.parameter([len(pairs)], dtype, name="a"), opset.parameter([len(pairs)], dtype, name="b")
    model = hs.Model([opset.floor_mod(x, y, name="r")], [x, y], name="floor_mod")
    expected = np.array([p % q for p, q in pairs], dtype)
    np.testing.assert_array_equal(evaluate(model, [a, b])[0], expected)


def test_floor_mod_of_reals_matches_python_on_fractions() -> None:
    a = np.array([5.5, -5.5, 5.5, -5.5, 0.25], np.float32)
    b = np.array([2.0, 2.0, -2.0, -2.0, 0.5], np.float32)
    x, y = opset.parameter([5], np.float32), opset.parameter([5], np.float32)
    model = hs.Model([opset.floor_mod(x, y)], [x, y], name="floor_mod")
    expected = np.array([float(p) % float(q) for p, q in zip(a, b)], np.float32)
    np.testing.assert_array_equal(evaluate(model, [a, b])[0], expected)


# -- bitwise ---------------------------------------------------------------------------------------

ALL_INTS = [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64]
BITWISE = {"bitwise_and": operator.and_, "bitwise_or": operator.or_, "bitwise_xor": operator.xor}


@st.composite
def full_range_operands(draw: st.DrawFn, dtypes: list[type]) -> list[np.ndarray]:
    """Two broadcasting arrays over the whole range of one integer type."""
    dtype = np.dtype(draw(st.sampled_from(dtypes)))
    shapes = draw(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=4)).input_shapes
    return [draw(hnp.arrays(dtype, s)) for s in shapes]


@FAST
@example([np.array([2**63, 0], np.uint64), np.array(0, np.uint64)], "bitwise_and")  # past int64: kept exact
@given(full_range_operands(ALL_INTS), st.sampled_from(sorted(BITWISE)))
def test_bitwise_ops_combine_bits_of_every_integer_type(arrays: list[np.ndarray], name: str) -> None:
    node, out = run(getattr(opset, name), *arrays)
    want = np.array(elementwise(BITWISE[name], *arrays), dtype=object).reshape(out.shape)
    assert out.dtype == arrays[0].dtype and node.get_output_element_type(0) is hs.Type.of(out.dtype)
    np.testing.assert_array_equal(out.astype(object), want)
    (x,) = arrays[:1]
    bits = x.dtype.itemsize * 8
    inverted = [(~v) % (1 << bits) if x.dtype.kind == "u" else ~v for v in x.ravel().tolist()]
    np.testing.assert_array_equal(run(opset.bitwise_not, x)[1].ravel().astype(object), np.array(inverted, object))


@pytest.mark.parametrize("name", [*sorted(BITWISE), "bitwise_not"])
def test_bitwise_ops_on_booleans_are_logical(name: str) -> None:
    a, b = np.array([True, True, False, False]), np.array([True, False, True, False])
    want = {"bitwise_and": a & b, "bitwise_or": a | b, "bitwise_xor": a ^ b, "bitwise_not": ~a}[name]
    out = run(getattr(opset, name), *((a,) if name == "bitwise_not" else (a, b)))[1]
    np.testing.assert_array_equal(out, want)


@FAST
@given(st.sampled_from(ALL_INTS), st.data())
def test_shifts_move_bits_and_saturate_past_the_width(dtype: type, data: st.DataObject) -> None:
    bits = np.dtype(dtype).itemsize * 8
    x = data.draw(hnp.arrays(np.dtype(dtype), data.draw(hnp.array_shapes(max_dims=2, max_side=5))))
    shift = data.draw(hnp.arrays(np.dtype(dtype), x.shape, elements=st.integers(0, bits + 3)))
    values = x.ravel().tolist()
    counts = shift.ravel().tolist()
    mask = (1 << bits) - 1
    left = [(v << c) & mask if c < bits else 0 for v, c in zip(values, counts)]
    left = [v - (1 << bits) if np.dtype(dtype).kind == "i" and v >> (bits - 1) else v for v in left]
    right = [v >> c if c < bits else (-1 if v < 0 else 0) for v, c in zip(values, counts)]
    # object arrays: a list of Python ints past int64 would become float64 and lose bits
    left_out, right_out = (
        run(f, x, shift)[1].ravel().astype(object) for f in (opset.bitwise_left_shift, opset.bitwise_right_shift)
    )
    np.testing.assert_array_equal(left_out, np.array(left, object))
    np.testing.assert_array_equal(right_out, np.array(right, object))


def test_bitwise_ops_reject_floats_naming_the_node() -> None:
    a = opset.parameter([2], np.float32)
    with pytest.raises(ModelValidationError, match="element type f32"):
        opset.bitwise_and(a, a, name="bits")
    with pytest.raises(ModelValidationError, match="shifted"):
        opset.bitwise_left_shift(a, a, name="shifted")
