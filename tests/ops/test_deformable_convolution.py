"""DeformableConvolution (OpenVINO opset 8) computes what OpenVINO computes: shapes and values over
groups, deformable groups, masks, both bilinear_interpolation_pad modes, auto_pad, strides, dilations
and asymmetric pads, on the reference evaluator and on TEMPLATE and XLA; typed errors; and ONNX's
DeformConv, translated through it, computes what ONNX Runtime computes."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx_models import check, node_model
from ov_reference import run_openvino, run_ours

from hetero_sdk import opset
from hetero_sdk.errors import ModelValidationError

F32 = np.float32
AUTO_PADS = ("explicit", "same_upper", "same_lower", "valid")


def output_dims(x: np.ndarray, filters: np.ndarray, taps: int, attrs: dict[str, Any]) -> list[int]:
    """The output's spatial dims, as our shape inference gives them (OpenVINO checks them: the offsets
    and mask built with them must fit)."""
    offsets = opset.parameter([x.shape[0], 2 * taps, -1, -1], F32)
    node = opset.deformable_convolution(opset.parameter(x.shape, F32), offsets, filters, **attrs)
    return list(node.get_output_partial_shape(0).dims[2:])


@st.composite
def cases(draw: st.DrawFn) -> dict[str, Any]:
    """Arrays and attributes of one DeformableConvolution; offsets put samples past every edge."""
    rng = np.random.default_rng(draw(st.integers(0, 999)))
    group, deformable = draw(st.sampled_from([1, 2])), draw(st.sampled_from([1, 2]))
    kernel = [draw(st.integers(1, 3)), draw(st.integers(1, 2))]
    attrs = {
        "strides": [draw(st.integers(1, 2)) for _ in range(2)],
        "pads_begin": [draw(st.integers(0, 2)) for _ in range(2)],
        "pads_end": [draw(st.integers(0, 2)) for _ in range(2)],
        "dilations": [draw(st.integers(1, 2)) for _ in range(2)],
        "auto_pad": draw(st.sampled_from(AUTO_PADS)),
        "group": group,
        "deformable_group": deformable,
        "bilinear_interpolation_pad": draw(st.booleans()),
    }
    channels, size = 2 * group * deformable, [draw(st.integers(5, 6)), draw(st.integers(4, 6))]
    x = rng.standard_normal((2, channels, *size)).astype(F32)
    filters = rng.standard_normal((2 * group, channels // group, *kernel)).astype(F32)
    taps = deformable * kernel[0] * kernel[1]
    dims = output_dims(x, filters, taps, attrs)
    # quarter steps plus an eighth: no sample lands exactly on an edge, where the modes switch
    offsets = (rng.integers(-12, 12, (2, 2 * taps, *dims)) / 4 + 0.125).astype(F32)
    arrays = [x, offsets, filters]
    if draw(st.booleans()):
        arrays.append(rng.uniform(0, 1, (2, taps, *dims)).astype(F32))
    return {"arrays": arrays, "attrs": attrs}


def ours(case: dict[str, Any], device: str = "") -> np.ndarray:
    attrs = case["attrs"]
    return run_ours(lambda x, o, f, m=None: opset.deformable_convolution(x, o, f, mask=m, **attrs), case["arrays"],
                    device=device)  # fmt: skip


def theirs(case: dict[str, Any]) -> np.ndarray:
    ops = pytest.importorskip("openvino.opset8")
    attrs = dict(case["attrs"], auto_pad=case["attrs"]["auto_pad"].upper())
    return run_openvino(lambda x, o, f, m=None: ops.deformable_convolution(x, o, f, mask=m, **attrs), case["arrays"])


@settings(max_examples=60, deadline=None)
@given(case=cases())
def test_matches_openvino(case: dict[str, Any]) -> None:
    want = theirs(case)
    got = ours(case)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("device", ["TEMPLATE", "XLA"])
def test_matches_openvino_on_devices(device: str) -> None:
    if device == "XLA":
        pytest.importorskip("hetero_sdk_jax")
    for seed in range(4):
        case = _fixed(seed)
        np.testing.assert_allclose(ours(case, device), theirs(case), rtol=1e-4, atol=1e-4, err_msg=f"{seed}")


def _fixed(seed: int) -> dict[str, Any]:
    """A case per seed: both interpolation modes, with and without a mask, same_upper and explicit pads."""
    rng = np.random.default_rng(seed)
    pad, masked = bool(seed % 2), seed >= 2
    attrs = {
        "strides": [2, 2], "pads_begin": [1, 0], "pads_end": [0, 1], "dilations": [1, 2],
        "auto_pad": "same_upper" if seed == 3 else "explicit", "group": 2, "deformable_group": 2,
        "bilinear_interpolation_pad": pad,
    }  # fmt: skip
    x = rng.standard_normal((1, 4, 5, 9)).astype(F32)
    filters = rng.standard_normal((4, 2, 2, 3)).astype(F32)
    dims = output_dims(x, filters, 12, attrs)
    offsets = (rng.integers(-10, 10, (1, 24, *dims)) / 4 + 0.125).astype(F32)
    arrays = [x, offsets, filters] + ([rng.uniform(0, 1, (1, 12, *dims)).astype(F32)] if masked else [])
    return {"arrays": arrays, "attrs": attrs}


def test_zero_offsets_are_a_plain_convolution() -> None:
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((1, 2, 4, 5)).astype(F32), rng.standard_normal((3, 2, 2, 2)).astype(F32)
    got = run_ours(lambda a: opset.deformable_convolution(a, np.zeros((1, 8, 3, 4), F32), w, [1, 1], [0, 0],
                                                          [0, 0], [1, 1]), [x])  # fmt: skip
    windows = np.lib.stride_tricks.sliding_window_view(x, (2, 2), axis=(2, 3))  # [1, 2, 3, 4, 2, 2]
    np.testing.assert_allclose(got, np.einsum("ncijpq,ocpq->noij", windows, w), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    ("offsets", "mask", "match"),
    [([1, 6, 3, 3], None, "offsets has 6 channels"), ([1, 8, 2, 3], None, "offsets is"),
     ([1, 8, 3, 3], [1, 3, 3, 3], "mask is")],
)  # fmt: skip
def test_offsets_and_mask_that_do_not_fit_are_typed_errors(offsets: list[int], mask: Any, match: str) -> None:
    x, w = opset.parameter([1, 2, 4, 4], F32), opset.parameter([1, 2, 2, 2], F32)
    m = None if mask is None else opset.parameter(mask, F32)
    with pytest.raises(ModelValidationError, match=match):
        opset.deformable_convolution(x, opset.parameter(offsets, F32), w, [1, 1], [0, 0], [0, 0], [1, 1], mask=m)


def test_channels_that_do_not_split_into_groups_are_a_typed_error() -> None:
    x, w = opset.parameter([1, 3, 4, 4], F32), opset.parameter([2, 1, 2, 2], F32)
    with pytest.raises(ModelValidationError, match="groups"):
        opset.deformable_convolution(x, opset.parameter([1, 8, 3, 3], F32), w, [1, 1], [0, 0], [0, 0], [1, 1],
                                     group=2)  # fmt: skip


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 99), bias=st.booleans(), mask=st.booleans(), offset_group=st.sampled_from([1, 2]))
def test_onnx_deform_conv_matches_onnxruntime_on_template_and_xla(
    seed: int, bias: bool, mask: bool, offset_group: int
) -> None:
    rng = np.random.default_rng(seed)
    feeds = {
        "x": rng.standard_normal((1, 4, 5, 5)).astype(F32), "w": rng.standard_normal((2, 2, 2, 2)).astype(F32),
        "offset": rng.uniform(-1.5, 1.5, (1, offset_group * 8, 3, 5)).astype(F32),
        "b": rng.standard_normal(2).astype(F32) if bias else None,
        "mask": rng.uniform(0, 1, (1, offset_group * 4, 3, 5)).astype(F32) if mask else None,
    }  # fmt: skip
    model, given_feeds = node_model(
        "DeformConv", feeds, 19, group=2, offset_group=offset_group, kernel_shape=[2, 2], pads=[1, 0, 0, 1],
        strides=[2, 1],
    )  # fmt: skip
    check(model, given_feeds, ("TEMPLATE", "XLA"), rtol=1e-4, atol=1e-4)
