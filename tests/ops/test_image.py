"""Interpolate: shape inference, and the reference kernel against ONNX Runtime, jax and the spec's formulas."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import hetero_sdk as hs
from hetero_sdk import opset
from hetero_sdk.errors import ModelValidationError
from hetero_sdk.reference import evaluate

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

FAST = settings(max_examples=40, deadline=None)
TRANSFORMS = ["half_pixel", "pytorch_half_pixel", "asymmetric", "tf_half_pixel_for_nn", "align_corners"]
ROUNDINGS = ["round_prefer_floor", "round_prefer_ceil", "floor", "ceil"]


def resize(x: np.ndarray, values: Any, mode: str, calculation: str, axes: Any = (2, 3), **attrs: Any) -> np.ndarray:
    """Runs one Interpolate node on ``x`` with the reference kernels."""
    image = opset.parameter(x.shape, x.dtype, name="image")
    node = opset.interpolate(image, values, mode, calculation, axes=np.array(axes, np.int64), **attrs)
    (out,) = evaluate(hs.Model([node], [image]), [x])
    assert node.get_output_partial_shape(0).compatible(out.shape)
    return out


def onnx_resize(x: np.ndarray, values: np.ndarray, calculation: str, mode: str, **attrs: Any) -> np.ndarray:
    """ONNX Runtime's Resize-13 on a 4-D float32 tensor, resizing axes 2 and 3."""
    from onnx import TensorProto, helper

    if calculation == "sizes":
        full, kind, inputs = (
            np.concatenate([x.shape[:2], values]).astype(np.int64),
            TensorProto.INT64,
            ["x", "", "", "v"],
        )
    else:
        full, kind, inputs = np.concatenate([[1, 1], values]).astype(np.float32), TensorProto.FLOAT, ["x", "", "v"]
    node = helper.make_node("Resize", inputs, ["y"], mode=mode, **attrs)
    graph = helper.make_graph(
        [node],
        "resize",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x.shape))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [helper.make_tensor("v", kind, [4], full.tolist())],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, {"x": x})[0]


@st.composite
def resize_cases(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray, str]:
    height, width = draw(st.integers(1, 7)), draw(st.integers(1, 7))
    seed = draw(st.integers(0, 2**32 - 1))
    x = np.random.default_rng(seed).standard_normal((2, 2, height, width)).astype(np.float32)
    calculation = draw(st.sampled_from(["sizes", "scales"]))
    if calculation == "sizes":
        values = np.array([draw(st.integers(1, 11)), draw(st.integers(1, 11))], np.int64)
    else:
        scale = st.sampled_from([0.5, 0.6, 0.75, 1.0, 1.25, 1.5, 2.0, 3.0])
        values = np.array([draw(scale), draw(scale)], np.float32)
        # ONNX Runtime resamples an axis whose length a scale floors back to the same length, OpenVINO copies it
        assume(all(s == 1 or math.floor(s * n) != n for s, n in zip(values, (height, width))))
    return x, values, calculation


def near_a_rounding_tie(x: np.ndarray, values: np.ndarray, calculation: str, transform: str, rounding: str) -> bool:
    """True when a source coordinate is within float32 error of where ``rounding`` changes its pick.

    OpenVINO divides by the float32 scale, ONNX Runtime does not always, so such ties may go either way.
    """
    edge = 0.5 if rounding.startswith("round") else 0.0
    for n, v in zip(x.shape[2:], values.tolist()):
        out = int(v) if calculation == "sizes" else math.floor(v * n)
        scale = out / n if calculation == "sizes" else v
        for o in range(out if out != n else 0):
            source = {
                "half_pixel": (o + 0.5) / scale - 0.5,
                "pytorch_half_pixel": (o + 0.5) / scale - 0.5 if out > 1 else 0.0,
                "asymmetric": o / scale,
                "tf_half_pixel_for_nn": (o + 0.5) / scale,
                "align_corners": o * (n - 1) / (out - 1) if out > 1 else 0.0,
            }[transform]
            if abs(source - edge - round(source - edge)) < 1e-4:
                return True
    return False


@FAST
@given(resize_cases(), st.sampled_from(TRANSFORMS), st.sampled_from(ROUNDINGS))
def test_nearest_matches_onnx_runtime(case: tuple[np.ndarray, np.ndarray, str], transform: str, rounding: str) -> None:
    x, values, calculation = case
    assume(not near_a_rounding_tie(x, values, calculation, transform, rounding))
    want = onnx_resize(
        x, values, calculation, "nearest", coordinate_transformation_mode=transform, nearest_mode=rounding
    )
    got = resize(x, values, "nearest", calculation, coordinate_transformation_mode=transform, nearest_mode=rounding)
    np.testing.assert_array_equal(got, want)


@FAST
@given(resize_cases(), st.sampled_from(TRANSFORMS))
def test_linear_onnx_matches_onnx_runtime_linear(case: tuple[np.ndarray, np.ndarray, str], transform: str) -> None:
    x, values, calculation = case
    want = onnx_resize(x, values, calculation, "linear", coordinate_transformation_mode=transform)
    got = resize(x, values, "linear_onnx", calculation, coordinate_transformation_mode=transform)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@FAST
@given(resize_cases(), st.sampled_from(TRANSFORMS), st.sampled_from([-0.75, -0.5]))
def test_cubic_matches_onnx_runtime(case: tuple[np.ndarray, np.ndarray, str], transform: str, a: float) -> None:
    x, values, calculation = case
    want = onnx_resize(x, values, calculation, "cubic", coordinate_transformation_mode=transform, cubic_coeff_a=a)
    got = resize(x, values, "cubic", calculation, coordinate_transformation_mode=transform, cube_coeff=a)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_axes_map_to_values_in_order_and_may_be_any_subset() -> None:
    x = np.random.default_rng(0).standard_normal((2, 3, 4, 5)).astype(np.float32)
    want = onnx_resize(x, np.array([7, 3]), "sizes", "linear")
    np.testing.assert_allclose(resize(x, [3, 7], "linear_onnx", "sizes", axes=[3, 2]), want, rtol=1e-5, atol=1e-6)
    moved = np.moveaxis(x, 1, 3)  # resize axis 1 of a 4-D tensor: the same as resizing it in the last place
    want = np.moveaxis(onnx_resize(moved, np.array([5, 6]), "sizes", "cubic"), 3, 1)
    got = resize(x, [6], "cubic", "sizes", axes=[1])
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_simple_nearest_rounds_up_when_downsampling_and_truncates_otherwise() -> None:
    x = np.arange(4, dtype=np.float32).reshape(1, 1, 1, 4)
    down = resize(
        x, [2], "nearest", "sizes", axes=[3], coordinate_transformation_mode="asymmetric", nearest_mode="simple"
    )
    np.testing.assert_array_equal(down.ravel(), [0, 2])  # source 0, 2
    x = np.array([[[[10, 20]]]], np.float32)
    up = resize(
        x, [5], "nearest", "sizes", axes=[3], coordinate_transformation_mode="asymmetric", nearest_mode="simple"
    )
    np.testing.assert_array_equal(up.ravel(), [10, 10, 10, 20, 20])  # source 0, 0.4, 0.8, 1.2, 1.6
    up = resize(
        x, [3], "nearest", "sizes", axes=[3], coordinate_transformation_mode="align_corners", nearest_mode="ceil"
    )
    np.testing.assert_array_equal(up.ravel(), [10, 20, 20])  # source 0, 0.5, 1


def spec_linear(
    x: np.ndarray, out_shape: list[int], scales: list[float], axes: list[int], antialias: bool
) -> np.ndarray:
    """Interpolate's ``linear`` mode as the spec writes it: one weighted sum over a window per output element."""
    a = [s if antialias and min(scales) < 1 else 1.0 for s in scales]
    r = [2 if s > 1 else math.ceil(2 / ai) for s, ai in zip(scales, a)]
    out = np.zeros(out_shape)
    for coords in np.ndindex(*out_shape):
        source = [(coords[axis] + 0.5) / s - 0.5 for axis, s in zip(axes, scales)]  # half_pixel
        total, weight = 0.0, 0.0
        for offsets in np.ndindex(*[2 * ri + 1 for ri in r]):
            inner = list(coords)
            for i, axis in enumerate(axes):
                inner[axis] = int(np.sign(source[i]) * math.floor(abs(source[i]) + 0.5)) + offsets[i] - r[i]
            if not all(0 <= inner[axis] < x.shape[axis] for axis in axes):
                continue
            w = math.prod(ai * max(0.0, 1 - abs(ai * (src - inner[ax]))) for ai, src, ax in zip(a, source, axes))
            total, weight = total + w * x[tuple(inner)], weight + w
        out[coords] = total / weight if weight else 0.0
    return out


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 6), st.integers(1, 6), st.integers(1, 8), st.integers(1, 8), st.booleans(), st.integers(0, 99))
def test_linear_follows_the_spec_formula(h: int, w: int, out_h: int, out_w: int, antialias: bool, seed: int) -> None:
    assume(h != out_h and w != out_w)
    x = np.random.default_rng(seed).standard_normal((1, 2, h, w)).astype(np.float32)
    got = resize(x, [out_h, out_w], "linear", "sizes", antialias=antialias)
    scales = [float(np.float32(out_h) / np.float32(h)), float(np.float32(out_w) / np.float32(w))]
    want = spec_linear(x.astype(np.float64), [1, 2, out_h, out_w], scales, [2, 3], antialias)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    ("h", "w", "out_h", "out_w"), [(4, 6, 2, 3), (3, 5, 7, 11), (9, 2, 4, 5), (1, 7, 3, 2), (8, 8, 3, 5)]
)
def test_pillow_modes_match_jax_antialiased_resize(h: int, w: int, out_h: int, out_w: int) -> None:
    jax_image = pytest.importorskip("jax.image")
    x = np.random.default_rng(h * w).standard_normal((1, 2, h, w)).astype(np.float32)
    for mode, method, a in (("bilinear_pillow", "linear", -0.75), ("bicubic_pillow", "cubic", -0.5)):
        want = np.asarray(jax_image.resize(x, (1, 2, out_h, out_w), method, antialias=True))
        got = resize(x, [out_h, out_w], mode, "sizes", cube_coeff=a)
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_bilinear_pillow_halving_averages_three_taps() -> None:
    x = np.array([[[[1.0, 2.0, 4.0, 8.0]]]], np.float32)
    got = resize(x, [2], "bilinear_pillow", "sizes", axes=[3])
    np.testing.assert_allclose(got.ravel(), [(3 * 1 + 3 * 2 + 4) / 7, (2 + 3 * 4 + 3 * 8) / 7], rtol=1e-6)


def test_padding_happens_before_resizing() -> None:
    x = np.arange(6, dtype=np.float32).reshape(1, 1, 2, 3)
    got = resize(x, [4, 5], "nearest", "sizes", pads_begin=[0, 0, 1, 1], pads_end=[0, 0, 1, 1])
    np.testing.assert_array_equal(got, np.pad(x, [(0, 0), (0, 0), (1, 1), (1, 1)]))
    got = resize(
        x, [1.0, 2.0], "nearest", "scales", pads_begin=[0, 0, 0, 1], coordinate_transformation_mode="asymmetric"
    )
    np.testing.assert_array_equal(got, np.repeat(np.pad(x, [(0, 0), (0, 0), (0, 0), (1, 0)]), 2, axis=3))


def test_integer_images_round_to_nearest_and_saturate() -> None:
    x = np.array([[[[0, 10, 255], [3, 4, 7]]]], np.uint8)
    want = onnx_resize(x.astype(np.float32), np.array([3, 5]), "sizes", "cubic")
    got = resize(x, [3, 5], "cubic", "sizes")
    assert got.dtype == np.uint8
    np.testing.assert_array_equal(got, np.clip(np.floor(want + 0.5), 0, 255))


def test_output_shapes() -> None:
    image = opset.parameter([1, 3, 30, 10], hs.Type.f32, name="image")
    axes = np.array([2, 3])
    assert opset.interpolate(image, [0.1, 0.7], "linear", "scales", axes=axes).get_output_partial_shape(0) == [
        1,
        3,
        3,
        7,
    ]
    padded = opset.interpolate(image, np.array([5, 6]), "nearest", "sizes", pads_begin=[1], pads_end=[0, 2], axes=axes)
    assert padded.get_output_partial_shape(0) == [2, 5, 5, 6]
    every_axis = opset.interpolate(image, [1.0, 1.0, 2.0, 0.5], "cubic", "scales")
    assert every_axis.get_output_partial_shape(0) == [1, 3, 60, 5]
    sizes = opset.parameter([2], hs.Type.i64, name="sizes")
    assert opset.interpolate(image, sizes, "nearest", "sizes", axes=axes).get_output_partial_shape(0) == [1, 3, -1, -1]
    unknown_axes = opset.parameter([2], hs.Type.i32, name="axes")
    node = opset.interpolate(image, np.array([5, 6]), "nearest", "sizes", axes=unknown_axes)
    assert node.get_output_partial_shape(0) == [-1, -1, -1, -1]
    dynamic = opset.parameter([1, 3, -1, 8], hs.Type.f16)
    assert opset.interpolate(dynamic, [2.0, 2.0], "nearest", "scales", axes=axes).get_output_partial_shape(0) == [
        1,
        3,
        -1,
        16,
    ]


@pytest.mark.parametrize(
    ("values", "kwargs", "message"),
    [
        (np.array([2, 2]), {"mode": "area"}, "attribute mode='area'"),
        (np.array([2, 2]), {"shape_calculation_mode": "size"}, "shape_calculation_mode"),
        (np.array([2, 2]), {"coordinate_transformation_mode": "tf_crop_and_resize"}, "coordinate_transformation_mode"),
        (np.array([2, 2]), {"nearest_mode": "round"}, "nearest_mode"),
        (
            np.array([2.0, 2.0], np.float32),
            {},
            r"scales_or_sizes \(shape_calculation_mode='sizes'\) has element type f32",
        ),
        (np.array([2, 2]), {"shape_calculation_mode": "scales"}, "scales_or_sizes .* has element type i64"),
        (np.array([2, 2, 2]), {}, "3 values but 2 axes"),
        (np.array([[2, 2]]), {}, "scales_or_sizes has rank 2"),
        (np.array([2, 2]), {"axes": np.array([2, 4])}, r"axes \[2, 4\] must be distinct"),
        (np.array([2, 2]), {"axes": np.array([3, 3])}, r"axes \[3, 3\] must be distinct"),
        (np.array([2, -2]), {}, "must be non-negative"),
        (np.array([2, 2]), {"pads_begin": [0, 0, -1]}, "pads_begin"),
        (np.array([2, 2, 2]), {"mode": "bilinear_pillow", "axes": np.array([1, 2, 3])}, "at most 2"),
    ],
)
def test_interpolate_rejects_malformed_nodes(values: np.ndarray, kwargs: dict[str, Any], message: str) -> None:
    image = opset.parameter([1, 3, 4, 4], hs.Type.f32)
    args = {"mode": "nearest", "shape_calculation_mode": "sizes", "axes": np.array([2, 3]), **kwargs}
    with pytest.raises(ModelValidationError, match=rf"Interpolate 'bad'.*{message}"):
        opset.interpolate(image, values, name="bad", **args)


def test_interpolate_rejects_boolean_images() -> None:
    with pytest.raises(ModelValidationError, match=r"Interpolate 'bad'.*image has element type boolean"):
        opset.interpolate(opset.parameter([1, 1, 2, 2], hs.Type.boolean), np.array([4, 4]), "nearest", "sizes",
                          axes=np.array([2, 3]), name="bad")  # fmt: skip
