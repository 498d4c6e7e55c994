"""The ORT device registered in-process: values against numpy written here, what it claims and
declines, HETERO splitting a model between ORT and TEMPLATE, threads, profiling, export/import, and the
conformance kit passing on it."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import hetero_sdk as hs
import numpy as np
import onnx
import pytest
from hetero_sdk import opset
from hetero_sdk.errors import BlobFormatError, UnsupportedOperationError
from hetero_sdk.hetero.plugin import HeteroPlugin
from hetero_sdk.plugin import unpack_blob
from template_plugin import TemplatePlugin

from hetero_sdk_ort import OrtCompiledModel, OrtPlugin

PACKAGE_ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def core() -> hs.Core:
    return hs.Core(plugins={"ORT": OrtPlugin, "TEMPLATE": TemplatePlugin, "HETERO": HeteroPlugin}, autoload=False)


def _mlp(w1: np.ndarray, b1: np.ndarray, w2: np.ndarray) -> hs.Model:
    x = opset.parameter([-1, w1.shape[0]], hs.Type.f32, name="x")
    h = opset.add(opset.matmul(x, opset.constant(w1, name="w1"), name="mm1"), opset.constant(b1, name="b1"), name="h")
    logits = opset.matmul(opset.relu(h, name="relu"), opset.constant(w2, name="w2"), name="mm2")
    return hs.Model([opset.softmax(logits, 1, name="probs")], [x], name="mlp")


def _softmax(z: np.ndarray) -> np.ndarray:
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def test_mlp_matches_numpy_for_any_batch(core: hs.Core) -> None:
    rng = np.random.default_rng(1)
    w1, b1, w2 = (rng.standard_normal(s).astype(np.float32) for s in [(5, 8), (8,), (8, 3)])
    compiled = core.compile_model(_mlp(w1, b1, w2), "ORT")
    for batch in (1, 4):
        xv = rng.standard_normal((batch, 5)).astype(np.float32)
        expected = _softmax(np.maximum(xv.astype(np.float64) @ w1 + b1, 0) @ w2)
        np.testing.assert_allclose(compiled({"x": xv})["probs"], expected, rtol=1e-5, atol=1e-6)


def test_shape_and_reduction_ops_match_numpy(core: hs.Core) -> None:
    a = opset.parameter([2, 3], hs.Type.f32, name="a")
    b = opset.parameter([2, 1], hs.Type.f32, name="b")
    joined = opset.concat([a, b], 1, name="joined")
    flat = opset.reshape(joined, opset.constant(np.array([4, 2], np.int64), name="shape"), False, name="flat")
    mean = opset.reduce_mean(flat, opset.constant(np.array([0], np.int64), name="axes"), name="mean")
    model = hs.Model([flat, mean], [a, b], name="shapes")
    av = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], np.float32)
    bv = np.array([[7.0], [8.0]], np.float32)
    got = core.compile_model(model, "ORT")({"a": av, "b": bv})
    np.testing.assert_array_equal(got["flat"], [[1.0, 2.0], [3.0, 7.0], [4.0, 5.0], [6.0, 8.0]])
    np.testing.assert_allclose(got["mean"], [3.5, 5.5])


def test_query_claims_every_op_of_a_model_it_runs(core: hs.Core) -> None:
    model = _mlp(np.ones((5, 8), np.float32), np.ones(8, np.float32), np.ones((8, 3), np.float32))
    claimed = core.query_model(model, "ORT")
    assert {n.friendly_name for n in model.get_ops()} == set(claimed)
    assert set(claimed.values()) == {"ORT"}


def test_query_declines_what_onnx_runtime_does_not_load(core: hs.Core) -> None:
    """ONNX Runtime's BitShift takes unsigned integers only: a signed shift is exported but not loadable."""
    x = opset.parameter([4], hs.Type.i32, name="x")
    model = hs.Model([opset.bitwise_left_shift(x, x, name="shift")], [x], name="signed_shift")
    assert core.query_model(model, "ORT") == {}
    u = opset.parameter([4], hs.Type.u8, name="u")
    unsigned = hs.Model([opset.bitwise_left_shift(u, u, name="shift")], [u], name="unsigned_shift")
    assert set(core.query_model(unsigned, "ORT")) == {"u", "shift", *[r.friendly_name for r in unsigned.get_results()]}


def test_query_declines_bfloat16_and_compile_refuses_it(core: hs.Core) -> None:
    x = opset.parameter([3], hs.Type.bf16, name="x")
    model = hs.Model([opset.relu(x, name="relu")], [x], name="bf16")
    assert core.query_model(model, "ORT") == {}
    with pytest.raises(
        UnsupportedOperationError,
        match=r"ORT cannot run 1 op\(s\) .*'relu' \(ORT does not run Relu on bf16 \(input 0\)\)",
    ):
        core.compile_model(model, "ORT")


def test_a_transposed_a_times_a_vector_is_declined_and_hetero_computes_it_right(core: hs.Core) -> None:
    """ONNX Runtime 1.32 fuses Transpose -> MatMul wrongly when B is 1-D: ORT declines that case only."""
    a = opset.parameter([2, 4, 3], hs.Type.f32, name="a")
    b = opset.parameter([4], hs.Type.f32, name="b")
    wrong = hs.Model([opset.matmul(a, b, transpose_a=True, name="mm")], [a, b], name="mv")
    assert "mm" not in core.query_model(wrong, "ORT")
    with pytest.raises(UnsupportedOperationError, match=r"'mm' \(ORT does not run MatMul with transpose_a and a 1-D B"):
        core.compile_model(wrong, "ORT")
    rng = np.random.default_rng(0)
    av, bv = rng.uniform(-2, 2, (2, 4, 3)).astype(np.float32), rng.uniform(-2, 2, 4).astype(np.float32)
    got = core.compile_model(wrong, "HETERO:ORT,TEMPLATE")({"a": av, "b": bv})["mm"]
    np.testing.assert_allclose(got, np.einsum("nkm,k->nm", av.astype(np.float64), bv), rtol=1e-5, atol=1e-6)
    b2 = opset.parameter([4, 2], hs.Type.f32, name="b2")
    fine = hs.Model([opset.matmul(a, b2, transpose_a=True, name="mm")], [a, b2], name="mm2")
    assert "mm" in core.query_model(fine, "ORT")


def test_hetero_splits_around_the_op_ort_declines_and_matches_numpy(core: hs.Core) -> None:
    x = opset.parameter([2, 3], hs.Type.f32, name="x")
    ints = opset.convert(opset.relu(x, name="relu"), hs.Type.i32, name="to_int")
    shifted = opset.bitwise_left_shift(ints, opset.constant(np.int32(2), name="two"), name="shift")
    y = opset.add(opset.convert(shifted, hs.Type.f32, name="to_float"), opset.constant(np.float32(0.5)), name="y")
    model = hs.Model([y], [x], name="split")

    compiled: Any = core.compile_model(model, "HETERO:ORT,TEMPLATE")  # HETERO's: it has placement_report()
    xv = np.array([[-1.0, 0.0, 1.5], [2.0, 3.0, -4.0]], np.float32)
    np.testing.assert_array_equal(compiled({"x": xv})["y"], [[0.5, 0.5, 4.5], [8.5, 12.5, 0.5]])
    report = compiled.placement_report()
    assert [device for device, _ in report.subgraphs] == ["ORT", "TEMPLATE", "ORT"]
    assert report.placement["shift"][0] == "TEMPLATE"


def test_one_thread_by_default_and_inference_num_threads_sets_intra_op_threads(core: hs.Core) -> None:
    x = opset.parameter([4], hs.Type.f32, name="x")
    model = hs.Model([opset.relu(x, name="y")], [x], name="m")
    default = core.compile_model(model, "ORT")
    threaded = core.compile_model(model, "ORT", {"INFERENCE_NUM_THREADS": 3})
    assert isinstance(default, OrtCompiledModel) and isinstance(threaded, OrtCompiledModel)
    assert default.session.get_session_options().intra_op_num_threads == 1
    assert threaded.session.get_session_options().intra_op_num_threads == 3
    assert threaded.get_property("INFERENCE_NUM_THREADS") == 3


def test_profiling_is_one_row_for_the_session_and_times_the_runtime_model(core: hs.Core) -> None:
    model = _mlp(np.ones((5, 8), np.float32), np.zeros(8, np.float32), np.ones((8, 3), np.float32))
    compiled = core.compile_model(model, "ORT", {"PERF_COUNT": True})
    request = compiled.create_infer_request()
    request.infer({"x": np.ones((2, 5), np.float32)})
    rows = request.get_profiling_info()
    assert [(row.node_name, row.node_type) for row in rows] == [("mlp", "OnnxRuntimeSession")]
    timed = {n.friendly_name for n in compiled.get_runtime_model().get_ops() if "execTimeMcs" in n.get_rt_info()}
    assert timed == {"mm1", "h", "relu", "mm2", "probs"}


def test_export_stores_the_onnx_bytes_and_import_runs_them(core: hs.Core) -> None:
    rng = np.random.default_rng(2)
    w1, b1, w2 = (rng.standard_normal(s).astype(np.float32) for s in [(5, 8), (8,), (8, 3)])
    blob = core.compile_model(_mlp(w1, b1, w2), "ORT").export_model()
    stored = onnx.load_from_string(unpack_blob(blob, "ORT")["onnx"])
    assert [i.name for i in stored.graph.input] == ["x"]
    assert {n.op_type for n in stored.graph.node} >= {"MatMul", "Add", "Relu", "Softmax"}

    imported = core.import_model(blob, "ORT")
    xv = rng.standard_normal((3, 5)).astype(np.float32)
    expected = _softmax(np.maximum(xv.astype(np.float64) @ w1 + b1, 0) @ w2)
    np.testing.assert_allclose(imported({"x": xv})["probs"], expected, rtol=1e-5, atol=1e-6)
    assert imported.get_property("LOADED_FROM_CACHE") is False
    with pytest.raises(BlobFormatError):
        core.import_model(blob[:-10], "ORT")
    with pytest.raises(BlobFormatError):
        core.import_model(blob, "TEMPLATE")


def test_conformance_kit_passes_every_mandatory_check(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The kit as a plugin author runs it, with 5 hypothesis examples per check (about 10 s)."""
    from hetero_sdk.conformance import run

    monkeypatch.chdir(tmp_path)
    report = tmp_path / "report.json"
    status = run(
        "ORT",
        extra_args=["--conformance-plugin", "hetero_sdk_ort:OrtPlugin", "--conformance-max-examples", "5", "-q"],
        report_json=report,
        env={"PYTHONPATH": os.pathsep.join(filter(None, [str(PACKAGE_ROOT), os.environ.get("PYTHONPATH")]))},
    )
    totals = json.loads(report.read_text())["groups"]["all"]
    assert (status, totals["mandatory_failed"], totals["failed"]) == (0, 0, 0)
    assert totals["passed"] >= 100
