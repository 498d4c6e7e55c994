"""The native depthwise convolution kernel (``hetero_sdk_depthwise_conv``) against a depthwise convolution
written in numpy here, and the XLA device's depthwise layers with native kernels on and off."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hetero_sdk import opset
from hetero_sdk.plugin import unpack_blob
from hypothesis import assume, given
from hypothesis import strategies as st
from xla_helpers import OPS, activated, core, floats, param, run_without_a_compiler, run_xla, single_op

from hetero_sdk_jax import native
from hetero_sdk_jax.lowering.kernels.depthwise import (
    FUSED_TARGET,
    MIN_CHANNELS,
    TARGET,
    native_depthwise,
    runs_natively,
)

needs_kernel = pytest.mark.skipif(not native.available(TARGET), reason="the native kernel cannot be built here")
needs_fused_kernel = pytest.mark.skipif(
    not native.available(FUSED_TARGET), reason="the native kernel cannot be built here"
)


def _depthwise_numpy(x: np.ndarray, w: np.ndarray, strides, pads, dilations) -> np.ndarray:
    """``x`` ``[N, H, W, C]``, ``w`` ``[KH, KW, C]``, pads of any sign (negative: crops), in f64, tap by tap."""
    x = x.astype(np.float64)
    x = np.pad(x, [(0, 0), *[(max(b, 0), max(e, 0)) for b, e in pads], (0, 0)])
    crop = [(max(-b, 0), max(-e, 0)) for b, e in pads]
    x = x[:, crop[0][0] : x.shape[1] - crop[0][1], crop[1][0] : x.shape[2] - crop[1][1], :]
    out = [(n - (k - 1) * d - 1) // s + 1 for n, k, d, s in zip(x.shape[1:3], w.shape[:2], dilations, strides)]
    total = np.zeros((x.shape[0], *out, x.shape[3]))
    for a, b in np.ndindex(*w.shape[:2]):
        rows = slice(a * dilations[0], a * dilations[0] + (out[0] - 1) * strides[0] + 1, strides[0])
        cols = slice(b * dilations[1], b * dilations[1] + (out[1] - 1) * strides[1] + 1, strides[1])
        total += x[:, rows, cols, :] * w[a, b]
    return total


def _kernel(x: np.ndarray, w: np.ndarray, strides, pads, dilations) -> np.ndarray:
    run = jax.jit(lambda x, w: native_depthwise(x, w[:, :, None, :], strides, pads, dilations))
    return np.asarray(run(x, w))


@needs_kernel
@OPS
@given(data=st.data())
def test_kernel_matches_numpy_with_strides_pads_dilations_and_any_channel_count(data: st.DataObject) -> None:
    """Channels around the 16-lane vector (tails), widths with interior blocks of 8, 4 and 1 columns, pads
    wider than the kernel and crops."""
    channels = data.draw(st.sampled_from([1, 3, 15, 16, 17, 33, 40]))
    kernel = (data.draw(st.integers(1, 5)), data.draw(st.integers(1, 5)))
    sizes = (data.draw(st.integers(1, 9)), data.draw(st.integers(1, 30)))
    strides = [data.draw(st.integers(1, 3)) for _ in range(2)]
    dilations = [data.draw(st.integers(1, 2)) for _ in range(2)]
    pads = [(data.draw(st.integers(-1, 6)), data.draw(st.integers(-1, 6))) for _ in range(2)]
    assume(all(n + b + e >= (k - 1) * d + 1 for n, (b, e), k, d in zip(sizes, pads, kernel, dilations)))
    x = data.draw(floats((data.draw(st.integers(1, 2)), *sizes, channels), low=-2, high=2))
    w = data.draw(floats((*kernel, channels), low=-2, high=2))
    got = _kernel(x, w, strides, pads, dilations)
    np.testing.assert_allclose(got, _depthwise_numpy(x, w, strides, pads, dilations), rtol=1e-5, atol=1e-5)


@needs_fused_kernel
@OPS
@given(data=st.data())
def test_sliding_window_strips_match_numpy_with_bias_activation_and_non_finite_inputs(data: st.DataObject) -> None:
    """Filters 3, 5 and 7 wide (the sliding-window tiles; ``k x 1`` rows of one tap too) at width strides 1
    and 2, rows wide enough for 16-column strips with checked ones at both borders, channels around the
    16-lane vector, height dilations, pads of either sign, each activation; NaN and infinities in ``x``
    propagate as numpy's sums do."""
    channels = data.draw(st.sampled_from([3, 16, 17, 33]))
    kernel = (data.draw(st.integers(1, 7)), data.draw(st.sampled_from([3, 5, 7])))
    sizes = (data.draw(st.integers(1, 6)), data.draw(st.integers(1, 60)))
    strides = [data.draw(st.integers(1, 2)) for _ in range(2)]
    dilations = [data.draw(st.integers(1, 2)), 1]
    pads = [(data.draw(st.integers(-1, 4)), data.draw(st.integers(-1, 4))) for _ in range(2)]
    assume(all(n + b + e >= (k - 1) * d + 1 for n, (b, e), k, d in zip(sizes, pads, kernel, dilations)))
    activation = data.draw(st.sampled_from(["none", "relu", "hswish"]))
    x = data.draw(floats((1, *sizes, channels), low=-3, high=3))
    if data.draw(st.booleans()):
        flat = x.reshape(-1)
        for value in (np.nan, np.inf, -np.inf):
            flat[data.draw(st.integers(0, flat.size - 1))] = value
    w = data.draw(floats((*kernel, channels), low=-2, high=2))
    bias = data.draw(floats((channels,), low=-3, high=3))
    run = jax.jit(lambda x, w, b: native_depthwise(x, w[:, :, None, :], strides, pads, dilations, b, activation))
    got = np.asarray(run(x, w, bias))
    with np.errstate(invalid="ignore"):
        expected = activated(_depthwise_numpy(x, w, strides, pads, dilations) + bias, activation)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5, equal_nan=True)


@needs_kernel
def test_kernel_on_a_rec_sized_layer_matches_numpy() -> None:
    """PP-OCRv4 rec's 5x5 layer shapes (rows split over the thread pool; strips of 16 columns), and a 7x7."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 12, 80, 240)).astype(np.float32)
    w = rng.standard_normal((5, 5, 240)).astype(np.float32)
    for strides, pads in (([1, 1], [(2, 2), (2, 2)]), ([2, 1], [(2, 2), (2, 2)]), ([2, 2], [(1, 2), (2, 1)])):
        got = _kernel(x, w, strides, pads, [1, 1])
        np.testing.assert_allclose(got, _depthwise_numpy(x, w, strides, pads, [1, 1]), rtol=1e-5, atol=1e-4)
    w = rng.standard_normal((7, 7, 240)).astype(np.float32)
    for strides, pads in (([1, 1], [(3, 3), (3, 3)]), ([1, 2], [(3, 3), (3, 3)])):
        got = _kernel(x, w, strides, pads, [1, 1])
        np.testing.assert_allclose(got, _depthwise_numpy(x, w, strides, pads, [1, 1]), rtol=1e-5, atol=1e-4)


def _depthwise_layer(x: np.ndarray, w: np.ndarray, stride: int, pad: int) -> Any:
    """A depthwise GroupConvolution of ``x`` ``[N, C, H, W]`` by ``w`` ``[C, 1, 1, KH, KW]``, then a ReLU, then
    another (the layout pass lowers the chain channels-last)."""
    px = param(x)
    first = opset.group_convolution(px, w, [stride, stride], [pad, pad], [pad, pad], [1, 1], name="dw1")
    second = opset.group_convolution(opset.relu(first), w, [1, 1], [pad, pad], [pad, pad], [1, 1], name="dw2")
    return single_op(opset.relu(second), [px]), px


def _lowered_text(x: np.ndarray, w: np.ndarray, native_on: bool) -> str:
    from hetero_sdk_jax.lowering.convolution import depthwise_conv

    def f(x: jax.Array, w: jax.Array) -> jax.Array:
        with native.native_scope("cpu", native_on):
            return depthwise_conv(x, w, [1, 1], [(2, 2), (2, 2)], [1, 1], True)

    return jax.jit(f).lower(x, w).as_text()


@needs_kernel
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_depthwise_conv_calls_the_kernel_for_f32_only_and_only_where_native_kernels_are_on(dtype: type) -> None:
    x: np.ndarray = np.ones((1, 6, 6, 20), dtype)
    w: np.ndarray = np.ones((5, 5, 1, 20), dtype)
    assert (TARGET in _lowered_text(x, w, True)) == (dtype == np.float32)
    assert TARGET not in _lowered_text(x, w, False)
    with native.native_scope("cpu", True):
        assert not runs_natively(jnp.asarray(x), jnp.asarray(w), [1, 1], [(2, 2)] * 2, [1, 1], channels_last=False)
        multiplier_2 = jnp.ones((5, 5, 1, 40), jnp.float32)
        assert not runs_natively(jnp.ones((1, 6, 6, 20)), multiplier_2, [1, 1], [(2, 2)] * 2, [1, 1], True)
        few = MIN_CHANNELS - 1
        assert not runs_natively(jnp.ones((1, 6, 6, few)), jnp.ones((5, 5, 1, few)), [1, 1], [(2, 2)] * 2, [1, 1], True)


@needs_kernel
@pytest.mark.parametrize("stride", [1, 2])
def test_depthwise_layers_on_xla_with_native_kernels_on_and_off_match_numpy(stride: int) -> None:
    rng = np.random.default_rng(stride)
    x = rng.standard_normal((1, 19, 11, 23)).astype(np.float32)
    w = rng.standard_normal((19, 1, 1, 5, 5)).astype(np.float32)
    model, _ = _depthwise_layer(x, w, stride, 2)
    taps = np.transpose(w[:, 0, 0], (1, 2, 0))
    first = np.maximum(_depthwise_numpy(np.moveaxis(x, 1, -1), taps, [stride] * 2, [(2, 2)] * 2, [1, 1]), 0)
    expected = np.moveaxis(np.maximum(_depthwise_numpy(first, taps, [1, 1], [(2, 2)] * 2, [1, 1]), 0), -1, 1)
    for on in (True, False):
        got = run_xla(model, [x], {"XLA_NATIVE_KERNELS": on})[0]
        np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)


@needs_kernel
def test_an_exported_blob_records_the_kernel_and_runs_when_imported() -> None:
    rng = np.random.default_rng(3)
    x = rng.standard_normal((1, 24, 9, 10)).astype(np.float32)
    w = rng.standard_normal((24, 1, 1, 3, 3)).astype(np.float32)
    model, _ = _depthwise_layer(x, w, 1, 1)
    compiled = core().compile_model(model, "XLA", {"XLA_NATIVE_KERNELS": True})
    expected = np.asarray(compiled([x]).to_tuple()[0])
    blob = compiled.export_model()
    assert json.loads(unpack_blob(blob, "XLA")["header"])["native_kernels"] == [TARGET]
    got = np.asarray(core().import_model(blob, "XLA")([x]).to_tuple()[0])
    np.testing.assert_array_equal(got, expected)


_WITHOUT_COMPILER = textwrap.dedent(
    """
    import logging, sys
    import numpy as np
    logging.basicConfig(level=logging.WARNING, stream=sys.stdout)
    from test_native_depthwise import _depthwise_layer
    from xla_helpers import core
    x = np.load(sys.argv[1])
    w = np.load(sys.argv[2])
    model, _ = _depthwise_layer(x, w, 1, 2)
    compiled = core().compile_model(model, "XLA")
    np.save(sys.argv[3], np.asarray(compiled([x]).to_tuple()[0]))
    print("CALLS KERNEL", "hetero_sdk_depthwise_conv" in compiled.jax_executable([list(x.shape)]).as_text())
    """
)


def test_without_a_compiler_xla_runs_its_own_loop_with_the_same_values(tmp_path: Path) -> None:
    """A fresh process with no C++ compiler and an empty kernel cache: XLA's own depthwise loop, the same
    values as numpy's, the reason logged once."""
    rng = np.random.default_rng(7)
    x = rng.standard_normal((1, 20, 9, 13)).astype(np.float32)
    w = rng.standard_normal((20, 1, 1, 5, 5)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "w.npy", w)
    stdout = run_without_a_compiler(
        tmp_path, _WITHOUT_COMPILER, [tmp_path / name for name in ("x.npy", "w.npy", "got.npy")]
    )
    assert "CALLS KERNEL False" in stdout
    assert stdout.count("native kernel hetero_sdk_depthwise_conv unavailable") == 1
    taps = np.transpose(w[:, 0, 0], (1, 2, 0))
    first = np.maximum(_depthwise_numpy(np.moveaxis(x, 1, -1), taps, [1, 1], [(2, 2)] * 2, [1, 1]), 0)
    expected = np.moveaxis(np.maximum(_depthwise_numpy(first, taps, [1, 1], [(2, 2)] * 2, [1, 1]), 0), -1, 1)
    np.testing.assert_allclose(np.load(tmp_path / "got.npy"), expected, rtol=1e-4, atol=1e-4)
