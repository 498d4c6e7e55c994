"""AUTO with the real XLA device (when hetero-sdk-jax is installed): XLA on the CPU ranks before
TEMPLATE, TEMPLATE serves while XLA compiles, and a model with NonMaxSuppression (which XLA declines)
goes to TEMPLATE, or to HETERO when no single candidate runs it."""

from __future__ import annotations

import numpy as np
import pytest

import hetero_sdk as hs
from hetero_sdk.samples import detection_model
from template_plugin import TemplatePlugin

from .devices import FakeDevice, make_core, matmul_tanh, numpy_matmul_tanh

hetero_sdk_jax = pytest.importorskip("hetero_sdk_jax", reason="the XLA plugin (plugins/jax) is not installed")

X = np.random.default_rng(3).standard_normal((4, 8)).astype(np.float32)


@pytest.fixture(scope="module")
def core() -> hs.Core:
    return make_core(
        TEMPLATE=TemplatePlugin,
        XLA=hetero_sdk_jax.XlaPlugin,
        NOCONV=lambda: FakeDevice("numpy", declines=("Convolution",)),
    )


def _inputs(model: hs.Model) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(7)
    return {p.output(0).any_name: rng.standard_normal(p.output(0).shape).astype(np.float32)
            for p in model.get_parameters()}  # fmt: skip


def test_auto_chooses_xla_and_template_serves_first(core: hs.Core) -> None:
    compiled = core.compile_model(matmul_tanh(), "AUTO:XLA,TEMPLATE")
    assert compiled.selection.device == "XLA" and compiled.selection.startup == "TEMPLATE"
    first = compiled({"x": X})["y"]
    assert compiled.wait_for_selected_device(timeout=60)
    assert compiled.get_property("EXECUTION_DEVICES") == ["XLA.0"]
    np.testing.assert_allclose(first, numpy_matmul_tanh(X), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(compiled({"x": X})["y"], numpy_matmul_tanh(X), rtol=1e-5, atol=1e-6)


def test_nms_model_goes_to_template_which_runs_all_of_it(core: hs.Core) -> None:
    model = detection_model()
    compiled = core.compile_model(model, "AUTO:XLA,TEMPLATE")
    assert compiled.selection.device == "TEMPLATE"
    nms = [n.friendly_name for n in model.get_ops() if n.type_name == "NonMaxSuppression"]
    assert nms and set(nms) <= set(compiled.selection.declined["XLA"])
    assert compiled.get_property("EXECUTION_DEVICES") == ["TEMPLATE.0"]


def test_nms_model_is_split_by_hetero_when_no_candidate_runs_all_of_it(core: hs.Core) -> None:
    model = detection_model()
    inputs = _inputs(model)
    compiled = core.compile_model(model, "AUTO:XLA,NOCONV")
    assert compiled.selection.device == "HETERO:XLA,NOCONV"
    assert compiled.get_property("EXECUTION_DEVICES") == ["XLA.0", "NOCONV.0"]
    want = core.compile_model(model, "TEMPLATE")(inputs)
    got = compiled(inputs)
    for i in range(len(model.outputs)):
        np.testing.assert_allclose(got[i], want[i], rtol=1e-4, atol=1e-5)
