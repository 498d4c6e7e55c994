"""ROIAlign: shape inference, typed errors, a closed form, and the reference kernel against ONNX Runtime's
RoiAlign (an oracle) over modes, alignments and sampling ratios, adaptive included."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hetero_sdk as hs
from hetero_sdk import opset
from hetero_sdk.errors import ModelValidationError
from hetero_sdk.reference import evaluate

ort = pytest.importorskip("onnxruntime")

F32 = np.float32


def run(x: np.ndarray, rois: np.ndarray, batch: np.ndarray, *args: object, **attrs: object) -> np.ndarray:
    data = opset.parameter(x.shape, x.dtype, name="x")
    boxes = opset.parameter(rois.shape, rois.dtype, name="rois")
    node = opset.roi_align(data, boxes, opset.constant(batch), *args, **attrs)  # type: ignore[arg-type]
    (out,) = evaluate(hs.Model([node], [data, boxes]), [x, rois])
    return out


def onnx_runtime(x: np.ndarray, rois: np.ndarray, batch: np.ndarray, **attrs: object) -> np.ndarray:
    from onnx import helper

    node = helper.make_node("RoiAlign", ["x", "rois", "b"], ["y"], **attrs)
    inputs = [helper.make_tensor_value_info(n, t, None) for n, t in (("x", 1), ("rois", 1), ("b", 7))]
    graph = helper.make_graph([node], "g", inputs, [helper.make_tensor_value_info("y", 1, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 16)], ir_version=8)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, {"x": x, "rois": rois, "b": batch})[0]


def test_output_is_regions_channels_and_bins() -> None:
    node = opset.roi_align(
        opset.parameter([2, 3, 8, 8], F32), opset.parameter([5, 4], F32), opset.parameter([5], np.int64), 2, 4, 2, 1.0
    )
    assert node.get_output_partial_shape(0) == [5, 3, 2, 4]


def test_mismatched_region_counts_are_a_typed_error() -> None:
    with pytest.raises(ModelValidationError, match="regions in rois and batch_indices"):
        opset.roi_align(
            opset.parameter([1, 1, 4, 4], F32),
            opset.parameter([3, 4], F32),
            opset.parameter([2], np.int64),
            1,
            1,
            1,
            1.0,
        )


def test_a_bin_of_a_linear_ramp_averages_to_its_center_value() -> None:
    # x[h, w] = w: bilinear samples of a ramp average to the ramp at the bin's center
    x = np.tile(np.arange(8, dtype=F32), (8, 1)).reshape(1, 1, 8, 8)
    rois = np.array([[1.0, 1.0, 5.0, 5.0]], F32)
    got = run(x, rois, np.array([0]), 2, 2, 2, 1.0, aligned_mode="half_pixel")
    # bins cover x in [0.5, 2.5] and [2.5, 4.5] after the half-pixel shift: centers 1.5 and 3.5
    np.testing.assert_allclose(got[0, 0], [[1.5, 3.5], [1.5, 3.5]], rtol=1e-6)


@settings(max_examples=40, deadline=None)
@given(
    mode=st.sampled_from(["avg", "max"]),
    transform=st.sampled_from(["half_pixel", "output_half_pixel"]),
    ratio=st.integers(0, 3),
    seed=st.integers(0, 1000),
)
def test_matches_onnx_runtime(mode: str, transform: str, ratio: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((2, 3, 7, 6)).astype(F32)
    corners = rng.uniform(-2, 6, (4, 2))
    rois = np.concatenate([corners, corners + rng.uniform(0, 5, (4, 2))], axis=1).astype(F32)
    batch = rng.integers(0, 2, 4)
    aligned = "half_pixel" if transform == "half_pixel" else "asymmetric"
    got = run(x, rois, batch, 3, 2, ratio, 0.8, mode=mode, aligned_mode=aligned)
    want = onnx_runtime(x, rois, batch, mode=mode, output_height=3, output_width=2, sampling_ratio=ratio,
                        spatial_scale=0.8, coordinate_transformation_mode=transform)  # fmt: skip
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
