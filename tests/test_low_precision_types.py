"""The 8-, 4- and 2-bit element types: their properties, and Convert to and from each of them on
TEMPLATE and XLA against ml_dtypes' own conversions and closed forms written here."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import hetero_sdk as hs
from hetero_sdk import opset
from hetero_sdk.errors import ModelValidationError

T = hs.Type
# type: (ml_dtypes dtype, OpenVINO-style name, bits, real, signed)
NARROW = {
    T.f8e4m3: (ml_dtypes.float8_e4m3fn, "f8e4m3", 8, True, True),
    T.f8e5m2: (ml_dtypes.float8_e5m2, "f8e5m2", 8, True, True),
    T.f8e4m3fnuz: (ml_dtypes.float8_e4m3fnuz, "f8e4m3fnuz", 8, True, True),
    T.f8e5m2fnuz: (ml_dtypes.float8_e5m2fnuz, "f8e5m2fnuz", 8, True, True),
    T.f8e8m0: (ml_dtypes.float8_e8m0fnu, "f8e8m0", 8, True, False),
    T.f4e2m1: (ml_dtypes.float4_e2m1fn, "f4e2m1", 4, True, True),
    T.i4: (ml_dtypes.int4, "i4", 4, False, True),
    T.u4: (ml_dtypes.uint4, "u4", 4, False, False),
    T.i2: (ml_dtypes.int2, "i2", 2, False, True),
    T.u2: (ml_dtypes.uint2, "u2", 2, False, False),
}
FLOATS = [t for t, spec in NARROW.items() if spec[3]]
INTEGERS = [t for t, spec in NARROW.items() if not spec[3]]
INTEGER_LIMITS = {T.i4: (-8, 7), T.u4: (0, 15), T.i2: (-2, 1), T.u2: (0, 3)}
DEVICES = ["TEMPLATE", "XLA"]
SPECIALS = np.array([0.0, -0.0, np.nan, np.inf, -np.inf, 1e6, -1e6, 1e-9, 0.5, -1.5, 2.5, 448.0, 464.0, 57344.0])


def every_value(element_type: hs.Type) -> np.ndarray:
    """Every value of ``element_type``: each bit pattern of an 8-bit type, the range of a sub-byte integer,
    the 16 codes of f4e2m1 (ml_dtypes keeps the element in a byte's low bits)."""
    dtype = np.dtype(NARROW[element_type][0])
    if element_type in INTEGER_LIMITS:
        low, high = INTEGER_LIMITS[element_type]
        return np.arange(low, high + 1).astype(dtype)
    return np.arange(1 << NARROW[element_type][2], dtype=np.uint8).view(dtype)


def run(model_output: hs.Node, parameter: hs.Node, value: np.ndarray, device: str) -> np.ndarray:
    compiled = hs.Core().compile_model(hs.Model([model_output], [parameter]), device)
    return np.asarray(compiled({parameter.friendly_name: value})[model_output.friendly_name])


def assert_same_floats(got: np.ndarray, want: np.ndarray) -> None:
    """Equal values, signs of zero included; any NaN matches any NaN (their bit patterns may differ)."""
    assert got.dtype == want.dtype and got.shape == want.shape
    g, w = got.astype(np.float32), want.astype(np.float32)
    np.testing.assert_array_equal(np.isnan(g), np.isnan(w))
    keep = ~np.isnan(w)
    np.testing.assert_array_equal(g[keep], w[keep])
    np.testing.assert_array_equal(np.signbit(g[keep]), np.signbit(w[keep]))


@pytest.mark.parametrize("element_type", list(NARROW))
def test_each_type_has_its_dtype_name_width_and_kind(element_type: hs.Type) -> None:
    dtype, name, bits, real, signed = NARROW[element_type]
    assert element_type.numpy == np.dtype(dtype)
    assert T.of(dtype) is element_type and T.of(np.dtype(dtype)) is element_type and T.of(name) is element_type
    assert element_type.get_type_name() == name == str(element_type)
    assert element_type.bitwidth == bits
    assert (element_type.is_real, element_type.is_integral, element_type.is_signed) == (real, not real, signed)


def test_the_narrow_integers_are_storage_types_that_arithmetic_refuses() -> None:
    x = opset.parameter([2], T.i4, name="x")
    with pytest.raises(ModelValidationError, match="i4"):
        opset.add(x, x)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("element_type", list(NARROW))
def test_every_value_converts_exactly_to_f32_f16_and_back(device: str, element_type: hs.Type) -> None:
    values = every_value(element_type)
    x = opset.parameter([values.size], element_type, name="x")
    for wide in (T.f32, T.f16):
        there = opset.convert(x, wide, name="there")
        assert_same_floats(run(there, x, values, device), values.astype(wide.numpy))
        if element_type is T.f8e8m0 and wide is T.f16:
            continue  # 2**-127..2**127: f16 holds few of them
        back = opset.convert(opset.convert(x, wide), element_type, name="back")
        assert_same_floats(run(back, x, values, device), values)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("element_type", FLOATS)
def test_narrow_floats_to_i32_truncate_and_nan_becomes_zero(device: str, element_type: hs.Type) -> None:
    values = every_value(element_type)
    x = opset.parameter([values.size], element_type, name="x")
    wide = values.astype(np.float64)
    expected = np.where(np.isnan(wide), 0, np.clip(np.trunc(np.nan_to_num(wide)), -(2**31), 2**31 - 1))
    np.testing.assert_array_equal(run(opset.convert(x, T.i32, name="y"), x, values, device), expected)


FINITE_OR_NOT = arrays(np.float32, st.integers(1, 24), elements=st.floats(width=32, allow_subnormal=True))


@settings(max_examples=15, deadline=None)
@given(values=FINITE_OR_NOT)
@pytest.mark.parametrize("element_type", FLOATS)
def test_f32_to_narrow_floats_rounds_to_nearest_even_as_ml_dtypes_does(element_type: hs.Type, values) -> None:
    """Past the range: infinity where the type has one, else NaN (f4e2m1, with neither, saturates)."""
    if element_type is T.f4e2m1:  # no NaN: a NaN gives a zero signed by bits that differ between NaNs
        values = values[~np.isnan(values)]
    values = np.concatenate([values, SPECIALS.astype(np.float32)])
    x = opset.parameter([values.size], T.f32, name="x")
    with np.errstate(all="ignore"):
        expected = values.astype(element_type.numpy)
    for device in DEVICES:
        assert_same_floats(run(opset.convert(x, element_type, name="y"), x, values, device), expected)


def test_overflow_and_ties_against_values_written_here() -> None:
    """448 is f8e4m3's largest value, 464 the tie between it and 480 (NaN's code): even, so 448; 61440
    the tie between f8e5m2's largest, 57344, and infinity: infinity's code is the even one."""
    values = np.array([448.0, 464.0, 465.0, 1e6, -np.inf, 0.1, 57344.0, 61440.0, 7.0], np.float32)
    x = opset.parameter([values.size], T.f32, name="x")
    expected = {
        T.f8e4m3: [448.0, 448.0, np.nan, np.nan, np.nan, 0.1015625, np.nan, np.nan, 7.0],
        T.f8e5m2: [448.0, 448.0, 448.0, np.inf, -np.inf, 0.09375, 57344.0, np.inf, 7.0],
        T.f4e2m1: [6.0, 6.0, 6.0, 6.0, -6.0, 0.0, 6.0, 6.0, 6.0],
    }
    for element_type, want in expected.items():
        for device in DEVICES:
            got = run(opset.convert(x, element_type, name="y"), x, values, device).astype(np.float32)
            np.testing.assert_array_equal(got, np.array(want, np.float32), err_msg=f"{element_type} {device}")


@settings(max_examples=15, deadline=None)
@given(values=arrays(np.float32, st.integers(1, 24), elements=st.floats(-40, 40, width=32)))
@pytest.mark.parametrize("element_type", INTEGERS)
def test_f32_to_narrow_integers_truncates_and_saturates(element_type: hs.Type, values) -> None:
    values = np.concatenate([values, np.array([np.nan, np.inf, -np.inf, 1e9, -1e9], np.float32)])
    low, high = INTEGER_LIMITS[element_type]
    expected = np.clip(np.trunc(np.nan_to_num(values, nan=0.0, posinf=1e9, neginf=-1e9)), low, high)
    x = opset.parameter([values.size], T.f32, name="x")
    for device in DEVICES:
        got = run(opset.convert(x, element_type, name="y"), x, values, device)
        assert got.dtype == element_type.numpy
        np.testing.assert_array_equal(got.astype(np.int64), expected.astype(np.int64))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("element_type", INTEGERS)
def test_i32_and_bool_to_narrow_integers_saturate(device: str, element_type: hs.Type) -> None:
    values = np.array([-1000, -9, -8, -3, -2, -1, 0, 1, 2, 3, 4, 7, 8, 15, 16, 1000], np.int32)
    low, high = INTEGER_LIMITS[element_type]
    x = opset.parameter([values.size], T.i32, name="x")
    got = run(opset.convert(x, element_type, name="y"), x, values, device)
    np.testing.assert_array_equal(got.astype(np.int64), np.clip(values, low, high))
    flags = np.array([True, False, True])
    b = opset.parameter([3], T.boolean, name="b")
    got = run(opset.convert(b, element_type, name="y"), b, flags, device)
    np.testing.assert_array_equal(got.astype(int), [1, 0, 1])
