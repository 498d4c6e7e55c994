"""The triage of a failed case: ONNX Runtime on the case's exported model says whether the device or the
SDK is likely wrong (device results are made up here: the reference's, perturbed)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from hetero_sdk import Model, opset
from hetero_sdk.conformance import triage as triage_module
from hetero_sdk.conformance.triage import DEVICE_BUG, NO_SECOND_OPINION, SDK_ISSUE, THREE_WAY, triage

pytest.importorskip("onnxruntime")


def _softmax_case() -> tuple[Model, dict[str, np.ndarray], list[np.ndarray]]:
    x = opset.parameter([2, 3], np.float32, name="x")
    model = Model([opset.softmax(x, 1, name="y")], [x], name="m")
    value = np.array([[0.5, -1.0, 2.0], [0.0, 1.0, 3.0]], np.float32)
    e = np.exp(value - value.max(1, keepdims=True))
    return model, {"x": value}, [e / e.sum(1, keepdims=True)]  # numpy's softmax: what the reference gives


def test_a_device_that_differs_from_both_is_named(tmp_path: Path) -> None:
    model, inputs, want = _softmax_case()
    found = triage(model, inputs, [want[0] * 1.01], want, 1e-5, 1e-6, tmp_path)
    assert found.verdict == DEVICE_BUG
    assert found.lines[0].endswith("agree")  # ONNX Runtime vs the oracle
    assert "differ" in found.lines[1]  # the device vs ONNX Runtime
    assert (tmp_path / "model.onnx").is_file() and found.onnx_path == str(tmp_path / "model.onnx")
    assert found.text().startswith(f"triage: {DEVICE_BUG}\n")


def test_a_reference_that_onnx_runtime_contradicts_points_at_the_sdk() -> None:
    model, inputs, want = _softmax_case()
    wrong_reference = [want[0][:, ::-1].copy()]
    found = triage(model, inputs, want, wrong_reference, 1e-5, 1e-6)
    assert found.verdict == SDK_ISSUE


def test_three_different_results_say_so() -> None:
    model, inputs, want = _softmax_case()
    found = triage(model, inputs, [want[0] + 0.1], [want[0] - 0.1], 1e-5, 1e-6)
    assert found.verdict == THREE_WAY


def test_a_device_failure_on_a_valid_model() -> None:
    model, inputs, want = _softmax_case()
    assert "likely a device bug" in triage(model, inputs, None, want, 1e-5, 1e-6).verdict


def test_what_the_exporter_cannot_write_gets_no_second_opinion() -> None:
    x = opset.parameter([1, 1, 2, 2], np.float32, name="x")
    node = opset.interpolate(x, np.array([3, 3], np.int64), "linear", "sizes", axes=np.array([2, 3], np.int64))
    model = Model([node], [x])
    inputs = {"x": np.ones((1, 1, 2, 2), np.float32)}
    found = triage(model, inputs, [np.zeros((1, 1, 3, 3), np.float32)], [np.ones((1, 1, 3, 3), np.float32)], 0, 0)
    assert found.verdict.startswith(f"{NO_SECOND_OPINION}: could not export the case")
    assert "UnsupportedOperationError" in found.verdict


def test_without_onnx_runtime_the_verdict_says_how_to_get_one(monkeypatch: pytest.MonkeyPatch) -> None:
    model, inputs, want = _softmax_case()
    monkeypatch.setattr(triage_module.importlib.util, "find_spec", lambda name: None)
    found = triage(model, inputs, [want[0] * 2], want, 1e-5, 1e-6)
    assert found.verdict == f"{NO_SECOND_OPINION}: ONNX Runtime is not installed (pip install onnxruntime)"


def test_strings_round_trip_through_onnx_runtime() -> None:
    a = opset.parameter([2], np.dtypes.StringDType(), name="a")
    model = Model([opset.string_concat(a, a, name="y")], [a])
    (got,) = triage_module.run_onnxruntime(model, {"a": np.array(["x", "é"], np.dtypes.StringDType())})
    assert got.dtype == np.dtypes.StringDType() and got.tolist() == ["xx", "éé"]


def test_a_device_that_failed_is_not_said_to_differ(monkeypatch: pytest.MonkeyPatch) -> None:
    model, inputs, want = _softmax_case()
    monkeypatch.setattr(triage_module.importlib.util, "find_spec", lambda name: None)
    assert triage(model, inputs, None, want, 1e-5, 1e-6).verdict.startswith("the device failed; no second opinion")
