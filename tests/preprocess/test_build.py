"""``hetero_sdk.preprocess`` against OpenVINO's own ``PrePostProcessor``: the same steps, written once and
applied through both APIs (their method names are the same), run on the same inputs; ours on TEMPLATE
and XLA, OpenVINO's on its CPU at f32."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import hetero_sdk as hs
from hetero_sdk import opset
from hetero_sdk.errors import ModelValidationError
from hetero_sdk.hetero.plugin import HeteroPlugin
from hetero_sdk.preprocess import ColorFormat, PrePostProcessor, ResizeAlgorithm
from template_plugin import TemplatePlugin

ov = pytest.importorskip("openvino")
ov_opset = pytest.importorskip("openvino.opset13")
ov_preprocess = pytest.importorskip("openvino.preprocess")
hetero_sdk_jax = pytest.importorskip("hetero_sdk_jax", reason="the XLA plugin (plugins/jax) is not installed")

MODEL_SHAPE = [1, 3, 4, 5]  # NCHW
WEIGHT = np.array([0.5, -1.0, 2.0], np.float32).reshape(1, 3, 1, 1)


@dataclass(frozen=True)
class Recipe:
    """One preprocessing, applied the same way to either API."""

    element_type: str  # "f32" or "u8"
    tensor_layout: str
    spatial: tuple[int, int] | None
    resize: str | None
    steps: tuple[tuple[str, Any], ...]
    explicit_layout: str | None  # "layout", "permutation" or None (the implicit conversion)
    output_layout: str | None
    output_type: str | None

    def input_shape(self) -> list[int]:
        h, w = self.spatial or (MODEL_SHAPE[2], MODEL_SHAPE[3])
        return [1, h, w, 3] if self.tensor_layout == "NHWC" else [1, 3, h, w]


def apply(recipe: Recipe, ppp: Any, api: Any, element_type: Any, layout: Any) -> None:
    """Calls the same methods on ``ppp`` (ours or OpenVINO's); ``api`` holds the enums."""
    tensor = ppp.input().tensor().set_element_type(element_type[recipe.element_type])
    tensor.set_layout(layout(recipe.tensor_layout))
    if recipe.spatial is not None:
        tensor.set_spatial_static_shape(*recipe.spatial)
    if any(name == "convert_color" for name, _ in recipe.steps):
        tensor.set_color_format(api.ColorFormat.BGR)
    steps = ppp.input().preprocess()
    if recipe.element_type != "f32":
        steps.convert_element_type(element_type["f32"])
    if recipe.resize is not None:
        steps.resize(getattr(api.ResizeAlgorithm, recipe.resize))
    for name, value in recipe.steps:
        if name == "convert_color":
            steps.convert_color(api.ColorFormat.RGB)
        elif name == "reverse_channels":
            steps.reverse_channels()
        else:
            getattr(steps, name)(value)
    if recipe.explicit_layout == "layout":
        steps.convert_layout(layout("NCHW"))
    elif recipe.explicit_layout == "permutation":
        steps.convert_layout([0, 3, 1, 2] if recipe.tensor_layout == "NHWC" else [0, 1, 2, 3])
    ppp.input().model().set_layout(layout("NCHW"))
    if recipe.output_layout is not None:
        ppp.output().model().set_layout(layout("NCHW"))
        ppp.output().tensor().set_layout(layout(recipe.output_layout))
    if recipe.output_type is not None:
        ppp.output().tensor().set_element_type(element_type[recipe.output_type])


def ours(recipe: Recipe) -> hs.Model:
    x = opset.parameter(MODEL_SHAPE, hs.Type.f32, name="x")
    y = opset.multiply(x, opset.constant(WEIGHT), name="y")
    ppp = PrePostProcessor(hs.Model([y], [x], name="scaled"))
    apply(recipe, ppp, hs.preprocess, {"f32": hs.Type.f32, "u8": hs.Type.u8, "f16": hs.Type.f16}, hs.Layout)
    return ppp.build()


def openvino_result(recipe: Recipe, image: np.ndarray) -> np.ndarray:
    x = ov_opset.parameter(MODEL_SHAPE, ov.Type.f32, name="x")
    y = ov_opset.multiply(x, ov_opset.constant(WEIGHT))
    ppp = ov_preprocess.PrePostProcessor(ov.Model([y], [x], "scaled"))
    apply(recipe, ppp, ov_preprocess, {"f32": ov.Type.f32, "u8": ov.Type.u8, "f16": ov.Type.f16}, ov.Layout)
    compiled = ov.Core().compile_model(ppp.build(), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    return np.asarray(compiled({"x": image})[0])


@pytest.fixture(scope="module")
def core() -> hs.Core:
    plugins = {"TEMPLATE": TemplatePlugin(), "XLA": hetero_sdk_jax.XlaPlugin(), "HETERO": HeteroPlugin()}
    return hs.Core(plugins=plugins, autoload=False)


_CHANNELS = st.lists(st.sampled_from([0.5, 1.0, 2.0, 4.0, 127.5]), min_size=3, max_size=3).map(tuple)
_NUMBER = st.sampled_from([0.5, 2.0, 58.395, 127.5])
_STEP = st.one_of(
    st.tuples(st.just("mean"), st.one_of(_NUMBER, _CHANNELS)),
    st.tuples(st.just("scale"), st.one_of(_NUMBER, _CHANNELS)),
    st.tuples(st.just("reverse_channels"), st.none()),
    st.tuples(st.just("convert_color"), st.none()),
)


@st.composite
def recipes(draw: st.DrawFn) -> Recipe:
    spatial = draw(st.one_of(st.none(), st.tuples(st.integers(2, 9), st.integers(2, 9))))
    steps = draw(st.lists(_STEP, max_size=4, unique_by=lambda s: s[0]))
    return Recipe(
        element_type=draw(st.sampled_from(["f32", "u8"])),
        tensor_layout=draw(st.sampled_from(["NHWC", "NCHW"])),
        spatial=spatial,
        resize=None if spatial is None else draw(st.sampled_from(["RESIZE_LINEAR", "RESIZE_NEAREST", "RESIZE_CUBIC"])),
        steps=tuple(steps),
        explicit_layout=draw(st.sampled_from([None, "layout", "permutation"])),
        output_layout=draw(st.sampled_from([None, "NHWC", "NCHW"])),
        output_type=draw(st.sampled_from([None, "f32", "f16"])),
    )


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(recipe=recipes(), seed=st.integers(0, 2**16))
def test_our_steps_compute_what_openvinos_compute(core: hs.Core, recipe: Recipe, seed: int) -> None:
    rng = np.random.default_rng(seed)
    image = rng.integers(0, 256, recipe.input_shape()).astype(np.uint8 if recipe.element_type == "u8" else np.float32)
    want = openvino_result(recipe, image)
    model = ours(recipe)
    assert list(model.input(0).partial_shape) == recipe.input_shape()
    assert model.input(0).names == {"x"} and model.output(0).names == {"y"}
    tolerance = 1e-2 if recipe.output_type == "f16" else 1e-4
    for device in ("TEMPLATE", "XLA"):
        got = core.compile_model(model, device)({"x": image})[0]
        assert got.dtype == want.dtype and got.shape == want.shape, device
        np.testing.assert_allclose(
            got.astype(np.float64), want.astype(np.float64), rtol=tolerance, atol=tolerance * 10, err_msg=device
        )


def test_hetero_places_the_steps_as_any_other_ops(core: hs.Core) -> None:
    recipe = Recipe(
        "u8", "NHWC", (6, 7), "RESIZE_LINEAR", (("mean", 127.5), ("reverse_channels", None)), None, None, None
    )
    model = ours(recipe)
    original = {"x", "y"} | {op.friendly_name for op in model.get_ops() if op.get_type_name() in ("Result",)}
    for op in model.get_ops():  # the model's own ops on XLA, the preprocessing on TEMPLATE
        op.get_rt_info()["affinity"] = "XLA" if op.friendly_name in original else "TEMPLATE"
    image = np.random.default_rng(3).integers(0, 256, recipe.input_shape()).astype(np.uint8)
    compiled = core.compile_model(model, "HETERO:XLA,TEMPLATE")
    assert sorted(compiled.get_property("EXECUTION_DEVICES")) == ["TEMPLATE.0", "XLA.0"]
    np.testing.assert_allclose(compiled({"x": image})[0], openvino_result(recipe, image), rtol=1e-4, atol=1e-3)


def test_a_custom_step_and_an_output_postprocess_are_ops_of_the_model(core: hs.Core) -> None:
    x = opset.parameter([2, 3], hs.Type.f32, name="x")
    model = hs.Model([opset.relu(x, name="y")], [x])
    ppp = PrePostProcessor(model)
    ppp.input().preprocess().custom(lambda value: opset.negative(value))
    ppp.output().postprocess().custom(lambda value: opset.multiply(value, 3.0)).convert_element_type(hs.Type.i32)
    built = ppp.build()
    data = np.array([[1.5, -2.0, 0.0], [-0.5, 4.0, -7.25]], np.float32)
    got = core.compile_model(built, "TEMPLATE")({"x": data})["y"]
    np.testing.assert_array_equal(got, (np.maximum(-data, 0) * 3).astype(np.int32))
    assert [op.get_type_name() for op in model.get_ordered_ops()] == ["Parameter", "Relu", "Result"]  # unchanged


def test_a_model_of_two_inputs_needs_a_name_and_unknown_names_are_listed() -> None:
    a = opset.parameter([1, 3], hs.Type.f32, name="a")
    b = opset.parameter([1, 3], hs.Type.f32, name="b")
    ppp = PrePostProcessor(hs.Model([opset.add(a, b, name="s")], [a, b]))
    with pytest.raises(ModelValidationError, match=r"2 inputs; name one: input\('a', 'b'\)"):
        ppp.input()
    with pytest.raises(ModelValidationError, match="no input named 'c'; it has: a, b"):
        ppp.input("c")
    with pytest.raises(ModelValidationError, match="output index 1 does not exist"):
        ppp.output(1)
    assert ppp.input("b") is ppp.input(1)


def _image_model() -> hs.Model:
    x = opset.parameter(MODEL_SHAPE, hs.Type.f32, name="x")
    return hs.Model([opset.relu(x, name="y")], [x])


@pytest.mark.parametrize(
    ("configure", "message"),
    [
        (
            lambda p: p.input().preprocess().resize(ResizeAlgorithm.RESIZE_LINEAR),
            r"input 'x', step 1 \(resize\): needs dimension H but the tensor has no layout",
        ),
        (
            lambda p: p.input().tensor().set_layout("NCHW") and p.input().preprocess().mean([1.0, 2.0]),
            r"step 1 \(mean\): mean has 2 values for 3 channels",
        ),
        (
            lambda p: (
                p.input().tensor().set_layout("NC??")
                and p.input().preprocess().reverse_channels().resize(ResizeAlgorithm.RESIZE_CUBIC)
            ),
            r"step 2 \(resize\): needs dimension H but the tensor has the layout \[N,C,\?,\?\]",
        ),
        (
            lambda p: (
                p.input().tensor().set_element_type(hs.Type.u8).set_layout("NCHW") and p.input().preprocess().scale(2.0)
            ),
            r"scale needs a floating-point tensor, this one is u8; add convert_element_type",
        ),
        (
            lambda p: p.input().preprocess().convert_color(ColorFormat.RGB),
            r"convert_color\): converts the colour, but the tensor has none",
        ),
        (
            lambda p: p.input().tensor().set_layout("NCHW") and p.input().preprocess().convert_layout("NCDW"),
            r"cannot convert the layout \[N,C,H,W\] to \[N,C,D,W\]",
        ),
        (lambda p: p.input().preprocess().custom(lambda v: 3), r"custom step returned int; it must return an Output"),
        (
            lambda p: p.input().tensor().set_shape([1, 3, 4, 6]),
            r"the steps make f32\[1,3,4,6\], the model takes f32\[1,3,4,5\]",
        ),
    ],
    ids=[
        "resize-without-layout",
        "mean-channels",
        "resize-without-h",
        "scale-u8",
        "colour-unset",
        "layout-names",
        "custom",
        "shape",
    ],
)
def test_steps_that_do_not_fit_are_typed_errors_naming_input_and_step(configure: Any, message: str) -> None:
    ppp = PrePostProcessor(_image_model())
    configure(ppp)
    with pytest.raises(ModelValidationError, match=message):
        ppp.build()
