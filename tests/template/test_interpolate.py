"""TEMPLATE's Interpolate: a nearest upscale by whole factors repeats every element (its own copy, no
reference kernel), other resizes are the reference's."""

from __future__ import annotations

import numpy as np
import pytest

import hetero_sdk as hs
from hetero_sdk import opset
from hetero_sdk.reference import KERNELS, evaluate
from template_plugin import TemplatePlugin


def _resize(shape: list[int], scales: list[float], mode: str = "nearest", **attrs) -> hs.Model:
    image = opset.parameter(shape, name="image")
    node = opset.interpolate(image, np.float32(scales), mode, "scales", axes=np.int64([2, 3]), **attrs)
    return hs.Model([node], [image])


@pytest.mark.parametrize(
    ("scales", "transform"), [([2, 2], "half_pixel"), ([3, 2], "asymmetric"), ([1, 4], "half_pixel")]
)
def test_a_whole_factor_nearest_upscale_repeats_every_element_without_the_reference(scales, transform, monkeypatch):
    x = np.random.default_rng(0).standard_normal((1, 2, 3, 4)).astype(np.float32)
    nearest = "floor" if transform == "asymmetric" else "round_prefer_floor"  # both repeat each element
    model = _resize(list(x.shape), scales, coordinate_transformation_mode=transform, nearest_mode=nearest)
    expected = np.repeat(np.repeat(x, scales[0], axis=2), scales[1], axis=3)
    np.testing.assert_array_equal(evaluate(model, [x])[0], expected)

    def refused(*args):
        raise AssertionError("TEMPLATE called the reference's Interpolate")

    monkeypatch.setitem(KERNELS._entries, "Interpolate", refused)
    core = hs.Core(plugins={"TEMPLATE": TemplatePlugin()}, autoload=False)
    np.testing.assert_array_equal(core.compile_model(model, "TEMPLATE")([x])[0], expected)


@pytest.mark.parametrize(("scales", "mode"), [([1.5, 2], "nearest"), ([0.5, 0.5], "nearest"), ([2, 2], "linear_onnx")])
def test_other_resizes_give_the_references_results(scales, mode) -> None:
    x = np.random.default_rng(1).standard_normal((1, 2, 4, 6)).astype(np.float32)
    model = _resize(list(x.shape), scales, mode)
    core = hs.Core(plugins={"TEMPLATE": TemplatePlugin()}, autoload=False)
    np.testing.assert_array_equal(core.compile_model(model, "TEMPLATE")([x])[0], evaluate(model, [x])[0])
