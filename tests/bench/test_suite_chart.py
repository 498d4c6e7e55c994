"""bench/run.py's chart and real-model table, from small synthetic result sets: every label inside the
figure, bars grouped by model and coloured by device on either side of 1.0, log ticks that do not
overlap; and the suite's model list holds the performance issue's classes (the files checked where the
wheels are already cached: these tests never download)."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from bench_modules import load_bench_module

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import Rectangle  # noqa: E402
from matplotlib.text import Text  # noqa: E402

run = load_bench_module("run")
real_models = load_bench_module("real_models")
onnx_models = load_bench_module("bench_onnx_models")

LONG = "a-model-with-a-name-far-longer-than-any-label-should-be 1x3x320x320"


def _onnx_row(model: str, runtime: str, ms: float, peers: dict[str, float], rss: int | None = None) -> dict[str, Any]:
    return {
        "model": model, "input": "1x3x320x320", "runtime": runtime, "median_us": ms * 1000,
        "vs_ort": ms / peers["onnxruntime"], "vs_openvino": ms / peers["openvino"], "vs_best": ms / min(peers.values()),
        "peak_bytes": None, "peak_rss_bytes": rss,
    }  # fmt: skip


def _reports() -> dict[str, Any]:
    """Two real models (one with a long name), each on five runtimes; a TEMPLATE suite against three
    references; ratios from 0.04x to 40x."""
    rows = []
    for model, times in {
        "ppocr-det": {"onnxruntime": 11.4, "openvino": 10.5, "TEMPLATE": 17.7, "XLA": 8.6, "HETERO:XLA,TEMPLATE": 9.0},
        LONG: {"onnxruntime": 1.0, "openvino": 1.2, "TEMPLATE": 40.0, "XLA": 0.04, "HETERO:XLA,TEMPLATE": 1.5},
    }.items():
        peers = {p: times[p] for p in ("onnxruntime", "openvino")}
        rows += [
            _onnx_row(model, runtime, ms, peers, rss=(100 + i) * 2**20) for i, (runtime, ms) in enumerate(times.items())
        ]
    template = [
        {"model": f"cnn-{size}", "runtime": runtime, "template_over": ratio, "peak_bytes": 2048}
        for size in (16, 64)
        for runtime, ratio in (("TEMPLATE", 1.0), ("ORT", 0.6), ("OpenVINO", 2.5), ("numpy", 0.9))
    ]
    return {"onnx_models": {"rows": rows, "skipped": {"yolox": "offline"}}, "template": {"rows": template}}


@pytest.fixture
def figure() -> Iterator[Any]:
    drawn = run.draw_chart(run.ratios(_reports()))
    drawn.canvas.draw()
    yield drawn
    plt.close(drawn)


def _texts(figure: Any) -> list[Text]:
    return [t for t in figure.findobj(Text) if t.get_visible() and t.get_text().strip()]


def test_every_label_lies_inside_the_figure(figure: Any) -> None:
    renderer = figure.canvas.get_renderer()
    bounds = figure.bbox
    texts = _texts(figure)
    assert any("faster" in t.get_text() for t in texts)  # the x-axis title is drawn
    for text in texts:
        extent = text.get_window_extent(renderer)
        inside = (extent.x0 >= bounds.x0 - 0.5 and extent.x1 <= bounds.x1 + 0.5
                  and extent.y0 >= bounds.y0 - 0.5 and extent.y1 <= bounds.y1 + 0.5)  # fmt: skip
        assert inside, f"{text.get_text()!r} at {extent} outside the figure {bounds}"


def test_log_ticks_do_not_overlap_and_model_labels_are_short(figure: Any) -> None:
    renderer = figure.canvas.get_renderer()
    for axes in figure.axes:
        ticks = sorted(
            (t.get_window_extent(renderer) for t in axes.get_xticklabels() if t.get_visible() and t.get_text()),
            key=lambda e: e.x0,
        )
        assert len(ticks) >= 2
        for left, right in itertools.pairwise(ticks):
            assert left.x1 <= right.x0, f"x tick labels overlap in {axes.get_title(loc='left')!r}"
        assert all(len(t.get_text()) <= run.LABEL_CHARACTERS for t in axes.get_yticklabels())


def test_bars_are_grouped_by_model_coloured_by_device_and_drawn_from_one(figure: Any) -> None:
    real = next(a for a in figure.axes if a.get_title(loc="left").startswith("onnx_models"))
    assert "faster of ORT/OpenVINO" in real.get_title(
        loc="left"
    )  # the real models against the faster of ORT and OpenVINO only
    assert [t.get_text() for t in real.get_yticklabels()] == ["ppocr-det 1x3x320x320", run.shorten(LONG)]
    bars = [p for p in real.patches if isinstance(p, Rectangle) and p.get_height() > 0]
    assert len(bars) == 2 * 3  # two models, three devices each
    expected = {  # ratio over the faster peer, computed here
        ("ppocr-det", "TEMPLATE"): 17.7 / 10.5, ("ppocr-det", "XLA"): 8.6 / 10.5,
        ("ppocr-det", "HETERO"): 9.0 / 10.5, ("long", "TEMPLATE"): 40.0, ("long", "XLA"): 0.04,
        ("long", "HETERO"): 1.5,
    }  # fmt: skip
    legend = real.get_legend()
    assert legend is not None
    device_of = {tuple(h.get_facecolor()): t.get_text() for h, t in zip(legend.legend_handles, legend.get_texts())}
    assert sorted(device_of.values()) == ["HETERO", "TEMPLATE", "XLA"]  # one colour per device
    seen = set()
    for bar in bars:
        model = "ppocr-det" if bar.get_y() + bar.get_height() / 2 < 0.5 else "long"
        device = device_of[tuple(bar.get_facecolor())]
        left, right = sorted((bar.get_x(), bar.get_x() + bar.get_width()))
        ratio = expected[(model, device)]
        assert (left, right) == pytest.approx((min(ratio, 1.0), max(ratio, 1.0)))  # from 1.0 to the ratio
        seen.add((model, device))
    assert seen == set(expected)


def test_a_suite_against_several_references_colours_each_pair(figure: Any) -> None:
    template = next(a for a in figure.axes if a.get_title(loc="left").startswith("template"))
    legend = template.get_legend()
    assert legend is not None
    assert sorted(t.get_text() for t in legend.get_texts()) == ["TEMPLATE / ORT", "TEMPLATE / OpenVINO",
                                                                "TEMPLATE / numpy"]  # fmt: skip


def test_the_chart_is_written_as_a_png(tmp_path: Any) -> None:
    target = tmp_path / "suite.png"
    assert run.chart(run.ratios(_reports()), target)
    assert target.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_real_model_table_gives_ms_rss_and_our_best_over_the_faster_peer() -> None:
    table = {row["model"]: row for row in run.model_table(_reports()["onnx_models"])}
    det = table["ppocr-det"]
    assert det["XLA_ms"] == pytest.approx(8.6) and det["openvino_ms"] == pytest.approx(10.5)
    assert det["best_over_peer"] == pytest.approx(8.6 / 10.5)
    assert table[LONG]["best_over_peer"] == pytest.approx(0.04 / 1.0)
    assert det["onnxruntime_rss_bytes"] == 100 * 2**20 and det["XLA_rss_bytes"] == 103 * 2**20


def test_ratio_rows_add_the_faster_peer_and_peak_rss() -> None:
    rows = [r for r in run.ratios(_reports()) if r["suite"] == "onnx_models" and r["candidate"] == "XLA"]
    by_reference = {r["reference"]: r for r in rows if r["model"].startswith("ppocr-det")}
    assert set(by_reference) == {"onnxruntime", "openvino", run.BEST_PEER}
    assert by_reference[run.BEST_PEER]["ratio"] == pytest.approx(8.6 / 10.5)
    assert by_reference["onnxruntime"]["peak_rss_bytes"] == 103 * 2**20


ISSUE_CLASSES = ("ppocr-det", "ppocr-rec", "ppocr-cls", "yolov8n", "crnn-lstm", "yolox", "byte-classifier")


def test_the_suite_benchmarks_the_issue_model_classes() -> None:
    parser_defaults = onnx_models.BENCH_MODELS
    assert set(ISSUE_CLASSES) <= set(parser_defaults)
    script, full, _ = run.SUITE["onnx_models"]
    assert script == "bench_onnx_models.py" and "--models" not in full  # every model, at the issue's sizes
    assert "--issue-sizes" in full and "--rss" in full
    assert real_models.ISSUE_MODELS["yolov8n"].package == "nudenet==3.4.2"
    assert real_models.ISSUE_MODELS["yolov8n"].member == "nudenet/320n.onnx"
    assert onnx_models.OPENVINO_F32["INFERENCE_PRECISION_HINT"] == "f32"


def _cached(model: Any) -> Any:
    """The model's file when its wheel is already in the cache, else a skip (never a download)."""
    name, version = model.package.split("==")
    wheels = real_models.CACHE / "wheels"
    extracted = real_models.CACHE / f"{name}-{version}" / model.member
    if not extracted.exists() and not any(wheels.glob(f"{name.replace('-', '_')}-{version}-*.whl")):
        pytest.skip(f"{model.package} is not cached in {real_models.CACHE} (bench/run.py fetches it)")
    return real_models.fetch(model)


@pytest.mark.parametrize(
    ("key", "op", "elem_type"),
    [("crnn-lstm", "LSTM", 1), ("yolox", "Resize", 1), ("yolov8n", "Resize", 1), ("byte-classifier", "Conv", 6)],
)
def test_each_new_model_is_of_its_class(key: str, op: str, elem_type: int) -> None:
    """The CRNN has an LSTM, the detectors upsample, the byte classifier convolves int32 input (the
    ONNX file itself read here, its weights not used)."""
    onnx = pytest.importorskip("onnx")
    model = real_models.ISSUE_MODELS[key]
    proto = onnx.load(str(_cached(model)), load_external_data=False)
    assert op in {node.op_type for node in proto.graph.node}
    initializers = {t.name for t in proto.graph.initializer}
    (value,) = [v for v in proto.graph.input if v.name not in initializers]
    assert value.type.tensor_type.elem_type == elem_type
    assert value.name in model.feeds
    if key == "byte-classifier":
        conv = next(n for n in proto.graph.node if n.op_type == "Conv")
        kernel = next(t for t in proto.graph.initializer if t.name == conv.input[1])
        taps = [d for d in kernel.dims[2:] if d > 1]
        assert len(taps) == 1  # a 1-D convolution: taps along one axis only ([out, in, 5, 1] in magika)
        assert model.feeds["bytes"].dtype == np.int32


def test_a_model_that_cannot_be_fetched_is_skipped_with_its_reason(tmp_path: Any, monkeypatch: Any) -> None:
    def offline(model: Any) -> Any:
        raise onnx_models.FetchError(f"cannot pip download {model.package}: no network")

    monkeypatch.setattr(onnx_models, "fetch", offline)
    monkeypatch.setattr(onnx_models, "pin_to_one_cpu", lambda: None)
    target = tmp_path / "onnx.json"
    monkeypatch.setattr(sys, "argv", ["bench_onnx_models.py", "--models", "yolox", "--json", str(target)])
    onnx_models.main()
    report = json.loads(target.read_text())
    assert report["rows"] == []
    assert "ddddocr==1.6.1" in report["skipped"]["yolox"] and "no network" in report["skipped"]["yolox"]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="VmHWM is Linux's")
def test_peak_rss_counts_what_the_process_touched_and_not_its_parents_peak() -> None:
    timing = load_bench_module("timing")
    touched = np.ones(160 * 2**20 // 8)  # 160 MiB written here
    parent = timing.peak_rss_bytes()
    assert parent >= touched.nbytes
    code = "import sys; sys.path.insert(0, sys.argv[1]); import timing; print(timing.peak_rss_bytes())"
    folder = str(load_bench_module("run").HERE)
    child = subprocess.run([sys.executable, "-c", code, folder], capture_output=True, text=True, check=True)
    assert int(child.stdout) < parent - touched.nbytes // 2  # a fresh process: not the parent's figure
