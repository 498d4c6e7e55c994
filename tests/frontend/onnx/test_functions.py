"""Ops ONNX defines as functions of other ops translate through their function bodies when no rule
does, with the node's attributes (or the schema's defaults) bound into the body."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from onnx import helper
from onnx_models import graph_model, value_info

import hetero_sdk as hs
from hetero_sdk.frontend.onnx.rules import find_rule


def _run_one(op: str, x: np.ndarray, opset: int, **attributes: Any) -> np.ndarray:
    node = helper.make_node(op, ["x"], ["y"], name="under_test", **attributes)
    model = graph_model(
        [node], [value_info("x", np.float32, list(x.shape))], [value_info("y", np.float32, [None] * x.ndim)], opset,
        full_check=False,  # ONNX's inference refuses MeanVarianceNormalization's body when axes take their default
    )  # fmt: skip
    return hs.Core().compile_model(hs.convert_model(model), "TEMPLATE")({"x": x})["y"]  # type: ignore[no-any-return]


SAMPLE = np.array([[-2.0, -0.3, 0.0, 0.4, 1.5], [3.0, -1.0, 0.25, -0.6, 0.6]], np.float32)


@pytest.mark.parametrize("alpha", [2.0, 0.5, -1.0])
def test_swish_runs_its_function_body_with_the_nodes_attributes(alpha: float) -> None:
    assert find_rule("", "Swish", 24) is None  # translated only through its function body
    x = SAMPLE
    expected = x / (1 + np.exp(-alpha * x))
    np.testing.assert_allclose(_run_one("Swish", x, 24, alpha=alpha), expected, rtol=1e-5)


def test_swish_takes_the_schemas_defaults_for_attributes_left_out() -> None:
    x = SAMPLE
    expected = x / (1 + np.exp(-x))  # alpha=1
    np.testing.assert_allclose(_run_one("Swish", x, 24), expected, rtol=1e-5)


def test_mean_variance_normalization_normalizes_over_batch_and_space_by_default() -> None:
    x = np.random.default_rng(0).standard_normal((2, 3, 4, 5)).astype(np.float32)
    mean = x.mean(axis=(0, 2, 3), keepdims=True)
    expected = (x - mean) / np.sqrt(((x - mean) ** 2).mean(axis=(0, 2, 3), keepdims=True))
    np.testing.assert_allclose(_run_one("MeanVarianceNormalization", x, 18), expected, rtol=1e-4, atol=1e-5)


def _rms_norm_model(axis: int, shape: list[int]) -> Any:
    node = helper.make_node("RMSNormalization", ["x", "w"], ["y"], name="rms", axis=axis)
    inputs = [value_info("x", np.float32, shape), value_info("w", np.float32, shape[axis:] if axis < 0 else [])]
    return graph_model([node], inputs, [value_info("y", np.float32, shape)], 23, full_check=False)


@pytest.mark.parametrize("axis", [-(2**31), -4, 3, 2**40])
def test_a_function_ops_axis_outside_its_inputs_rank_is_refused_before_its_body_is_built(axis: int) -> None:
    """RMSNormalization's body folds Range(axis, rank): axis -2**31 once made it build 2**31 axes (a hang)."""
    node = helper.make_node("RMSNormalization", ["x", "w"], ["y"], name="rms", axis=axis)
    model = graph_model(
        [node], [value_info("x", np.float32, [2, 3, 4]), value_info("w", np.float32, [4])],
        [value_info("y", np.float32, [2, 3, 4])], 23, full_check=False,
    )  # fmt: skip
    with pytest.raises(
        hs.errors.ModelValidationError, match=rf"'rms': attribute axis: axis {axis} is out of range.*-3\.\.2"
    ):
        hs.convert_model(model)


@pytest.mark.parametrize("axis", [-3, -2, -1])
def test_rms_normalization_over_the_axes_from_axis_on_matches_onnx_reference(axis: int) -> None:
    from onnx.reference import ReferenceEvaluator

    model = _rms_norm_model(axis, [2, 3, 4])
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    w = rng.standard_normal((2, 3, 4)[axis:]).astype(np.float32)
    expected = ReferenceEvaluator(model).run(None, {"x": x, "w": w})[0]
    got = hs.Core().compile_model(hs.convert_model(model), "TEMPLATE")({"x": x, "w": w})["y"]
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)
