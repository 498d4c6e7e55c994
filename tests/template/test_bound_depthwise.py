"""TEMPLATE's wide depthwise TemplateConvolution bound to its constant filters (geometry kept per input
shape) against a direct depthwise convolution written here in numpy."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from nan_workspace import NanWorkspace

import hetero_sdk as hs
from hetero_sdk import opset
from template_plugin.bound_depthwise import GEOMETRIES_KEPT, bind_depthwise
from template_plugin.fused_conv import fused_convolution

TYPES = {np.float32: hs.Type.f32, np.float64: hs.Type.f64}
ACTIVATIONS = {
    "none": lambda y: y,
    "relu": lambda y: np.maximum(y, 0),
    "hswish": lambda y: y * np.clip(y + 3, 0, 6) / 6,
}


def _pads(auto_pad, sizes, kernel, strides, dilations, begin, end):
    if auto_pad == "explicit":
        return list(begin), list(end)
    if auto_pad == "valid":
        return [0, 0], [0, 0]
    total = [
        max(0, (-(-n // s) - 1) * s + (k - 1) * d + 1 - n) for n, k, s, d in zip(sizes, kernel, strides, dilations)
    ]
    small, large = [t // 2 for t in total], [t - t // 2 for t in total]
    return (small, large) if auto_pad == "same_upper" else (large, small)


def _direct(x, w, strides, dilations, begin, end):
    """Every output pixel as the sum over taps of the filter value times the padded input, in float64."""
    padded = np.pad(x.astype(np.float64), [(0, 0), (0, 0), (begin[0], end[0]), (begin[1], end[1])])
    kh, kw = w.shape[-2:]
    rows = (padded.shape[2] - (kh - 1) * dilations[0] - 1) // strides[0] + 1
    cols = (padded.shape[3] - (kw - 1) * dilations[1] - 1) // strides[1] + 1
    out = np.zeros((x.shape[0], x.shape[1], rows, cols))
    for i in range(kh):
        for j in range(kw):
            r, c = i * dilations[0], j * dilations[1]
            window = padded[:, :, r : r + (rows - 1) * strides[0] + 1 : strides[0], c : c + (cols - 1) * strides[1] + 1]
            out += window * w[:, 0, 0, i, j].astype(np.float64)[None, :, None, None]
    return out


LAYER = st.fixed_dictionaries(
    {
        "kernel": st.tuples(st.integers(1, 5), st.integers(4, 6)),
        "stride": st.integers(1, 2),
        "dilations": st.tuples(st.integers(1, 2), st.integers(1, 2)),
        "begin": st.tuples(st.integers(0, 3), st.integers(0, 3)),
        "end": st.tuples(st.integers(0, 3), st.integers(0, 3)),
        "auto_pad": st.sampled_from(["explicit", "explicit", "valid", "same_upper", "same_lower"]),
        "activation": st.sampled_from(sorted(ACTIVATIONS)),
    }
)


@settings(max_examples=40, deadline=None)
@given(
    layers=st.lists(LAYER, min_size=1, max_size=2),
    batch=st.integers(1, 2),
    channels=st.integers(2, 7),
    sizes=st.tuples(st.integers(1, 9), st.integers(1, 14)),
    dtype=st.sampled_from([np.float32, np.float64]),
    seed=st.integers(0, 2**16),
)
def test_a_wide_depthwise_convolution_computes_the_direct_sum(layers, batch, channels, sizes, dtype, seed) -> None:
    """Kernel sizes (the rows 1-5, the columns 4-6), strides along the rows, dilations, pads (explicit,
    valid, same) and activations; two layers read the same input (they share the padded temporary);
    twice on one request."""
    rng = np.random.default_rng(seed)
    shape = (batch, channels, *sizes)
    x = opset.parameter(list(shape), TYPES[dtype], name="x")
    expected_of, results = [], []
    for index, layer in enumerate(layers):
        kernel, dilations = layer["kernel"], layer["dilations"]
        strides = (layer["stride"], 1)
        begin, end = _pads(layer["auto_pad"], sizes, kernel, strides, dilations, layer["begin"], layer["end"])
        if any((k - 1) * d + 1 > n + p + q for k, d, n, p, q in zip(kernel, dilations, sizes, begin, end)):
            layer = {**layer, "auto_pad": "same_upper"}  # the window would not fit: pad it to fit
            begin, end = _pads("same_upper", sizes, kernel, strides, dilations, begin, end)
        w = rng.standard_normal((channels, 1, 1, *kernel)).astype(dtype)
        bias = rng.standard_normal((1, channels, 1, 1)).astype(dtype)
        conv = opset.group_convolution(x, w, list(strides), list(layer["begin"]), list(layer["end"]),
                                       list(dilations), layer["auto_pad"], name=f"conv{index}")  # fmt: skip
        node = fused_convolution(conv, bias, layer["activation"], f"fused{index}")
        kernel_of = bind_depthwise(node, w)
        assert kernel_of is not None
        activation = ACTIVATIONS[layer["activation"]]
        expected_of.append(lambda v, w=w, b=bias, s=strides, d=dilations, p=(begin, end), a=activation:
                           np.maximum(a(_direct(v, w, s, d, *p) + b), 0))  # fmt: skip
        results.append(opset.relu(node))  # an op after it: its result is an intermediate
        direct = np.maximum(
            kernel_of(node, NanWorkspace(), value := rng.standard_normal(shape).astype(dtype), w, bias), 0
        )
        np.testing.assert_allclose(
            direct,
            expected_of[-1](value),
            rtol=1e-4 if dtype == np.float32 else 1e-10,
            atol=1e-4 if dtype == np.float32 else 1e-10,
        )
    request = hs.Core().compile_model(hs.Model(results, [x]), "TEMPLATE").create_infer_request()
    tolerance = 1e-4 if dtype == np.float32 else 1e-10
    for _ in range(2):
        value = rng.standard_normal(shape).astype(dtype)
        outputs = request.infer([value])
        for index, expected in enumerate(expected_of):
            got = np.asarray(outputs[index])
            assert got.dtype == dtype
            np.testing.assert_allclose(got, expected(value), rtol=tolerance, atol=tolerance)


def test_only_wide_float_depthwise_filters_with_a_last_stride_of_one_are_bound() -> None:
    x = opset.parameter([1, 4, 8, 8], name="x")

    def node(w, strides=(1, 1)):
        conv = opset.group_convolution(x, w, list(strides), [2, 2], [2, 2], [1, 1])
        return fused_convolution(conv, np.zeros((1, w.shape[0] * w.shape[1], 1, 1), w.dtype))

    wide = np.ones((4, 1, 1, 5, 5), np.float32)
    assert bind_depthwise(node(wide), wide) is not None
    assert bind_depthwise(node(wide), None) is None  # filters computed at run time
    assert bind_depthwise(node(wide, (1, 2)), wide) is None  # strided along the rows
    narrow = np.ones((4, 1, 1, 3, 3), np.float32)
    assert bind_depthwise(node(narrow), narrow) is None
    grouped = np.ones((2, 1, 2, 5, 5), np.float32)
    assert bind_depthwise(node(grouped), grouped) is None  # two input channels per group


def test_a_bound_kernel_keeps_the_geometries_of_the_last_input_shapes_only() -> None:
    """Fed more input shapes than it keeps, the kernel stays bounded and still computes each shape right,
    an evicted shape too when it comes back."""
    rng = np.random.default_rng(7)
    w = rng.standard_normal((3, 1, 1, 3, 5)).astype(np.float32)
    bias = rng.standard_normal((1, 3, 1, 1)).astype(np.float32)
    x = opset.parameter([1, 3, -1, -1], name="x")
    node = fused_convolution(opset.group_convolution(x, w, [1, 1], [1, 2], [1, 2], [1, 1]), bias)
    kernel = bind_depthwise(node, w)
    shapes = [(1, 3, 2 + i % 5, 6 + i) for i in range(GEOMETRIES_KEPT + 4)]
    for shape in [*shapes, shapes[0]]:
        value = rng.standard_normal(shape).astype(np.float32)
        got = kernel(node, NanWorkspace(), value, w, bias)
        expected = _direct(value, w, (1, 1), (1, 1), (1, 2), (1, 2)) + bias
        np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)
    assert kernel.geometries.cache_info().currsize == GEOMETRIES_KEPT
