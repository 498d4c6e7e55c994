"""XLA folds the int8 round trips of quantized models (QuantizeLinear -> DequantizeLinear as the ONNX
frontend translates them) into float ops: the Converts to int8 are gone from the runtime model, and
the values are ONNX's definition, written in numpy here (round half to even, saturate; NaN to level 0
as hetero-sdk's Convert makes it), exactly, as XLA computes them without the transformations."""

from __future__ import annotations

import numpy as np
import onnx
from hetero_sdk import Type
from hetero_sdk.frontend.onnx import convert_onnx
from hypothesis import given
from hypothesis import strategies as st
from onnx import helper, numpy_helper
from xla_helpers import OPS, core


def _round_trip(scale: float, zero: int, dtype: type, then_relu: bool) -> onnx.ModelProto:
    """x -> QuantizeLinear -> DequantizeLinear (-> Relu -> the same pair again) -> y."""
    inits = [
        numpy_helper.from_array(np.array(scale, np.float32), "s"),
        numpy_helper.from_array(np.array(zero, dtype), "zp"),
    ]
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "zp"], ["q"]),
             helper.make_node("DequantizeLinear", ["q", "s", "zp"], ["d" if then_relu else "y"])]  # fmt: skip
    if then_relu:
        nodes += [helper.make_node("Relu", ["d"], ["r"]), helper.make_node("QuantizeLinear", ["r", "s", "zp"], ["q2"]),
                  helper.make_node("DequantizeLinear", ["q2", "s", "zp"], ["y"])]  # fmt: skip
    graph = helper.make_graph(nodes, "qdq", [helper.make_tensor_value_info("x", 1, [2, 9])],
                              [helper.make_tensor_value_info("y", 1, [2, 9])], inits)  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)


def _expected(x: np.ndarray, scale: float, zero: int, dtype: type, then_relu: bool) -> np.ndarray:
    """ONNX's QuantizeLinear then DequantizeLinear, in f32 as the frontend computes them."""
    info = np.iinfo(dtype)
    s = np.float32(scale)

    def pair(v: np.ndarray) -> np.ndarray:
        levels = np.clip(np.round(v / s) + np.float32(zero), info.min, info.max)  # np.round: halves to even
        levels = np.where(np.isnan(levels), np.float32(0), levels)  # hetero-sdk's Convert: NaN becomes 0
        return ((levels - np.float32(zero)) * s).astype(np.float32)

    y = pair(x)
    return pair(np.maximum(y, 0)) if then_relu else y


def _inputs(scale: float, data: st.DataObject, offsets: list[float]) -> np.ndarray:
    """Values ``offsets`` of a level beside levels, beyond the saturation bounds, infinities and NaN."""
    levels = data.draw(st.lists(st.integers(-400, 400), min_size=18, max_size=18))
    offsets = data.draw(st.lists(st.sampled_from(offsets), min_size=18, max_size=18))
    x = (np.array(levels, np.float32) + np.array(offsets, np.float32)) * np.float32(scale)
    x[data.draw(st.integers(0, 17))] = data.draw(st.sampled_from([np.nan, np.inf, -np.inf, 0.0]))
    return x.reshape(2, 9)


@OPS
@given(
    scale=st.sampled_from([0.02, 0.0078125, 1.0, 0.3]),
    dtype=st.sampled_from([np.uint8, np.int8]),
    then_relu=st.booleans(),
    data=st.data(),
)
def test_the_folded_round_trip_is_exactly_onnx_definition(
    scale: float, dtype: type, then_relu: bool, data: st.DataObject
) -> None:
    info = np.iinfo(dtype)
    zero = data.draw(st.integers(int(info.min), int(info.max)))
    model = convert_onnx(_round_trip(scale, zero, dtype, then_relu))
    folded = core().compile_model(model, "XLA")
    converts = [n for n in folded.get_runtime_model().get_ops() if n.type_name == "Convert"]
    assert not [n for n in converts if n.attrs["destination_type"] in (Type.u8, Type.i8)]
    unfolded = core().compile_model(model, "XLA", {"XLA_DISABLE_TRANSFORMATIONS": True})
    # XLA:CPU divides by a scalar as a multiply by its reciprocal, so an exact tie of x / scale may
    # round to the other level with or without the folding: the definition is checked off the ties
    x = _inputs(scale, data, [0.0, 0.3, -0.3, 0.45, -0.45])
    want = _expected(x, scale, zero, dtype, then_relu)
    np.testing.assert_array_equal(np.asarray(folded({"x": x})["y"]), want)  # equal values (a zero may be -0.0)
    ties = _inputs(scale, data, [0.5, -0.5, 0.0])
    np.testing.assert_array_equal(np.asarray(folded({"x": ties})["y"]), np.asarray(unfolded({"x": ties})["y"]))


def test_an_int8_value_read_elsewhere_keeps_its_convert() -> None:
    """The quantized tensor is also a graph output: it stays int8 there, and the float path is folded."""
    model = _round_trip(0.1, 3, np.uint8, False)
    model.graph.output.append(helper.make_tensor_value_info("q", onnx.TensorProto.UINT8, [2, 9]))
    compiled = core().compile_model(convert_onnx(model), "XLA")
    x = np.linspace(-3, 30, 18, dtype=np.float32).reshape(2, 9)
    levels = np.clip(np.round(x / np.float32(0.1)) + 3, 0, 255)
    result = compiled({"x": x})
    np.testing.assert_array_equal(np.asarray(result["q"]), levels.astype(np.uint8))
    np.testing.assert_array_equal(np.asarray(result["y"]), ((levels - 3) * np.float32(0.1)).astype(np.float32))


def test_a_per_channel_zero_point_still_computes_the_definition() -> None:
    """A per-channel zero point is not one number: its Add and Subtract stay, the Converts still fold."""
    s, zero = np.array([0.5, 0.25], np.float32), np.array([3, 5], np.uint8)
    inits = [numpy_helper.from_array(s, "s"), numpy_helper.from_array(zero, "zp")]
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "zp"], ["q"], axis=1),
             helper.make_node("DequantizeLinear", ["q", "s", "zp"], ["y"], axis=1)]  # fmt: skip
    graph = helper.make_graph(nodes, "qdq", [helper.make_tensor_value_info("x", 1, [3, 2])],
                              [helper.make_tensor_value_info("y", 1, [3, 2])], inits)  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)
    x = np.array([[0.25, 0.125], [-9.0, 99.0], [1.75, 0.375]], np.float32)
    levels = np.clip(np.round(x / s) + zero.astype(np.float32), 0, 255)
    compiled = core().compile_model(convert_onnx(model), "XLA")
    ops = compiled.get_runtime_model().get_ops()
    assert "Subtract" in [n.type_name for n in ops]
    assert not [n for n in ops if n.type_name == "Convert" and n.output(0).element_type == Type.u8]
    got = compiled({"x": x})["y"]
    np.testing.assert_array_equal(np.asarray(got), ((levels - zero) * s).astype(np.float32))


def _moved_levels() -> onnx.ModelProto:
    """As QOperator models move levels: x -> QuantizeLinear (u8) -> MaxPool -> MaxPool -> Split (two
    halves of the channels) -> one half upsampled (nearest) and Transposed, the other Reshaped ->
    DequantizeLinear each."""
    inits = [
        numpy_helper.from_array(np.array(0.05, np.float32), "s"),
        numpy_helper.from_array(np.array(130, np.uint8), "zp"),
        numpy_helper.from_array(np.array([2, 2], np.int64), "halves"),
        numpy_helper.from_array(np.array([1, 2, 36], np.int64), "flat"),
        numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "twice"),
    ]
    pool = {"kernel_shape": [3, 3], "pads": [1] * 4}
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "s", "zp"], ["q"]),
        helper.make_node("MaxPool", ["q"], ["p1"], **pool),
        helper.make_node("MaxPool", ["p1"], ["p2"], **pool),
        helper.make_node("Split", ["p2", "halves"], ["a", "b"], axis=1),
        helper.make_node("Resize", ["a", "", "twice"], ["ar"], mode="nearest"),
        helper.make_node("Transpose", ["ar"], ["at"], perm=[0, 2, 3, 1]),
        helper.make_node("Reshape", ["b", "flat"], ["br"]),
        helper.make_node("DequantizeLinear", ["at", "s", "zp"], ["y"]),
        helper.make_node("DequantizeLinear", ["br", "s", "zp"], ["z"]),
    ]
    graph = helper.make_graph(
        nodes, "moved", [helper.make_tensor_value_info("x", 1, [1, 4, 6, 6])],
        [helper.make_tensor_value_info("y", 1, [1, 12, 12, 2]), helper.make_tensor_value_info("z", 1, [1, 2, 36])],
        inits,
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)


@OPS
@given(data=st.data())
def test_a_round_trip_through_movement_ops_folds(data: st.DataObject) -> None:
    """Levels max-pooled, split, upsampled, transposed and reshaped as uint8 (QOperator models do so) fold like a
    direct round trip: no Convert left, and the values of the definition (numpy here)."""
    model = convert_onnx(_moved_levels())
    compiled = core().compile_model(model, "XLA")
    assert "Convert" not in [n.type_name for n in compiled.get_runtime_model().get_ops()]
    levels = np.array(data.draw(st.lists(st.integers(-200, 200), min_size=144, max_size=144)), np.float32)
    x = ((levels + np.float32(0.3)) * np.float32(0.05)).reshape(1, 4, 6, 6)
    x[0, 0, 0, data.draw(st.integers(0, 5))] = data.draw(st.sampled_from([np.nan, np.inf, -np.inf]))
    q = np.clip(np.round(x / np.float32(0.05)) + 130, 0, 255)
    q = np.where(np.isnan(q), 0, q)  # the Convert to u8: NaN becomes 0

    def max_pool(v: np.ndarray) -> np.ndarray:  # 3x3, stride 1, pads of 1 that no window reads alone
        padded = np.pad(v, [(0, 0), (0, 0), (1, 1), (1, 1)], constant_values=-np.inf)
        return np.max(
            [padded[:, :, i : i + v.shape[2], j : j + v.shape[3]] for i in range(3) for j in range(3)], axis=0
        )

    pooled = max_pool(max_pool(q))
    dequantized = ((pooled - 130) * np.float32(0.05)).astype(np.float32)
    got = compiled({"x": x})
    upsampled = dequantized[:, :2].repeat(2, axis=2).repeat(2, axis=3)
    np.testing.assert_array_equal(np.asarray(got["y"]), np.transpose(upsampled, (0, 2, 3, 1)))
    np.testing.assert_array_equal(np.asarray(got["z"]), dequantized[:, 2:].reshape(1, 2, 36))
