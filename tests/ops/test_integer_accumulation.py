"""Integer MatMul and Convolution wrap as their element type does: the reference, TEMPLATE (its convolution
routes and its fused MatMul + Add + Relu) and the graph they replace agree with exact products computed
here with Python integers, then wrapped to the element type."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hetero_sdk as hs
from hetero_sdk import opset
from hetero_sdk.reference import evaluate
from template_plugin import TemplatePlugin

INTEGERS = [np.int8, np.uint8, np.int16, np.int32, np.int64, np.uint64]


def wrapped(exact: np.ndarray, dtype: type) -> np.ndarray:
    """Python integers (an object array) reduced modulo 2**bits into ``dtype``, as hardware wraps them."""
    info = np.iinfo(dtype)
    span = 1 << info.bits
    low = int(info.min)
    return np.array([(int(v) - low) % span + low for v in exact.reshape(-1)], dtype).reshape(exact.shape)


def _values(rng: np.random.Generator, shape: tuple[int, ...], dtype: type) -> np.ndarray:
    info = np.iinfo(dtype)
    return rng.integers(int(info.min), int(info.max), shape, dtype=dtype, endpoint=True)


def _devices() -> dict:
    core = hs.Core(plugins={"TEMPLATE": TemplatePlugin()}, autoload=False)
    return {
        "reference": lambda model, inputs: evaluate(model, inputs),
        "TEMPLATE": lambda model, inputs: core.compile_model(model, "TEMPLATE")(inputs).to_tuple(),
    }


@settings(max_examples=25, deadline=None)
@given(dtype=st.sampled_from(INTEGERS), seed=st.integers(0, 2**16))
def test_integer_matmul_wraps_like_its_element_type(dtype, seed) -> None:
    rng = np.random.default_rng(seed)
    a, b = _values(rng, (3, 5), dtype), _values(rng, (5, 4), dtype)
    expected = wrapped(a.astype(object) @ b.astype(object), dtype)
    p = opset.parameter([3, 5], hs.Type.of(np.dtype(dtype)), name="a")
    model = hs.Model([opset.matmul(p, b)], [p])
    for device, run in _devices().items():
        np.testing.assert_array_equal(run(model, [a])[0], expected, err_msg=device)


@pytest.mark.parametrize("dtype", [np.int8, np.int32])
def test_a_fused_integer_matmul_bias_relu_wraps_before_the_relu(dtype) -> None:
    """TEMPLATE fuses MatMul + Add + Relu into one op: the product wraps to the element type before the Relu,
    as the three ops compute it (a product past the type's maximum turns negative and the Relu zeroes it)."""
    info = np.iinfo(dtype)
    a = np.full((2, 4), info.max // 3, dtype)
    b = np.ones((4, 3), dtype)
    bias = np.array([0, 1, 2], dtype)
    exact = a.astype(object) @ b.astype(object)
    expected = np.maximum(wrapped(wrapped(exact, dtype).astype(object) + bias.astype(object), dtype), 0)
    assert (expected == 0).any(), "the product must overflow into negative values"
    p = opset.parameter([2, 4], hs.Type.of(np.dtype(dtype)), name="a")
    model = hs.Model([opset.relu(opset.add(opset.matmul(p, b), bias))], [p])
    core = hs.Core(plugins={"TEMPLATE": TemplatePlugin()}, autoload=False)
    compiled = core.compile_model(model, "TEMPLATE")
    assert "TemplateFullyConnected" in [n.type_name for n in compiled.get_runtime_model().get_ops()]
    np.testing.assert_array_equal(compiled([a])[0], expected)
    np.testing.assert_array_equal(evaluate(model, [a])[0], expected)


def _exact_convolution(x: np.ndarray, w: np.ndarray, groups: int, stride: int, pad: int) -> np.ndarray:
    """A 2-D (group) convolution in Python integers: one sum of products per output element."""
    x = np.pad(x.astype(object), [(0, 0), (0, 0), (pad, pad), (pad, pad)])
    outs, per_group, kh, kw = w.shape
    rows, cols = (x.shape[2] - kh) // stride + 1, (x.shape[3] - kw) // stride + 1
    result = np.zeros((x.shape[0], outs, rows, cols), object)
    for n, o, i, j in np.ndindex(result.shape):
        first = o // (outs // groups) * per_group
        window = x[n, first : first + per_group, i * stride : i * stride + kh, j * stride : j * stride + kw]
        result[n, o, i, j] = sum(int(v) * int(f) for v, f in zip(window.reshape(-1), w[o].reshape(-1)))
    return result


@settings(max_examples=20, deadline=None)
@given(
    dtype=st.sampled_from(INTEGERS),
    kind=st.sampled_from(["dense", "wide", "depthwise"]),
    stride=st.integers(1, 2),
    seed=st.integers(0, 2**16),
)
def test_integer_convolution_wraps_like_its_element_type(dtype, kind, stride, seed) -> None:
    """Every TEMPLATE route (im2col, the taps' stacked GEMM for 16+ inputs, depthwise) and the reference."""
    rng = np.random.default_rng(seed)
    channels, groups = {"dense": (3, 1), "wide": (16, 1), "depthwise": (4, 4)}[kind]
    outs = 2 if kind != "depthwise" else 4
    x = _values(rng, (1, channels, 5, 6), dtype)
    w = _values(rng, (outs, channels // groups, 3, 3), dtype)
    expected = wrapped(_exact_convolution(x, w, groups, stride, 1), dtype)
    p = opset.parameter(list(x.shape), hs.Type.of(np.dtype(dtype)), name="x")
    if groups == 1:
        conv = opset.convolution(p, w, [stride, stride], [1, 1], [1, 1], [1, 1])
    else:
        conv = opset.group_convolution(p, w.reshape(groups, 1, 1, 3, 3), [stride, stride], [1, 1], [1, 1], [1, 1])
    model = hs.Model([conv], [p])
    for device, run in _devices().items():
        np.testing.assert_array_equal(run(model, [x])[0], expected, err_msg=device)
