"""A depthwise convolution's bias and activation in the native kernel
(:mod:`hetero_sdk_jax.depthwise_fusion`): the kernel against numpy written here, the pass firing only on
its exact pattern, and fused models on XLA against numpy with native kernels on and off."""

from __future__ import annotations

import json
from typing import Any

import jax
import numpy as np
import pytest
from hetero_sdk import Model, opset
from hetero_sdk.plugin import unpack_blob
from hypothesis import assume, given
from hypothesis import strategies as st
from test_native_depthwise import _depthwise_numpy
from xla_helpers import OPS, activated, core, floats, param, run_xla, single_op

from hetero_sdk_jax import native
from hetero_sdk_jax.depthwise_fusion import DEPTHWISE_CONVOLUTION
from hetero_sdk_jax.lowering.kernels.depthwise import FUSED_TARGET, native_depthwise
from hetero_sdk_jax.transformations import transform_model

needs_kernel = pytest.mark.skipif(not native.available(FUSED_TARGET), reason="the native kernel cannot be built here")


@needs_kernel
@OPS
@given(data=st.data())
def test_kernel_adds_the_bias_and_applies_the_activation_as_numpy_does(data: st.DataObject) -> None:
    channels = data.draw(st.sampled_from([1, 7, 16, 17, 40]))
    kernel = (data.draw(st.integers(1, 5)), data.draw(st.integers(1, 5)))
    sizes = (data.draw(st.integers(1, 8)), data.draw(st.integers(1, 24)))
    strides = [data.draw(st.integers(1, 2)) for _ in range(2)]
    pads = [(data.draw(st.integers(-1, 3)), data.draw(st.integers(-1, 3))) for _ in range(2)]
    assume(all(n + b + e >= k for n, (b, e), k in zip(sizes, pads, kernel)))
    activation = data.draw(st.sampled_from(["none", "relu", "hswish"]))
    with_bias = data.draw(st.booleans())
    x = data.draw(floats((1, *sizes, channels), low=-3, high=3))
    w = data.draw(floats((*kernel, channels), low=-2, high=2))
    bias = data.draw(floats((channels,), low=-3, high=3))
    run = jax.jit(
        lambda x, w, b: native_depthwise(
            x, w[:, :, None, :], strides, pads, [1, 1], b if with_bias else None, activation
        )
    )
    got = np.asarray(run(x, w, bias))
    expected = activated(_depthwise_numpy(x, w, strides, pads, [1, 1]) + (bias if with_bias else 0), activation)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


def _layer(x: np.ndarray, w: np.ndarray, bias: np.ndarray, activation: str, reader: bool = False) -> Model:
    """``activation(GroupConvolution(x, w) + bias)`` (stride 1, pads 1); with ``reader``, the biased sum is
    also added to the result (a second reader of the activation's input)."""
    px = param(x)
    conv = opset.group_convolution(px, w, [1, 1], [1, 1], [1, 1], [1, 1], name="dw")
    biased = opset.add(conv, opset.constant(bias))
    out = {"relu": opset.relu, "hswish": opset.hswish}[activation](biased)
    if reader:
        out = opset.add(out, biased)
    return single_op(out, [px])


def _types(model: Model) -> list[str]:
    transform_model(model)
    return [node.type_name for node in model.get_ordered_ops()]


def _expected(x: np.ndarray, w: np.ndarray, bias: np.ndarray, activation: str, reader: bool = False) -> np.ndarray:
    taps = np.transpose(w[:, 0, 0], (1, 2, 0))
    biased = np.moveaxis(_depthwise_numpy(np.moveaxis(x, 1, -1), taps, [1, 1], [(1, 1)] * 2, [1, 1]), -1, 1) + bias
    return activated(biased, activation) + (biased if reader else 0)


def _arrays(channels: int, bias_shape: tuple[int, ...]) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(channels)
    x = rng.standard_normal((1, channels, 7, 12)).astype(np.float32)
    w = rng.standard_normal((channels, 1, 1, 3, 3)).astype(np.float32)
    return x, w, rng.standard_normal(bias_shape).astype(np.float32)


@needs_kernel
@pytest.mark.parametrize(("channels", "activation"), [(24, "hswish"), (24, "relu"), (8, "hswish"), (3, "relu")])
def test_the_pattern_runs_as_one_op_and_matches_numpy_with_native_kernels_on_and_off(
    channels: int, activation: str
) -> None:
    x, w, bias = _arrays(channels, (1, channels, 1, 1))
    types = _types(_layer(x, w, bias, activation))
    assert DEPTHWISE_CONVOLUTION in types and "GroupConvolution" not in types and "Add" not in types
    expected = _expected(x, w, bias, activation)
    for on in (True, False):
        got = run_xla(_layer(x, w, bias, activation), [x], {"XLA_NATIVE_KERNELS": on})[0]
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


def test_a_bias_that_varies_over_positions_is_not_fused() -> None:
    x, w, bias = _arrays(24, (1, 24, 7, 12))
    types = _types(_layer(x, w, bias, "relu"))
    assert DEPTHWISE_CONVOLUTION not in types and "GroupConvolution" in types


@needs_kernel
def test_an_activation_whose_input_has_another_reader_stays_out_and_the_bias_joins() -> None:
    x, w, bias = _arrays(24, (24, 1, 1))
    model: Any = _layer(x, w, bias, "hswish", reader=True)
    transform_model(model)
    fused = [node for node in model.get_ordered_ops() if node.type_name == DEPTHWISE_CONVOLUTION]
    assert len(fused) == 1 and fused[0].attrs["activation"] == "none"
    assert "HSwish" in [node.type_name for node in model.get_ordered_ops()]
    got = run_xla(_layer(x, w, bias, "hswish", reader=True), [x])[0]
    np.testing.assert_allclose(got, _expected(x, w, bias, "hswish", reader=True), rtol=1e-5, atol=1e-5)


@needs_kernel
def test_an_exported_fused_model_records_the_kernel_and_runs_when_imported() -> None:
    x, w, bias = _arrays(24, (1, 24, 1, 1))
    compiled = core().compile_model(_layer(x, w, bias, "hswish"), "XLA", {"XLA_NATIVE_KERNELS": True})
    blob = compiled.export_model()
    assert FUSED_TARGET in json.loads(unpack_blob(blob, "XLA")["header"])["native_kernels"]
    got = np.asarray(core().import_model(blob, "XLA")([x]).to_tuple()[0])
    np.testing.assert_allclose(got, _expected(x, w, bias, "hswish"), rtol=1e-5, atol=1e-5)
