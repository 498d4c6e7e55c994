"""The native direct-convolution kernel (``hetero_sdk_conv2d``, native/src/conv2d.cc) against a convolution
written in numpy here: channel counts that are not multiples of 16, kernels 1-5, strides 1-2, asymmetric
pads; the filter blocked once at compile time (its layout, the kernel reading it in place, the lowering's
prepare hook, a blob round trip, the paths that put it back for XLA's convolution); and the Convolution
lowering with native kernels on and off."""

from __future__ import annotations

import json
from typing import Any

import hetero_sdk as hs
import jax
import numpy as np
import pytest
from hetero_sdk import opset
from hetero_sdk.plugin import unpack_blob
from hypothesis import assume, given
from hypothesis import strategies as st
from xla_helpers import OPS, core, param, single_op

from hetero_sdk_jax import native
from hetero_sdk_jax.lowering import weights_of
from hetero_sdk_jax.lowering.kernels.conv2d import (
    FUSED_TARGET,
    TARGET,
    blocked_filter,
    faster_natively,
    native_conv2d,
    prepare,
    unblocked_filter,
)  # fmt: skip
from hetero_sdk_jax.native import native_scope

pytestmark = pytest.mark.skipif(
    not (native.available(TARGET) and native.available(FUSED_TARGET)), reason="no C++ compiler with AVX-512 here"
)


def _numpy_conv(x: np.ndarray, w: np.ndarray, strides: tuple[int, int], pads: list[tuple[int, int]]) -> np.ndarray:
    """``x`` ``[N, H, W, C]`` by ``w`` ``[kh, kw, C, O]`` in f64, one product per tap, ``[N, OH, OW, O]``."""
    padded = np.pad(x.astype(np.float64), [(0, 0), *pads, (0, 0)])
    kh, kw = w.shape[:2]
    oh = (padded.shape[1] - kh) // strides[0] + 1
    ow = (padded.shape[2] - kw) // strides[1] + 1
    total = np.zeros((x.shape[0], oh, ow, w.shape[3]))
    for i in range(kh):
        for j in range(kw):
            window = padded[
                :, i : i + (oh - 1) * strides[0] + 1 : strides[0], j : j + (ow - 1) * strides[1] + 1 : strides[1]
            ]
            total += window @ w[i, j].astype(np.float64)
    return total


def _assert_silu_matches(
    x: np.ndarray, w: np.ndarray, bias: np.ndarray, strides: tuple[int, int], pads: list[tuple[int, int]]
) -> None:
    """The fused kernel (blocked filter, ``bias``, SiLU) against numpy's convolution of ``x`` by ``w`` ``[kh, kw,
    C, O]``, within a bound scaled by the sum of the terms' magnitudes."""
    cout = w.shape[-1]
    run = jax.jit(lambda x, b, c: native_conv2d(x, b, strides, pads, cout, c, "silu"))
    got = np.asarray(run(x, blocked_filter(np.transpose(w, (3, 2, 0, 1))), bias), np.float64)
    biased = _numpy_conv(x, w, strides, pads) + bias
    size = _numpy_conv(np.abs(x), np.abs(w), strides, pads) + np.abs(bias)
    assert got.shape == biased.shape
    error = np.abs(got - biased / (1 + np.exp(-biased)))
    assert np.all(error <= 2e-6 * size + 1e-6), f"error {error.max():.3g} where the terms sum to {size.max():.3g}"


def _assert_matches(
    got: Any, x: np.ndarray, w: np.ndarray, strides: tuple[int, int], pads: list[tuple[int, int]]
) -> None:
    expected = _numpy_conv(x, w, strides, pads)
    size = _numpy_conv(np.abs(x), np.abs(w), strides, pads)  # f32 sums are exact to a few ulps of this
    got = np.asarray(got, np.float64)
    assert got.shape == expected.shape
    error = np.abs(got - expected)
    assert np.all(error <= 1e-6 * size + 1e-6), f"error {error.max():.3g} where the terms sum to {size.max():.3g}"


@OPS
@given(data=st.data())
def test_kernel_matches_numpy(data: st.DataObject) -> None:
    kh, kw = data.draw(st.integers(1, 5)), data.draw(st.integers(1, 5))
    strides = (data.draw(st.integers(1, 2)), data.draw(st.integers(1, 2)))
    pads = [(data.draw(st.integers(0, 2)), data.draw(st.integers(0, 2))) for _ in range(2)]
    n, h, w_ = data.draw(st.integers(1, 2)), data.draw(st.integers(1, 9)), data.draw(st.integers(1, 40))
    assume(h + sum(pads[0]) >= kh and w_ + sum(pads[1]) >= kw)
    cin = data.draw(st.sampled_from([1, 3, 16, 17, 40]))
    cout = data.draw(st.sampled_from([1, 5, 16, 24, 33, 40, 48, 70, 112]))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    x = rng.standard_normal((n, h, w_, cin)).astype(np.float32)
    w = rng.standard_normal((kh, kw, cin, cout)).astype(np.float32)
    got = jax.jit(lambda x, w: native_conv2d(x, w, strides, pads))(x, w)
    _assert_matches(got, x, w, strides, pads)


def test_kernel_with_a_filter_larger_than_its_l2_group_matches_numpy() -> None:
    """Output channels split into groups whose filter columns fit in L2 (here 3 groups of 96)."""
    rng = np.random.default_rng(1)
    x = rng.standard_normal((1, 5, 7, 300)).astype(np.float32)
    w = rng.standard_normal((3, 3, 300, 250)).astype(np.float32)
    got = jax.jit(lambda x, w: native_conv2d(x, w, (2, 1), [(1, 0), (0, 2)]))(x, w)
    _assert_matches(got, x, w, (2, 1), [(1, 0), (0, 2)])


def test_the_measured_class() -> None:
    assert faster_natively(16, 16, 3, 3, (1, 1)) and faster_natively(96, 96, 3, 3, (2, 2))
    assert faster_natively(16, 32, 3, 3, (2, 2)) and faster_natively(32, 32, 3, 3, (1, 1))
    assert faster_natively(24, 48, 3, 3, (2, 2)) and faster_natively(64, 64, 3, 3, (1, 1))
    assert faster_natively(8, 16, 3, 3, (1, 1))  # few outputs at stride 1
    assert not faster_natively(12, 24, 3, 3, (1, 1)) and not faster_natively(3, 16, 3, 3, (2, 2))  # the stems
    assert not faster_natively(96, 96, 5, 5, (1, 1)) and not faster_natively(64, 64, 1, 1, (1, 1))  # not measured


@OPS
@given(data=st.data())
def test_fused_kernel_at_yolo_channel_counts_matches_numpy(data: st.DataObject) -> None:
    """Bias and SiLU or ReLU on the tile's registers, at channel counts of YOLO's 3x3 layers (non-multiples of
    16 among them), batches of two (a tile spans rows and images), odd sizes and one-sided pads."""
    stride = data.draw(st.integers(1, 2))
    pads = [(data.draw(st.integers(0, 1)), data.draw(st.integers(0, 1))) for _ in range(2)]
    n, h, w_ = data.draw(st.integers(1, 2)), data.draw(st.integers(2, 13)), data.draw(st.integers(2, 27))
    cin = data.draw(st.sampled_from([16, 24, 32, 48, 64, 80]))
    cout = data.draw(st.sampled_from([16, 24, 40, 48, 64, 80, 96, 112]))
    activation = data.draw(st.sampled_from(["relu", "silu"]))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    x = rng.standard_normal((n, h, w_, cin)).astype(np.float32)
    w = rng.standard_normal((3, 3, cin, cout)).astype(np.float32)
    bias = (3 * rng.standard_normal(cout)).astype(np.float32)
    run = jax.jit(lambda x, b, c: native_conv2d(x, b, (stride, stride), pads, cout, c, activation))
    got = np.asarray(run(x, blocked_filter(np.transpose(w, (3, 2, 0, 1))), bias), np.float64)
    biased = _numpy_conv(x, w, (stride, stride), pads) + bias
    expected = np.maximum(biased, 0) if activation == "relu" else biased / (1 + np.exp(-biased))
    size = _numpy_conv(np.abs(x), np.abs(w), (stride, stride), pads) + np.abs(bias)
    assert got.shape == expected.shape
    error = np.abs(got - expected)
    assert np.all(error <= 2e-6 * size + 1e-6), f"error {error.max():.3g} where the terms sum to {size.max():.3g}"


@OPS
@given(data=st.data())
def test_tiles_in_one_row_clear_of_the_pads_match_numpy(data: st.DataObject) -> None:
    """Rows of 12 or more output pixels, where most tiles lie in one output row clear of the left and right
    pads (their runs one step apart, found without the per-pixel path) beside tiles that cross a row, an
    image or a pad: 16-24 input channels and the kernel's other widths, strides 1-2 each way, pads 0-2, rows
    read above and below the input, with and without the bias and SiLU."""
    kh, kw = data.draw(st.integers(1, 5)), data.draw(st.integers(1, 5))
    strides = (data.draw(st.integers(1, 2)), data.draw(st.integers(1, 2)))
    pads = [(data.draw(st.integers(0, 2)), data.draw(st.integers(0, 2))) for _ in range(2)]
    n, h, w_ = data.draw(st.integers(1, 2)), data.draw(st.integers(1, 6)), data.draw(st.integers(24, 64))
    assume(h + sum(pads[0]) >= kh)
    cin = data.draw(st.sampled_from([1, 3, 16, 20, 24, 32]))
    cout = data.draw(st.sampled_from([8, 16, 24, 32, 40, 48, 80]))
    fused = data.draw(st.booleans())
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    x = rng.standard_normal((n, h, w_, cin)).astype(np.float32)
    w = rng.standard_normal((kh, kw, cin, cout)).astype(np.float32)
    if not fused:
        _assert_matches(jax.jit(lambda x, w: native_conv2d(x, w, strides, pads))(x, w), x, w, strides, pads)
        return
    _assert_silu_matches(x, w, rng.standard_normal(cout).astype(np.float32), strides, pads)


@pytest.mark.parametrize("cin", [16, 32])
@pytest.mark.parametrize("strides", [(1, 1), (2, 2), (1, 2), (2, 1)])
@pytest.mark.parametrize("cout", [8, 16, 80])
def test_last_sixteen_channels_of_tiles_in_one_row_match_numpy(cin: int, strides: tuple[int, int], cout: int) -> None:
    """The last 16 or fewer output channels of a 3-wide kernel's tile in one row clear of the pads, 16 or 32
    input channels, strides 1 and 2 (each input value broadcast once for the pixels that read it): rows
    above and below the input (all zeros), tiles crossing a row or the pads beside them, with bias and SiLU
    and without."""
    rng = np.random.default_rng(cin * 100 + cout + 7 * strides[0] + strides[1])
    x = rng.standard_normal((2, 5, 61, cin)).astype(np.float32)
    w = rng.standard_normal((3, 3, cin, cout)).astype(np.float32)
    pads = [(2, 1), (1, 0)]
    _assert_matches(jax.jit(lambda x, w: native_conv2d(x, w, strides, pads))(x, w), x, w, strides, pads)
    _assert_silu_matches(x, w, rng.standard_normal(cout).astype(np.float32), strides, pads)


@pytest.mark.parametrize("pixels", [*range(1, 14), 20, 21, 24, 28])
def test_short_last_tile_matches_numpy(pixels: int) -> None:
    """The last tile of 12 output pixels is cut short (every remainder: done as a tile of 4 or 8 pixels or
    the whole 12, past the tile's last row), with bias and SiLU at 16, 32, 40, 48 and 112 output channels (the
    last 33-48 channels in tiles of 8 and 4 pixels by three vectors)."""
    rng = np.random.default_rng(pixels)
    x = rng.standard_normal((1, 1, pixels, 24)).astype(np.float32)
    pads = [(1, 1), (1, 1)]
    for cout in (16, 32, 40, 48, 112):
        w = rng.standard_normal((3, 3, 24, cout)).astype(np.float32)
        bias = rng.standard_normal(cout).astype(np.float32)
        run = jax.jit(lambda x, b, c, o=cout: native_conv2d(x, b, (1, 1), pads, o, c, "silu"))
        got = np.asarray(run(x, blocked_filter(np.transpose(w, (3, 2, 0, 1))), bias), np.float64)
        biased = _numpy_conv(x, w, (1, 1), pads) + bias
        size = _numpy_conv(np.abs(x), np.abs(w), (1, 1), pads) + np.abs(bias)
        error = np.abs(got - biased / (1 + np.exp(-biased)))
        assert got.shape == (1, 1, pixels, cout)
        assert np.all(error <= 2e-6 * size + 1e-6), f"{cout} outputs: error {error.max():.3g}"


def test_fused_silu_of_sums_far_past_the_exponential_s_range() -> None:
    """SiLU where e^-v overflows f32 (v below -88): 0 from below, no NaN; and v where it underflows: v."""
    x = np.ones((1, 1, 4, 16), np.float32)
    w = np.zeros((1, 1, 16, 20), np.float32)
    bias = np.array([-1e4, -300, -100, -89, -88, -20, 0, 20, 100, 1e4] * 2, np.float32)
    run = jax.jit(lambda x, w, c: native_conv2d(x, w, (1, 1), [(0, 0), (0, 0)], None, c, "silu"))
    got = np.asarray(run(x, w, bias))
    v = bias.astype(np.float64)
    expected = v * np.exp(-np.logaddexp(0, -v))  # v * sigmoid(v) without overflow
    assert np.all(np.isfinite(got))
    np.testing.assert_allclose(got, np.broadcast_to(expected, got.shape), rtol=1e-6, atol=1e-30)


@pytest.mark.parametrize(("cin", "cout", "stride"), [(16, 16, 1), (96, 40, 2)])
def test_convolution_lowering_with_native_kernels_on_and_off(cin: int, cout: int, stride: int) -> None:
    rng = np.random.default_rng(2)
    x = rng.standard_normal((1, cin, 11, 13)).astype(np.float32)
    w = rng.standard_normal((cout, cin, 3, 3)).astype(np.float32)
    px = param(x)
    model = single_op(opset.convolution(px, w, [stride, stride], [1, 0], [1, 1], [1, 1]), [px])
    pads = [(1, 1), (0, 1)]
    expected_layout = np.transpose(w, (2, 3, 1, 0))
    texts = {}
    for on in (True, False):
        compiled: Any = core().compile_model(model, "XLA", {"XLA_NATIVE_KERNELS": on})
        got = np.moveaxis(np.asarray(compiled([x])[0]), 1, -1)
        _assert_matches(got, np.moveaxis(x, 1, -1), expected_layout, (stride, stride), pads)
        texts[on] = compiled.jax_executable([list(x.shape)]).as_text()
    assert TARGET in texts[True] and TARGET not in texts[False]


@OPS
@given(outputs=st.integers(1, 70), inputs=st.integers(1, 20), kernel_h=st.integers(1, 3), kernel_w=st.integers(1, 3))
def test_blocked_filter_layout(outputs: int, inputs: int, kernel_h: int, kernel_w: int) -> None:
    w = np.random.default_rng(outputs).standard_normal((outputs, inputs, kernel_h, kernel_w)).astype(np.float32)
    blocked = blocked_filter(w)
    blocks = (outputs + 31) // 32
    assert blocked.shape == (blocks, kernel_h, kernel_w, inputs, 32)
    assert not blocked.flags.writeable and blocked.ctypes.data % 64 == 0
    expected = np.zeros((blocks, kernel_h, kernel_w, inputs, 32), np.float32)
    for o in range(outputs):
        for c in range(inputs):
            for i in range(kernel_h):
                for j in range(kernel_w):
                    expected[o // 32, i, j, c, o % 32] = w[o, c, i, j]
    np.testing.assert_array_equal(blocked, expected)
    np.testing.assert_array_equal(np.asarray(unblocked_filter(blocked, outputs)), np.transpose(w, (2, 3, 1, 0)))


@OPS
@given(data=st.data())
def test_kernel_reading_a_blocked_filter_matches_numpy(data: st.DataObject) -> None:
    kh, kw = data.draw(st.integers(1, 4)), data.draw(st.integers(1, 4))
    strides = (data.draw(st.integers(1, 2)), data.draw(st.integers(1, 2)))
    pads = [(data.draw(st.integers(0, 2)), data.draw(st.integers(0, 2))) for _ in range(2)]
    h, w_ = data.draw(st.integers(1, 8)), data.draw(st.integers(1, 33))
    assume(h + sum(pads[0]) >= kh and w_ + sum(pads[1]) >= kw)
    cin = data.draw(st.sampled_from([1, 7, 16, 33]))
    cout = data.draw(st.sampled_from([1, 16, 31, 32, 33, 47, 70, 112]))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    x = rng.standard_normal((1, h, w_, cin)).astype(np.float32)
    w = rng.standard_normal((cout, cin, kh, kw)).astype(np.float32)
    got = jax.jit(lambda x, b: native_conv2d(x, b, strides, pads, cout))(x, blocked_filter(w))
    _assert_matches(got, x, np.transpose(w, (2, 3, 1, 0)), strides, pads)


def _constant_filter_layer(cin: int, cout: int, stride: int) -> tuple[hs.Model, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(4)
    x = rng.standard_normal((1, cin, 12, 10)).astype(np.float32)
    w = rng.standard_normal((cout, cin, 3, 3)).astype(np.float32)
    px = param(x)
    return single_op(opset.convolution(px, w, [stride, stride], [1, 1], [1, 1], [1, 1]), [px]), x, w


def _expected(x: np.ndarray, w: np.ndarray, stride: int) -> np.ndarray:
    return np.moveaxis(
        _numpy_conv(np.moveaxis(x, 1, -1), np.transpose(w, (2, 3, 1, 0)), (stride,) * 2, [(1, 1)] * 2), -1, 1
    )


def test_prepare_blocks_a_constant_filter_once() -> None:
    """The filter of a layer in the kernel's class is replaced by its blocked form (the same array each time
    it is asked: one weight), which the compiled model takes as its only weight."""
    model, _, w = _constant_filter_layer(96, 40, 2)
    node = next(op for op in model.get_ops() if op.type_name == "Convolution")
    values = [None, node.input_value(1).node.attrs["value"]]
    with native_scope("cpu", True):
        first, again = prepare(node, values)[1], prepare(node, values)[1]
        shapes = [weight.shape for weight in weights_of(model)]
    assert first is again
    np.testing.assert_array_equal(first, blocked_filter(w))
    assert shapes == [(2, 3, 3, 96, 32)]
    with native_scope("cpu", False):
        assert prepare(node, values) == {}
    small = _constant_filter_layer(12, 160, 2)[0]  # not in the kernel's class: XLA's layout, not blocked
    with native_scope("cpu", True):
        assert [weight.shape for weight in weights_of(small)] == [(3, 3, 12, 160)]


@pytest.mark.parametrize(("cin", "cout", "stride"), [(96, 40, 2), (24, 16, 1)])
def test_a_blocked_filter_through_the_compiled_model_and_a_blob(cin: int, cout: int, stride: int) -> None:
    model, x, w = _constant_filter_layer(cin, cout, stride)
    compiled: Any = core().compile_model(model, "XLA", {"XLA_NATIVE_KERNELS": True})
    assert TARGET in compiled.jax_executable([list(x.shape)]).as_text()
    expected = _expected(x, w, stride)
    got = np.asarray(compiled([x])[0])
    x_last, w_last = np.moveaxis(x, 1, -1), np.transpose(w, (2, 3, 1, 0))
    _assert_matches(np.moveaxis(got, 1, -1), x_last, w_last, (stride,) * 2, [(1, 1)] * 2)
    blob = compiled.export_model()
    assert TARGET in json.loads(unpack_blob(blob, "XLA")["header"])["native_kernels"]
    imported = np.asarray(core().import_model(blob, "XLA")([x])[0])
    np.testing.assert_array_equal(imported, got)
    assert np.allclose(imported, expected, rtol=1e-4, atol=1e-4)


def test_a_blocked_filter_read_by_xla_in_bf16() -> None:
    """At bf16 the kernel does not run: the lowering puts the prepared filter back for XLA's convolution."""
    model, x, w = _constant_filter_layer(96, 40, 1)
    compiled: Any = core().compile_model(model, "XLA", {"XLA_NATIVE_KERNELS": True, "INFERENCE_PRECISION_HINT": "bf16"})
    got = np.asarray(compiled([x])[0], np.float64)
    expected = _expected(x, w, 1)
    assert np.max(np.abs(got - expected)) <= 0.05 * np.max(np.abs(expected))


def test_a_filter_computed_at_run_time_is_blocked_by_the_kernel() -> None:
    rng = np.random.default_rng(5)
    x = rng.standard_normal((1, 96, 9, 8)).astype(np.float32)
    w = rng.standard_normal((40, 96, 3, 3)).astype(np.float32)
    px, pw = param(x), param(w, "w")
    model = single_op(opset.convolution(px, pw, [1, 1], [1, 1], [1, 1], [1, 1]), [px, pw])
    compiled: Any = core().compile_model(model, "XLA", {"XLA_NATIVE_KERNELS": True})
    assert TARGET in compiled.jax_executable([list(x.shape), list(w.shape)]).as_text()
    got = np.asarray(compiled([x, w])[0])
    assert np.allclose(got, _expected(x, w, 1), rtol=1e-4, atol=1e-4)


def test_a_blocked_filter_on_the_few_channel_route() -> None:
    """3 input channels by 8 outputs at stride 1 is in the kernel's class, so its filter is blocked, but the
    lowering computes so few channels from the channels-first data: it puts the filter back."""
    rng = np.random.default_rng(6)
    x = rng.standard_normal((1, 3, 7, 6)).astype(np.float32)
    w = rng.standard_normal((8, 3, 3, 3)).astype(np.float32)
    px = param(x)
    model = single_op(opset.convolution(px, w, [1, 1], [1, 1], [1, 1], [1, 1]), [px])
    got = np.asarray(core().compile_model(model, "XLA", {"XLA_NATIVE_KERNELS": True})([x])[0])
    assert np.allclose(got, _expected(x, w, 1), rtol=1e-4, atol=1e-4)
