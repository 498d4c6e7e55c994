"""ONNX Cast, CastLike, QuantizeLinear and DequantizeLinear with the float8, float4, 4- and 2-bit integer
types on TEMPLATE and XLA: against numpy written here (ml_dtypes' conversions with the saturation
spelled out, closed forms for the integers and for FLOAT8E8M0's rounding) and ONNX's reference evaluator."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import onnx
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from onnx.reference import ReferenceEvaluator
from onnx_models import FEW, check, node_model, run_sdk

F32 = np.float32
DEVICES = ("TEMPLATE", "XLA")
FLOAT8 = {
    onnx.TensorProto.FLOAT8E4M3FN: ml_dtypes.float8_e4m3fn,
    onnx.TensorProto.FLOAT8E5M2: ml_dtypes.float8_e5m2,
    onnx.TensorProto.FLOAT8E4M3FNUZ: ml_dtypes.float8_e4m3fnuz,
    onnx.TensorProto.FLOAT8E5M2FNUZ: ml_dtypes.float8_e5m2fnuz,
}
SMALL_INTS = {  # code: (dtype, lowest, highest)
    onnx.TensorProto.INT4: (ml_dtypes.int4, -8, 7),
    onnx.TensorProto.UINT4: (ml_dtypes.uint4, 0, 15),
    onnx.TensorProto.INT2: (ml_dtypes.int2, -2, 1),
    onnx.TensorProto.UINT2: (ml_dtypes.uint2, 0, 3),
}
SPECIALS = np.array([0.0, -0.0, np.nan, np.inf, -np.inf, 1e6, -1e6, 1e-9, 464.0, 465.0, 61440.0, 0.1], F32)
FLOATS = arrays(F32, st.integers(1, 12), elements=st.floats(-7e4, 7e4, width=32))


def _saturated(x: np.ndarray, dtype: type) -> np.ndarray:
    """ONNX's saturate=1: clamp to the type's largest finite value (NaN stays), then round to nearest even."""
    high = float(ml_dtypes.finfo(dtype).max)
    return np.clip(x, -high, high).astype(dtype)


def _wrapped(x: np.ndarray, low: int, high: int) -> np.ndarray:
    """The integer part of ``x`` with the low bits only, as two's complement of ``high - low + 1`` codes."""
    span = high - low + 1
    return (np.trunc(x).astype(np.int64) - low) % span + low


def _reference(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    with np.errstate(all="ignore"):
        return [np.asarray(v) for v in ReferenceEvaluator(model).run(None, feeds)]


def _same_floats(got: np.ndarray, want: np.ndarray, zero_signs: bool = True) -> None:
    assert got.dtype == want.dtype and got.shape == want.shape
    g, w = got.astype(F32), want.astype(F32)
    np.testing.assert_array_equal(g, w)  # NaNs in the same places count as equal here
    keep = ~np.isnan(w)
    if zero_signs:
        np.testing.assert_array_equal(np.signbit(g[keep]), np.signbit(w[keep]))


def _run_all(model: onnx.ModelProto, feeds: dict[str, np.ndarray], want: np.ndarray, zero_signs: bool = True) -> None:
    """Each device's only output against ``want``; ONNX's reference evaluator against it too."""
    _same_floats(_reference(model, feeds)[0], want, zero_signs)
    for device in DEVICES:
        _same_floats(run_sdk(model, feeds, device)[0], want, zero_signs)


@FEW
@given(x=FLOATS)
@pytest.mark.parametrize("saturate", [1, 0])
@pytest.mark.parametrize("code", list(FLOAT8))
def test_cast_to_float8_saturates_unless_told_not_to(code: int, saturate: int, x: np.ndarray) -> None:
    x = np.concatenate([x, SPECIALS])
    dtype = FLOAT8[code]
    with np.errstate(all="ignore"):
        want = _saturated(x, dtype) if saturate else x.astype(dtype)
    model, feeds = node_model("Cast", {"x": x}, 25, output_types=[dtype], to=code, saturate=saturate)
    _run_all(model, feeds, want)


@pytest.mark.parametrize("code", list(FLOAT8))
def test_castlike_from_f16_and_back_from_float8(code: int) -> None:
    dtype = FLOAT8[code]
    with np.errstate(over="ignore"):  # 1e6 is infinity in f16
        x = np.concatenate([SPECIALS, np.linspace(-500, 500, 21, dtype=F32)]).astype(np.float16)
    like = np.zeros(1, dtype)
    model, feeds = node_model("CastLike", {"x": x, "like": like}, 25, output_types=[dtype])
    _run_all(model, feeds, _saturated(x, dtype))
    back = _saturated(x, dtype)
    model, feeds = node_model("Cast", {"x": back}, 25, output_types=[np.float16], to=onnx.TensorProto.FLOAT16)
    _run_all(model, feeds, back.astype(np.float16))


def test_cast_to_float4_always_saturates() -> None:
    x = np.array([0.3, 0.25, 0.75, 1.25, 2.5, 5.0, 6.0, 7.0, 1e9, -np.inf, -2.6, -0.0], F32)
    want = np.array([0.5, 0.0, 1.0, 1.0, 2.0, 4.0, 6.0, 6.0, 6.0, -6.0, -3.0, -0.0], F32)  # ties to even
    model, feeds = node_model(
        "Cast", {"x": x}, 25, output_types=[ml_dtypes.float4_e2m1fn], to=onnx.TensorProto.FLOAT4E2M1
    )
    _run_all(model, feeds, want.astype(ml_dtypes.float4_e2m1fn))


@FEW
@given(x=arrays(F32, st.integers(1, 12), elements=st.floats(-40, 40, width=32)))
@pytest.mark.parametrize("code", list(SMALL_INTS))
def test_cast_to_small_integers_keeps_the_low_bits(code: int, x: np.ndarray) -> None:
    dtype, low, high = SMALL_INTS[code]
    want = _wrapped(x, low, high)
    model, feeds = node_model("Cast", {"x": x}, 25, output_types=[dtype], to=code)
    check(model, feeds, DEVICES, expected=[want.astype(dtype)])
    np.testing.assert_array_equal(_reference(model, feeds)[0].astype(np.int64), want)  # the oracle agrees
    wide = np.arange(-20, 21, dtype=np.int32)
    model, feeds = node_model("Cast", {"x": wide}, 25, output_types=[dtype], to=code)
    check(model, feeds, DEVICES, expected=[_wrapped(wide, low, high).astype(dtype)])


@pytest.mark.parametrize("code", list(SMALL_INTS))
def test_small_integers_cast_exactly_to_wider_types(code: int) -> None:
    dtype, low, high = SMALL_INTS[code]
    x = np.arange(low, high + 1).astype(dtype)
    for to, wide in ((onnx.TensorProto.FLOAT, F32), (onnx.TensorProto.INT8, np.int8)):
        model, feeds = node_model("Cast", {"x": x}, 25, output_types=[wide], to=to)
        check(model, feeds, DEVICES, expected=[np.arange(low, high + 1).astype(wide)])


X = np.array([[-300.0, -2.5, -1.5, -0.5], [0.5, 1.5, 2.5, 300.0], [0.0, 3.2, -7.7, 12.5]], F32)


@pytest.mark.parametrize("constants", [["z"], []])  # a zero point computed at run time: XLA too
@pytest.mark.parametrize("code", list(SMALL_INTS))
def test_quantize_to_small_integers_rounds_ties_to_even_and_saturates_per_axis(code: int, constants: list[str]) -> None:
    dtype, low, high = SMALL_INTS[code]
    scales = np.array([0.5, 1.0, 2.0], F32)
    zero_points = np.array([low, 0, high], dtype)
    want = np.clip(np.round(X / scales[:, None]) + np.array([low, 0, high])[:, None], low, high)
    model, feeds = node_model(
        "QuantizeLinear", {"x": X, "s": scales, "z": zero_points}, 25, constants=constants, axis=0
    )
    check(model, feeds, DEVICES, expected=[want.astype(dtype)])
    np.testing.assert_array_equal(_reference(model, feeds)[0].astype(np.int64), want)


@pytest.mark.parametrize("code", list(SMALL_INTS))
def test_dequantize_small_integers_per_block(code: int) -> None:
    dtype, low, high = SMALL_INTS[code]
    q = (np.arange(12) % (high - low + 1) + low).reshape(3, 4)
    scales = np.array([[1.0, 2.0], [0.5, 4.0], [3.0, 0.25]], F32)  # blocks of 2 along axis 1
    zero_points = np.full((3, 2), low + 1)
    want = (q - np.repeat(zero_points, 2, axis=1)) * np.repeat(scales, 2, axis=1)
    model, feeds = node_model(
        "DequantizeLinear",
        {"x": q.astype(dtype), "s": scales, "z": zero_points.astype(dtype)},
        25,
        constants=["x", "z"],  # packed several to a byte in the ONNX file
        axis=1,
        block_size=2,
    )
    check(model, feeds, DEVICES, expected=[want.astype(F32)], rtol=0, atol=0)


@pytest.mark.parametrize("saturate", [1, 0])
@pytest.mark.parametrize("code", list(FLOAT8))
def test_quantize_and_dequantize_float8(code: int, saturate: int) -> None:
    dtype = FLOAT8[code]
    x = np.concatenate([SPECIALS, np.linspace(-1e5, 1e5, 9, dtype=F32)])
    scale = F32(2.0)
    with np.errstate(all="ignore"):
        y = x / scale
        want = _saturated(y, dtype) if saturate else y.astype(dtype)
    inputs = {"x": x, "s": np.array(scale), "z": np.zeros(1, dtype)}
    model, feeds = node_model("QuantizeLinear", inputs, 25, constants=["z"], saturate=saturate)
    _run_all(model, feeds, want, zero_signs=False)  # -0 + a zero point 0 is +0, unless the add is folded
    model, feeds = node_model("DequantizeLinear", {"x": want, "s": np.array(scale), "z": np.zeros(1, dtype)}, 25)
    _run_all(model, feeds, (want.astype(F32) * scale).astype(F32))


def test_quantize_and_dequantize_float4_per_axis() -> None:
    dtype = ml_dtypes.float4_e2m1fn
    scales = np.array([2.0, 3.0, 4.0], F32)
    want = _saturated(X / scales[:, None], dtype)  # saturate does not apply: f4e2m1 has no infinity
    inputs = {"x": X, "s": scales, "z": np.zeros(3, dtype)}
    model, feeds = node_model("QuantizeLinear", inputs, 25, constants=["z"], axis=0, saturate=0)
    _run_all(model, feeds, want)
    model, feeds = node_model("DequantizeLinear", {"x": want, "s": scales, "z": np.zeros(3, dtype)}, 25, axis=0)
    _run_all(model, feeds, want.astype(F32) * scales[:, None])


def _e8m0_closed_form(x: np.ndarray, mode: str) -> np.ndarray:
    """The power of two ``round_mode`` picks for positive normal ``x``: 2**floor(log2 x) times 2 when
    rounding up (``up``: any fraction; ``nearest``: a fraction of 1.5 or more)."""
    mantissa, exponent = np.frexp(x.astype(np.float64))  # x = mantissa * 2**exponent, mantissa in [0.5, 1)
    fraction = 2 * mantissa  # in [1, 2)
    bump = {"up": fraction > 1, "down": np.zeros_like(fraction, bool), "nearest": fraction >= 1.5}[mode]
    return np.ldexp(1.0, exponent - 1 + bump.astype(int))


@FEW
@given(x=arrays(F32, st.integers(1, 12), elements=st.floats(2.0**-100, 2.0**100, width=32)))
@pytest.mark.parametrize("mode", ["up", "down", "nearest"])
def test_cast_to_float8e8m0_rounds_the_exponent_as_round_mode_says(mode: str, x: np.ndarray) -> None:
    x = np.concatenate([x, np.array([1.0, 1.5, 3.0, 0.124, 1.1, 2.0**127], F32)])
    dtype = ml_dtypes.float8_e8m0fnu
    model, feeds = node_model(
        "Cast", {"x": x}, 25, output_types=[dtype], to=onnx.TensorProto.FLOAT8E8M0, round_mode=mode
    )
    want = _e8m0_closed_form(x, mode)
    for device in DEVICES:
        np.testing.assert_array_equal(run_sdk(model, feeds, device)[0].astype(np.float64), want, err_msg=device)


@pytest.mark.parametrize("saturate", [1, 0])
@pytest.mark.parametrize("mode", ["up", "down", "nearest"])
def test_cast_to_float8e8m0_special_values_as_onnx_reference(mode: str, saturate: int) -> None:
    """Zero, subnormals, infinity, NaN and values past 2**127, as ONNX's reference evaluator gives them."""
    x = np.array([0.0, 1e-40, 1e-45, np.inf, -np.inf, np.nan, 3e38, 2.0**127, 1.7e38, 2.0**-126, 0.75], F32)
    dtype = ml_dtypes.float8_e8m0fnu
    model, feeds = node_model(
        "Cast", {"x": x}, 25, output_types=[dtype], to=onnx.TensorProto.FLOAT8E8M0, round_mode=mode, saturate=saturate
    )
    want = _reference(model, feeds)[0]
    for device in DEVICES:
        got = run_sdk(model, feeds, device)[0]
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8), err_msg=device)


@FEW
@given(
    x=arrays(F32, st.integers(1, 12), elements=st.floats(-50, 50, width=32)),
    scale=st.floats(0.25, 8.0, width=32),
    zero=st.integers(-2, 3),
)
@pytest.mark.parametrize("code", list(SMALL_INTS))
def test_quantize_to_small_integers_for_any_input(code: int, x: np.ndarray, scale: float, zero: int) -> None:
    dtype, low, high = SMALL_INTS[code]
    zero = min(max(zero, low), high)
    want = np.clip(np.round(x / F32(scale)) + zero, low, high)  # numpy rounds ties to even
    inputs = {"x": x, "s": np.array(scale, F32), "z": np.array(zero).astype(dtype)}
    model, feeds = node_model("QuantizeLinear", inputs, 25, constants=["z"])
    check(model, feeds, DEVICES, expected=[want.astype(dtype)])
