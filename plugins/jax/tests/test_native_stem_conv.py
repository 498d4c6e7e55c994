"""The native stem kernel (``hetero_sdk_stem_conv``, native/src/stem_conv.cc): a convolution of a channels-first
image with few channels, channels-last out, its bias and activation fused, against a convolution written in numpy
here (shapes, kernels 1-7, strides 1-3, pads, channel counts, activations, NaN kept by ReLU); the Convolution and
fused-convolution lowerings taking it for few-channel images, with native kernels on and off; and a blob calling it."""

from __future__ import annotations

import json
from typing import Any

import jax
import numpy as np
import pytest
from hetero_sdk import opset
from hetero_sdk.plugin import unpack_blob
from hypothesis import assume, given
from hypothesis import strategies as st
from test_native_conv2d import _numpy_conv
from xla_helpers import OPS, activated, core, param, single_op

from hetero_sdk_jax import native
from hetero_sdk_jax.lowering.kernels.stem_conv import MAX_CHANNELS, TARGET, faster_natively, native_stem_conv

pytestmark = pytest.mark.skipif(not native.available(TARGET), reason="no C++ compiler with AVX-512 here")


def _expected(
    x: np.ndarray, w: np.ndarray, bias: np.ndarray, strides: Any, pads: Any, activation: str
) -> tuple[np.ndarray, np.ndarray]:
    """``activation(conv + bias)`` of ``x`` ``[N, C, H, W]`` by ``w`` ``[KH, KW, C, O]`` in f64, channels-last, and
    the sum of the terms' magnitudes (f32 sums are exact to a few ulps of it)."""
    last = np.moveaxis(x, 1, -1)
    total = _numpy_conv(last, w, strides, pads) + bias.astype(np.float64)
    size = _numpy_conv(np.abs(last), np.abs(w), strides, pads) + np.abs(bias.astype(np.float64))
    return activated(total, activation), size


@OPS
@given(data=st.data())
def test_kernel_matches_numpy(data: st.DataObject) -> None:
    kh, kw = data.draw(st.integers(1, 7)), data.draw(st.integers(1, 7))
    strides = (data.draw(st.integers(1, 3)), data.draw(st.integers(1, 3)))
    pads = [(data.draw(st.integers(0, 3)), data.draw(st.integers(0, 3))) for _ in range(2)]
    n, c = data.draw(st.integers(1, 2)), data.draw(st.integers(1, MAX_CHANNELS))
    h, w_ = data.draw(st.integers(1, 12)), data.draw(st.integers(1, 70))
    assume(h + sum(pads[0]) >= kh and w_ + sum(pads[1]) >= kw)
    cout = data.draw(st.sampled_from([1, 5, 8, 16, 17, 24, 32, 33, 48, 64]))
    activation = data.draw(st.sampled_from(["none", "relu", "silu", "hswish"]))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    x = rng.standard_normal((n, c, h, w_)).astype(np.float32)
    w = rng.standard_normal((kh, kw, c, cout)).astype(np.float32)
    bias = rng.standard_normal(cout).astype(np.float32)
    got = np.asarray(jax.jit(lambda x, w, b: native_stem_conv(x, w, strides, pads, b, activation))(x, w, bias))
    expected, size = _expected(x, w, bias, strides, pads, activation)
    assert got.shape == expected.shape
    error = np.abs(got - expected)
    assert np.all(error <= 2e-6 * size + 1e-6), f"error {error.max():.3g} where the terms sum to {size.max():.3g}"


@pytest.mark.parametrize(
    ("channels", "outputs", "size", "kernel", "stride", "pad"),
    [(3, 16, 320, 3, 2, 1), (3, 24, 416, 6, 2, 2)],  # YOLOv8n's stem; YOLOX's after the Focus rewrite
)
def test_the_yolo_stems_match_numpy(channels: int, outputs: int, size: int, kernel: int, stride: int, pad: int) -> None:
    rng = np.random.default_rng(size)
    x = rng.uniform(0, 1, (1, channels, size, size)).astype(np.float32)
    w = (rng.standard_normal((kernel, kernel, channels, outputs)) / kernel).astype(np.float32)
    bias = rng.standard_normal(outputs).astype(np.float32)
    strides, pads = (stride, stride), [(pad, pad), (pad, pad)]
    got = np.asarray(jax.jit(lambda x, w, b: native_stem_conv(x, w, strides, pads, b, "silu"))(x, w, bias))
    expected, size_ = _expected(x, w, bias, strides, pads, "silu")
    assert np.all(np.abs(got - expected) <= 2e-6 * size_ + 1e-6)


def test_relu_keeps_a_nan_and_silu_of_large_sums_is_finite() -> None:
    x = np.ones((1, 3, 4, 20), np.float32)
    x[0, 1, 2, 7] = np.nan
    w = np.full((1, 1, 3, 16), -1.0, np.float32)
    bias = np.zeros(16, np.float32)
    got = np.asarray(jax.jit(lambda x, w, b: native_stem_conv(x, w, (1, 1), [(0, 0), (0, 0)], b, "relu"))(x, w, bias))
    assert np.all(np.isnan(got[0, 2, 7])) and np.isnan(got).sum() == 16
    assert np.all(got[~np.isnan(got)] == 0)
    big = np.full((1, 1, 2, 16), 1e4, np.float32)
    w1 = np.array([1.0, -1.0] * 4, np.float32).reshape(1, 1, 1, 8)
    silu = jax.jit(lambda x, w, b: native_stem_conv(x, w, (1, 1), [(0, 0), (0, 0)], b, "silu"))
    out = np.asarray(silu(big, w1, np.zeros(8, np.float32)))
    np.testing.assert_array_equal(out[..., 0::2], 1e4)
    assert np.all(np.abs(out[..., 1::2]) <= 1e-30)


def test_the_rule() -> None:
    assert faster_natively(3, 24, (6, 6), (2, 2)) and faster_natively(4, 8, (5, 5), (1, 1))
    assert not faster_natively(3, 16, (3, 3), (2, 2))  # 27 channel-taps: the few-channel loop
    assert not faster_natively(MAX_CHANNELS + 1, 16, (7, 7), (1, 1))
    assert not faster_natively(3, 16, (9, 9), (1, 1)) and not faster_natively(3, 16, (5, 5), (3, 3))


def _layer(x: np.ndarray, w: np.ndarray, bias: np.ndarray | None, stride: int, pad: int, activation: str) -> Any:
    """``x`` by ``w`` ``[O, C, K, K]``, then ``+ bias`` when given and ``activation`` (SiLU as exporters write it)."""
    px = param(x)
    y = opset.convolution(px, w, [stride, stride], [pad, pad], [pad, pad], [1, 1])
    if bias is not None:
        y = opset.add(y, opset.constant(bias.reshape(1, -1, 1, 1)))
    if activation == "silu":
        y = opset.multiply(y, opset.sigmoid(y))
    elif activation == "hswish":
        y = opset.hswish(y)
    elif activation == "relu":
        y = opset.relu(y)
    return single_op(y, [px])


@pytest.mark.parametrize(
    ("channels", "outputs", "kernel", "stride", "pad", "activation", "native_route"),
    [
        (3, 24, 6, 2, 2, "silu", True),  # YOLOX's stem, after the Focus rewrite
        (3, 8, 5, 2, 2, "hswish", True),
        (1, 33, 9, 1, 4, "relu", False),  # 81 channel-taps, but a 9x9 kernel: XLA's convolution
        (2, 33, 7, 1, 3, "relu", True),
        (4, 8, 5, 1, 2, "", True),  # a plain Convolution of 100 channel-taps (else XLA's convolution)
        (3, 16, 3, 2, 1, "silu", False),  # YOLOv8n's stem, 27 channel-taps: the few-channel loop
    ],
)
def test_the_lowerings_take_it_and_match_numpy_with_native_kernels_on_and_off(
    channels: int, outputs: int, kernel: int, stride: int, pad: int, activation: str, native_route: bool
) -> None:
    rng = np.random.default_rng(channels * 100 + outputs)
    x = rng.standard_normal((2, channels, 23, 37)).astype(np.float32)
    w = (rng.standard_normal((outputs, channels, kernel, kernel)) / kernel).astype(np.float32)
    bias = rng.standard_normal(outputs).astype(np.float32) if activation else None
    hwio = np.transpose(w, (2, 3, 1, 0))
    pads = [(pad, pad), (pad, pad)]
    shift = np.zeros(outputs) if bias is None else bias
    expected, _ = _expected(x, hwio, shift, (stride, stride), pads, activation or "none")
    for on in (True, False):
        model = _layer(x, w, bias, stride, pad, activation)
        compiled: Any = core().compile_model(model, "XLA", {"XLA_NATIVE_KERNELS": on})
        got = np.moveaxis(np.asarray(compiled([x])[0]), 1, -1)
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)
        assert (TARGET in compiled.jax_executable([list(x.shape)]).as_text()) is (on and native_route)


def test_a_model_exported_with_the_kernel_lists_it_and_runs_the_same_imported() -> None:
    rng = np.random.default_rng(9)
    x = rng.standard_normal((1, 3, 30, 30)).astype(np.float32)
    w = rng.standard_normal((24, 3, 6, 6)).astype(np.float32)
    bias = rng.standard_normal(24).astype(np.float32)
    compiled: Any = core().compile_model(_layer(x, w, bias, 2, 2, "silu"), "XLA", {"XLA_NATIVE_KERNELS": True})
    blob = compiled.export_model()
    assert TARGET in json.loads(unpack_blob(blob, "XLA")["header"])["native_kernels"]
    imported = np.asarray(core().import_model(blob, "XLA")([x]).to_tuple()[0])
    np.testing.assert_array_equal(imported, np.asarray(compiled([x])[0]))
