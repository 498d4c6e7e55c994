"""The TUTORIAL device registered in-process: its values against numpy, its properties, what it claims,
HETERO sending the ops it lacks to TEMPLATE, and the conformance kit passing on it."""

from __future__ import annotations

import json
import os
from pathlib import Path

import hetero_sdk as hs
import numpy as np
import pytest
from hetero_sdk import opset
from hetero_sdk.errors import (
    PropertyValueError,
    UnsupportedOperationError,
    UnsupportedPropertyError,
)
from hetero_sdk.hetero.plugin import HeteroPlugin
from hypothesis import given, settings
from hypothesis import strategies as st
from template_plugin import TemplatePlugin

from hetero_sdk_tutorial import SUPPORTED_OPS, TutorialPlugin


@pytest.fixture
def core() -> hs.Core:
    return hs.Core(
        plugins={"TUTORIAL": TutorialPlugin, "TEMPLATE": TemplatePlugin, "HETERO": HeteroPlugin}, autoload=False
    )


def _dense(w: np.ndarray, b: np.ndarray, batch: int) -> hs.Model:
    x = opset.parameter([batch, w.shape[0]], hs.Type.f32, name="x")
    h = opset.add(opset.matmul(x, opset.constant(w, name="w"), name="mm"), opset.constant(b, name="b"), name="biased")
    y = opset.tanh(opset.maximum(h, opset.negative(opset.abs(h, name="abs"), name="neg"), name="max"), name="y")
    return hs.Model([y], [x], name="dense")


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


@settings(max_examples=25, deadline=None)
@given(
    st.integers(1, 4),
    st.integers(1, 6),
    st.integers(1, 6),
    st.integers(0, 2**32 - 1),
)
def test_dense_block_matches_numpy(batch: int, n_in: int, n_out: int, seed: int) -> None:
    core = hs.Core(plugins={"TUTORIAL": TutorialPlugin}, autoload=False)
    rng = np.random.default_rng(seed)
    w = rng.standard_normal((n_in, n_out)).astype(np.float32)
    b = rng.standard_normal(n_out).astype(np.float32)
    x = rng.standard_normal((batch, n_in)).astype(np.float32)
    got = core.compile_model(_dense(w, b, batch), "TUTORIAL")({"x": x})["y"]
    h = x.astype(np.float64) @ w + b
    np.testing.assert_allclose(got, np.tanh(np.maximum(h, -np.abs(h))), rtol=1e-5, atol=1e-6)


def test_elementwise_and_activations_match_numpy(core: hs.Core) -> None:
    a = opset.parameter([2, 3], hs.Type.f32, name="a")
    b = opset.parameter([3], hs.Type.f32, name="b")
    outs = [
        opset.subtract(a, b, name="sub"),
        opset.multiply(a, b, name="mul"),
        opset.minimum(a, b, name="min"),
        opset.relu(a, name="relu"),
        opset.sigmoid(a, name="sig"),
    ]
    model = hs.Model(outs, [a, b], name="elementwise")
    av = np.array([[-2.0, -0.5, 0.0], [0.5, 1.0, 3.0]], np.float32)
    bv = np.array([1.0, -1.0, 0.25], np.float32)
    got = core.compile_model(model, "TUTORIAL")({"a": av, "b": bv})
    np.testing.assert_array_equal(got["sub"], av - bv)
    np.testing.assert_array_equal(got["mul"], av * bv)
    np.testing.assert_array_equal(got["min"], np.minimum(av, bv))
    np.testing.assert_array_equal(got["relu"], np.where(av > 0, av, 0))
    np.testing.assert_allclose(got["sig"], _sigmoid(av.astype(np.float64)), rtol=1e-6)


def test_query_claims_supported_ops_and_leaves_out_the_rest(core: hs.Core) -> None:
    x = opset.parameter([2, 4], hs.Type.f32, name="x")
    h = opset.relu(x, name="relu")
    y = opset.softmax(h, 1, name="softmax")
    model = hs.Model([y], [x], name="m")
    claimed = core.query_model(model, "TUTORIAL")
    assert claimed == {"x": "TUTORIAL", "relu": "TUTORIAL"}
    assert "Softmax" not in SUPPORTED_OPS


def test_non_f32_ops_are_not_claimed(core: hs.Core) -> None:
    x = opset.parameter([3], hs.Type.i32, name="x")
    y = opset.add(x, x, name="y")
    assert core.query_model(hs.Model([y], [x], name="ints"), "TUTORIAL") == {}


def test_compile_refuses_unsupported_ops_naming_them(core: hs.Core) -> None:
    x = opset.parameter([2, 4], hs.Type.f32, name="x")
    model = hs.Model([opset.exp(x, name="e")], [x], name="m")
    with pytest.raises(
        UnsupportedOperationError, match=r"TUTORIAL cannot run 1 op\(s\) .*'e' \(TUTORIAL does not run op type Exp\)"
    ):
        core.compile_model(model, "TUTORIAL")


def test_hetero_sends_the_op_tutorial_lacks_to_template(core: hs.Core) -> None:
    rng = np.random.default_rng(0)
    w = rng.standard_normal((4, 3)).astype(np.float32)
    x = opset.parameter([2, 4], hs.Type.f32, name="x")
    h = opset.relu(opset.matmul(x, opset.constant(w, name="w"), name="mm"), name="relu")
    y = opset.multiply(opset.softmax(h, 1, name="softmax"), opset.constant(np.float32(2.0), name="two"), name="y")
    model = hs.Model([y], [x], name="split")

    compiled = core.compile_model(model, "HETERO:TUTORIAL,TEMPLATE", {"PERF_COUNT": True})
    request = compiled.create_infer_request()
    xv = rng.standard_normal((2, 4)).astype(np.float32)
    got = request.infer({"x": xv})["y"]

    h_ref = np.maximum(xv.astype(np.float64) @ w, 0)
    e = np.exp(h_ref - h_ref.max(axis=1, keepdims=True))
    np.testing.assert_allclose(got, 2 * e / e.sum(axis=1, keepdims=True), rtol=1e-5)
    report = compiled.placement_report()
    assert [device for device, _ in report.subgraphs] == ["TUTORIAL", "TEMPLATE", "TUTORIAL"]
    assert report.placement["softmax"][0] == "TEMPLATE"
    assert report.rejected_by["softmax"] == ["TUTORIAL"]
    assert compiled.get_property("HETERO_NUMBER_OF_SUBMODELS") == 3
    names = [row.node_name for row in request.get_profiling_info()]
    assert "subgraph0: mm" in names and "subgraph1: softmax" in names and "subgraph2: y" in names


def test_properties_validate_and_reach_compiled_models(core: hs.Core) -> None:
    assert core.get_property("TUTORIAL", "SUPPORTED_PROPERTIES")["PERF_COUNT"] == "RW"
    assert core.get_property("TUTORIAL", "FULL_DEVICE_NAME").startswith("Tutorial device")
    core.set_property("TUTORIAL", {"PERFORMANCE_HINT": "THROUGHPUT"})
    model = hs.Model([opset.relu(x := opset.parameter([2], hs.Type.f32, name="x"), name="y")], [x], name="m")
    assert core.compile_model(model, "TUTORIAL").get_property("PERFORMANCE_HINT") == "THROUGHPUT"
    assert core.compile_model(model, "TUTORIAL", {"PERF_COUNT": "YES"}).get_property("PERF_COUNT") is True
    assert core.get_property("TUTORIAL", "PERF_COUNT") is False
    with pytest.raises(PropertyValueError, match=r"PERFORMANCE_HINT.*LATENCY, THROUGHPUT"):
        core.set_property("TUTORIAL", {"PERFORMANCE_HINT": "FASTEST"})
    with pytest.raises(UnsupportedPropertyError, match="read-only"):
        core.set_property("TUTORIAL", {"FULL_DEVICE_NAME": "x"})
    with pytest.raises(UnsupportedPropertyError, match="NUM_STREAMS"):
        core.compile_model(model, "TUTORIAL", {"NUM_STREAMS": 2})


def test_runtime_model_carries_profiled_times(core: hs.Core) -> None:
    x = opset.parameter([2], hs.Type.f32, name="x")
    model = hs.Model([opset.abs(x, name="y")], [x], name="m")
    compiled = core.compile_model(model, "TUTORIAL", {"PERF_COUNT": True})
    assert "execTimeMcs" not in compiled.get_runtime_model().get_ops()[1].get_rt_info()
    compiled.create_infer_request().infer({"x": np.array([-1.0, 2.0], np.float32)})
    timed = {n.friendly_name for n in compiled.get_runtime_model().get_ops() if "execTimeMcs" in n.get_rt_info()}
    assert "y" in timed


def test_export_is_not_supported(core: hs.Core) -> None:
    x = opset.parameter([2], hs.Type.f32, name="x")
    compiled = core.compile_model(hs.Model([opset.abs(x, name="y")], [x], name="m"), "TUTORIAL")
    with pytest.raises(UnsupportedOperationError, match="export_model"):
        compiled.export_model()
    with pytest.raises(UnsupportedOperationError, match="'TUTORIAL' does not implement import_model"):
        core.import_model(b"blob", "TUTORIAL")


def test_conformance_kit_passes_every_mandatory_check(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What the tutorial promises in its last step: the kit, run as a plugin author runs it."""
    from hetero_sdk.conformance import run

    monkeypatch.chdir(tmp_path)
    report = tmp_path / "report.json"
    package_root = str(Path(__file__).resolve().parents[1])
    status = run(
        "TUTORIAL",
        extra_args=["--conformance-plugin", "hetero_sdk_tutorial:TutorialPlugin", "-q"],
        report_json=report,
        env={"PYTHONPATH": os.pathsep.join(filter(None, [package_root, os.environ.get("PYTHONPATH")]))},
    )
    totals = json.loads(report.read_text())["groups"]["all"]
    assert (status, totals["mandatory_failed"], totals["failed"]) == (0, 0, 0)
    assert totals["passed"] >= 40
