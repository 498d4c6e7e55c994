"""``hetero-sdk benchmark``: the main job (partition, results check, timing) and benchmark_app's options."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hetero_sdk.cli import check as check_module

from .helpers import Invoke, assert_one_line_error, make_core, names, op_devices, parse_json
from .model_files import dense_relu, scored_boxes

SPLIT = ("-d", "HETERO:ACCEL,TEMPLATE")


def _assert_consistent_timing(data: dict[str, Any]) -> None:
    stats = data["latency_ms"]
    assert set(stats) == {"median", "average", "min", "max", "p90", "p99"}
    assert 0 < stats["min"] <= stats["median"] <= stats["p90"] <= stats["p99"] <= stats["max"]
    assert stats["min"] <= stats["average"] <= stats["max"]
    assert data["throughput_fps"] == pytest.approx(data["iterations"] / data["duration_s"])
    assert data["first_inference_ms"] > 0


def test_main_job_splits_checks_and_times_the_detection_sample(invoke: Invoke) -> None:
    data = parse_json(invoke("benchmark", *SPLIT, "-niter", "4", "--json"))
    assert data["model"]["name"] == "detection" and data["model"]["source"] == "sample:detection"
    assert op_devices(data["partition"])["nms"] == "TEMPLATE"
    assert [s["device"] for s in data["partition"]["subgraphs"]] == ["ACCEL", "TEMPLATE"]
    assert data["check"]["status"] == "PASS"
    assert [o["name"] for o in data["check"]["outputs"]] == ["selected_indices", "selected_scores", "valid_outputs"]
    assert all(o["ok"] for o in data["check"]["outputs"])
    settings = data["settings"]
    assert (settings["api"], settings["niter"], settings["time_limit_s"]) == ("async", 4, None)
    assert settings["nireq"] >= 2  # the device's optimal: HETERO keeps both submodels busy
    assert data["iterations"] == 4
    assert data["config"] == {"PERFORMANCE_HINT": "THROUGHPUT"}
    assert data["executables_compiled"] is None  # these devices do not say how many executables they compiled
    _assert_consistent_timing(data)


def test_main_job_text_prints_partition_check_and_timing(invoke: Invoke) -> None:
    result = invoke("benchmark", *SPLIT, "-niter", "2")
    assert result.exit_code == 0, result.output
    text = result.stdout
    assert text.index("Partition") < text.index("Results check") < text.index("Timing")
    assert "PASS: 3 output(s) equal hetero_sdk.reference.evaluate" in text
    assert "nms (rejected by ACCEL)" in text
    timing = text[text.index("Timing") :].splitlines()
    labels = [line.split()[0] for line in timing[2:] if line.strip()]
    # benchmark_app's report: Count, Duration, Latency (Median, Average, Min, Max), Throughput
    latency = ["Latency:", "Median", "Average", "Min", "Max", "p90", "p99"]
    assert labels == ["First", "Count", "Duration", *latency, "Throughput"]
    assert "  Count            2 iterations" in text
    assert text.rstrip().endswith("FPS")


def test_default_device_is_hetero_xla_template_when_xla_is_there(invoke: Invoke) -> None:
    data = parse_json(invoke("benchmark", "-niter", "1", "--json", core=make_core(accelerator="XLA")))
    assert data["device"] == "HETERO:XLA,TEMPLATE"
    assert op_devices(data["partition"])["nms"] == "TEMPLATE"
    assert data["check"]["status"] == "PASS"


def test_default_device_is_template_without_xla_and_d_wins(invoke: Invoke) -> None:
    assert parse_json(invoke("benchmark", "-niter", "1", "--json"))["device"] == "TEMPLATE"
    core = make_core(accelerator="XLA")
    data = parse_json(invoke("benchmark", "mlp", "-d", "TEMPLATE", "-niter", "1", "--json", core=core))
    assert data["device"] == "TEMPLATE" and data["execution_devices"] == ["TEMPLATE.0"]


def test_sync_api_uses_one_request_and_the_latency_hint(invoke: Invoke) -> None:
    data = parse_json(invoke("benchmark", "mlp", "--api", "sync", "-niter", "5", "--json"))
    assert data["settings"]["nireq"] == 1 and data["iterations"] == 5
    assert data["config"] == {"PERFORMANCE_HINT": "LATENCY"}
    _assert_consistent_timing(data)


def test_time_limit_alias_and_explicit_nireq_and_hint(invoke: Invoke) -> None:
    data = parse_json(invoke("benchmark", "mlp", "--time", "0.2", "-nireq", "2", "--hint", "latency", "--json"))
    assert data["settings"] == {"api": "async", "nireq": 2, "niter": None, "time_limit_s": 0.2}
    assert data["duration_s"] >= 0.2 and data["iterations"] >= 1
    assert data["config"] == {"PERFORMANCE_HINT": "LATENCY"}
    short = parse_json(invoke("benchmark", "mlp", "-t", "0.1", "--hint", "none", "--json"))
    assert short["settings"]["time_limit_s"] == 0.1 and short["config"] == {}


def test_pc_reports_per_subgraph_and_per_op_counters(invoke: Invoke) -> None:
    data = parse_json(invoke("benchmark", *SPLIT, "-niter", "2", "--pc", "--json"))
    counters = data["perf_counts"]
    assert names(counters["subgraphs"]) == ["subgraph0: total", "subgraph1: total"]
    assert [row["exec_type"] for row in counters["subgraphs"]] == ["ACCEL.0", "TEMPLATE.0"]
    ops = {row["name"]: row for row in counters["ops"]}
    assert ops["subgraph1: nms"]["type"] == "NonMaxSuppression"
    assert ops["subgraph0: backbone0/conv"]["type"] == "Convolution"
    assert all(row["real_time_ms"] >= 0 and row["status"] == "EXECUTED" for row in counters["ops"])
    assert data["config"]["PERF_COUNT"] is True


def test_report_file_holds_the_json_report(invoke: Invoke, tmp_path: Path) -> None:
    target = tmp_path / "report.json"
    result = invoke("benchmark", "mlp", "-niter", "2", "--report", str(target))
    assert result.exit_code == 0, result.output
    saved = json.loads(target.read_text())
    assert saved["iterations"] == 2 and saved["check"]["status"] == "PASS"
    assert "Throughput" in result.stdout  # the terminal still gets the text report


def test_results_check_fails_when_outputs_differ_from_the_reference(
    invoke: Invoke, monkeypatch: pytest.MonkeyPatch
) -> None:
    honest = check_module.evaluate

    def off_by_a_little(model: Any, inputs: Any) -> list[np.ndarray]:
        outputs = honest(model, inputs)
        outputs[1] = outputs[1] + np.float32(1e-2)  # selected_scores
        return outputs

    monkeypatch.setattr(check_module, "evaluate", off_by_a_little)
    result = invoke("benchmark", *SPLIT, "-niter", "1", "--json")
    assert result.exit_code == 1
    data = json.loads(result.stdout)
    assert data["check"]["status"] == "FAIL"
    verdicts = {o["name"]: o["ok"] for o in data["check"]["outputs"]}
    assert verdicts == {"selected_indices": True, "selected_scores": False, "valid_outputs": True}
    assert data["check"]["outputs"][1]["max_abs_diff"] == pytest.approx(1e-2, rel=1e-3)
    text = invoke("benchmark", *SPLIT, "-niter", "1")
    assert text.exit_code == 1 and "FAIL: selected_scores:" in text.stdout


def test_no_check_skips_the_comparison(invoke: Invoke, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(check_module, "evaluate", lambda model, inputs: pytest.fail("the reference ran"))
    data = parse_json(invoke("benchmark", "mlp", "-niter", "1", "--no-check", "--json"))
    assert data["check"]["status"] == "SKIPPED"


# -- model files and benchmark_app's single-dash spellings -------------------------------------------------


def test_onnx_model_with_shape_is_split_checked_and_timed(invoke: Invoke, tmp_path: Path) -> None:
    path = scored_boxes(tmp_path / "boxes.onnx")
    data = parse_json(invoke("benchmark", "-m", str(path), *SPLIT, "-niter", "3", "--json"))
    assert data["model"]["source"] == str(path)
    assert op_devices(data["partition"])["nms"] == "TEMPLATE"
    assert op_devices(data["partition"])["boxes"] == "ACCEL"
    assert data["check"]["status"] == "PASS"
    assert [o["name"] for o in data["check"]["outputs"]] == ["selected"]
    assert data["iterations"] == 3
    _assert_consistent_timing(data)


def test_dynamic_onnx_model_needs_shape_and_runs_with_it(invoke: Invoke, tmp_path: Path) -> None:
    path = dense_relu(tmp_path / "dense.onnx")
    refused = invoke("benchmark", "-m", str(path), "-niter", "1")
    assert_one_line_error(
        refused, "dynamic dimensions (x[batch,3])", 'pass static shapes with -shape, e.g. -shape "x[1,3]"'
    )
    assert "640" not in refused.stderr
    assert refused.exit_code == 2
    data = parse_json(invoke("benchmark", "-m", str(path), "-shape", "[8,3]", "-niter", "2", "--json"))
    assert data["model"]["shape"] == {"x": "[8,3]"}
    assert data["model"]["inputs"] == [{"name": "x", "element_type": "f32", "shape": "[8,3]"}]
    assert data["model"]["outputs"] == [{"name": "y", "element_type": "f32", "shape": "[8,4]"}]
    check = data["check"]
    assert check["status"] == "PASS" and check["outputs"][0]["shape"] == [8, 4]


def test_results_check_on_an_onnx_model_catches_a_wrong_device(
    invoke: Invoke, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    honest = check_module.evaluate
    monkeypatch.setattr(check_module, "evaluate", lambda model, inputs: [o * 2 + 1 for o in honest(model, inputs)])
    path = dense_relu(tmp_path / "dense.onnx")
    result = invoke("benchmark", "-m", str(path), "-shape", "x[2,3]", "-niter", "1", "--json")
    assert result.exit_code == 1 and json.loads(result.stdout)["check"]["status"] == "FAIL"


def test_benchmark_app_single_dash_spellings(invoke: Invoke) -> None:
    data = parse_json(
        invoke(
            "benchmark", "-m", "mlp", "-d", "TEMPLATE", "-api", "sync", "-hint", "none", "-niter", "3", "-pc", "--json"
        )
    )
    assert data["model"]["source"] == "sample:mlp"
    assert data["settings"] == {"api": "sync", "nireq": 1, "niter": 3, "time_limit_s": None}
    assert data["config"] == {"PERF_COUNT": True}
    assert "probabilities" in names(data["perf_counts"]["ops"])
    timed = parse_json(invoke("benchmark", "-m", "mlp", "-api", "async", "-nireq", "3", "-t", "0.1", "--json"))
    assert timed["settings"] == {"api": "async", "nireq": 3, "niter": None, "time_limit_s": 0.1}


def test_positional_model_and_m_must_agree(invoke: Invoke) -> None:
    assert parse_json(invoke("benchmark", "mlp", "-m", "mlp", "-niter", "1", "--json"))["model"]["name"] == "mlp"
    result = invoke("benchmark", "mlp", "-m", "detection", "-niter", "1")
    assert_one_line_error(result, "two models given, 'mlp' and -m 'detection'", exit_code=2)


@pytest.mark.skipif(
    signal.getsignal(signal.SIGINT) is signal.SIG_IGN,
    reason="SIGINT is ignored in this process (a background job: POSIX has it ignore SIGINT), so Ctrl-C cannot be "
    "simulated",
)
@pytest.mark.parametrize("api", ["sync", "async"])
def test_ctrl_c_prints_the_statistics_gathered_so_far(invoke: Invoke, api: str) -> None:
    interrupt = threading.Timer(0.5, signal.raise_signal, (signal.SIGINT,))
    interrupt.start()
    try:
        result = invoke("benchmark", "mlp", "-d", "TEMPLATE", "-api", api, "-t", "60", "--json")
    finally:
        interrupt.cancel()
    assert result.exit_code == 130, result.output
    data = json.loads(result.stdout)
    assert data["interrupted"] is True
    assert data["iterations"] > 0 and data["duration_s"] < 30  # stopped early, with what it measured
    assert data["latency_ms"]["median"] > 0


@pytest.mark.parametrize("device", ["CPU", "HETERO:CPU,TEMPLATE", "NOPE"])
def test_an_unknown_device_is_answered_without_loading_any_device(device: str) -> None:
    # the installed devices (XLA imports JAX, RAY imports Ray and may start a cluster) stay unloaded
    code = (
        "import sys\n"
        "from hetero_sdk.cli import main\n"
        f"sys.argv = ['hetero-sdk', 'benchmark', '-d', {device!r}]\n"
        "try:\n    main()\nexcept SystemExit as exc:\n    code = exc.code\n"
        "print('EXIT', code, 'jax' in sys.modules, 'ray' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.stdout.strip().splitlines()[-1] == "EXIT 1 False False", done.stdout + done.stderr
    assert f"DeviceNotFoundError: no device {device.split(':')[-1].split(',')[0]!r}" in done.stderr


@pytest.mark.parametrize(
    ("spelling", "expected"), [("LATENCY", "LATENCY"), ("Throughput", "THROUGHPUT"), ("NONE", None)]
)
def test_hint_takes_either_case(invoke: Invoke, spelling: str, expected: str | None) -> None:
    data = parse_json(invoke("benchmark", "mlp", "-niter", "1", "-hint", spelling, "--json"))
    assert data["config"] == ({"PERFORMANCE_HINT": expected} if expected else {})
