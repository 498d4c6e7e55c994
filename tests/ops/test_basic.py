"""Parameter, Constant, Result and Convert: attributes, inference, and Convert's values against Python arithmetic."""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import hetero_sdk as hs
from hetero_sdk import opset
from hetero_sdk.errors import ElementTypeError, ModelValidationError
from hetero_sdk.reference import evaluate

FAST = settings(max_examples=50, deadline=None)
INTEGERS = {"i8": (-(2**7), 2**7 - 1), "u8": (0, 2**8 - 1), "i32": (-(2**31), 2**31 - 1), "i64": (-(2**63), 2**63 - 1)}


def convert(x: np.ndarray, destination: str) -> np.ndarray:
    data = opset.parameter(x.shape, x.dtype, name="x")
    node = opset.convert(data, destination)
    (out,) = evaluate(hs.Model([node], [data]), [x])
    return out


# -- Parameter, Constant, Result ----------------------------------------------------------------------


def test_parameter_carries_its_type_shape_and_name() -> None:
    x = opset.parameter([2, -1, 3], np.float16, name="x")
    assert x.get_type_name() == "Parameter"
    assert x.get_output_element_type(0) is hs.Type.f16
    assert x.get_output_partial_shape(0) == [2, -1, 3]
    assert x.output(0).partial_shape.is_dynamic
    assert x.output(0).names == {"x"}
    assert opset.parameter([], "bf16").output(0).element_type is hs.Type.bf16
    assert opset.parameter([4]).get_output_element_type(0) is hs.Type.f32


def test_parameter_rejects_unknown_types_and_negative_dims() -> None:
    with pytest.raises(TypeError, match="not a supported element type; use one of: f32"):
        opset.parameter([2], np.complex64)
    with pytest.raises(ValueError, match="use -1 for a dynamic dimension"):
        opset.parameter([2, -3])
    with pytest.raises(ModelValidationError, match=r"Parameter 'p'.*not a supported element type"):
        hs.Node("Parameter", [], {"element_type": "f12", "shape": [1]}, name="p")
    with pytest.raises(ModelValidationError, match=r"Parameter 'p'.*expects 0 input\(s\), got 1"):
        hs.Node("Parameter", [opset.parameter([1]).output(0)], {"element_type": hs.Type.f32, "shape": [1]}, name="p")


@pytest.mark.parametrize(
    ("value", "dtype", "expected_type"),
    [
        (1.5, None, hs.Type.f32),
        ([1.0, 2.0], None, hs.Type.f32),
        (3, None, hs.Type.i64),
        (True, None, hs.Type.boolean),
        (np.arange(3, dtype=np.float64), None, hs.Type.f64),
        (np.arange(3, dtype=np.uint8), None, hs.Type.u8),
        ([1, 2], hs.Type.f16, hs.Type.f16),
        ([1.5, 2.5], "bf16", hs.Type.bf16),
        ([1.9, -1.9], np.int32, hs.Type.i32),
    ],
)
def test_constant_infers_its_type_from_the_value(value: object, dtype: object, expected_type: hs.Type) -> None:
    node = opset.constant(value, dtype)
    assert node.get_output_element_type(0) is expected_type
    assert node.get_output_shape(0) == np.shape(value)


def test_constant_copies_its_value_and_makes_it_read_only() -> None:
    source = np.arange(6, dtype=np.float32).reshape(2, 3)
    node = opset.constant(source, name="c")
    source[0, 0] = 100
    stored = node.get_attributes()["value"]
    assert stored[0, 0] == 0
    with pytest.raises(ValueError, match="read-only"):
        stored[0, 0] = 1
    (out,) = evaluate(hs.Model([node], []), [])
    np.testing.assert_array_equal(out, np.arange(6, dtype=np.float32).reshape(2, 3))


def test_constant_rejects_unsupported_dtypes() -> None:
    with pytest.raises(ModelValidationError, match=r"Constant 'c'.*complex64.*not a supported element type"):
        opset.constant(np.zeros(2, np.complex64), name="c")
    with pytest.raises(ModelValidationError, match=r"Constant 'c'.*must be a numpy array, got list"):
        hs.Node("Constant", [], {"value": [1, 2]}, name="c")


def test_result_forwards_type_shape_and_values() -> None:
    x = opset.parameter([-1, 4], hs.Type.i32, name="x")
    out = opset.result(x, name="out")
    assert out.get_output_element_type(0) is hs.Type.i32
    assert out.get_output_partial_shape(0) == [-1, 4]
    assert out.output(0).names == {"x"}
    model = hs.Model([out], [x])
    value = np.arange(8, dtype=np.int32).reshape(2, 4)
    np.testing.assert_array_equal(evaluate(model, {"x": value})[0], value)


# -- Convert ---------------------------------------------------------------------------------------


def float_to_int(v: float, low: int, high: int) -> int:
    """Truncation toward zero, saturated at the type's limits (NaN gives 0)."""
    if math.isnan(v):
        return 0
    if math.isinf(v):
        return high if v > 0 else low
    return min(max(math.trunc(v), low), high)


def int_to_int(v: int, low: int, high: int) -> int:
    """Saturation at the type's limits (the SDK's choice; OpenVINO's spec wraps negative values into unsigned)."""
    return min(max(v, low), high)


@FAST
@given(
    hnp.arrays(
        np.float64,
        hnp.array_shapes(min_dims=0, max_dims=2, max_side=5),
        elements=st.one_of(st.floats(-1e20, 1e20), st.sampled_from([np.nan, np.inf, -np.inf, -0.5, 127.9, -128.9])),
    ),
    st.sampled_from([np.float32, np.float16, ml_dtypes.bfloat16, np.float64]),
    st.sampled_from(sorted(INTEGERS)),
)
def test_float_to_integer_truncates_and_saturates(raw: np.ndarray, source: type, destination: str) -> None:
    with np.errstate(over="ignore"):
        x = raw.astype(source)  # large values become inf in f16
    low, high = INTEGERS[destination]
    out = convert(x, destination)
    expected = [float_to_int(float(v), low, high) for v in x.astype(np.float64).ravel()]
    assert out.dtype == hs.Type.of(destination).numpy
    assert out.ravel().tolist() == expected


@FAST
@given(
    hnp.arrays(np.int64, hnp.array_shapes(min_dims=1, max_dims=2, max_side=5), elements=st.integers(-(2**40), 2**40)),
    st.sampled_from(sorted(INTEGERS)),
    st.sampled_from(sorted(INTEGERS)),
)
def test_integer_to_integer_saturates(raw: np.ndarray, source: str, destination: str) -> None:
    x = np.array([int_to_int(int(v), *INTEGERS[source]) for v in raw.ravel()], hs.Type.of(source).numpy)
    out = convert(x, destination)
    assert out.ravel().tolist() == [int_to_int(int(v), *INTEGERS[destination]) for v in x.ravel()]


@FAST
@given(
    hnp.arrays(np.int16, hnp.array_shapes(min_dims=1, max_dims=2, max_side=5), elements=st.integers(-300, 300)),
    st.sampled_from([np.int8, np.uint8, np.int32, np.int64, np.float32, np.float64, np.float16, np.bool_]),
    st.sampled_from(["f32", "f64", "f16", "bf16", "boolean"]),
)
def test_conversions_to_float_and_boolean_keep_values(raw: np.ndarray, source: type, destination: str) -> None:
    x = raw.astype(source)
    out = convert(x, destination)
    if destination == "boolean":
        assert out.ravel().tolist() == [bool(v != 0) for v in x.ravel()]
    else:  # every value here (|v| <= 300, or an f16 rounding of one) is exact in the destination
        values = [float(v) for v in x.ravel()]
        assert out.astype(np.float64).ravel().tolist() == pytest.approx(values, rel=2**-8)


@pytest.mark.parametrize(
    ("shape", "problem"),
    [
        (["a"], "dimension 'a' in ['a'] is not an integer"),
        ([2, 1.5], "dimension 1.5 in [2, 1.5] is not an integer"),
        ([True], "dimension True in [True] is not an integer"),
        ([None, 3], "dimension None in [None, 3] is not an integer"),
        ("12", "a shape is a list of dimensions"),
        (5, "a shape is a list of dimensions"),
        ([4, -2], "dimension -2 in [4, -2] is negative"),
    ],
)
def test_a_malformed_parameter_shape_is_a_model_validation_error_naming_the_parameter(
    shape: object, problem: str
) -> None:
    with pytest.raises(ModelValidationError) as info:
        opset.parameter(shape, hs.Type.f32, name="p")  # type: ignore[arg-type]
    assert str(info.value).startswith("Parameter 'p': ")
    assert problem in str(info.value)
    assert "-1 for a dynamic" in str(info.value)


def test_a_dimension_beyond_int64_is_refused_where_an_op_computes_it() -> None:
    """Reshape flattening two dims of 2**62 once made a static dim of 2**124, then numpy's OverflowError
    where ShapeOf folded it (fuzzing: declared dims of an ONNX input)."""
    assert opset.parameter([2**63 - 1]).get_output_partial_shape(0) == [2**63 - 1]
    with pytest.raises(
        ModelValidationError, match=r"Parameter 'p': dimension 9223372036854775808 in .*\(2\*\*63 - 1\)"
    ):
        opset.parameter([2**63], name="p")
    x = opset.parameter([2**62, 2**62, 3], name="x")
    with pytest.raises(ModelValidationError, match=rf"dimension {2**124} in \[{2**124}, 3\] is larger than"):
        opset.reshape(x, np.array([-1, 3]), special_zero=False)


def test_integral_dimensions_of_other_types_are_read_as_ints() -> None:
    shape = opset.parameter([np.int64(2), 3.0, "4", -1]).get_output_partial_shape(0)
    assert shape == [2, 3, 4, -1]
    assert all(type(d) is int for d in shape.dims)


def test_an_unknown_element_type_is_a_model_validation_error_and_a_type_error() -> None:
    with pytest.raises(ElementTypeError) as info:
        opset.parameter([1], "float99", name="p")
    assert isinstance(info.value, ModelValidationError) and isinstance(info.value, TypeError)
    assert str(info.value).startswith("Parameter 'p': 'float99' is not a supported element type; use one of: f32")
    with pytest.raises(ElementTypeError, match="not a supported element type"):
        opset.convert(opset.parameter([1]), "float99")


def test_convert_keeps_the_shape_and_sets_the_type() -> None:
    x = opset.parameter([2, -1], hs.Type.f32, name="x")
    node = opset.convert(x, np.int8)
    assert node.get_output_element_type(0) is hs.Type.i8
    assert node.get_output_partial_shape(0) == [2, -1]
    assert node.get_attributes()["destination_type"] is hs.Type.i8


def test_convert_rejects_unknown_destination_types() -> None:
    x = opset.parameter([2], hs.Type.f32)
    with pytest.raises(TypeError, match="not a supported element type"):
        opset.convert(x, "f12")
    with pytest.raises(ModelValidationError, match=r"Convert 'c': attribute destination_type"):
        hs.Node("Convert", [x.output(0)], {"destination_type": "f12"}, name="c")
    with pytest.raises(ModelValidationError, match=r"Convert 'c': expects 1 input\(s\), got 2"):
        hs.Node("Convert", [x.output(0), x.output(0)], {"destination_type": hs.Type.i32}, name="c")


def _expected_conversion(value: float, dtype: np.dtype) -> int:
    """Convert's rule in plain Python: truncate toward zero, saturate at the type's limits, NaN is 0."""
    info = np.iinfo(dtype)
    if math.isnan(value):
        return 0
    if math.isinf(value):
        return int(info.max) if value > 0 else int(info.min)
    return max(int(info.min), min(int(info.max), math.trunc(value)))


@pytest.mark.parametrize("namespace", ["numpy", "jax"])
@pytest.mark.parametrize("source", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("target", [hs.Type.i8, hs.Type.u8, hs.Type.i32, hs.Type.i64])
def test_convert_kernel_truncates_and_saturates_on_numpy_and_jax(namespace, source, target) -> None:
    values = [math.nan, math.inf, -math.inf, 0.5, -0.5, -1.7, 254.9, 255.9, -128.7, 3e4, -3e4, 2.0**31, -(2.0**63)]
    with np.errstate(over="ignore"):  # 2**31 and beyond are inf in f16
        x = np.array(values, source)
    node = opset.convert(opset.parameter([len(values)], source), target)
    if namespace == "jax":
        jax = pytest.importorskip("jax")
        with jax.enable_x64(True):
            got = np.asarray(node.op.evaluate(node, jax.numpy.asarray(x)))
    else:
        with np.errstate(all="ignore"):
            got = node.op.evaluate(node, x)
    expected = [_expected_conversion(float(v), target.numpy) for v in x]
    assert got.dtype == target.numpy and got.tolist() == expected


def test_convert_between_integers_saturates_instead_of_wrapping() -> None:
    x = np.array([-300, -129, -128, 0, 127, 128, 300], np.int32)
    node = opset.convert(opset.parameter([7], np.int32), hs.Type.i8)
    assert node.op.evaluate(node, x).tolist() == [-128, -128, -128, 0, 127, 127, 127]
    to_unsigned = opset.convert(opset.parameter([7], np.int32), hs.Type.u8)
    assert to_unsigned.op.evaluate(to_unsigned, x).tolist() == [0, 0, 0, 0, 127, 128, 255]


_BIT_CAST_PAIRS = [(np.float32, np.int32), (np.int32, np.float32), (np.uint16, np.int16), (np.int8, np.uint8)]


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**16), pair=st.sampled_from(_BIT_CAST_PAIRS))
def test_bit_cast_keeps_the_bits_of_each_element(seed: int, pair: tuple[type, type]) -> None:
    source, target = pair
    rng = np.random.default_rng(seed)
    # the bits of normal floats when the destination is a float: no NaN payloads or subnormals in play
    floats = rng.standard_normal((2, 3)).astype(np.float32)
    x = floats.view(source) if np.dtype(source).itemsize == 4 else rng.integers(-100, 100, (2, 3)).astype(source)
    expected = np.frombuffer(x.tobytes(), dtype=target).reshape(x.shape)
    px = opset.parameter([2, 3], hs.Type.of(source), name="x")
    model = hs.Model([opset.bit_cast(px, target, name="y")], [px])
    for device in ("TEMPLATE", "XLA"):
        got = hs.Core().compile_model(model, device)({"x": x})["y"]
        assert got.dtype == target and got.tobytes() == expected.tobytes()


def test_bit_cast_of_one_and_a_width_mismatch() -> None:
    px = opset.parameter([], hs.Type.f32, name="x")
    model = hs.Model([opset.bit_cast(px, hs.Type.i32, name="y")], [px])
    assert int(hs.Core().compile_model(model, "TEMPLATE")({"x": np.float32(1.0)})["y"]) == 0x3F800000
    with pytest.raises(ModelValidationError, match=r"BitCast 'b': f32 \(4 bytes\) cannot be reinterpreted as i16"):
        opset.bit_cast(px, hs.Type.i16, name="b")
