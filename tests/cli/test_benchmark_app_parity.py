"""benchmark_app's remaining options on ``hetero-sdk benchmark``: ``-b``, ``-nstreams``, ``-i`` (real
input files) and ``-report_type``/``-report_folder`` (its CSV reports)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hetero_sdk.cli import check as check_module
from hetero_sdk.cli.input_files import load_input_files

from .helpers import Invoke, assert_one_line_error, parse_json
from .model_files import dense_relu, dense_relu_numpy, two_inputs

PIL = pytest.importorskip("PIL.Image")


@pytest.fixture
def checked_inputs(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, np.ndarray]]:
    """The inputs the results check saw (the first request's), recorded as the command runs."""
    seen: list[dict[str, np.ndarray]] = []
    honest = check_module.evaluate

    def recording(model: Any, inputs: Any) -> Any:
        seen.append({name: np.array(value) for name, value in inputs.items()})
        return honest(model, inputs)

    monkeypatch.setattr(check_module, "evaluate", recording)
    return seen


def _csv_sections(path: Path) -> dict[str, dict[str, str]]:
    sections: dict[str, dict[str, str]] = {}
    current: dict[str, str] = {}
    for line in path.read_text().splitlines():
        if not line:
            continue
        if ";" in line:
            key, value = line.split(";", 1)
            current[key] = value
        else:
            current = sections.setdefault(line, {})
    return sections


def test_b_sets_the_first_dimension_of_every_input(invoke: Invoke, tmp_path: Path) -> None:
    path = two_inputs(tmp_path / "two.onnx")
    data = parse_json(invoke("benchmark", "-m", str(path), "-b", "5", "-niter", "2", "--json"))
    assert [p["shape"] for p in data["model"]["inputs"]] == ["[5,2]", "[5,2]"]
    assert data["model"]["outputs"][0]["shape"] == "[5,2]"
    assert data["check"]["status"] == "PASS" and data["batch_size"] == 5


def test_b_applies_after_shape(invoke: Invoke, tmp_path: Path) -> None:
    path = dense_relu(tmp_path / "dense.onnx")
    data = parse_json(invoke("benchmark", "-m", str(path), "-shape", "[2,3]", "-b", "7", "-niter", "1", "--json"))
    assert data["model"]["inputs"][0]["shape"] == "[7,3]"


def test_nstreams_reaches_the_device_and_per_device_through_hetero(invoke: Invoke) -> None:
    single = parse_json(invoke("benchmark", "-m", "mlp", "-d", "TEMPLATE", "-nstreams", "3", "-niter", "1", "--json"))
    assert single["config"]["NUM_STREAMS"] == 3 and single["streams"] == {"TEMPLATE": 3}
    split = parse_json(
        invoke("benchmark", "-d", "HETERO:ACCEL,TEMPLATE", "-nstreams", "TEMPLATE:2,ACCEL:1", "-niter", "1", "--json")
    )
    assert split["config"]["DEVICE_PROPERTIES"] == {"TEMPLATE": {"NUM_STREAMS": 2}, "ACCEL": {"NUM_STREAMS": 1}}
    assert split["streams"] == {"ACCEL": 1, "TEMPLATE": 2}
    auto = parse_json(invoke("benchmark", "-m", "mlp", "-d", "TEMPLATE", "-nstreams", "AUTO", "-niter", "1", "--json"))
    assert auto["config"]["NUM_STREAMS"] == 0


@pytest.mark.parametrize(
    ("device", "value", "fragment"),
    [
        ("TEMPLATE", "two", "'two' is not a number of streams"),
        ("HETERO:ACCEL,TEMPLATE", "TEMPLAT:2", "'TEMPLAT' is not one of the devices of HETERO:ACCEL,TEMPLATE"),
        ("TEMPLATE", "ACCEL:2", "names ACCEL, but the device is TEMPLATE"),
    ],
)
def test_bad_nstreams_is_a_usage_error(invoke: Invoke, device: str, value: str, fragment: str) -> None:
    assert_one_line_error(
        invoke("benchmark", "-m", "mlp", "-d", device, "-nstreams", value, "-niter", "1"), fragment, exit_code=2
    )


def test_i_npy_feeds_the_one_input(invoke: Invoke, tmp_path: Path, checked_inputs: list) -> None:
    x = np.array([[1.0, -2.0, 3.0], [0.5, 0.25, -1.0]], dtype=np.float32)
    np.save(tmp_path / "x.npy", x)
    path = dense_relu(tmp_path / "dense.onnx", batch=2)
    data = parse_json(invoke("benchmark", "-m", str(path), "-i", str(tmp_path / "x.npy"), "-niter", "2", "--json"))
    assert data["input_data"] == {"x": str(tmp_path / "x.npy")}
    assert data["check"]["status"] == "PASS"
    np.testing.assert_array_equal(checked_inputs[0]["x"], x)
    np.testing.assert_allclose(dense_relu_numpy(checked_inputs[0]["x"]), dense_relu_numpy(x))


def test_i_npz_by_name_and_random_for_the_rest(invoke: Invoke, tmp_path: Path, checked_inputs: list) -> None:
    a = np.arange(6, dtype=np.float64).reshape(3, 2)  # f64 on disk, converted to the input's f32
    np.savez(tmp_path / "feeds.npz", a=a)
    path = two_inputs(tmp_path / "two.onnx")
    args = ("benchmark", "-m", str(path), "-shape", "a[3,2],b[3,2]", "-niter", "1", "--json")
    data = parse_json(invoke(*args, "-i", str(tmp_path / "feeds.npz")))
    assert data["input_data"] == {"a": str(tmp_path / "feeds.npz"), "b": "random"}
    assert checked_inputs[0]["a"].dtype == np.float32
    np.testing.assert_array_equal(checked_inputs[0]["a"], a.astype(np.float32))


@pytest.fixture
def b_npy(tmp_path: Path) -> Path:
    np.save(tmp_path / "b.npy", np.full((3, 2), 7, dtype=np.float32))
    return tmp_path / "b.npy"


def test_i_name_colon_file(invoke: Invoke, tmp_path: Path, b_npy: Path, checked_inputs: list) -> None:
    path = two_inputs(tmp_path / "two.onnx")
    data = parse_json(
        invoke("benchmark", "-m", str(path), "-shape", "a[3,2],b[3,2]", "-i", f"b:{b_npy}", "-niter", "1", "--json")
    )
    assert data["input_data"] == {"a": "random", "b": str(b_npy)}
    np.testing.assert_array_equal(checked_inputs[0]["b"], np.full((3, 2), 7, dtype=np.float32))


def _png(path: Path, pixels: np.ndarray) -> Path:
    PIL.fromarray(pixels).save(path)
    return path


def test_images_fill_the_batch_in_the_input_layout(tmp_path: Path) -> None:
    """Two 4x6 RGB images into an NCHW [2,3,4,6] input: channels first, in file order, no resize."""
    from hetero_sdk import opset

    rng = np.random.default_rng(0)
    first, second = (rng.integers(0, 256, (4, 6, 3), dtype=np.uint8) for _ in range(2))
    folder = tmp_path / "images"
    folder.mkdir()
    _png(folder / "a.png", first)
    _png(folder / "b.png", second)
    x = opset.parameter([2, 3, 4, 6], "f32", name="x")
    model = _identity_model(x)
    data = load_input_files(model, str(folder), {"x": np.zeros((2, 3, 4, 6), np.float32)})
    assert len(data.sets) == 1 and data.sources == {"x": f"2 files ({folder / 'a.png'}, ...)"}
    expected = np.stack([first.transpose(2, 0, 1), second.transpose(2, 0, 1)]).astype(np.float32)
    np.testing.assert_array_equal(data.sets[0]["x"], expected)


def test_images_in_nhwc_cycle_through_request_sets(tmp_path: Path) -> None:
    """Three images for a batch of 2, NHWC: two sets, the last one wrapping round to the first image."""
    from hetero_sdk import opset

    images = [np.full((2, 2, 3), value, dtype=np.uint8) for value in (10, 20, 30)]
    paths = [_png(tmp_path / f"{i}.png", image) for i, image in enumerate(images)]
    model = _identity_model(opset.parameter([2, 2, 2, 3], "u8", name="x"))
    data = load_input_files(model, ",".join(map(str, paths)), {"x": np.zeros((2, 2, 2, 3), np.uint8)})
    assert [s["x"][:, 0, 0, 0].tolist() for s in data.sets] == [[10, 20], [30, 10]]


def _identity_model(parameter: Any) -> Any:
    import hetero_sdk as hs
    from hetero_sdk import opset

    return hs.Model([opset.result(opset.relu(parameter), name="y")], [parameter], "identity")


@pytest.mark.parametrize(
    ("files", "fragment"),
    [
        ({"x.npy": np.zeros((2, 5), np.float32)}, "has shape [2, 5], but input 'x' takes [2, 3] or one batch item [3]"),
        ({"x.npy": np.zeros((2, 3), np.complex64)}, "holds complex64 values, but input 'x' is f32"),
        ({"feeds.npz": {"z": np.zeros((2, 3), np.float32)}}, "array 'z' names no model input; inputs: x"),
    ],
)
def test_i_files_that_cannot_feed_the_input_are_usage_errors(
    invoke: Invoke, tmp_path: Path, files: dict[str, Any], fragment: str
) -> None:
    for name, value in files.items():
        if name.endswith(".npz"):
            np.savez(tmp_path / name, **value)
        else:
            np.save(tmp_path / name, value)
    path = dense_relu(tmp_path / "dense.onnx", batch=2)
    result = invoke("benchmark", "-m", str(path), "-i", str(tmp_path / next(iter(files))), "-niter", "1")
    assert_one_line_error(result, fragment, exit_code=2)


def test_i_unknown_input_name_and_missing_file(invoke: Invoke, tmp_path: Path, b_npy: Path) -> None:
    path = two_inputs(tmp_path / "two.onnx")
    shaped = ("benchmark", "-m", str(path), "-shape", "a[3,2],b[3,2]", "-niter", "1")
    assert_one_line_error(invoke(*shaped, "-i", f"bb:{b_npy}"), "no input 'bb'; did you mean b?", exit_code=2)
    assert_one_line_error(invoke(*shaped, "-i", str(b_npy)), "has 2 inputs (a, b); name the one", exit_code=2)
    assert_one_line_error(
        invoke(*shaped, "-i", "missing.npy"),
        "FileNotFoundError: -i missing.npy: no such file or directory",
        exit_code=1,
    )


def test_report_type_writes_benchmark_app_csv_files(invoke: Invoke, tmp_path: Path) -> None:
    folder = tmp_path / "reports"
    args = ("benchmark", "-m", "mlp", "-d", "TEMPLATE", "-niter", "4", "-nireq", "2", "-report_folder", str(folder))
    data = parse_json(invoke(*args, "-report_type", "average_counters", "--json"))
    assert data["report_files"] == [str(folder / "benchmark_report.csv"), str(folder / f"{AVERAGE}_report.csv")]
    sections = _csv_sections(folder / "benchmark_report.csv")
    assert list(sections) == ["Command line parameters", "Configuration setup", "Execution results"]
    assert sections["Command line parameters"]["-niter"] == "4"
    assert sections["Configuration setup"]["target device"] == "TEMPLATE"
    assert sections["Configuration setup"]["number of parallel infer requests"] == "2"
    results = sections["Execution results"]
    assert int(results["total number of iterations"]) == data["iterations"] == 4
    assert float(results["latency (ms)"]) == pytest.approx(data["latency_ms"]["median"], abs=0.006)
    assert float(results["throughput"]) == pytest.approx(data["throughput_fps"], abs=0.006)

    rows = [line.split(";") for line in (folder / f"{AVERAGE}_report.csv").read_text().splitlines() if line]
    assert rows[0] == ["layerName", "execStatus", "layerType", "execType", "realTime (ms)", "cpuTime (ms)"]
    ops = {row[0]: row for row in rows[1:-1]}
    assert "probabilities" in ops and ops["probabilities"][1] == "EXECUTED"
    assert rows[-1][0] == "Total"
    rounding = 0.0005 * len(rows)  # each row is written to 3 decimals
    assert float(rows[-1][4]) == pytest.approx(sum(float(row[4]) for row in rows[1:-1]), abs=rounding)
    averaged = {row["name"]: row["real_time_ms"] for row in data["perf_counts"]["ops"]}
    assert float(ops["probabilities"][4]) == pytest.approx(averaged["probabilities"], abs=0.0006)


AVERAGE = "benchmark_average_counters"


def test_detailed_counters_write_one_table_per_request(invoke: Invoke, tmp_path: Path) -> None:
    args = ("benchmark", "-m", "mlp", "-d", "TEMPLATE", "-niter", "4", "-nireq", "3", "-report_folder", str(tmp_path))
    invoke(*args, "-report_type", "detailed_counters", "--json")
    text = (tmp_path / "benchmark_detailed_counters_report.csv").read_text()
    assert text.count("layerName;execStatus") == 3 and text.count("\nTotal;") == 3


def test_no_counters_writes_only_the_statistics(invoke: Invoke, tmp_path: Path) -> None:
    args = ("benchmark", "-m", "mlp", "-d", "TEMPLATE", "-niter", "1", "-report_folder", str(tmp_path))
    data = parse_json(invoke(*args, "-report_type", "no_counters", "--json"))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["benchmark_report.csv"]
    assert "PERF_COUNT" not in data["config"]


def test_an_unknown_option_is_reported_as_typed(invoke: Invoke) -> None:
    """click reads ``-nstream`` as ``-n`` + ``stream``; the error names what the user typed."""
    assert_one_line_error(invoke("benchmark", "-nstream", "2"), "no such option '-nstream'", exit_code=2)
    assert_one_line_error(invoke("benchmark", "--nstream", "2"), "'--nstream'; did you mean", "--nstreams", exit_code=2)
