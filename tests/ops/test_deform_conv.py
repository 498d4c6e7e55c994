"""DeformConv: shape inference, typed errors, zero offsets as a plain convolution, and the kernel against
a per-output-element loop written here (bilinear samples, masks, groups, offset groups) and against
onnx.reference (an oracle); on TEMPLATE and, through the ONNX rule, XLA."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import helper
from onnx.reference import ReferenceEvaluator

import hetero_sdk as hs
from hetero_sdk import opset
from hetero_sdk.errors import ModelValidationError
from hetero_sdk.reference import evaluate

F32 = np.float32


def run(*arrays: np.ndarray | None, **attrs: object) -> np.ndarray:
    names = ["x", "w", "offsets", "bias", "mask"]
    params = [None if a is None else opset.parameter(a.shape, a.dtype, name=n) for a, n in zip(arrays, names)]
    node = opset.deform_conv(*params, **attrs)  # type: ignore[arg-type]
    given = [(p, a) for p, a in zip(params, arrays) if p is not None]
    (out,) = evaluate(hs.Model([node], [p for p, _ in given]), [a for _, a in given])
    assert node.get_output_partial_shape(0) == list(out.shape)
    return out


def bilinear(image: np.ndarray, y: float, x: float) -> float:
    total = 0.0
    y0, x0 = int(np.floor(y)), int(np.floor(x))
    for yy, wy in ((y0, y0 + 1 - y), (y0 + 1, y - y0)):
        for xx, wx in ((x0, x0 + 1 - x), (x0 + 1, x - x0)):
            if 0 <= yy < image.shape[0] and 0 <= xx < image.shape[1]:
                total += wy * wx * float(image[yy, xx])
    return total


def loop(x, w, off, mask, strides, pads, dil, group, offset_group) -> np.ndarray:  # type: ignore[no-untyped-def]
    n, c, _, _ = x.shape
    oc, cg, kh, kw = w.shape
    oh, ow = off.shape[2:]
    out = np.zeros((n, oc, oh, ow))
    for b, o, i, j in np.ndindex(n, oc, oh, ow):
        g = o // (oc // group)
        for ci in range(cg):
            channel = g * cg + ci
            og = channel // (c // offset_group)
            for p, q in np.ndindex(kh, kw):
                k = p * kw + q
                dy = off[b, og * kh * kw * 2 + 2 * k, i, j]
                dx = off[b, og * kh * kw * 2 + 2 * k + 1, i, j]
                y = i * strides[0] - pads[0] + p * dil[0] + dy
                xx = j * strides[1] - pads[1] + q * dil[1] + dx
                m = 1.0 if mask is None else mask[b, og * kh * kw + k, i, j]
                out[b, o, i, j] += w[o, ci, p, q] * m * bilinear(x[b, channel], y, xx)
    return out


def test_zero_offsets_are_a_plain_convolution() -> None:
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((1, 2, 4, 5)).astype(F32), rng.standard_normal((3, 2, 2, 2)).astype(F32)
    got = run(x, w, np.zeros((1, 8, 3, 4), F32))
    windows = np.lib.stride_tricks.sliding_window_view(x, (2, 2), axis=(2, 3))  # [1, 2, 3, 4, 2, 2]
    np.testing.assert_allclose(got, np.einsum("ncijpq,ocpq->noij", windows, w), rtol=1e-5, atol=1e-5)


def test_offsets_with_the_wrong_channel_count_are_a_typed_error() -> None:
    x, w = opset.parameter([1, 2, 4, 4], F32), opset.parameter([1, 2, 2, 2], F32)
    with pytest.raises(ModelValidationError, match="offset groups of a 2x2 kernel"):
        opset.deform_conv(x, w, opset.parameter([1, 6, 3, 3], F32))


@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_matches_a_per_element_loop(data: st.DataObject) -> None:
    rng = np.random.default_rng(data.draw(st.integers(0, 999)))
    group, offset_group = data.draw(st.sampled_from([1, 2])), data.draw(st.sampled_from([1, 2]))
    kh, kw = data.draw(st.integers(1, 3)), data.draw(st.integers(1, 2))
    strides = [data.draw(st.integers(1, 2)) for _ in range(2)]
    dil = [data.draw(st.integers(1, 2)) for _ in range(2)]
    pads = [data.draw(st.integers(0, 1)) for _ in range(4)]
    x = rng.standard_normal((2, 4, 5, 6)).astype(F32)
    w = rng.standard_normal((2 * group, 4 // group, kh, kw)).astype(F32)
    oh = (5 + pads[0] + pads[2] - dil[0] * (kh - 1) - 1) // strides[0] + 1
    ow = (6 + pads[1] + pads[3] - dil[1] * (kw - 1) - 1) // strides[1] + 1
    off = rng.uniform(-2, 2, (2, offset_group * kh * kw * 2, oh, ow)).astype(F32)
    mask = rng.uniform(0, 1, (2, offset_group * kh * kw, oh, ow)).astype(F32) if data.draw(st.booleans()) else None
    attrs = {"strides": strides, "pads": pads, "dilations": dil, "group": group, "offset_group": offset_group}
    got = run(x, w, off, None, mask, **attrs)
    want = loop(x, w, off, mask, strides, pads, dil, group, offset_group)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_onnx_rule_matches_onnx_reference_on_template_and_xla() -> None:
    rng = np.random.default_rng(3)
    feeds = {
        "x": rng.standard_normal((1, 4, 5, 5)).astype(F32), "w": rng.standard_normal((2, 2, 2, 2)).astype(F32),
        "offset": rng.uniform(-1.5, 1.5, (1, 16, 4, 4)).astype(F32), "b": rng.standard_normal(2).astype(F32),
        "mask": rng.uniform(0, 1, (1, 8, 4, 4)).astype(F32),
    }  # fmt: skip
    node = helper.make_node("DeformConv", list(feeds), ["y"], group=2, offset_group=2, kernel_shape=[2, 2])
    inputs = [helper.make_tensor_value_info(k, 1, v.shape) for k, v in feeds.items()]
    graph = helper.make_graph([node], "g", inputs, [helper.make_tensor_value_info("y", 1, [1, 2, 4, 4])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)], ir_version=8)
    (want,) = ReferenceEvaluator(model).run(None, feeds)
    for device in ("TEMPLATE", "XLA"):
        (got,) = hs.Core().compile_model(hs.convert_model(model), device)(feeds).to_tuple()
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-4, atol=1e-4, err_msg=device)
