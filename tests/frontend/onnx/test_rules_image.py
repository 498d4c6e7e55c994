"""The image rules (Resize, Upsample, GridSample, RoiAlign, Col2Im) compute what ONNX Runtime computes."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx.reference import ReferenceEvaluator
from onnx_models import check, node_model

F32, I64 = np.float32, np.int64
RNG = np.random.default_rng(11)


def _x(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(F32)


def test_resize_10_scales_nearest_and_linear() -> None:
    scales = np.array([1, 1, 2, 1.5], F32)
    for mode in ("nearest", "linear"):
        model, feeds = node_model(
            "Resize", {"x": _x(1, 2, 3, 4), "scales": scales}, 10, constants=["scales"], mode=mode
        )
        check(model, feeds, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    "scales", [[1, 1, 0.7, 1.7], [1, 1, 0.5, 0.4], [1, 1, 0.6, 2.5], [1, 2, 1.3, 0.8], [1, 1, 3, 0.34]]
)
def test_resize_10_nearest_rounds_up_when_downsampling_and_truncates_when_upsampling(scales: list[float]) -> None:
    x = np.arange(2 * 5 * 6, dtype=F32).reshape(1, 2, 5, 6)
    model, feeds = node_model("Resize", {"x": x, "scales": np.array(scales, F32)}, 10, constants=["scales"])
    want = check(model, feeds, ("TEMPLATE", "XLA"))
    if scales == [1, 1, 0.7, 1.7]:  # rows 0 / 0.7 = 0, 1 / 0.7 = 1.43 -> 2, 2.86 -> 3; columns j / 1.7 truncated
        rows, columns = np.array([0, 2, 3]), np.trunc(np.arange(10) / np.float32(1.7)).astype(int)
        np.testing.assert_array_equal(want[0], x[:, :, rows][:, :, :, columns])


@pytest.mark.parametrize("mode", ["nearest", "linear", "cubic"])
@pytest.mark.parametrize("transform", ["half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel"])
def test_resize_11_upsampling_by_scales(mode: str, transform: str) -> None:
    inputs = {"x": _x(1, 2, 4, 4), "roi": None, "scales": np.array([1, 1, 2, 1.5], F32)}
    model, feeds = node_model(
        "Resize", inputs, 13, constants=["scales"], mode=mode, coordinate_transformation_mode=transform
    )
    check(model, feeds, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("nearest_mode", ["round_prefer_floor", "round_prefer_ceil", "floor", "ceil"])
def test_resize_11_by_sizes_with_each_nearest_mode(nearest_mode: str) -> None:
    inputs = {"x": _x(1, 1, 4, 5), "roi": None, "scales": None, "sizes": np.array([1, 1, 7, 3], I64)}
    model, feeds = node_model("Resize", inputs, 13, constants=["sizes"], nearest_mode=nearest_mode)
    check(model, feeds, ("TEMPLATE", "XLA"))


def test_resize_11_with_an_empty_roi_and_scales_of_opset_11() -> None:
    inputs = {"x": _x(1, 1, 3, 3), "roi": np.array([], F32), "scales": np.array([1, 1, 2, 2], F32)}
    model, feeds = node_model("Resize", inputs, 11, constants=["roi", "scales"], mode="linear")
    check(model, feeds, rtol=1e-5, atol=1e-5)


def test_upsample_7_reads_scales_from_the_attribute_and_9_from_the_input() -> None:
    x = _x(1, 2, 2, 3)
    model, feeds = node_model("Upsample", {"x": x}, 7, scales=[1.0, 1.0, 2.0, 3.0])
    want = check(model, feeds)
    np.testing.assert_array_equal(want[0], x.repeat(2, axis=2).repeat(3, axis=3))
    model, feeds = node_model("Upsample", {"x": x, "s": np.array([1, 1, 2, 2], F32)}, 9, constants=["s"], mode="linear")
    check(model, feeds, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("mode", ["bilinear", "bicubic", "nearest"])
@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align", [0, 1])
def test_grid_sample_16_each_mode_padding_and_alignment(mode: str, padding: str, align: int) -> None:
    inputs = {"x": _x(2, 3, 4, 5), "g": RNG.uniform(-1.3, 1.3, (2, 3, 6, 2)).astype(F32)}
    model, feeds = node_model("GridSample", inputs, 16, mode=mode, padding_mode=padding, align_corners=align)
    check(model, feeds, ("TEMPLATE", "XLA"), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("mode", ["linear", "nearest"])
def test_grid_sample_20_samples_volumes_with_the_new_mode_names(mode: str) -> None:
    inputs = {"x": _x(1, 2, 3, 4, 5), "g": RNG.uniform(-1.1, 1.1, (1, 2, 3, 4, 3)).astype(F32)}
    model, feeds = node_model("GridSample", inputs, 20, mode=mode, padding_mode="border")
    check(model, feeds, ("TEMPLATE", "XLA"), rtol=1e-4, atol=1e-5)


def test_grid_sample_with_an_unknown_mode_is_a_typed_error() -> None:
    import hetero_sdk as hs
    from hetero_sdk.errors import HeteroSDKError

    model, _ = node_model("GridSample", {"x": _x(1, 1, 2, 2), "g": _x(1, 1, 1, 2)}, 20, mode="area")
    with pytest.raises(HeteroSDKError, match="mode must be linear, cubic or nearest"):
        hs.Core().read_model(model.SerializeToString())


@pytest.mark.parametrize("mode", ["linear", "cubic"])
@pytest.mark.parametrize("by", ["scales", "sizes"])
def test_resize_19_antialias_downsampling(mode: str, by: str) -> None:
    values = np.array([1, 1, 0.6, 0.45], F32) if by == "scales" else np.array([1, 2, 3, 2], I64)
    inputs = {"x": _x(1, 2, 5, 6), "roi": None, "scales": values if by == "scales" else None}
    if by == "sizes":
        inputs["sizes"] = values
    model, feeds = node_model("Resize", inputs, 19, constants=["scales", "sizes"], mode=mode, antialias=1)
    check(model, feeds, ("TEMPLATE", "XLA"), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("mode", ["nearest", "linear", "cubic"])
@pytest.mark.parametrize("transform", ["align_corners", "half_pixel_symmetric", "pytorch_half_pixel"])
def test_resize_19_coordinates_against_the_real_resized_length(mode: str, transform: str) -> None:
    inputs = {"x": _x(1, 1, 4, 5), "roi": None, "scales": np.array([1, 1, 0.6, 1.7], F32)}
    attrs = {"mode": mode, "coordinate_transformation_mode": transform}
    if transform == "pytorch_half_pixel":  # only routed to the ONNX op with a filter option
        attrs["exclude_outside"] = int(mode == "cubic")
    model, feeds = node_model("Resize", inputs, 19, constants=["scales"], **attrs)
    # ONNX Runtime measures align_corners against the floored length; ONNX (spec, node tests) does not
    expected = ReferenceEvaluator(model).run(None, feeds) if transform == "align_corners" else None
    check(model, feeds, ("TEMPLATE", "XLA"), rtol=1e-4, atol=1e-5, expected=expected)


@pytest.mark.parametrize("policy", ["not_larger", "not_smaller"])
def test_resize_19_keep_aspect_ratio_policy_with_axes(policy: str) -> None:
    inputs = {"x": _x(1, 2, 4, 6), "roi": None, "scales": None, "sizes": np.array([5, 7], I64)}
    model, feeds = node_model(
        "Resize", inputs, 19, constants=["sizes"], axes=[3, 2], keep_aspect_ratio_policy=policy, mode="linear"
    )
    check(model, feeds, ("TEMPLATE", "XLA"), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("mode", ["nearest", "linear", "cubic"])
def test_resize_19_tf_crop_and_resize_extrapolates(mode: str) -> None:
    roi = np.array([0, 0, -0.15, 0.27, 1, 1, 0.9, 1.33], F32)
    inputs = {"x": _x(1, 1, 4, 5), "roi": roi, "scales": None, "sizes": np.array([1, 1, 3, 4], I64)}
    model, feeds = node_model(
        "Resize", inputs, 19, constants=["roi", "sizes"], mode=mode,
        coordinate_transformation_mode="tf_crop_and_resize", extrapolation_value=5.0,
    )  # fmt: skip
    check(model, feeds, ("TEMPLATE", "XLA"), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("opset", [11, 13, 19])
@pytest.mark.parametrize("mode", ["nearest", "linear", "cubic"])
def test_resize_tf_crop_and_resize_by_scales_gives_length_times_scale(opset: int, mode: str) -> None:
    """With scales the output is floor(length * scale) (5 * 1.6 = 8, 6 * 0.7 = 4.2 -> 4) as ONNX Runtime
    and ONNX's shape inference make it, not floor(length * crop * scale)."""
    roi = np.array([0, 0, 0.1, 0.2, 1, 1, 0.9, 0.8], F32)
    inputs = {"x": _x(1, 2, 5, 6), "roi": roi, "scales": np.array([1, 1, 1.6, 0.7], F32)}
    model, feeds = node_model(
        "Resize", inputs, opset, constants=["roi", "scales"], mode=mode,
        coordinate_transformation_mode="tf_crop_and_resize",
    )  # fmt: skip
    inferred = [d.dim_value for d in model.graph.output[0].type.tensor_type.shape.dim]
    want = check(model, feeds, ("TEMPLATE", "XLA"), rtol=1e-4, atol=1e-5)
    assert want[0].shape == tuple(inferred) == (1, 2, 8, 4)


def test_resize_19_cubic_exclude_outside_with_another_coefficient() -> None:
    inputs = {"x": _x(1, 1, 4, 4), "roi": None, "scales": np.array([1, 1, 0.8, 1.5], F32)}
    model, feeds = node_model("Resize", inputs, 19, constants=["scales"], mode="cubic", cubic_coeff_a=-0.5,
                              exclude_outside=1)  # fmt: skip
    check(model, feeds, ("TEMPLATE", "XLA"), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("mode", ["avg", "max"])
@pytest.mark.parametrize(("opset", "transform"), [(10, None), (16, "half_pixel"), (16, "output_half_pixel")])
def test_roi_align(mode: str, opset: int, transform: str | None) -> None:
    rois = np.array([[0.5, 1.0, 4.0, 3.5], [2.0, 0.0, 6.5, 5.0], [1.0, 1.0, 1.5, 2.0]], F32)
    inputs = {"x": _x(2, 3, 6, 7), "rois": rois, "b": np.array([1, 0, 1], I64)}
    attrs = {"mode": mode, "output_height": 2, "output_width": 3, "sampling_ratio": 2, "spatial_scale": 0.9}
    if transform:
        attrs["coordinate_transformation_mode"] = transform
    model, feeds = node_model("RoiAlign", inputs, opset, **attrs)
    check(model, feeds, ("TEMPLATE", "XLA"), rtol=1e-4, atol=1e-5)


def test_roi_align_with_adaptive_sampling_runs_on_template_and_is_declined_by_xla() -> None:
    import hetero_sdk as hs

    rois = np.array([[0.5, 1.0, 4.0, 3.5], [2.0, 0.0, 6.5, 5.0]], F32)
    model, feeds = node_model("RoiAlign", {"x": _x(1, 2, 6, 7), "rois": rois, "b": np.array([0, 0], I64)}, 16)
    check(model, feeds, ("TEMPLATE",), rtol=1e-4, atol=1e-5)
    supported = hs.Core().query_model(hs.convert_model(model), "XLA")
    assert not any("RoiAlign" in name for name in supported)


@settings(max_examples=12, deadline=None)
@given(data=st.data(), rank=st.integers(1, 3), constant=st.booleans())
def test_col2im_of_each_rank_on_template_and_xla(data: st.DataObject, rank: int, constant: bool) -> None:
    """2-D as OpenVINO's Col2Im, other ranks as one Col2Im per axis; image and block shapes given as
    constants or at run time. The expectation: ONNX Runtime for 2-D, ONNX's reference evaluator otherwise
    (ONNX Runtime misplaces 1-D blocks past the first channel)."""
    block = [data.draw(st.integers(1, 3)) for _ in range(rank)]
    dil, strides = (
        [data.draw(st.integers(1, 2)) for _ in range(rank)],
        [data.draw(st.integers(1, 2)) for _ in range(rank)],
    )
    pads = [data.draw(st.integers(0, 1)) for _ in range(2 * rank)]
    image = [data.draw(st.integers(d * (k - 1) + 1, 5)) for d, k in zip(dil, block)]
    counts = [(i + pads[a] + pads[rank + a] - (d * (k - 1) + 1)) // s + 1
              for a, (i, k, d, s) in enumerate(zip(image, block, dil, strides))]  # fmt: skip
    inputs = {"x": _x(2, 3 * int(np.prod(block)), int(np.prod(counts)))}
    inputs |= {"image": np.array(image, I64), "block": np.array(block, I64)}
    attrs = {"strides": strides, "pads": pads, "dilations": dil}
    model, feeds = node_model("Col2Im", inputs, 18, constants=["image", "block"] if constant else [], **attrs)
    expected = None if rank == 2 else ReferenceEvaluator(model).run(None, feeds)
    check(model, feeds, ("TEMPLATE", "XLA"), rtol=1e-5, atol=1e-5, expected=expected)
