"""The oracle is independent of TEMPLATE's fast convolution: a bug planted in one of TEMPLATE's routes
(:mod:`template_plugin.convolution`) leaves the reference's results as they were, and the conformance
kit's comparison with the oracle (:func:`hetero_sdk.conformance.compare.assert_results_match`) reports
it; with the reference's convolution broken, TEMPLATE still computes every convolution."""

from __future__ import annotations

import numpy as np
import pytest
from direct_convolution import direct_convolution

import hetero_sdk as hs
from hetero_sdk import opset
from hetero_sdk.conformance.compare import assert_results_match, tolerance
from hetero_sdk.reference import convolution as reference_convolution
from hetero_sdk.reference import evaluate
from template_plugin import TemplatePlugin
from template_plugin import convolution as routes


def _conv_model(c_in: int, groups: int, strides: list[int], seed: int) -> tuple[hs.Model, np.ndarray, np.ndarray]:
    """A 3x3 (group) convolution padded by 1 feeding a Relu, its input, and the filters [O, C/groups, 3, 3]."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((1, c_in, 9, 8)).astype(np.float32)
    w = rng.standard_normal((8 if groups == 1 else c_in, c_in // groups, 3, 3)).astype(np.float32)
    data = opset.parameter(list(x.shape), name="x")
    if groups == 1:
        conv = opset.convolution(data, w, strides, [1, 1], [1, 1], [1, 1])
    else:
        conv = opset.group_convolution(data, w.reshape(groups, -1, *w.shape[1:]), strides, [1, 1], [1, 1], [1, 1])
    return hs.Model([opset.relu(conv)], [data]), x, w


ROUTES = {
    # route function planted with a bug: (input channels, groups, strides)
    "columns": (3, 1, [2, 2]),  # im2col and one GEMM
    "_tap_products": (16, 1, [1, 1]),  # the taps' stacked GEMM
    "_depthwise": (6, 6, [2, 2]),  # depthwise batched GEMVs
}


def _planted(right, calls: list[int]):
    """``right`` with an off-by-one bug: every element of its result is one more than it should be."""

    def wrong(*args, **kwargs):
        calls.append(1)
        result = right(*args, **kwargs)
        result += 1  # in place: im2col columns, or the route's product (maybe a view)
        return result

    return wrong


@pytest.mark.parametrize("route", sorted(ROUTES))
def test_a_bug_planted_in_templates_fast_convolution_is_caught_by_the_kit(route, monkeypatch) -> None:
    c_in, groups, strides = ROUTES[route]
    model, x, w = _conv_model(c_in, groups, strides, seed=len(route))
    oracle = evaluate(model, [x])
    expected = np.maximum(direct_convolution(x, w, groups, strides, [1, 1], [1, 1]), 0)
    np.testing.assert_allclose(oracle[0], expected, rtol=1e-5, atol=1e-5)
    rtol, atol = tolerance(hs.Type.f32, "accumulate", terms=c_in // groups * 9)
    core = hs.Core(plugins={"TEMPLATE": TemplatePlugin()}, autoload=False)
    right = core.compile_model(model, "TEMPLATE")([x]).to_tuple()
    assert_results_match(right, oracle, rtol, atol, what="Convolution")  # the kit passes TEMPLATE as it is

    calls: list[int] = []
    monkeypatch.setattr(routes, route, _planted(getattr(routes, route), calls))
    wrong = core.compile_model(model, "TEMPLATE")([x]).to_tuple()
    assert calls, f"the model did not take TEMPLATE's {route} route"
    unchanged = evaluate(model, [x])
    np.testing.assert_array_equal(unchanged[0], oracle[0])  # the oracle runs none of TEMPLATE's code
    with pytest.raises(AssertionError, match="results differ from the oracle"):
        assert_results_match(wrong, unchanged, rtol, atol, what="Convolution")


def test_template_computes_every_convolution_without_the_reference_convolution(monkeypatch) -> None:
    """The reference's convolution made to fail: TEMPLATE's convolutions (every route, fused or not, and the
    transposed convolution) still run, and give the results of a direct convolution written in the test."""

    def broken(*args, **kwargs):
        raise AssertionError("TEMPLATE called the reference's convolution")

    monkeypatch.setattr(reference_convolution, "correlate", broken)
    core = hs.Core(plugins={"TEMPLATE": TemplatePlugin()}, autoload=False)
    for c_in, groups, strides in ROUTES.values():
        model, x, w = _conv_model(c_in, groups, strides, seed=c_in)
        with pytest.raises(hs.errors.InferenceError, match="reference's convolution"):
            evaluate(model, [x])
        for config in ({}, {"TEMPLATE_DISABLE_TRANSFORMATIONS": True}):
            got = core.compile_model(model, "TEMPLATE", config)([x])[0]
            expected = np.maximum(direct_convolution(x, w, groups, strides, [1, 1], [1, 1]), 0)
            np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)
    x = np.random.default_rng(1).standard_normal((1, 4, 3, 5)).astype(np.float32)
    w = np.random.default_rng(2).standard_normal((4, 2, 2, 2)).astype(np.float32)
    data = opset.parameter(list(x.shape), name="x")
    upsample = hs.Model([opset.convolution_backprop_data(data, w, [2, 2])], [data])
    got = core.compile_model(upsample, "TEMPLATE")([x])[0]
    expected = np.einsum("nchw,cokl->nohkwl", x, w).reshape(1, 2, 6, 10)  # each pixel's own 2x2 block
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)
