"""The native direct-convolution kernel (``hetero_sdk_conv2d``, native/src/conv2d.cc) against a convolution
written in numpy here: channel counts that are not multiples of 16, kernels 1-5, strides 1-2, asymmetric
pads; and the Convolution lowering with native kernels on and off."""

from __future__ import annotations

from typing import Any

import jax
import numpy as np
import pytest
from hetero_sdk import opset
from hypothesis import assume, given
from hypothesis import strategies as st
from xla_helpers import OPS, core, param, single_op

from hetero_sdk_jax import native
from hetero_sdk_jax.lowering.convolution_native import TARGET, faster_natively, native_conv2d

pytestmark = pytest.mark.skipif(not native.available(TARGET), reason="no C++ compiler with AVX-512 here")


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
    cout = data.draw(st.sampled_from([1, 5, 16, 24, 33, 48, 70]))
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
    assert not faster_natively(32, 32, 3, 3, (1, 1))  # measured slower than XLA's convolution
    assert not faster_natively(16, 32, 3, 3, (2, 2))
    assert not faster_natively(96, 96, 5, 5, (1, 1))  # not measured


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
