"""AUTO compiles on the first candidate that runs the whole model; when none does, HETERO splits the model
over the candidates in priority order; EXECUTION_DEVICES names the devices actually used."""

from __future__ import annotations

import numpy as np
import pytest

import hetero_sdk as hs
from hetero_sdk.auto import AutoPlugin
from hetero_sdk.errors import PropertyValueError, UnsupportedOperationError
from template_plugin import TemplatePlugin

from .devices import FakeDevice, make_core, matmul_tanh, numpy_matmul_tanh

X = np.random.default_rng(0).standard_normal((4, 8)).astype(np.float32)


@pytest.fixture
def core() -> hs.Core:
    return make_core(
        TEMPLATE=TemplatePlugin,
        ACCEL=lambda: FakeDevice("cuda", declines=("Tanh",)),
        XLA=lambda: FakeDevice("cpu", declines=("Tanh",)),
        MATH=lambda: FakeDevice("numpy", declines=("MatMul",)),
    )


def test_the_first_candidate_that_runs_the_whole_model_is_chosen(core: hs.Core) -> None:
    compiled = core.compile_model(matmul_tanh(), "AUTO:ACCEL,MATH,TEMPLATE")
    assert compiled.get_property("EXECUTION_DEVICES") == ["TEMPLATE.0"]
    assert compiled.selection.device == "TEMPLATE"
    assert compiled.selection.declined == {"ACCEL": ["y"], "MATH": ["mm"], "TEMPLATE": []}
    np.testing.assert_allclose(compiled({"x": X})["y"], numpy_matmul_tanh(X), rtol=1e-6, atol=1e-6)


def test_hetero_splits_the_model_when_no_candidate_runs_all_of_it(core: hs.Core) -> None:
    compiled = core.compile_model(matmul_tanh(), "AUTO:ACCEL,MATH")
    assert compiled.selection.device == "HETERO:ACCEL,MATH"
    assert compiled.get_property("EXECUTION_DEVICES") == ["ACCEL.0", "MATH.0"]
    assert compiled.get_property("HETERO_NUMBER_OF_SUBMODELS") == 2
    np.testing.assert_allclose(compiled({"x": X})["y"], numpy_matmul_tanh(X), rtol=1e-6, atol=1e-6)
    model = matmul_tanh()
    assert core.query_model(model, "AUTO:ACCEL,MATH") == core.query_model(model, "HETERO:ACCEL,MATH")


def test_query_model_answers_with_the_device_compile_would_choose(core: hs.Core) -> None:
    answer = core.query_model(matmul_tanh(), "AUTO:ACCEL,TEMPLATE")
    assert set(answer.values()) == {"TEMPLATE"}
    assert {"x", "w", "mm", "y"} <= set(answer)


def test_ops_no_candidate_runs_are_named(core: hs.Core) -> None:
    with pytest.raises(UnsupportedOperationError, match=r"no device runs y \(Tanh\).*asked: ACCEL, XLA"):
        core.compile_model(matmul_tanh(), "AUTO:ACCEL,XLA")


def test_without_hetero_a_split_model_is_refused_with_the_reason() -> None:
    core = hs.Core(
        plugins={
            "AUTO": AutoPlugin,
            "ACCEL": lambda: FakeDevice("cuda", declines=("Tanh",)),
            "MATH": lambda: FakeDevice("numpy", declines=("MatMul",)),
        },
        autoload=False,
    )
    with pytest.raises(UnsupportedOperationError, match="HETERO device that would split it is not registered"):
        core.compile_model(matmul_tanh(), "AUTO:ACCEL,MATH")


def test_a_device_failing_to_compile_passes_the_model_to_the_next_that_runs_it() -> None:
    core = make_core(ACCEL=lambda: FakeDevice("cuda", fail_compile=True), TEMPLATE=TemplatePlugin)
    compiled = core.compile_model(matmul_tanh(), "AUTO", {"ENABLE_STARTUP_FALLBACK": False})
    assert compiled.get_property("EXECUTION_DEVICES") == ["TEMPLATE.0"]
    assert "failed on purpose" in compiled.selection.failures["ACCEL"]
    np.testing.assert_allclose(compiled({"x": X})["y"], numpy_matmul_tanh(X), rtol=1e-6, atol=1e-6)


def test_a_value_every_candidate_refuses_is_a_property_error_not_an_unsupported_op(core: hs.Core) -> None:
    with pytest.raises(PropertyValueError, match="65 is not a valid value for NUM_STREAMS"):
        core.compile_model(matmul_tanh(), "AUTO:TEMPLATE", {"NUM_STREAMS": 65})
    with pytest.raises(PropertyValueError, match="'f8' is not a valid value for INFERENCE_PRECISION_HINT"):
        core.compile_model(matmul_tanh(), "AUTO:TEMPLATE", {"INFERENCE_PRECISION_HINT": "f8"})
