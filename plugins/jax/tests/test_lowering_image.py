"""Interpolate on XLA matches the reference in every mode, coordinate transformation and rounding."""

from __future__ import annotations

import numpy as np
from hetero_sdk import opset
from hypothesis import given
from hypothesis import strategies as st
from xla_helpers import OPS, build, check_against_reference, floats, ints, many_ops, param, run_xla, single_op

MODES = ["nearest", "linear", "linear_onnx", "cubic", "bilinear_pillow", "bicubic_pillow"]
COORDINATES = ["half_pixel", "pytorch_half_pixel", "asymmetric", "tf_half_pixel_for_nn", "align_corners"]
ROUNDING = ["round_prefer_floor", "round_prefer_ceil", "floor", "ceil", "simple"]


@OPS
@given(data=st.data(), mode=st.sampled_from(MODES), calculation=st.sampled_from(["sizes", "scales"]))
def test_interpolate(data: st.DataObject, mode: str, calculation: str) -> None:
    shape = (1, data.draw(st.integers(1, 2)), data.draw(st.integers(1, 6)), data.draw(st.integers(1, 6)))
    dtype = data.draw(st.sampled_from([np.float32, np.uint8]))
    x = data.draw(floats(shape, dtype, -5, 5) if dtype == np.float32 else ints(shape, dtype))
    axes = [2, 3]
    pads_begin = [0, 0, data.draw(st.integers(0, 1)), 0]
    pads_end = [0, 0, 0, data.draw(st.integers(0, 1))]
    if calculation == "sizes":
        values = np.array([data.draw(st.integers(1, 9)) for _ in axes], np.int64)
    else:
        values = np.array([data.draw(st.sampled_from([0.5, 0.75, 1.0, 1.5, 2.0, 2.5])) for _ in axes], np.float32)
    px = param(x)
    nodes = [
        build(
            opset.interpolate,
            px,
            values,
            mode,
            calculation,
            pads_begin=pads_begin,
            pads_end=pads_end,
            coordinate_transformation_mode=coordinates,
            nearest_mode=data.draw(st.sampled_from(ROUNDING)),
            antialias=data.draw(st.booleans()),
            cube_coeff=data.draw(st.sampled_from([-0.75, -0.5])),
            axes=np.array(axes, np.int64),
            name=f"resize_{coordinates}",
        )
        for coordinates in (COORDINATES if "pillow" not in mode else COORDINATES[:1])
    ]
    # Integer images are resampled in f32 (the reference: f64): a value within float error of a half
    # may round to the other integer.
    check_against_reference(many_ops(nodes, [px]), [x], rtol=1e-5, atol=1e-4, int_atol=1)


def test_nearest_upsampling_closed_form() -> None:
    x = np.array([[[[1, 2], [3, 4]]]], np.float32)
    px = param(x)
    sizes, axes = np.array([4, 4], np.int64), np.array([2, 3], np.int64)
    node = opset.interpolate(
        px, sizes, "nearest", "sizes", coordinate_transformation_mode="asymmetric", nearest_mode="floor", axes=axes
    )
    expected = np.repeat(np.repeat(x, 2, axis=2), 2, axis=3)
    np.testing.assert_array_equal(run_xla(single_op(node, [px]), [x])[0], expected)


def test_align_corners_linear_closed_form() -> None:
    x = np.array([[0.0, 3.0]], np.float32)
    px = param(x)
    sizes, axes = np.array([4], np.int64), np.array([1], np.int64)
    node = opset.interpolate(
        px, sizes, "linear_onnx", "sizes", coordinate_transformation_mode="align_corners", axes=axes
    )
    np.testing.assert_allclose(run_xla(single_op(node, [px]), [x])[0], [[0.0, 1.0, 2.0, 3.0]], atol=1e-6)


@OPS
@given(
    data=st.data(),
    mode=st.sampled_from(["bilinear", "bicubic", "nearest"]),
    padding=st.sampled_from(["zeros", "border", "reflection"]),
)
def test_grid_sample(data: st.DataObject, mode: str, padding: str) -> None:
    volume = mode != "bicubic" and data.draw(st.booleans())
    spatial = (2, 3, 4) if volume else (3, 4)
    x = data.draw(floats((1, 2, *spatial), np.float32, -5, 5))
    grid = data.draw(floats((1, 2, 3, *((2,) if volume else ()), len(spatial)), np.float32, -1.5, 1.5))
    px, pg = param(x), param(grid, "g")
    node = opset.grid_sample(px, pg, mode, padding, data.draw(st.booleans()))
    check_against_reference(single_op(node, [px, pg]), [x, grid], rtol=1e-4, atol=1e-4)


@OPS
@given(
    data=st.data(),
    mode=st.sampled_from(["nearest", "linear", "cubic"]),
    transform=st.sampled_from(["half_pixel_symmetric", "align_corners", "tf_crop_and_resize"]),
)
def test_resize(data: st.DataObject, mode: str, transform: str) -> None:
    x = data.draw(floats((1, 2, data.draw(st.integers(2, 5)), data.draw(st.integers(2, 6))), np.float32, -5, 5))
    crop = transform == "tf_crop_and_resize"
    by = "sizes" if crop else data.draw(st.sampled_from(["sizes", "scales"]))
    if by == "sizes":
        values = np.array([data.draw(st.integers(1, 7)) for _ in range(2)], np.int64)
    else:
        values = np.array([data.draw(st.sampled_from([0.45, 0.6, 1.0, 1.7, 2.5])) for _ in range(2)], np.float32)
    roi = np.array([-0.15, 0.27, 0.9, 1.33], np.float32) if crop else None
    px = param(x)
    node = opset.resize(
        px, values, roi, shape_calculation_mode=by, axes=[2, 3], mode=mode, coordinate_transformation_mode=transform,
        antialias=data.draw(st.booleans()), exclude_outside=data.draw(st.booleans()), extrapolation_value=3.0,
    )  # fmt: skip
    check_against_reference(single_op(node, [px]), [x], rtol=1e-4, atol=1e-4)
