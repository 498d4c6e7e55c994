"""A dense convolution's bias and activation in the native conv2d kernel
(:mod:`hetero_sdk_jax.convolution_fusion`): the kernel's fused target against numpy written here, the pass
firing only on its exact pattern (SiLU as exporters write it), and fused models on XLA against numpy with
native kernels on and off, through a blob, and in a process without a C++ compiler."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import jax
import numpy as np
import pytest
from hetero_sdk import Model, opset
from hetero_sdk.plugin import unpack_blob
from hypothesis import assume, given
from hypothesis import strategies as st
from test_native_conv2d import _numpy_conv
from xla_helpers import OPS, activated, core, param, run_without_a_compiler, single_op

from hetero_sdk_jax import native
from hetero_sdk_jax.convolution_fusion import CONVOLUTION
from hetero_sdk_jax.lowering.kernels.conv2d import (
    FUSED_TARGET,
    TARGET,
    blocked_filter,
    faster_natively,
    native_conv2d,
)
from hetero_sdk_jax.transformations import transform_model

needs_kernel = pytest.mark.skipif(not native.available(FUSED_TARGET), reason="the native kernel cannot be built here")


@needs_kernel
@OPS
@given(data=st.data())
def test_kernel_adds_the_bias_and_applies_the_activation_as_numpy_does(data: st.DataObject) -> None:
    kh, kw = data.draw(st.integers(1, 3)), data.draw(st.integers(1, 3))
    strides = (data.draw(st.integers(1, 2)), data.draw(st.integers(1, 2)))
    pads = [(data.draw(st.integers(0, 2)), data.draw(st.integers(0, 2))) for _ in range(2)]
    h, w_ = data.draw(st.integers(1, 7)), data.draw(st.integers(1, 30))
    assume(h + sum(pads[0]) >= kh and w_ + sum(pads[1]) >= kw)
    cin = data.draw(st.sampled_from([1, 5, 16, 33]))
    cout = data.draw(st.sampled_from([1, 7, 16, 17, 32, 40, 70]))
    activation = data.draw(st.sampled_from(["none", "relu", "silu"]))
    blocked = data.draw(st.booleans())
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    x = rng.standard_normal((1, h, w_, cin)).astype(np.float32)
    w = rng.standard_normal((kh, kw, cin, cout)).astype(np.float32)
    bias = (3 * rng.standard_normal(cout)).astype(np.float32)
    operand = blocked_filter(np.transpose(w, (3, 2, 0, 1))) if blocked else w
    run = jax.jit(lambda x, w, b: native_conv2d(x, w, strides, pads, cout, b, activation))
    got = np.asarray(run(x, operand, bias), np.float64)
    expected = activated(_numpy_conv(x, w, strides, pads) + bias, activation)
    size = _numpy_conv(np.abs(x), np.abs(w), strides, pads) + np.abs(bias)  # f32 sums are exact to a few ulps
    assert got.shape == expected.shape
    error = np.abs(got - expected)
    assert np.all(error <= 2e-6 * size + 1e-6), f"error {error.max():.3g} where the terms sum to {size.max():.3g}"


def _layer(
    x: np.ndarray, w: np.ndarray, bias: np.ndarray, activation: str, stride: int = 1, reader: bool = False
) -> Model:
    """``activation(Convolution(x, w) + bias)`` (pads 1), SiLU written ``v * Sigmoid(v)``; with ``reader``,
    the biased sum is also added to the result (a second reader of the activation's input)."""
    px = param(x)
    conv = opset.convolution(px, w, [stride, stride], [1, 1], [1, 1], [1, 1], name="conv")
    biased = opset.add(conv, opset.constant(bias))
    if activation == "silu":
        out = opset.multiply(biased, opset.sigmoid(biased))
    elif activation == "swish":
        out = opset.swish(biased)
    else:
        out = opset.relu(biased) if activation == "relu" else biased
    if reader:
        out = opset.add(out, biased)
    return single_op(out, [px])


def _types(model: Model) -> list[str]:
    transform_model(model)
    return [node.type_name for node in model.get_ordered_ops()]


def _expected(
    x: np.ndarray, w: np.ndarray, bias: np.ndarray, activation: str, stride: int = 1, reader: bool = False
) -> np.ndarray:
    total = _numpy_conv(np.moveaxis(x, 1, -1), np.transpose(w, (2, 3, 1, 0)), (stride,) * 2, [(1, 1)] * 2)
    biased = np.moveaxis(total, -1, 1) + bias
    return activated(biased, "silu" if activation == "swish" else activation) + (biased if reader else 0)


def _arrays(cin: int, cout: int, bias_shape: tuple[int, ...]) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(cin * 1000 + cout)
    x = rng.standard_normal((1, cin, 9, 12)).astype(np.float32)
    w = (rng.standard_normal((cout, cin, 3, 3)) / np.sqrt(9 * cin)).astype(np.float32)
    return x, w, rng.standard_normal(bias_shape).astype(np.float32)


@needs_kernel
@pytest.mark.parametrize(
    ("cin", "cout", "stride", "activation"),
    [(96, 40, 1, "silu"), (96, 96, 2, "relu"), (128, 17, 1, "none"), (8, 16, 1, "silu"), (32, 48, 1, "swish"),
     (3, 16, 2, "silu")],
)  # fmt: skip
def test_the_pattern_runs_as_one_op_and_matches_numpy_with_native_kernels_on_and_off(
    cin: int, cout: int, stride: int, activation: str
) -> None:
    x, w, bias = _arrays(cin, cout, (1, cout, 1, 1))
    types = _types(_layer(x, w, bias, activation, stride))
    assert CONVOLUTION in types and "Convolution" not in types and "Add" not in types
    assert "Sigmoid" not in types and "Multiply" not in types and "Swish" not in types and "Relu" not in types
    expected = _expected(x, w, bias, activation, stride)
    for on in (True, False):
        compiled: Any = core().compile_model(_layer(x, w, bias, activation, stride), "XLA", {"XLA_NATIVE_KERNELS": on})
        got = np.asarray(compiled([x])[0])
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)
        text = compiled.jax_executable([list(x.shape)]).as_text()
        assert (FUSED_TARGET in text) == (on and cin > 3 and faster_natively(cin, cout, 3, 3, (stride, stride)))


def test_a_bias_that_varies_over_positions_is_not_fused() -> None:
    x, w, bias = _arrays(96, 32, (1, 32, 9, 12))
    types = _types(_layer(x, w, bias, "silu"))
    assert CONVOLUTION not in types and "Convolution" in types


def test_a_multiply_by_another_sigmoid_is_not_silu() -> None:
    """``v * Sigmoid(u)`` with u another value: the bias joins, the Multiply and its Sigmoid stay."""
    x, w, bias = _arrays(96, 32, (1, 32, 1, 1))
    px = param(x)
    biased = opset.add(opset.convolution(px, w, [1, 1], [1, 1], [1, 1], [1, 1]), opset.constant(bias))
    model = single_op(opset.multiply(biased, opset.sigmoid(opset.negative(biased))), [px])
    transform_model(model)
    fused = [node for node in model.get_ordered_ops() if node.type_name == CONVOLUTION]
    assert len(fused) == 1 and fused[0].attrs["activation"] == "none"
    assert {"Sigmoid", "Multiply"} <= {node.type_name for node in model.get_ordered_ops()}


@needs_kernel
def test_an_activation_whose_input_has_another_reader_stays_out_and_the_bias_joins() -> None:
    x, w, bias = _arrays(96, 40, (40, 1, 1))
    model: Any = _layer(x, w, bias, "silu", reader=True)
    transform_model(model)
    fused = [node for node in model.get_ordered_ops() if node.type_name == CONVOLUTION]
    assert len(fused) == 1 and fused[0].attrs["activation"] == "none"
    assert "Sigmoid" in [node.type_name for node in model.get_ordered_ops()]
    got = np.asarray(core().compile_model(_layer(x, w, bias, "silu", reader=True), "XLA")([x])[0])
    np.testing.assert_allclose(got, _expected(x, w, bias, "silu", reader=True), rtol=1e-5, atol=1e-5)


@needs_kernel
def test_an_exported_fused_model_records_the_kernel_and_runs_when_imported() -> None:
    x, w, bias = _arrays(96, 40, (1, 40, 1, 1))
    compiled = core().compile_model(_layer(x, w, bias, "silu"), "XLA", {"XLA_NATIVE_KERNELS": True})
    blob = compiled.export_model()
    assert FUSED_TARGET in json.loads(unpack_blob(blob, "XLA")["header"])["native_kernels"]
    got = np.asarray(core().import_model(blob, "XLA")([x]).to_tuple()[0])
    np.testing.assert_allclose(got, _expected(x, w, bias, "silu"), rtol=1e-5, atol=1e-5)


@needs_kernel
def test_the_unfused_target_still_runs_with_two_operands() -> None:
    """Blobs made before the fused target call ``hetero_sdk_conv2d`` with x and w alone."""
    x, w, _ = _arrays(96, 40, (1,))
    x_last, w_last = np.moveaxis(x, 1, -1), np.transpose(w, (2, 3, 1, 0))
    run = jax.jit(lambda x, w: native_conv2d(x, w, (1, 1), [(1, 1), (1, 1)]))
    assert TARGET in run.lower(x_last, w_last).as_text() and FUSED_TARGET not in run.lower(x_last, w_last).as_text()
    expected = _numpy_conv(x_last, w_last, (1, 1), [(1, 1), (1, 1)])
    np.testing.assert_allclose(np.asarray(run(x_last, w_last)), expected, rtol=1e-4, atol=1e-4)


_WITHOUT_COMPILER = textwrap.dedent(
    """
    import sys
    import numpy as np
    from test_convolution_fusion import _layer
    from xla_helpers import core
    x, w, bias = (np.load(path) for path in sys.argv[1:4])
    compiled = core().compile_model(_layer(x, w, bias, "silu"), "XLA")
    np.save(sys.argv[4], np.asarray(compiled([x]).to_tuple()[0]))
    print("CALLS KERNEL", "hetero_sdk_conv2d" in compiled.jax_executable([list(x.shape)]).as_text())
    """
)


def test_without_a_compiler_xla_runs_its_own_convolution_with_the_same_values(tmp_path: Path) -> None:
    """A fresh process with no C++ compiler and an empty kernel cache: XLA's convolution, bias and SiLU,
    the values numpy's."""
    x, w, bias = _arrays(96, 40, (1, 40, 1, 1))
    for name, value in (("x", x), ("w", w), ("bias", bias)):
        np.save(tmp_path / f"{name}.npy", value)
    stdout = run_without_a_compiler(
        tmp_path, _WITHOUT_COMPILER, [tmp_path / name for name in ("x.npy", "w.npy", "bias.npy", "got.npy")]
    )
    assert "CALLS KERNEL False" in stdout
    np.testing.assert_allclose(np.load(tmp_path / "got.npy"), _expected(x, w, bias, "silu"), rtol=1e-5, atol=1e-5)


@needs_kernel
def test_at_bf16_the_fused_op_runs_xla_s_convolution_on_the_blocked_filter_put_back() -> None:
    """At bf16 the kernel does not run: the lowering puts the prepared (blocked) filter back for XLA's
    convolution and adds the bias and SiLU after it."""
    x, w, bias = _arrays(96, 40, (1, 40, 1, 1))
    properties = {"XLA_NATIVE_KERNELS": True, "INFERENCE_PRECISION_HINT": "bf16"}
    got = np.asarray(core().compile_model(_layer(x, w, bias, "silu"), "XLA", properties)([x])[0], np.float64)
    expected = _expected(x, w, bias, "silu")
    assert np.max(np.abs(got - expected)) <= 0.05 * np.max(np.abs(expected))


@needs_kernel
def test_the_few_channel_route_with_a_blocked_filter_adds_the_bias_and_silu() -> None:
    """3 input channels by 8 outputs at stride 1 is in the kernel's class (its filter blocked), but the
    channels-first data takes the few-channel route: filter put back, bias and SiLU after it."""
    x, w, bias = _arrays(3, 8, (1, 8, 1, 1))
    got = np.asarray(core().compile_model(_layer(x, w, bias, "silu"), "XLA", {"XLA_NATIVE_KERNELS": True})([x])[0])
    np.testing.assert_allclose(got, _expected(x, w, bias, "silu"), rtol=1e-5, atol=1e-5)


@needs_kernel
def test_a_filter_computed_at_run_time_runs_fused() -> None:
    x, w, bias = _arrays(96, 40, (1, 40, 1, 1))
    px, pw = param(x), param(w, "w")
    conv = opset.convolution(px, pw, [1, 1], [1, 1], [1, 1], [1, 1])
    biased = opset.add(conv, opset.constant(bias))
    model = single_op(opset.multiply(biased, opset.sigmoid(biased)), [px, pw])
    compiled: Any = core().compile_model(model, "XLA", {"XLA_NATIVE_KERNELS": True})
    assert FUSED_TARGET in compiled.jax_executable([list(x.shape), list(w.shape)]).as_text()
    np.testing.assert_allclose(np.asarray(compiled([x, w])[0]), _expected(x, w, bias, "silu"), rtol=1e-5, atol=1e-5)


def test_a_swish_with_its_beta_stays_out_and_the_bias_joins() -> None:
    x, w, bias = _arrays(96, 32, (1, 32, 1, 1))

    def model() -> Model:
        px = param(x)
        biased = opset.add(opset.convolution(px, w, [1, 1], [1, 1], [1, 1], [1, 1]), opset.constant(bias))
        return single_op(opset.swish(biased, opset.constant(np.array(2.0, np.float32))), [px])

    transformed = model()
    transform_model(transformed)
    fused = [node for node in transformed.get_ordered_ops() if node.type_name == CONVOLUTION]
    assert len(fused) == 1 and fused[0].attrs["activation"] == "none"
    assert "Swish" in [node.type_name for node in transformed.get_ordered_ops()]
    got = np.asarray(core().compile_model(model(), "XLA")([x])[0], np.float64)
    y = _expected(x, w, bias, "none")
    np.testing.assert_allclose(got, y / (1 + np.exp(-2.0 * y)), rtol=1e-5, atol=1e-5)
