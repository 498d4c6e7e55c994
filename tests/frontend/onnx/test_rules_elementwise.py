"""The element-wise rules (arithmetic, comparisons, logic, activations, casts) compute what ONNX Runtime
computes for the same one-node models, on TEMPLATE and, for a representative subset, on XLA."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from onnx import helper
from onnx_models import FEW, check, node_model, run_sdk, value_info

from hetero_sdk.errors import ModelValidationError, UnsupportedOperationError

F32 = np.float32
RNG = np.random.default_rng(7)


def _x(*shape: int, low: float = -3.0, high: float = 3.0) -> np.ndarray:
    return RNG.uniform(low, high, shape).astype(F32)


UNARY = {
    "Abs": {},
    "Ceil": {},
    "Floor": {},
    "Cos": {},
    "Sin": {},
    "Exp": {},
    "Neg": {},
    "Relu": {},
    "Sigmoid": {},
    "Tanh": {},
    "Erf": {},
    "HardSwish": {},
    "Reciprocal": {},
    "Sign": {},
    "Softplus": {},
    "Softsign": {},
    "Identity": {},
    "Elu": {"alpha": 0.7},
    "Selu": {},
    "Celu": {"alpha": 1.5},
    "HardSigmoid": {"alpha": 0.3},
    "LeakyRelu": {"alpha": 0.2},
    "ThresholdedRelu": {"alpha": 0.5},
    "Mish": {},
    "Gelu": {},
}
SINCE = {"Celu": 12, "HardSwish": 14, "Mish": 18, "Gelu": 20}


@pytest.mark.parametrize("op_type", sorted(UNARY))
def test_unary_matches_onnxruntime(op_type: str) -> None:
    model, feeds = node_model(op_type, {"x": _x(2, 3, 4)}, SINCE.get(op_type, 13), **UNARY[op_type])
    check(model, feeds, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("op_type", ["Sqrt", "Log"])
def test_unary_of_positive_values_matches_onnxruntime(op_type: str) -> None:
    model, feeds = node_model(op_type, {"x": _x(3, 4, low=0.1, high=5.0)}, 13)
    check(model, feeds, ("TEMPLATE", "XLA"))


@pytest.mark.parametrize("op_type", ["Relu", "Sigmoid", "Tanh", "Exp", "Softplus", "Gelu", "Elu", "Sign"])
def test_unary_on_xla_matches_onnxruntime(op_type: str) -> None:
    model, feeds = node_model(op_type, {"x": _x(2, 5)}, SINCE.get(op_type, 13), **UNARY[op_type])
    check(model, feeds, ("XLA",), rtol=1e-5, atol=1e-6)


def test_gelu_tanh_approximation_and_default_attributes() -> None:
    model, feeds = node_model("Gelu", {"x": _x(4, 4)}, 20, approximate="tanh")
    check(model, feeds, ("TEMPLATE", "XLA"))
    # LeakyRelu's alpha defaults to 0.01, HardSigmoid's to 0.2 / 0.5, Elu's to 1
    for op_type in ("LeakyRelu", "HardSigmoid", "Elu", "ThresholdedRelu"):
        model, feeds = node_model(op_type, {"x": _x(3, 5)}, 13)
        check(model, feeds)


def test_old_opset_activation_rules_match_onnxruntime() -> None:
    for op_type in ("Elu", "LeakyRelu", "HardSigmoid", "Selu"):
        model, feeds = node_model(op_type, {"x": _x(2, 6)}, 7)  # the rules since 6; 7 is the oldest read
        check(model, feeds)


@given(
    a=hnp.arrays(F32, hnp.array_shapes(min_dims=1, max_dims=3, max_side=4), elements=st.floats(-10, 10, width=32)),
    op_type=st.sampled_from(["Add", "Sub", "Mul", "Max", "Min"]),
)
@FEW
def test_binary_with_numpy_broadcasting_matches_onnxruntime(a: np.ndarray, op_type: str) -> None:
    b = (a[..., :1] * 0.5 + 1.0).astype(F32)  # broadcast along the last axis
    model, feeds = node_model(op_type, {"a": a, "b": b}, 13)
    check(model, feeds)


@pytest.mark.parametrize("op_type", ["Equal", "Greater", "Less", "GreaterOrEqual", "LessOrEqual"])
def test_comparisons_match_onnxruntime(op_type: str) -> None:
    a = np.array([[1, 2, 3], [4, 5, 6]], F32)
    b = np.array([3, 2, 1], F32)
    model, feeds = node_model(op_type, {"a": a, "b": b}, 16)
    check(model, feeds, ("TEMPLATE", "XLA"))


@pytest.mark.parametrize("op_type", ["And", "Or", "Xor"])
def test_logic_matches_onnxruntime(op_type: str) -> None:
    a = np.array([[True, False], [True, True]])
    b = np.array([False, True])
    model, feeds = node_model(op_type, {"a": a, "b": b}, 7)
    check(model, feeds)
    model, feeds = node_model("Not", {"a": a}, 7)
    check(model, feeds)


@given(
    a=hnp.arrays(np.int32, 6, elements=st.integers(-50, 50)),
    b=hnp.arrays(np.int32, 6, elements=st.integers(-7, 7).filter(bool)),
)
@FEW
def test_integer_div_truncates_toward_zero(a: np.ndarray, b: np.ndarray) -> None:
    model, feeds = node_model("Div", {"a": a, "b": b}, 14)
    want = check(model, feeds)
    np.testing.assert_array_equal(want[0], np.trunc(a / b).astype(np.int32))


def test_float_div_matches_onnxruntime() -> None:
    model, feeds = node_model("Div", {"a": _x(3, 4), "b": _x(4, low=0.5, high=2)}, 7)
    check(model, feeds, ("TEMPLATE", "XLA"))


@pytest.mark.parametrize("fmod", [0, 1])
@given(
    a=hnp.arrays(np.int64, 8, elements=st.integers(-40, 40)),
    b=hnp.arrays(np.int64, 8, elements=st.integers(-9, 9).filter(bool)),
)
@FEW
def test_integer_mod_follows_the_divisor_sign_or_the_dividend_with_fmod(
    fmod: int, a: np.ndarray, b: np.ndarray
) -> None:
    model, feeds = node_model("Mod", {"a": a, "b": b}, 13, fmod=fmod)
    want = check(model, feeds)
    np.testing.assert_array_equal(want[0], np.fmod(a, b) if fmod else np.mod(a, b))


def test_float_mod_with_fmod_matches_onnxruntime() -> None:
    a, b = _x(10, low=-9, high=9), np.array([2.5, -2.5] * 5, F32)
    model, feeds = node_model("Mod", {"a": a, "b": b}, 10, fmod=1)
    check(model, feeds, ("TEMPLATE", "XLA"))


def test_pow_with_an_integer_exponent_of_another_type_matches_onnxruntime() -> None:
    model, feeds = node_model("Pow", {"a": _x(2, 3, low=0.5, high=2), "b": np.array([2, 3, 1], np.int64)}, 15)
    check(model, feeds)
    model, feeds = node_model("Pow", {"a": _x(2, 3, low=0.5, high=2), "b": _x(3, low=-1, high=2)}, 7)
    check(model, feeds, ("TEMPLATE", "XLA"), rtol=1e-5)


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_pow_of_an_integer_base_and_a_real_exponent_keeps_the_exponents_fraction(dtype: type) -> None:
    # 2 ** 2.5 = 5.66 -> 5 and 3 ** 1.9 = 8.06 -> 8: the exponent is not truncated first (which gave 4 and 3)
    base, exponent = np.array([2, 3, 10, 7], dtype), np.array([2.5, 1.9, -1, 0.5], F32)
    model, feeds = node_model("Pow", {"a": base, "b": exponent}, 15, output_types=[dtype])
    want = check(model, feeds, ("TEMPLATE", "XLA"))
    np.testing.assert_array_equal(want[0], np.array([5, 8, 0, 2], dtype))


@pytest.mark.parametrize("op_type", ["Sum", "Max", "Min", "Mean"])
@pytest.mark.parametrize("count", [1, 2, 3])
def test_variadic_ops_match_onnxruntime(op_type: str, count: int) -> None:
    inputs = {f"x{i}": _x(2, 3) if i % 2 == 0 else _x(3) for i in range(count)}
    model, feeds = node_model(op_type, inputs, 13)
    check(model, feeds)


@pytest.mark.parametrize("op_type", ["Sum", "Max", "Min", "Mean"])
def test_variadic_ops_of_opset_7_match_onnxruntime(op_type: str) -> None:
    """Sum, Max, Min and Mean-6 (what opset 7 has) take inputs of one shape; they broadcast from opset 8 on."""
    inputs = {f"x{i}": _x(2, 3) for i in range(3)}
    model, feeds = node_model(op_type, inputs, 7)
    check(model, feeds, ("TEMPLATE", "XLA"))


@pytest.mark.parametrize(
    ("source", "target"),
    [
        (np.float32, np.int32),
        (np.float32, np.int64),
        (np.int64, np.float32),
        (np.float32, np.bool_),
        (np.float64, np.float16),
        (np.int32, np.uint8),
    ],
)
def test_cast_matches_onnxruntime(source: type, target: type) -> None:
    x = np.array([[-2.7, -0.5, 0.0], [0.4, 1.5, 100.2]]).astype(source)
    if target == np.uint8:
        x = np.abs(x)
    to = int(__import__("onnx").helper.np_dtype_to_tensor_dtype(np.dtype(target)))
    model, feeds = node_model("Cast", {"x": x}, 13, to=to)
    check(model, feeds, ("TEMPLATE", "XLA"))
    model, feeds = node_model("CastLike", {"x": x, "like": np.zeros(1, target)}, 15)
    check(model, feeds)


def test_where_broadcasts_condition_and_branches() -> None:
    condition = np.array([[True], [False]])
    model, feeds = node_model("Where", {"c": condition, "a": _x(2, 3), "b": _x(3)}, 16)
    check(model, feeds, ("TEMPLATE", "XLA"))


def test_prelu_with_a_per_channel_slope_matches_onnxruntime() -> None:
    slope = np.array([[[0.1]], [[0.5]], [[-0.2]]], F32)
    model, feeds = node_model("PRelu", {"x": _x(2, 3, 4, 4), "slope": slope}, 16, constants=["slope"])
    check(model, feeds, ("TEMPLATE", "XLA"))


def test_clip_6_reads_bounds_from_attributes_with_infinite_defaults() -> None:
    x = _x(4, 5, low=-5, high=5)
    model, feeds = node_model("Clip", {"x": x}, 7, min=-1.0, max=2.0)
    check(model, feeds)
    model, feeds = node_model("Clip", {"x": x}, 7, max=0.5)
    want = check(model, feeds)
    np.testing.assert_array_equal(want[0], np.minimum(x, 0.5))


@pytest.mark.parametrize("constant", [True, False])
@pytest.mark.parametrize(("low", "high"), [(-1.0, 2.0), (None, 1.0), (-0.5, None), (None, None)])
def test_clip_11_reads_optional_bound_inputs(constant: bool, low: float | None, high: float | None) -> None:
    x = _x(3, 4, low=-4, high=4)
    bound = lambda v: None if v is None else np.array(v, F32)  # noqa: E731
    inputs = {"x": x, "min": bound(low), "max": bound(high)}
    if high is None:
        del inputs["max"]
    model, feeds = node_model("Clip", inputs, 13, constants=["min", "max"] if constant else [])
    check(model, feeds, ("TEMPLATE", "XLA"))


def test_clip_11_on_integers_matches_onnxruntime() -> None:
    x = np.arange(-6, 6, dtype=np.int32).reshape(3, 4)
    model, feeds = node_model("Clip", {"x": x, "min": np.array(-2, np.int32), "max": np.array(3, np.int32)}, 13)
    check(model, feeds)


def test_is_nan_and_is_inf_with_detect_flags() -> None:
    x = np.array([1.0, np.nan, np.inf, -np.inf, -2.0], F32)
    model, feeds = node_model("IsNaN", {"x": x}, 13)
    check(model, feeds)
    for positive, negative in ((1, 1), (1, 0), (0, 1), (0, 0)):
        model, feeds = node_model("IsInf", {"x": x}, 10, detect_positive=positive, detect_negative=negative)
        want = check(model, feeds)
        np.testing.assert_array_equal(want[0], (np.isposinf(x) & bool(positive)) | (np.isneginf(x) & bool(negative)))


def test_max_and_min_with_nan_propagate_it_as_numpy_does() -> None:
    """ONNX Runtime's Max/Min propagate NaN; ours do too: compared with numpy's maximum and minimum."""
    a = np.array([1.0, np.nan, 3.0], F32)
    b = np.array([np.nan, 2.0, 1.0], F32)
    for op_type, expected in (("Max", np.maximum(a, b)), ("Min", np.minimum(a, b))):
        model, feeds = node_model(op_type, {"a": a, "b": b}, 13)
        check(model, feeds, expected=[expected])


def test_dropout_in_inference_is_identity_with_an_all_true_mask() -> None:
    x = _x(2, 3)
    model, feeds = node_model("Dropout", {"x": x}, 13, outputs=2, output_types=[F32, np.bool_])
    check(model, feeds, expected=[x, np.ones_like(x, dtype=bool)])
    model, feeds = node_model("Dropout", {"x": x}, 7, ratio=0.3)
    check(model, feeds)


def test_dropout_12_in_inference_mode_is_identity_and_training_mode_is_refused() -> None:
    x = _x(2, 3)
    inputs = {"x": x, "ratio": np.array(0.5, F32), "training": np.array(False)}
    model, feeds = node_model("Dropout", inputs, 13, constants=["ratio", "training"])
    check(model, feeds, expected=[x])
    inputs["training"] = np.array(True)
    model, feeds = node_model("Dropout", inputs, 13, constants=["ratio", "training"])
    with pytest.raises(UnsupportedOperationError, match="training mode"):
        run_sdk(model, feeds)
    model, feeds = node_model("Dropout", inputs, 13, constants=["ratio"])  # training_mode computed at run time
    with pytest.raises(UnsupportedOperationError, match="training mode"):
        run_sdk(model, feeds)


NUMPY_UNARY = {
    # ONNX op: (numpy function, lowest input, highest input)
    "Tan": (np.tan, -1.4, 1.4),
    "Asin": (np.asin, -1.0, 1.0),
    "Acos": (np.acos, -1.0, 1.0),
    "Atan": (np.atan, -3.0, 3.0),
    "Sinh": (np.sinh, -3.0, 3.0),
    "Cosh": (np.cosh, -3.0, 3.0),
    "Asinh": (np.asinh, -3.0, 3.0),
    "Acosh": (np.acosh, 1.0, 9.0),
    "Atanh": (np.atanh, -0.9, 0.9),
    "Round": (np.round, -3.0, 3.0),
    "Sign": (np.sign, -3.0, 3.0),
}


@pytest.mark.parametrize("op_type", sorted(NUMPY_UNARY))
def test_math_ops_translate_to_their_own_ops(op_type: str) -> None:
    fn, low, high = NUMPY_UNARY[op_type]
    x = _x(2, 5, low=low, high=high)
    if op_type == "Round":
        x[0, :] = [-2.5, -1.5, -0.5, 0.5, 1.5]  # halves round to even
    model, feeds = node_model(op_type, {"x": x}, 11 if op_type == "Round" else 13)
    check(model, feeds, ("TEMPLATE", "XLA"), expected=[fn(x)])


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.uint32, np.uint64])
@pytest.mark.parametrize("direction", ["LEFT", "RIGHT"])
def test_bit_shift_follows_its_direction(dtype: type, direction: str) -> None:
    bits = np.dtype(dtype).itemsize * 8
    x = RNG.integers(0, np.iinfo(dtype).max, (3, 4), dtype=dtype, endpoint=True)
    counts = RNG.integers(0, bits - 1, (4,), dtype=dtype, endpoint=True)
    model, feeds = node_model("BitShift", {"x": x, "y": counts}, 11, output_types=[dtype], direction=direction)
    want = np.left_shift(x, counts) if direction == "LEFT" else np.right_shift(x, counts)
    check(model, feeds, ("TEMPLATE", "XLA"), expected=[want])


def test_bit_shift_without_a_known_direction_names_the_node() -> None:
    x = np.array([1, 2], np.uint8)
    model, feeds = node_model("BitShift", {"x": x, "y": x}, 11, output_types=[np.uint8], direction="UP")
    with pytest.raises(ModelValidationError, match=r"BitShift.*direction"):
        run_sdk(model, feeds)


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.uint16, np.uint32, np.int64, np.uint64])
def test_bitwise_ops_of_opset_18(dtype: type) -> None:
    info = np.iinfo(dtype)
    a = RNG.integers(info.min, info.max, (2, 3), dtype=dtype, endpoint=True)
    b = RNG.integers(info.min, info.max, (3,), dtype=dtype, endpoint=True)
    for op_type, want in (("BitwiseAnd", a & b), ("BitwiseOr", a | b), ("BitwiseXor", a ^ b)):
        model, feeds = node_model(op_type, {"a": a, "b": b}, 18, output_types=[dtype])
        check(model, feeds, ("TEMPLATE", "XLA"), expected=[want])
    model, feeds = node_model("BitwiseNot", {"a": a}, 18, output_types=[dtype])
    check(model, feeds, ("TEMPLATE", "XLA"), expected=[~a])


@pytest.mark.parametrize(("lambd", "bias"), [(0.5, 0.0), (1.5, 1.5), (0.0, -0.5)])
def test_shrink_zeroes_the_band_and_shifts_the_rest(lambd: float, bias: float) -> None:
    x = np.array([-3.0, -1.5, -1.0, -0.5, 0.0, 0.25, 0.5, 1.5, 2.0], np.float32)
    model, feeds = node_model("Shrink", {"x": x}, 9, lambd=lambd, bias=bias)
    check(model, feeds, ("TEMPLATE", "XLA"))


def test_binarizer_of_the_ml_domain_marks_values_above_the_threshold() -> None:
    x = np.array([[-1.0, 0.5, 0.99], [1.0, 1.01, 7.0]], np.float32)
    node = helper.make_node("Binarizer", ["x"], ["y"], domain="ai.onnx.ml", threshold=1.0)
    graph = helper.make_graph([node], "g", [value_info("x", F32, [2, 3])], [value_info("y", F32, [2, 3])])
    imports = [helper.make_opsetid("", 13), helper.make_opsetid("ai.onnx.ml", 1)]
    model = helper.make_model(graph, opset_imports=imports, ir_version=8)
    check(model, {"x": x}, ("TEMPLATE", "XLA"), expected=[np.where(x > 1.0, 1.0, 0.0).astype(np.float32)])


def test_bit_cast_reinterprets_the_bits() -> None:
    x = np.array([1.0, -2.5, 3.75], np.float32)
    model, feeds = node_model("BitCast", {"x": x}, 26, output_types=[np.int32], to=6)  # INT32
    check(model, feeds, ("TEMPLATE", "XLA"), expected=[x.view(np.int32)])


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize(("op_type", "attrs"), [("Celu", {"alpha": 2.0}), ("Elu", {"alpha": 0.7}), ("Selu", {})])
def test_16_bit_exponential_units_round_once_like_one_op(dtype: str, op_type: str, attrs: dict) -> None:
    import ml_dtypes

    narrow = np.dtype(ml_dtypes.bfloat16) if dtype == "bfloat16" else np.dtype(np.float16)
    x = np.linspace(-4, 3, 57).astype(narrow)
    wide = x.astype(np.float64)
    alpha = attrs.get("alpha", 1.67326319217681884765625)
    if op_type == "Celu":
        want = np.maximum(wide, 0) + np.minimum(alpha * (np.exp(wide / alpha) - 1), 0)
    else:
        gamma = 1.05070102214813232421875 if op_type == "Selu" else 1.0
        want = gamma * np.where(wide > 0, wide, alpha * (np.exp(wide) - 1))
    # ONNX's schema types Celu as float only, though its node tests run it on bfloat16: build it unchecked
    node = helper.make_node(op_type, ["x"], ["y"], **attrs)
    io = [value_info("x", narrow, x.shape), value_info("y", narrow, x.shape)]
    model = helper.make_model(
        helper.make_graph([node], "g", io[:1], io[1:]), opset_imports=[helper.make_opsetid("", 22)]
    )
    (got,) = run_sdk(model, {"x": x})
    np.testing.assert_array_equal(got.astype(np.float32), want.astype(np.float32).astype(narrow).astype(np.float32))
