"""The neural-network rules (convolutions, pooling, normalizations, matrix products, softmax, resizing,
top-k, non-max suppression) compute what ONNX Runtime computes for the same one-node models."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from onnx import helper
from onnx_models import FEW, check, graph_model, node_model, value_info

F32, I64 = np.float32, np.int64
RNG = np.random.default_rng(5)


def _x(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(F32)


@pytest.mark.parametrize(
    "attrs",
    [
        {},
        {"strides": [2, 2]},
        {"pads": [1, 1, 1, 1]},
        {"pads": [0, 1, 2, 1], "strides": [2, 1]},
        {"dilations": [2, 2]},
        {"auto_pad": "SAME_UPPER", "strides": [2, 2]},
        {"auto_pad": "SAME_LOWER"},
        {"auto_pad": "VALID"},
    ],
)
def test_conv_window_attributes_match_onnxruntime(attrs: dict[str, object]) -> None:
    model, feeds = node_model(
        "Conv", {"x": _x(1, 3, 7, 7), "w": _x(4, 3, 3, 3), "b": _x(4)}, 13, constants=["w", "b"], **attrs
    )
    check(model, feeds, ("TEMPLATE", "XLA"), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("group", [2, 4])
def test_grouped_conv_without_bias(group: int) -> None:
    model, feeds = node_model(
        "Conv", {"x": _x(2, 4, 5, 5), "w": _x(8, 4 // group, 3, 3)}, 11, constants=["w"], group=group
    )
    check(model, feeds, ("TEMPLATE", "XLA"), rtol=1e-4, atol=1e-5)


def test_conv_1d_and_3d() -> None:
    model, feeds = node_model("Conv", {"x": _x(1, 2, 9), "w": _x(3, 2, 3)}, 11, constants=["w"], pads=[1, 1])
    check(model, feeds, rtol=1e-4, atol=1e-5)
    model, feeds = node_model("Conv", {"x": _x(1, 2, 4, 4, 4), "w": _x(2, 2, 2, 2, 2)}, 11, constants=["w"])
    check(model, feeds, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize(
    "attrs",
    [
        {},
        {"strides": [2, 2]},
        {"strides": [2, 2], "pads": [1, 1, 1, 1]},
        {"strides": [2, 2], "output_padding": [1, 1]},
        {"strides": [2, 2], "output_shape": [9, 9]},
    ],
)
def test_conv_transpose_matches_onnxruntime(attrs: dict[str, object]) -> None:
    model, feeds = node_model(
        "ConvTranspose", {"x": _x(1, 3, 4, 4), "w": _x(3, 2, 3, 3), "b": _x(2)}, 11, constants=["w", "b"], **attrs
    )
    check(model, feeds, ("TEMPLATE", "XLA"), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("attrs", [{"group": 2}, {"group": 3, "strides": [2, 1], "pads": [1, 0, 0, 1]}])
def test_grouped_conv_transpose_matches_onnxruntime(attrs: dict[str, object]) -> None:
    groups = int(attrs["group"])  # type: ignore[call-overload]
    inputs = {"x": _x(1, 2 * groups, 4, 3), "w": _x(2 * groups, 2, 3, 2), "b": _x(2 * groups)}
    model, feeds = node_model("ConvTranspose", inputs, 11, constants=["w", "b"], **attrs)
    check(model, feeds, ("TEMPLATE", "XLA"), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("auto_pad", ["SAME_UPPER", "SAME_LOWER"])
@pytest.mark.parametrize(
    "attrs",
    [{"strides": [2, 2]}, {"strides": [1, 1]}, {"strides": [2, 3], "dilations": [2, 1]}, {"output_shape": [7, 9]}],
)
def test_conv_transpose_same_padding_makes_input_times_stride(auto_pad: str, attrs: dict[str, object]) -> None:
    if "output_shape" in attrs:
        attrs = {**attrs, "strides": [2, 2]}
    model, feeds = node_model(
        "ConvTranspose", {"x": _x(1, 2, 3, 4), "w": _x(2, 3, 3, 3)}, 11, constants=["w"], auto_pad=auto_pad, **attrs
    )
    want = check(model, feeds, ("TEMPLATE", "XLA"), rtol=1e-4, atol=1e-5)
    strides = attrs["strides"]
    assert want[0].shape[2:] == tuple(attrs.get("output_shape", [3 * strides[0], 4 * strides[1]]))  # type: ignore[index, call-overload]


@pytest.mark.parametrize("auto_pad", ["NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"])
@pytest.mark.parametrize(
    ("size", "kernel", "stride", "dilation", "extra", "out"),
    [
        (5, 3, 2, 1, 0, 10),
        (5, 3, 2, 1, 0, 9),
        (4, 3, 3, 1, 1, 11),
        (4, 2, 2, 2, 0, 8),
        (5, 3, 2, 1, 0, 12),
        (3, 3, 1, 1, 0, 4),
    ],
)
def test_conv_transpose_output_shape_crops_as_onnxruntime(
    auto_pad: str, size: int, kernel: int, stride: int, dilation: int, extra: int, out: int
) -> None:
    """ONNX crops total_padding // 2 at the start for SAME_UPPER and the rest (the odd one) otherwise; odd
    totals (1, 3), even ones and a negative one (zeros past the full result) are all here."""
    inputs = {"x": _x(1, 2, size, size + 1), "w": _x(2, 3, kernel, kernel)}
    attrs = {"strides": [stride] * 2, "dilations": [dilation] * 2, "output_padding": [extra] * 2}
    model, feeds = node_model(
        "ConvTranspose", inputs, 11, constants=["w"], auto_pad=auto_pad, output_shape=[out, out + 1], **attrs
    )
    want = check(model, feeds, ("TEMPLATE", "XLA"), rtol=1e-4, atol=1e-5)
    assert want[0].shape[2:] == (out, out + 1)


def test_conv_transpose_output_shape_with_dynamic_spatial_sizes() -> None:
    """The crop is computed when the input's size is known, from what a run is given."""
    w = _x(2, 3, 3, 3)
    node = helper.make_node("ConvTranspose", ["x", "w"], ["y"], strides=[2, 2], output_shape=[10, 8])
    model = graph_model(
        [node], [value_info("x", F32, [1, 2, "h", "w"])], [value_info("y", F32, [1, 3, 10, 8])], 11, {"w": w}
    )
    check(model, {"x": _x(1, 2, 5, 4)}, ("TEMPLATE", "XLA"), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize(
    "attrs",
    [
        {"kernel_shape": [2, 2]},
        {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]},
        {"kernel_shape": [3, 3], "strides": [2, 2], "ceil_mode": 1},
        {"kernel_shape": [2, 2], "auto_pad": "SAME_UPPER"},
        {"kernel_shape": [2, 2], "dilations": [2, 2]},
    ],
)
def test_max_pool_values_and_indices_match_onnxruntime(attrs: dict[str, object]) -> None:
    model, feeds = node_model("MaxPool", {"x": _x(2, 3, 6, 6)}, 12, outputs=2, output_types=[F32, I64], **attrs)
    check(model, feeds)
    model, feeds = node_model("MaxPool", {"x": _x(2, 3, 6, 6)}, 12, **attrs)
    check(model, feeds, ("XLA",))


@pytest.mark.parametrize("count_include_pad", [0, 1])
@pytest.mark.parametrize("ceil_mode", [0, 1])
def test_average_pool_with_padding_counted_or_not(count_include_pad: int, ceil_mode: int) -> None:
    model, feeds = node_model(
        "AveragePool",
        {"x": _x(1, 2, 7, 7)},
        19,
        kernel_shape=[3, 3],
        strides=[2, 2],
        pads=[1, 1, 1, 1],
        count_include_pad=count_include_pad,
        ceil_mode=ceil_mode,
    )
    check(model, feeds, ("TEMPLATE", "XLA"))


@pytest.mark.parametrize("op_type", ["GlobalAveragePool", "GlobalMaxPool"])
def test_global_pools(op_type: str) -> None:
    model, feeds = node_model(op_type, {"x": _x(2, 3, 4, 5)}, 13)
    check(model, feeds, ("TEMPLATE", "XLA"))


@pytest.mark.parametrize("opset", [7, 9, 15])
def test_batch_normalization_in_inference(opset: int) -> None:
    inputs = {"x": _x(2, 3, 4, 4), "scale": _x(3), "bias": _x(3), "mean": _x(3), "var": np.abs(_x(3)) + 0.5}
    model, feeds = node_model(
        "BatchNormalization", inputs, opset, constants=["scale", "bias", "mean", "var"], epsilon=1e-3
    )
    check(model, feeds, ("TEMPLATE", "XLA"), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("momentum", [None, 0.7])
def test_batch_normalization_in_training_mode_uses_and_reports_batch_statistics(momentum: float | None) -> None:
    x, scale, bias, mean, var = _x(2, 3, 4, 5), _x(3), _x(3), _x(3), np.abs(_x(3)) + 0.5
    inputs = {"x": x, "scale": scale, "bias": bias, "mean": mean, "var": var}
    attributes = {"training_mode": 1, "epsilon": 1e-3} | ({} if momentum is None else {"momentum": momentum})
    model, feeds = node_model("BatchNormalization", inputs, 15, outputs=3, **attributes)
    keep = 0.9 if momentum is None else momentum
    batch_mean, batch_var = x.mean(axis=(0, 2, 3)), x.var(axis=(0, 2, 3))
    shaped = (-1, 1, 1)
    y = (x - batch_mean.reshape(shaped)) / np.sqrt(batch_var.reshape(shaped) + 1e-3) * scale.reshape(shaped)
    expected = [y + bias.reshape(shaped), mean * keep + batch_mean * (1 - keep), var * keep + batch_var * (1 - keep)]
    check(model, feeds, ("TEMPLATE", "XLA"), rtol=1e-4, atol=1e-5, expected=[e.astype(F32) for e in expected])


@pytest.mark.parametrize("shape", [(0, 3, 4), (2, 3, 0), (2, 3, 4, 5, 0)])
def test_batch_normalization_in_training_mode_on_an_empty_batch_gives_nan_statistics_as_onnxruntime(
    shape: tuple[int, ...],
) -> None:
    """The batch's mean is a sum over a count of 0: NaN (ONNX Runtime, onnx.reference), not ReduceMean's 0."""
    inputs = {"x": _x(*shape), "scale": _x(3), "bias": _x(3), "mean": _x(3), "var": np.abs(_x(3)) + 0.5}
    model, feeds = node_model("BatchNormalization", inputs, 15, outputs=3, training_mode=1)
    expected = check(model, feeds, ("TEMPLATE", "XLA"), rtol=1e-5, atol=1e-6)
    assert np.isnan(expected[1]).all() and np.isnan(expected[2]).all()


def test_instance_and_layer_normalization() -> None:
    model, feeds = node_model(
        "InstanceNormalization", {"x": _x(2, 3, 5, 5), "s": _x(3), "b": _x(3)}, 7, constants=["s", "b"], epsilon=1e-4
    )
    check(model, feeds, ("TEMPLATE", "XLA"), rtol=1e-4, atol=1e-5)
    for axis in (-1, 1):
        shape = (4,) if axis == -1 else (3, 4)
        model, feeds = node_model(
            "LayerNormalization", {"x": _x(2, 3, 4), "s": _x(*shape), "b": _x(*shape)}, 17, axis=axis
        )
        check(model, feeds, rtol=1e-4, atol=1e-5)
    model, feeds = node_model("LayerNormalization", {"x": _x(2, 3, 4), "s": _x(4)}, 17)
    check(model, feeds, ("TEMPLATE", "XLA"), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize(("a", "b"), [((3, 4), (4, 5)), ((2, 3, 4), (4, 2)), ((4,), (4, 3)), ((2, 1, 3, 4), (5, 4, 2))])
def test_matmul_with_broadcast_batches_and_vectors(a: tuple[int, ...], b: tuple[int, ...]) -> None:
    model, feeds = node_model("MatMul", {"a": _x(*a), "b": _x(*b)}, 13)
    check(model, feeds, ("TEMPLATE", "XLA"), rtol=1e-5, atol=1e-5)


@given(
    trans_a=st.sampled_from([0, 1]),
    trans_b=st.sampled_from([0, 1]),
    alpha=st.sampled_from([1.0, 0.5]),
    beta=st.sampled_from([1.0, 0.0, 2.0]),
    c=st.sampled_from([None, (5,), (3, 5), (1, 1)]),
)
@FEW
def test_gemm_attributes_and_broadcast_c(
    trans_a: int, trans_b: int, alpha: float, beta: float, c: tuple[int, ...] | None
) -> None:
    a = _x(4, 3) if trans_a else _x(3, 4)
    b = _x(5, 4) if trans_b else _x(4, 5)
    inputs = {"a": a, "b": b, "c": None if c is None else _x(*c)}
    model, feeds = node_model("Gemm", inputs, 13, transA=trans_a, transB=trans_b, alpha=alpha, beta=beta)
    check(model, feeds, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("op_type", ["Softmax", "LogSoftmax"])
@pytest.mark.parametrize("axis", [None, 0, 1, 2, -1])
def test_softmax_before_13_normalizes_the_flattened_trailing_axes(op_type: str, axis: int | None) -> None:
    attrs = {} if axis is None else {"axis": axis}
    x = _x(2, 3, 4)
    model, feeds = node_model(op_type, {"x": x}, 11, **attrs)
    want = check(model, feeds, rtol=1e-5, atol=1e-6)
    start = (1 if axis is None else axis) % 3
    flat = x.reshape(int(np.prod(x.shape[:start])), -1)
    exp = np.exp(flat - flat.max(axis=1, keepdims=True))
    expected = (exp / exp.sum(axis=1, keepdims=True)).reshape(x.shape)
    np.testing.assert_allclose(want[0], expected if op_type == "Softmax" else np.log(expected), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("op_type", ["Softmax", "LogSoftmax"])
@pytest.mark.parametrize("axis", [None, 0, 1, -2])
def test_softmax_13_normalizes_one_axis(op_type: str, axis: int | None) -> None:
    model, feeds = node_model(op_type, {"x": _x(2, 3, 4)}, 13, **({} if axis is None else {"axis": axis}))
    check(model, feeds, ("TEMPLATE", "XLA"), rtol=1e-5, atol=1e-6)


def test_topk_1_reads_k_from_the_attribute_and_10_from_the_input() -> None:
    x = _x(3, 6)
    model, feeds = node_model("TopK", {"x": x}, 7, outputs=2, output_types=[F32, I64], k=3)
    check(model, feeds)
    model, feeds = node_model(
        "TopK", {"x": x, "k": np.array([2], I64)}, 10, outputs=2, output_types=[F32, I64], constants=["k"], axis=0
    )
    check(model, feeds, ("TEMPLATE", "XLA"))


@pytest.mark.parametrize("largest", [0, 1])
@pytest.mark.parametrize("axis", [0, -1])
def test_topk_11_largest_and_smallest_with_ties_by_index(largest: int, axis: int) -> None:
    x = np.array([[3, 1, 3, 2], [0, 0, 5, 5], [1, 2, 1, 2]], F32)
    model, feeds = node_model(
        "TopK",
        {"x": x, "k": np.array([2], I64)},
        11,
        outputs=2,
        output_types=[F32, I64],
        constants=["k"],
        axis=axis,
        largest=largest,
    )
    check(model, feeds)


@pytest.mark.parametrize("op_type", ["ArgMax", "ArgMin"])
@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("keepdims", [0, 1])
def test_arg_max_and_min(op_type: str, axis: int, keepdims: int) -> None:
    model, feeds = node_model(op_type, {"x": _x(3, 4, 5)}, 13, axis=axis, keepdims=keepdims)
    check(model, feeds, ("TEMPLATE", "XLA") if axis == 1 else ("TEMPLATE",))


@pytest.mark.parametrize("op_type", ["ArgMax", "ArgMin"])
@pytest.mark.parametrize(("axis", "keepdims"), [(0, 1), (-1, 0)])
def test_arg_max_and_min_select_the_last_of_equal_elements(op_type: str, axis: int, keepdims: int) -> None:
    x = np.array([[1, 3, 3, 0], [2, 2, 0, 0], [3, 1, 1, 3]], F32)  # ties along both axes
    model, feeds = node_model(op_type, {"x": x}, 13, axis=axis, keepdims=keepdims, select_last_index=1)
    check(model, feeds, ("TEMPLATE", "XLA"))


@pytest.mark.parametrize("center_point_box", [0, 1])
def test_non_max_suppression_selects_boxes_per_class(center_point_box: int) -> None:
    boxes = np.array(
        [[[0, 0, 1, 1], [0, 0.1, 1, 1.1], [0, -0.1, 1, 0.9], [0, 10, 1, 11], [0, 10.1, 1, 11.1], [0, 100, 1, 101]]], F32
    )
    scores = np.array([[[0.9, 0.75, 0.6, 0.95, 0.5, 0.3], [0.1, 0.2, 0.8, 0.4, 0.7, 0.6]]], F32)
    inputs = {
        "boxes": boxes,
        "scores": scores,
        "max": np.array([3], I64),
        "iou": np.array([0.5], F32),
        "score": np.array([0.25], F32),
    }
    model, feeds = node_model("NonMaxSuppression", inputs, 11, output_types=[I64], center_point_box=center_point_box)
    check(model, feeds)


# -- Hardmax, LpNormalization, LpPool ----------------------------------------------------------------


def _numpy_hardmax(x: np.ndarray, axis: int) -> np.ndarray:
    """1 at the first largest element along ``axis``."""
    first = np.expand_dims(np.argmax(x, axis=axis), axis)
    return (np.arange(x.shape[axis]).reshape([-1 if d == axis % x.ndim else 1 for d in range(x.ndim)]) == first).astype(
        x.dtype
    )


@pytest.mark.parametrize("axis", [0, 1, 2, -1])
def test_hardmax_13_is_one_hot_along_its_axis(axis: int) -> None:
    x = RNG.integers(0, 3, (2, 3, 4)).astype(F32)  # ties: the first largest wins
    model, feeds = node_model("Hardmax", {"x": x}, 13, axis=axis)
    check(model, feeds, ("TEMPLATE", "XLA"), expected=[_numpy_hardmax(x, axis)])


@pytest.mark.parametrize("axis", [0, 1, 2])
def test_hardmax_before_13_flattens_the_axes_from_axis_on(axis: int) -> None:
    x = RNG.integers(0, 5, (2, 3, 4)).astype(F32)
    flat = x.reshape(int(np.prod(x.shape[:axis])), -1)
    model, feeds = node_model("Hardmax", {"x": x}, 11, axis=axis)
    check(model, feeds, ("TEMPLATE", "XLA"), expected=[_numpy_hardmax(flat, 1).reshape(x.shape)])


@pytest.mark.parametrize(("p", "axis"), [(1, -1), (2, 1), (2, 0)])
def test_lp_normalization_divides_by_the_norm(p: int, axis: int) -> None:
    x = _x(2, 3, 4)
    want = x / np.linalg.norm(x, ord=p, axis=axis, keepdims=True) if p == 2 else x / np.abs(x).sum(axis, keepdims=True)
    model, feeds = node_model("LpNormalization", {"x": x}, 13, p=p, axis=axis)
    check(model, feeds, ("TEMPLATE", "XLA"), rtol=1e-5, expected=[want.astype(F32)])


def test_lp_normalization_of_a_zero_vector_is_zero() -> None:
    x = np.array([[0.0, 3.0], [0.0, 4.0]], F32)
    model, feeds = node_model("LpNormalization", {"x": x}, 13, p=2, axis=0)
    check(model, feeds, ("TEMPLATE", "XLA"), expected=[np.array([[0.0, 0.6], [0.0, 0.8]], F32)])


@pytest.mark.parametrize("p", [1, 2, 3])
def test_lp_pool_is_the_p_norm_of_each_window(p: int) -> None:
    x = _x(1, 2, 5, 5)
    padded = np.pad(x, [(0, 0), (0, 0), (1, 0), (1, 0)])
    windows = np.lib.stride_tricks.sliding_window_view(padded, (2, 2), axis=(2, 3))[:, :, ::2, ::2]
    want = (np.abs(windows.astype(np.float64)) ** p).sum(axis=(-2, -1)) ** (1 / p)
    model, feeds = node_model("LpPool", {"x": x}, 18, p=p, kernel_shape=[2, 2], strides=[2, 2], pads=[1, 1, 0, 0])
    check(model, feeds, ("TEMPLATE", "XLA"), rtol=1e-5, expected=[want.astype(F32)])


@pytest.mark.parametrize("p", [1, 2])
def test_dilated_lp_pool_takes_every_other_element(p: int) -> None:
    x = _x(1, 2, 6, 5)
    padded = np.pad(x.astype(np.float64), [(0, 0), (0, 0), (1, 0), (0, 1)])
    # a 2x2 kernel dilated by 2 covers a 3x3 span; stride 1
    spans = np.lib.stride_tricks.sliding_window_view(padded, (3, 3), axis=(2, 3))[..., ::2, ::2]
    want = (np.abs(spans) ** p).sum(axis=(-2, -1)) ** (1 / p)
    attrs = {"p": p, "kernel_shape": [2, 2], "dilations": [2, 2], "pads": [1, 0, 0, 1]}
    model, feeds = node_model("LpPool", {"x": x}, 18, **attrs)
    check(model, feeds, ("TEMPLATE", "XLA"), rtol=1e-5, expected=[want.astype(F32)])


def test_lrn_normalizes_across_channels() -> None:
    x = _x(2, 5, 3, 3)
    squares = np.pad(x.astype(np.float64) ** 2, [(0, 0), (1, 2), (0, 0), (0, 0)])  # size 4: 1 before, 2 after
    window = sum(squares[:, i : i + 5] for i in range(4))
    want = x / (2.0 + 0.001 / 4 * window) ** 0.5
    model, feeds = node_model("LRN", {"x": x}, 13, size=4, alpha=0.001, beta=0.5, bias=2.0)
    check(model, feeds, ("TEMPLATE", "XLA"), rtol=1e-5, expected=[want.astype(F32)])


@pytest.mark.parametrize("output_shape", [None, [1, 2, 5, 6]])
def test_max_unpool_writes_each_value_at_its_flat_index(output_shape: list[int] | None) -> None:
    x = _x(1, 2, 2, 2)
    indices = np.array([[[[0, 3], [9, 10]], [[17, 19], [24, 31]]]], np.int64)  # flat, in the 1x2x4x4 unpooled shape
    feeds = {"x": x, "i": indices} | ({} if output_shape is None else {"shape": np.array(output_shape, np.int64)})
    node = helper.make_node("MaxUnpool", list(feeds), ["y"], kernel_shape=[2, 2], strides=[2, 2])
    inputs = [value_info(k, v.dtype, v.shape) for k, v in feeds.items()]
    model = graph_model([node], inputs, [value_info("y", F32, output_shape or [1, 2, 4, 4])], 11)
    if output_shape is None:
        check(model, feeds, ("TEMPLATE", "XLA"))
        return
    # ONNX's reference (and its node test) reads the indices in the unpooled 1x2x4x4 shape and pads that
    # to output_shape; ONNX Runtime reads them in output_shape. The SDK follows the reference; XLA leaves
    # an output_shape known only at run time, which decides the output shape, to other devices.
    unpooled = np.zeros(32, F32)
    unpooled[indices.reshape(-1)] = x.reshape(-1)
    expected = np.pad(unpooled.reshape(1, 2, 4, 4), [(0, 0), (0, 0), (0, 1), (0, 2)])
    check(model, feeds, ("TEMPLATE",), expected=[expected])


@pytest.mark.parametrize("storage_order", [0, 1])
def test_max_pool_indices_in_row_or_column_major_order(storage_order: int) -> None:
    attributes = {"kernel_shape": [2, 2], "strides": [1, 2], "storage_order": storage_order}
    model, feeds = node_model(
        "MaxPool", {"x": _x(2, 3, 5, 4)}, 12, outputs=2, output_types=[F32, np.int64], **attributes
    )
    check(model, feeds, ("TEMPLATE", "XLA"))
