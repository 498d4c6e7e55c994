"""The native GEMM kernel's in-place path (``hetero_sdk_gemm_f32_fused``: ``A`` read where it lies, a bias and an
activation applied before the store) against numpy written here: row, depth and column counts off the register
tiles (12 x 32, 8 x 48, 6 x 64 columns), several blocks of rows (split over XLA's thread pool; one thread and the
pool agreeing bit for bit), every activation; and the 1x1 convolutions
:class:`~hetero_sdk_jax.convolution_fusion.ConvolutionBiasActivationFusion` fuses with their bias and activation
(HSwish included) routed to it: the filter packed once, models with native kernels on and off, the layers left to
the convolution lowering (strides, pads), a blob round trip."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import jax
import numpy as np
import pytest
from hetero_sdk import Model, opset
from hetero_sdk.plugin import unpack_blob
from hypothesis import given
from hypothesis import strategies as st
from xla_helpers import OPS, activated, core, param, single_op

from hetero_sdk_jax import native
from hetero_sdk_jax.convolution_fusion import CONVOLUTION
from hetero_sdk_jax.lowering import weights_of
from hetero_sdk_jax.lowering.kernels.gemm import (
    ACTIVATIONS,
    FUSED_TARGET,
    faster_in_place,
    native_fused_matmul,
    packed_b,
    packed_filter,
    prepare_pointwise,
)
from hetero_sdk_jax.native import native_scope
from hetero_sdk_jax.transformations import transform_model

pytestmark = pytest.mark.skipif(not native.available(FUSED_TARGET), reason="no C++ compiler with AVX-512 here")


def _assert_fused(got: Any, a: np.ndarray, b: np.ndarray, bias: np.ndarray, activation: str) -> None:
    """``got`` is ``activation(a @ b + bias)`` to f32 rounding: the sum within a few ulps of its terms'
    magnitudes (the activations' slopes are at most 1.5), the activation within a few ulps of its value."""
    biased = a.astype(np.float64) @ b.astype(np.float64) + bias
    size = np.abs(a).astype(np.float64) @ np.abs(b).astype(np.float64) + np.abs(bias)
    expected = activated(biased, activation)
    got = np.asarray(got, np.float64)
    assert got.shape == expected.shape
    error = np.abs(got - expected)
    bound = 2e-6 * size + 1e-6 * np.abs(expected) + 1e-30
    assert np.all(error <= bound), f"error {error.max():.3g} where the terms sum to {size.max():.3g}"


def _fused(a: np.ndarray, b: np.ndarray, bias: np.ndarray, activation: str) -> Any:
    columns = b.shape[1]
    return jax.jit(lambda a, p, c: native_fused_matmul(a, p, columns, c, activation))(a, packed_b(b), bias)


@OPS
@given(
    rows=st.integers(1, 60), depth=st.integers(1, 200), columns=st.integers(1, 150),
    activation=st.sampled_from(sorted(ACTIVATIONS)), seed=st.integers(0, 2**16),
)  # fmt: skip
def test_kernel_matches_numpy(rows: int, depth: int, columns: int, activation: str, seed: int) -> None:
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((rows, depth)).astype(np.float32)
    b = (rng.standard_normal((depth, columns)) / np.sqrt(depth)).astype(np.float32)
    bias = (3 * rng.standard_normal(columns)).astype(np.float32)
    _assert_fused(_fused(a, b, bias, activation), a, b, bias, activation)


@pytest.mark.parametrize(
    ("rows", "depth", "columns", "activation"),
    [(3001, 16, 33, "hswish"), (2000, 40, 64, "silu"), (1700, 24, 48, "relu"), (777, 130, 100, "none")],
)
def test_kernel_over_several_blocks_of_rows_matches_numpy(rows: int, depth: int, columns: int, activation: str) -> None:
    """Rows beyond one block of about 96 KiB of ``A``: the blocks split on the thread pool, each ending in a
    shorter tile; columns in tiles of two, three and four vectors and masked tails."""
    rng = np.random.default_rng(rows)
    a = rng.standard_normal((rows, depth)).astype(np.float32)
    b = (rng.standard_normal((depth, columns)) / np.sqrt(depth)).astype(np.float32)
    bias = rng.standard_normal(columns).astype(np.float32)
    _assert_fused(_fused(a, b, bias, activation), a, b, bias, activation)


@pytest.mark.parametrize(
    ("rows", "depth", "columns", "activation"),
    [(169, 768, 384, "silu"), (100, 512, 256, "silu"), (13, 777, 200, "hswish"), (25, 300, 40, "relu"),
     (7, 1031, 17, "none")],
)  # fmt: skip
def test_kernel_streaming_deep_columns_of_b_matches_numpy(rows: int, depth: int, columns: int, activation: str) -> None:
    """Columns of ``B`` deeper than L1 (K x 16 V floats over 48 KiB), read with a prefetch of the rows ahead (past
    ``B``'s end on the last ones): YOLOX's 13x13 and YOLOv8n's 10x10 layers, odd depths, masked column tails and
    tiles of one to four vectors."""
    rng = np.random.default_rng(depth)
    a = rng.standard_normal((rows, depth)).astype(np.float32)
    b = (rng.standard_normal((depth, columns)) / np.sqrt(depth)).astype(np.float32)
    bias = rng.standard_normal(columns).astype(np.float32)
    _assert_fused(_fused(a, b, bias, activation), a, b, bias, activation)


def test_a_nan_in_a_deep_product_reaches_its_row_only() -> None:
    """A NaN in one row of ``A`` makes that row's outputs NaN (after the SiLU too) and no other's."""
    rng = np.random.default_rng(5)
    a = rng.standard_normal((30, 640)).astype(np.float32)
    a[17, 321] = np.nan
    b = (rng.standard_normal((640, 96)) / 25).astype(np.float32)
    bias = rng.standard_normal(96).astype(np.float32)
    got = np.asarray(_fused(a, b, bias, "silu"))
    assert np.all(np.isnan(got[17]))
    keep = np.arange(30) != 17
    _assert_fused(got[keep], a[keep], b, bias, "silu")


def test_kernel_on_a_batched_channels_last_image() -> None:
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 5, 7, 24)).astype(np.float32)
    b = rng.standard_normal((24, 40)).astype(np.float32)
    bias = rng.standard_normal(40).astype(np.float32)
    got = np.asarray(jax.jit(lambda x, p, c: native_fused_matmul(x, p, 40, c, "silu"))(x, packed_b(b), bias))
    assert got.shape == (2, 5, 7, 40)
    _assert_fused(got.reshape(70, 40), x.reshape(70, 24), b, bias, "silu")


def test_the_activations_at_their_edges() -> None:
    """SiLU's exponent saturating both ways, HSwish's gate at its corners -3 and 3, exactly."""
    values = np.array([-200, -90, -30, -3, -1e-30, 0, 1e-30, 3, 30, 90, 200, -2.5, 2.5, 0.5], np.float32)
    a = values.reshape(-1, 1)
    one, zero = np.ones((1, 1), np.float32), np.zeros(1, np.float32)
    for activation in ACTIVATIONS:
        got = np.asarray(_fused(a, one, zero, activation), np.float64).reshape(-1)
        expected = activated(values.astype(np.float64), activation)
        assert np.all(np.isfinite(got))
        np.testing.assert_allclose(got, expected, rtol=3e-7, atol=1e-37)


def test_silu_over_its_whole_range_and_at_inf_and_nan() -> None:
    """SiLU (its input clamped to [-88, 88]) within a few ulps of ``y / (1 + e^-y)`` on a dense grid that
    crosses both ends of the clamp (below about -88 the result is -0: under 2e-36 away), +inf staying +inf and NaN
    staying NaN."""
    grid = np.linspace(-110, 110, 44001, dtype=np.float32)
    edges = np.array([-88, 88, -104, 104, -87.99, 103.99, 1e-30, -1e-30, np.inf, np.nan], np.float32)
    values = np.concatenate([grid, edges])
    one, zero = np.ones((1, 1), np.float32), np.zeros(1, np.float32)
    got = np.asarray(_fused(values.reshape(-1, 1), one, zero, "silu"), np.float64).reshape(-1)
    finite = np.isfinite(values)
    x = values[finite].astype(np.float64)
    np.testing.assert_allclose(got[finite], x / (1 + np.exp(-x)), rtol=3e-7, atol=2e-36)
    assert got[-2] == np.inf
    assert np.isnan(got[-1])


def test_the_measured_class() -> None:
    for rows, depth, columns in ((960, 240, 240), (1920, 128, 128), (169, 768, 384), (40, 60, 120), (1, 480, 120)):
        assert faster_in_place(rows, depth, columns, "silu")
    assert faster_in_place(10816, 48, 48, "silu") and faster_in_place(6400, 32, 32, "silu")  # XLA's SiLU loop
    assert not faster_in_place(3840, 64, 64, "hswish") and not faster_in_place(3840, 16, 32, "relu")  # the dot
    assert not faster_in_place(100, 64, 64, "gelu")  # no such epilogue
    assert not faster_in_place(0, 64, 64, "none")


def _pointwise(
    x: np.ndarray, w: np.ndarray, bias: np.ndarray, activation: str, stride: int = 1, pad: int = 0, reader: bool = False
) -> Model:
    """``activation(Convolution(x, w) + bias)``, SiLU written ``v * Sigmoid(v)``, HSwish as the op; with
    ``reader``, the biased sum also added to the result (a second reader of the activation's input)."""
    px = param(x)
    conv = opset.convolution(px, w, [stride, stride], [pad, pad], [pad, pad], [1, 1], name="conv")
    biased = opset.add(conv, opset.constant(bias.reshape(1, -1, 1, 1)))
    if activation == "silu":
        out = opset.multiply(biased, opset.sigmoid(biased))
    elif activation == "hswish":
        out = opset.hswish(biased)
    else:
        out = opset.relu(biased) if activation == "relu" else biased
    if reader:
        out = opset.add(out, biased)
    return single_op(out, [px])


def _arrays(cin: int, cout: int, height: int = 9, width: int = 12) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(cin * 1000 + cout)
    x = rng.standard_normal((1, cin, height, width)).astype(np.float32)
    w = (rng.standard_normal((cout, cin, 1, 1)) / np.sqrt(cin)).astype(np.float32)
    return x, w, rng.standard_normal(cout).astype(np.float32)


def _expected(x: np.ndarray, w: np.ndarray, bias: np.ndarray, activation: str, stride: int = 1, pad: int = 0) -> Any:
    """The convolution in numpy: each pixel's channels by the filter ``[O, I]``, the border pixels of a pad
    zero before the bias."""
    data = np.pad(x.astype(np.float64), [(0, 0), (0, 0), (pad, pad), (pad, pad)])[:, :, ::stride, ::stride]
    total = np.einsum("nchw,oc->nohw", data, w[:, :, 0, 0].astype(np.float64))
    return activated(total + bias.reshape(1, -1, 1, 1), activation)


def _types(model: Model) -> list[str]:
    transform_model(model)
    return [node.type_name for node in model.get_ordered_ops()]


def test_the_pass_fuses_hswish_after_a_convolution() -> None:
    x, w, bias = _arrays(24, 40)
    model = _pointwise(x, w, bias, "hswish")
    transform_model(model)
    (fused,) = [node for node in model.get_ordered_ops() if node.type_name == CONVOLUTION]
    assert fused.attrs["activation"] == "hswish"
    assert "HSwish" not in _types(_pointwise(x, w, bias, "hswish"))


def test_an_hswish_whose_input_has_another_reader_stays_out() -> None:
    x, w, bias = _arrays(24, 40)
    model = _pointwise(x, w, bias, "hswish", reader=True)
    types = _types(model)
    assert CONVOLUTION in types and "HSwish" in types
    (fused,) = [node for node in model.get_ordered_ops() if node.type_name == CONVOLUTION]
    assert fused.attrs["activation"] == "none"
    got = np.asarray(core().compile_model(_pointwise(x, w, bias, "hswish", reader=True), "XLA")([x])[0])
    biased = _expected(x, w, bias, "none")
    np.testing.assert_allclose(got, activated(biased, "hswish") + biased, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    ("cin", "cout", "activation"), [(16, 32, "hswish"), (48, 48, "silu"), (64, 18, "none"), (33, 100, "relu")]
)
def test_a_pointwise_layer_runs_the_kernel_and_matches_numpy_with_native_kernels_on_and_off(
    cin: int, cout: int, activation: str
) -> None:
    x, w, bias = _arrays(cin, cout)
    expected = _expected(x, w, bias, activation)
    for on in (True, False):
        compiled: Any = core().compile_model(_pointwise(x, w, bias, activation), "XLA", {"XLA_NATIVE_KERNELS": on})
        got = np.asarray(compiled([x])[0])
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)
        assert (FUSED_TARGET in compiled.jax_executable([list(x.shape)]).as_text()) == on


@pytest.mark.parametrize(("stride", "pad"), [(2, 0), (1, 1)])
def test_a_strided_or_padded_pointwise_layer_is_left_to_the_convolution(stride: int, pad: int) -> None:
    x, w, bias = _arrays(24, 40)
    compiled: Any = core().compile_model(_pointwise(x, w, bias, "silu", stride, pad), "XLA")
    np.testing.assert_allclose(compiled([x])[0], _expected(x, w, bias, "silu", stride, pad), rtol=1e-5, atol=1e-5)
    assert FUSED_TARGET not in compiled.jax_executable([list(x.shape)]).as_text()


def test_prepare_packs_a_constant_filter_once() -> None:
    """The packed filter is the same array each time it is asked (one weight: 96 KB, taken as an argument)."""
    x, w, bias = _arrays(240, 100, 3, 4)
    model = _pointwise(x, w, bias, "hswish")
    transform_model(model)
    node = next(op for op in model.get_ops() if op.type_name == CONVOLUTION)
    values = [None, node.input_value(1).node.attrs["value"], None]
    with native_scope("cpu", True):
        first, again = prepare_pointwise(node, values)[1], prepare_pointwise(node, values)[1]
        shapes = [weight.shape for weight in weights_of(model)]
    assert first is again
    np.testing.assert_array_equal(first, packed_b(np.ascontiguousarray(w[:, :, 0, 0].T)))
    np.testing.assert_array_equal(packed_filter(w), first)
    assert shapes == [(4, 240, 32)]
    with native_scope("cpu", False):
        assert prepare_pointwise(node, values) == {}


def test_a_packed_filter_through_the_compiled_model_and_a_blob() -> None:
    x, w, bias = _arrays(40, 72)
    compiled: Any = core().compile_model(_pointwise(x, w, bias, "hswish"), "XLA", {"XLA_NATIVE_KERNELS": True})
    got = np.asarray(compiled([x])[0])
    np.testing.assert_allclose(got, _expected(x, w, bias, "hswish"), rtol=1e-5, atol=1e-5)
    blob = compiled.export_model()
    assert FUSED_TARGET in json.loads(unpack_blob(blob, "XLA")["header"])["native_kernels"]
    imported = np.asarray(core().import_model(blob, "XLA")([x])[0])
    np.testing.assert_array_equal(imported, got)


def test_a_packed_filter_read_by_xla_in_bf16() -> None:
    """At bf16 the kernel does not run: the lowering puts the packed filter back for XLA's product."""
    x, w, bias = _arrays(40, 72)
    config = {"XLA_NATIVE_KERNELS": True, "INFERENCE_PRECISION_HINT": "bf16"}
    got = np.asarray(core().compile_model(_pointwise(x, w, bias, "silu"), "XLA", config)([x])[0], np.float64)
    expected = _expected(x, w, bias, "silu")
    assert np.max(np.abs(got - expected)) <= 0.05 * np.max(np.abs(expected))


def test_a_3x3_layer_with_hswish_keeps_the_conv2d_kernel_for_its_bias() -> None:
    """The conv2d kernel has no HSwish: a layer in its class adds the bias there, and XLA applies HSwish after."""
    rng = np.random.default_rng(8)
    x = rng.standard_normal((1, 96, 6, 7)).astype(np.float32)
    w = (rng.standard_normal((40, 96, 3, 3)) / 30).astype(np.float32)
    bias = rng.standard_normal(40).astype(np.float32)
    px = param(x)
    conv = opset.convolution(px, w, [1, 1], [1, 1], [1, 1], [1, 1])
    model = single_op(opset.hswish(opset.add(conv, opset.constant(bias.reshape(1, -1, 1, 1)))), [px])
    compiled: Any = core().compile_model(model, "XLA", {"XLA_NATIVE_KERNELS": True})
    padded = np.pad(x.astype(np.float64), [(0, 0), (0, 0), (1, 1), (1, 1)])
    total = sum(
        np.einsum("nchw,oc->nohw", padded[:, :, i : i + 6, j : j + 7], w[:, :, i, j].astype(np.float64))
        for i in range(3)
        for j in range(3)
    )
    expected = activated(total + bias.reshape(1, -1, 1, 1), "hswish")
    np.testing.assert_allclose(compiled([x])[0], expected, rtol=1e-5, atol=1e-5)
    assert "hetero_sdk_conv2d_bias" in compiled.jax_executable([list(x.shape)]).as_text()


_ONE_CPU = textwrap.dedent(
    """
    import os, sys
    os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})  # XLA sizes its thread pool by these
    import jax, numpy as np
    from hetero_sdk_jax.lowering.kernels.gemm import FUSED_TARGET, native_fused_matmul, packed_b
    from hetero_sdk_jax.native import register
    register(FUSED_TARGET)
    a, b, bias = (np.load(os.path.join(sys.argv[1], name + ".npy")) for name in ("a", "b", "bias"))
    run = jax.jit(lambda a, p, c: native_fused_matmul(a, p, b.shape[1], c, "silu"))
    np.save(os.path.join(sys.argv[1], "y.npy"), np.asarray(run(a, packed_b(b), bias)))
    """
)


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity") or len(os.sched_getaffinity(0)) < 2, reason="one CPU")
def test_one_thread_and_the_thread_pool_give_the_same_bits(tmp_path: Path) -> None:
    """Each row's sums are the same whichever thread computes its block: a process on one CPU (a pool of one)
    and this one (a pool of every CPU, blocks split between them) agree bit for bit, and with numpy."""
    rng = np.random.default_rng(9)
    a = rng.standard_normal((2500, 40)).astype(np.float32)  # four blocks of 600 rows and one of 100
    b = (rng.standard_normal((40, 72)) / 6).astype(np.float32)
    bias = rng.standard_normal(72).astype(np.float32)
    for name, value in (("a", a), ("b", b), ("bias", bias)):
        np.save(tmp_path / f"{name}.npy", value)
    subprocess.run([sys.executable, "-c", _ONE_CPU, str(tmp_path)], check=True, timeout=300)
    here = np.asarray(_fused(a, b, bias, "silu"))
    np.testing.assert_array_equal(np.load(tmp_path / "y.npy"), here)
    _assert_fused(here, a, b, bias, "silu")
