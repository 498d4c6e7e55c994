"""TEMPLATE's TemplateConvolution (convolution + bias + activation in one kernel), its peak-memory
property and INFERENCE_NUM_THREADS for BLAS: fused results equal the unfused graph's, bit for bit,
and a direct convolution written here."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hetero_sdk as hs
from hetero_sdk import opset
from hetero_sdk.errors import ModelValidationError
from hetero_sdk.reference import evaluate
from hetero_sdk.transformations import fused_names
from template_plugin.compiled_model import PEAK_MEMORY
from template_plugin.fused_conv import fused_convolution
from template_plugin.transformations import transform_model

ACTIVATIONS = {
    "none": lambda y: y,
    "relu": lambda y: opset.relu(y, name="act"),
    "hswish": lambda y: opset.hswish(y, name="act"),
}
NUMPY_ACTIVATIONS = {
    "none": lambda y: y,
    "relu": lambda y: np.maximum(y, 0),
    "hswish": lambda y: y * np.clip(y + 3, 0, 6) / 6,
}


def _conv_model(grouped: bool, activation: str, bias_shape: tuple[int, ...], seed: int):
    rng = np.random.default_rng(seed)
    x = opset.parameter([1, 4, 6, 5], name="x")
    if grouped:
        w = rng.standard_normal((2, 3, 2, 3, 3)).astype(np.float32)
        conv = opset.group_convolution(x, w, [1, 1], [1, 1], [1, 1], [1, 1], name="conv")
        dense = np.zeros((6, 4, 3, 3), np.float32)
        for g in range(2):
            dense[g * 3 : g * 3 + 3, g * 2 : g * 2 + 2] = w[g]
    else:
        w = dense = rng.standard_normal((6, 4, 3, 3)).astype(np.float32)
        conv = opset.convolution(x, w, [1, 1], [1, 1], [1, 1], [1, 1], name="conv")
    bias = rng.standard_normal(bias_shape).astype(np.float32)
    y = ACTIVATIONS[activation](opset.add(conv, bias, name="add"))
    y.output(0).set_names({"y"})
    return hs.Model([y], [x]), dense, bias


def _direct(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    padded = np.pad(x.astype(np.float64), [(0, 0), (0, 0), (1, 1), (1, 1)])
    out = np.zeros((1, w.shape[0], 6, 5))
    for i in range(3):
        for j in range(3):
            out += np.einsum("nchw,oc->nohw", padded[:, :, i : i + 6, j : j + 5], w[:, :, i, j])
    return out


@settings(max_examples=30, deadline=None)
@given(
    grouped=st.booleans(),
    activation=st.sampled_from(sorted(ACTIVATIONS)),
    bias_shape=st.sampled_from([(1, 6, 1, 1), (6, 1, 1), (1,), ()]),
    seed=st.integers(0, 2**16),
)
def test_conv_bias_activation_fuse_and_compute_as_before(grouped, activation, bias_shape, seed) -> None:
    model, dense, bias = _conv_model(grouped, activation, bias_shape, seed)
    original = model.clone()
    transform_model(model)
    types = [n.type_name for n in model.get_ops() if n.type_name not in ("Parameter", "Constant", "Result")]
    assert types == ["TemplateConvolution"]
    (fused,) = [n for n in model.get_ops() if n.type_name == "TemplateConvolution"]
    assert fused.attrs["activation"] == activation and fused.attrs["grouped"] == grouped
    assert fused_names(fused) == {"conv", "add"} | ({"act"} if activation != "none" else set())
    assert model.outputs[0].names == {"y"}
    value = np.random.default_rng(seed).standard_normal((1, 4, 6, 5)).astype(np.float32)
    result = evaluate(model, [value])[0]
    np.testing.assert_array_equal(result, evaluate(original, [value])[0])
    expected = NUMPY_ACTIVATIONS[activation](_direct(value, dense) + bias.reshape(-1, 1, 1))
    np.testing.assert_allclose(result, expected, rtol=1e-5, atol=1e-5)


@settings(max_examples=30, deadline=None)
@given(
    grouped=st.booleans(),
    activation=st.sampled_from(sorted(ACTIVATIONS)),
    scale_shape=st.sampled_from([(1, 6, 1, 1), (6, 1, 1), (1,), ()]),
    shift_shape=st.sampled_from([None, (1, 6, 1, 1), (1,)]),
    constant_first=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_an_affine_map_after_the_activation_joins_the_fused_convolution(
    grouped, activation, scale_shape, shift_shape, constant_first, seed
) -> None:
    """PP-LCNetV3's learnable affine blocks: ``act(conv + b) * s [+ t]``, per channel or scalar."""
    model, dense, bias = _conv_model(grouped, activation, (1, 6, 1, 1), seed)
    rng = np.random.default_rng(seed + 1)
    scale = rng.standard_normal(scale_shape).astype(np.float32)
    shift = None if shift_shape is None else rng.standard_normal(shift_shape).astype(np.float32)
    y = model.get_results()[0].input_value(0)
    y.set_names(set())
    y = opset.multiply(scale, y, name="mul") if constant_first else opset.multiply(y, scale, name="mul")
    if shift is not None:
        y = opset.add(y, shift, name="shift")
    y.output(0).set_names({"y"})
    model = hs.Model([y], model.get_parameters())
    original = model.clone()
    transform_model(model)
    (fused,) = [n for n in model.get_ops() if n.type_name not in ("Parameter", "Constant", "Result")]
    assert fused.type_name == "TemplateConvolution"
    assert {"conv", "add", "mul"} <= fused_names(fused) | {fused.friendly_name}
    value = np.random.default_rng(seed).standard_normal((1, 4, 6, 5)).astype(np.float32)
    result = evaluate(model, [value])[0]
    if activation != "none":  # without one, the common optimizations fold the affine map into the filters
        assert fused.get_input_size() == (4 if shift is None else 5)
        unfused = evaluate(original, [value])[0]
        if activation == "hswish":  # its division by 6 joins the scale: a rounding of y * s apart (before + t)
            np.testing.assert_allclose(result, unfused, rtol=3e-7, atol=2e-6)
        else:
            np.testing.assert_array_equal(result, unfused)
    expected = NUMPY_ACTIVATIONS[activation](_direct(value, dense) + bias.reshape(-1, 1, 1))
    expected = expected * scale.reshape(-1, 1, 1) + (0 if shift is None else shift.reshape(-1, 1, 1))
    np.testing.assert_allclose(result, expected, rtol=1e-5, atol=1e-5)
    compiled = hs.Core().compile_model(original, "TEMPLATE")
    np.testing.assert_array_equal(compiled(value)[0], result)


def test_an_affine_map_that_varies_spatially_or_is_read_twice_stays_outside() -> None:
    model, _, _ = _conv_model(False, "relu", (1, 6, 1, 1), 0)
    y = model.get_results()[0].input_value(0)
    spatial = opset.multiply(y, np.arange(5, dtype=np.float32), name="spatial")
    transform_model(spatial_model := hs.Model([spatial], model.get_parameters()))
    assert "Multiply" in [n.type_name for n in spatial_model.get_ops()]
    model, _, _ = _conv_model(False, "relu", (1, 6, 1, 1), 0)
    y = model.get_results()[0].input_value(0)
    twice = opset.multiply(y, np.float32(2), name="twice")
    transform_model(read_twice := hs.Model([opset.add(twice, np.float32(1)), twice], model.get_parameters()))
    types = [n.type_name for n in read_twice.get_ops()]
    assert "Multiply" not in types and types.count("Add") == 1  # the Add of a value also read elsewhere stays


def test_a_shift_without_a_scale_is_refused() -> None:
    x = opset.parameter([1, 2, 4, 4], name="x")
    conv = opset.convolution(x, np.ones((3, 2, 1, 1), np.float32), [1, 1], [0, 0], [0, 0], [1, 1])
    with pytest.raises(ModelValidationError, match="a shift needs a scale"):
        fused_convolution(conv, np.zeros(3, np.float32), shift=np.ones(3, np.float32))


def test_a_convolution_with_a_second_consumer_is_not_fused() -> None:
    x = opset.parameter([1, 2, 4, 4], name="x")
    conv = opset.convolution(x, np.ones((3, 2, 1, 1), np.float32), [1, 1], [0, 0], [0, 0], [1, 1])
    model = hs.Model([opset.add(conv, np.ones((1, 3, 1, 1), np.float32)), conv], [x])
    transform_model(model)
    assert "TemplateConvolution" not in [n.type_name for n in model.get_ops()]


def test_a_bias_that_varies_spatially_is_not_fused() -> None:
    x = opset.parameter([1, 2, 4, 4], name="x")
    conv = opset.convolution(x, np.ones((3, 2, 1, 1), np.float32), [1, 1], [0, 0], [0, 0], [1, 1])
    model = hs.Model([opset.add(conv, np.arange(4, dtype=np.float32))], [x])
    transform_model(model)
    assert "TemplateConvolution" not in [n.type_name for n in model.get_ops()]


def _chain() -> hs.Model:
    x = opset.parameter([1, 8], name="x")
    y = opset.relu(opset.multiply(x, np.float32(2)))
    return hs.Model([opset.add(y, np.float32(1))], [x])


def test_peak_memory_reports_the_live_intermediates_of_the_last_inference() -> None:
    compiled = hs.Core().compile_model(_chain(), "TEMPLATE", {"TEMPLATE_DISABLE_TRANSFORMATIONS": True})
    assert compiled.get_property(PEAK_MEMORY) == 0
    assert compiled.get_property("SUPPORTED_PROPERTIES")[PEAK_MEMORY] == "RO"
    compiled(np.ones((1, 8), np.float32))
    # each op's 32-byte result is alive with its 32-byte input, which dies once the op has run
    assert compiled.get_property(PEAK_MEMORY) == 2 * 32


def test_inference_num_threads_limits_blas_during_the_inference(monkeypatch: pytest.MonkeyPatch) -> None:
    threadpoolctl = pytest.importorskip("threadpoolctl")
    seen: list[int] = []
    compiled = hs.Core().compile_model(_chain(), "TEMPLATE", {"INFERENCE_NUM_THREADS": 1})
    plan = compiled._plan
    run = plan.run

    def observed(*args, **kwargs):
        seen.extend(p["num_threads"] for p in threadpoolctl.threadpool_info() if p["user_api"] == "blas")
        return run(*args, **kwargs)

    monkeypatch.setattr(plan, "run", observed)
    compiled(np.ones((1, 8), np.float32))
    assert seen and all(n == 1 for n in seen)
