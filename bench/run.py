"""The whole benchmark suite in one command: every benchmark of bench/, one thread, then one table of
the ratios that matter (with the memory each of our devices reports for one inference beside them),
a JSON file of everything and (with matplotlib) a chart of the ratios.

Usage::

    pip install -e ".[bench]"                      # ONNX Runtime, OpenVINO, matplotlib
    python bench/run.py                             # writes bench/results/suite.json and suite.png
    python bench/run.py --quick                     # fewer runs, for a look
    python bench/run.py --only onnx_models --models ppocr-det ppocr-rec ppocr-cls yolov8n crnn-lstm yolox \
        byte-classifier                             # the performance issue's seven models

Each benchmark runs in its own process (``bench_template.py``, ``bench_xla.py``, ``bench_hetero.py``,
``bench_request_tensors.py``, ``bench_onnx_models.py``, ``bench_decoders.py``, ``bench_quantized.py``) with
``--json``; this script
only reads their reports.
Ratios are medians of the candidate over the reference measured in the same run, never absolute times
across runs. The real models (``bench/real_models.py``: PP-OCRv4 det/rec, PP-OCR cls, YOLOv8n, a CRNN
with an LSTM, a YOLOX detector, a byte classifier, ...) also get a table of their own: each runtime's
median in ms, our best device over the faster of ONNX Runtime and OpenVINO (both f32), and each runtime's
peak resident memory measured in a fresh process.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from timing import THREAD_VARIABLES, print_table

HERE = Path(__file__).resolve().parent
SUITE = {
    "template": ("bench_template.py", ["--runs", "200"], ["--runs", "40"]),
    "xla": ("bench_xla.py", ["--runs", "300"], ["--runs", "60", "--requests", "50"]),
    "hetero": ("bench_hetero.py", ["--runs", "300"], ["--runs", "60"]),
    "request_tensors": ("bench_request_tensors.py", ["--runs", "1000"], ["--runs", "100"]),
    "onnx_models": ("bench_onnx_models.py", ["--runs", "50", "--issue-sizes", "--rss"], ["--runs", "15"]),
    "decoders": (
        "bench_decoders.py",
        ["--rounds", "9", "--cpu-time"],
        ["--rounds", "3", "--tokens", "16", "--medium-tokens", "8", "--xla-probe-tokens", "3", "--cpu-time"],
    ),
    "quantized": (
        "bench_quantized.py",
        ["--runs", "10", "--warmup", "2", "--cpu-time"],
        ["--runs", "3", "--warmup", "1", "--models", "ppocr-cls", "--schemes", "qdq", "--cpu-time"],
    ),
}
"""Each benchmark's script, and its arguments for a full and a ``--quick`` run (the full run takes the
real convnets at the issue's sizes: PP-OCR det at 320x320, rec at 48x320, and each runtime's peak
RSS; the decoders timed by CPU time,
which a busy shared machine does not inflate, the medium Llama exported once when absent: see
``bench_decoders.py``)."""


def run_suite(names: list[str], quick: bool, folder: Path, models: list[str] | None = None) -> dict[str, Any]:
    """Runs the benchmarks ``names`` one after another (the real models limited to ``models`` when given);
    returns each one's JSON report (or its error)."""
    env = {**os.environ, **dict.fromkeys(THREAD_VARIABLES, "1")}
    reports: dict[str, Any] = {}
    for name in names:
        script, full, short = SUITE[name]
        chosen = ["--models", *models] if models and name == "onnx_models" else []
        target = folder / f"{name}.json"
        print(f"== {script}", flush=True)
        done = subprocess.run(
            [sys.executable, str(HERE / script), *(short if quick else full), *chosen, "--json", str(target)],
            env=env,
        )
        reports[name] = (
            json.loads(target.read_text())
            if done.returncode == 0 and target.exists()
            else {"error": f"{script} exited with status {done.returncode}"}
        )
    return reports


BEST_PEER = "faster of ORT/OpenVINO"
"""The reference of the real models' headline ratio: the faster of ONNX Runtime and OpenVINO (f32)."""
PEERS = ("onnxruntime", "openvino")
OURS = ("TEMPLATE", "XLA", "HETERO:XLA,TEMPLATE")


def ratios(reports: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per measured pair: the suite, the model, the candidate, the reference and the ratio."""
    rows: list[dict[str, Any]] = []
    template_rows = reports.get("template", {}).get("rows", [])
    for row in template_rows:
        template_peak = next((r.get("peak_bytes") for r in template_rows if r["model"] == row["model"]
                              and r["runtime"] == "TEMPLATE"), None)  # fmt: skip
        if row["runtime"] != "TEMPLATE":
            rows.append(_row("template", row["model"], "TEMPLATE", row["runtime"], row["template_over"], template_peak))
    for row in reports.get("xla", {}).get("rows", []):
        if row["runtime"] != "jax.jit":
            rows.append(_row("xla", row["model"], row["runtime"], "jax.jit", row["over_jax"], row.get("peak_bytes")))
    for row in reports.get("hetero", {}).get("rows", []):
        if row.get("variant") != "plain":
            rows.append(_row("hetero", row["model"], f"{row['runtime']} {row['variant']}", "plain", row["ratio"]))
    for row in reports.get("request_tensors", {}).get("rows", []):
        if row["runtime"] != "dict":
            rows.append(_row("request_tensors", row["model"], "TEMPLATE request tensors", "dict", row["over_dict"]))
    for row in reports.get("onnx_models", {}).get("rows", []):
        if row["runtime"] not in PEERS:
            model, peak = f"{row['model']} {row.get('input', '')}".strip(), row.get("peak_bytes")
            rss = row.get("peak_rss_bytes")
            rows.append(_row("onnx_models", model, row["runtime"], "onnxruntime", row["vs_ort"], peak, rss))
            if row.get("vs_openvino") is not None:
                rows.append(_row("onnx_models", model, row["runtime"], "openvino", row["vs_openvino"], peak, rss))
            if row.get("vs_best") is not None:
                rows.append(_row("onnx_models", model, row["runtime"], BEST_PEER, row["vs_best"], peak, rss))
    for row in reports.get("decoders", {}).get("rows", []):
        if row.get("token_vs_ort") is not None and row["runtime"] != "onnxruntime":
            model = f"{row['model']} ms/token"
            rows.append(_row("decoders", model, row["runtime"], "onnxruntime", row["token_vs_ort"]))
    for row in reports.get("quantized", {}).get("rows", []):
        if row.get("vs_ort") is not None and row["runtime"] != "onnxruntime":
            model = f"{row['model']} int8 {row['scheme']}"
            rows.append(_row("quantized", model, row["runtime"], "onnxruntime", row["vs_ort"]))
    return rows


def _row(
    suite: str,
    model: str,
    candidate: str,
    reference: str,
    ratio: float,
    peak: int | None = None,
    rss: int | None = None,
) -> dict[str, Any]:
    return {
        "suite": suite, "model": model, "candidate": candidate, "reference": reference, "ratio": ratio,
        "peak_bytes": peak, "peak_rss_bytes": rss,
    }  # fmt: skip


def model_table(report: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per real model: each runtime's median (ms) and peak RSS, and our best device's median
    over the faster of ONNX Runtime and OpenVINO (the performance issue's table)."""
    table: dict[str, dict[str, Any]] = {}
    for row in report.get("rows", []):
        entry = table.setdefault(row["model"], {"model": row["model"], "input": row.get("input", "")})
        entry[f"{row['runtime']}_ms"] = row["median_us"] / 1000
        entry[f"{row['runtime']}_rss_bytes"] = row.get("peak_rss_bytes")
    for entry in table.values():
        ours = [entry[f"{d}_ms"] for d in OURS if f"{d}_ms" in entry]
        peers = [entry[f"{p}_ms"] for p in PEERS if f"{p}_ms" in entry]
        entry["best_over_peer"] = min(ours) / min(peers) if ours and peers else None
    return list(table.values())


def print_model_table(report: dict[str, Any]) -> None:
    """Prints :func:`model_table` (nothing when the real models did not run)."""
    rows = model_table(report)
    if not rows:
        return
    names = [*PEERS, *OURS]
    short = {"onnxruntime": "ORT", "openvino": "OpenVINO", "HETERO:XLA,TEMPLATE": "HETERO"}
    print("== real models (ms: medians; best ours / best peer: our best device over the faster of ORT/OpenVINO)")
    print_table(
        [("model", "model"), ("input", "input"), *((f"{n}_ms", f"{short.get(n, n)} ms") for n in names),
         ("best_over_peer", "best ours / best peer"),
         *((f"{n}_rss_bytes", f"{short.get(n, n)} RSS MiB") for n in names)],
        rows,
    )  # fmt: skip
    for model, reason in report.get("skipped", {}).items():
        print(f"skipped {model}: {reason}")


DEVICE_COLOURS = {
    "TEMPLATE": "#4c78a8", "XLA": "#f58518", "HETERO:XLA,TEMPLATE": "#54a24b", "AUTO": "#b279a2",
    "RAY": "#9d755d",
}  # fmt: skip
"""Each device's colour in the chart, the same in every panel; other series take the next free colours."""
_OTHER_COLOURS = ("#e45756", "#72b7b2", "#eeca3b", "#ff9da6", "#bab0ac", "#79706e", "#d67195", "#a0cbe8")
SHORT = {"onnxruntime": "ORT", "openvino": "OpenVINO", "HETERO:XLA,TEMPLATE": "HETERO"}
LABEL_CHARACTERS = 26


def shorten(text: str, characters: int = LABEL_CHARACTERS) -> str:
    """``text`` cut to ``characters`` (an ellipsis marks a cut)."""
    return text if len(text) <= characters else text[: characters - 1] + "\u2026"


def chart_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows the chart draws: every ratio, except that a real model measured against the faster of
    ONNX Runtime and OpenVINO shows that ratio alone."""
    against_best = {(r["suite"], r["model"]) for r in rows if r["reference"] == BEST_PEER}
    return [r for r in rows if (r["suite"], r["model"]) not in against_best or r["reference"] == BEST_PEER]


def _series(panel: list[dict[str, Any]]) -> tuple[list[str], str]:
    """The series of a panel (its bars' colours: the devices, with the reference when it varies) and the
    reference of the panel's title ("" when it varies)."""
    references = {r["reference"] for r in panel}
    by_reference = len(references) > 1
    series = list(dict.fromkeys(_series_of(r, by_reference) for r in panel))
    reference = "" if by_reference else next(iter(references))
    return series, SHORT.get(reference, reference)


def _series_of(row: dict[str, Any], by_reference: bool) -> str:
    return f"{row['candidate']} / {SHORT.get(row['reference'], row['reference'])}" if by_reference else row["candidate"]


def _ticks(low: float, high: float) -> list[float]:
    """Powers of two between ``low`` and ``high``, thinned to at most seven (log-scale ticks that never
    crowd)."""
    first, last = math.floor(math.log2(low)), math.ceil(math.log2(high))
    step = max(1, math.ceil((last - first + 1) / 7))
    return [2.0**k for k in range(first, last + 1) if k % step == 0]


def draw_chart(rows: list[dict[str, Any]]) -> Any:
    """The chart as a matplotlib figure: one panel per suite, the models grouped on its y axis, one bar per
    device coloured by device, drawn from 1.0 (as fast as the reference) to the ratio on a log axis:
    left of the line faster than the reference, right of it slower; each bar labelled with its ratio."""
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

    drawn = [r for r in chart_rows(rows) if r["ratio"] and r["ratio"] > 0]
    suites = list(dict.fromkeys(r["suite"] for r in drawn))
    panels = {suite: [r for r in drawn if r["suite"] == suite] for suite in suites}
    colours = dict(DEVICE_COLOURS)
    heights = [0.28 * len(panel) + 1.0 + 0.12 * len({r["model"] for r in panel}) for panel in panels.values()]
    figure = plt.figure(figsize=(9, sum(heights) + 0.5), layout="constrained")
    axes_list: Any = figure.subplots(len(panels), 1, height_ratios=heights, squeeze=False)[:, 0] if panels else []
    for axes, (suite, panel) in zip(axes_list, panels.items()):
        series, reference = _series(panel)
        for name in series:
            colours.setdefault(name, _OTHER_COLOURS[(len(colours) - len(DEVICE_COLOURS)) % len(_OTHER_COLOURS)])
        models = list(dict.fromkeys(r["model"] for r in panel))
        width = 0.8 / max(len(series), 1)
        for row in panel:
            name = _series_of(row, not reference)
            y = models.index(row["model"]) + (series.index(name) - (len(series) - 1) / 2) * width
            axes.barh(y, row["ratio"] - 1.0, left=1.0, height=width * 0.9, color=colours[name],
                      label=SHORT.get(name, name))  # fmt: skip
            axes.text(row["ratio"], y, f" {row['ratio']:.2f}x ", ha="left" if row["ratio"] >= 1 else "right",
                      va="center", fontsize=7)  # fmt: skip
        low = min(min(r["ratio"] for r in panel), 1.0)
        high = max(max(r["ratio"] for r in panel), 1.0)
        axes.set_xscale("log")
        axes.set_xlim(low / 1.8, high * 1.8)  # room for the ratio labels
        axes.xaxis.set_major_locator(FixedLocator(_ticks(low / 1.8, high * 1.8)))
        axes.xaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}x"))
        axes.xaxis.set_minor_locator(NullLocator())
        axes.axvline(1.0, color="black", linewidth=1)
        axes.set_yticks(range(len(models)), [shorten(m) for m in models], fontsize=8)
        axes.set_ylim(len(models) - 0.5, -0.5)
        axes.set_title(f"{suite}: time / {reference}" if reference else f"{suite}: time / reference", fontsize=9,
                       loc="left")  # fmt: skip
        handles, labels = axes.get_legend_handles_labels()
        unique = dict(zip(labels, handles))
        axes.legend(unique.values(), unique.keys(), fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    if panels:
        axes_list[-1].set_xlabel("\u2190 faster          time / reference (log scale)          slower \u2192")
    return figure


def chart(rows: list[dict[str, Any]], target: Path) -> bool:
    """Writes :func:`draw_chart` to ``target``; False when matplotlib is not installed."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    figure = draw_chart(rows)
    figure.savefig(target, dpi=110, bbox_inches="tight")
    plt.close(figure)
    return True


def main(argv: list[str] | None = None) -> None:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", choices=list(SUITE), default=list(SUITE), help="benchmarks to run")
    parser.add_argument("--quick", action="store_true", help="fewer runs per candidate")
    parser.add_argument("--models", nargs="+", help="the real models bench_onnx_models.py runs (default: all)")
    parser.add_argument("--out", default=str(HERE / "results"), help="folder for suite.json and suite.png")
    args = parser.parse_args(argv)
    folder = Path(args.out)
    folder.mkdir(parents=True, exist_ok=True)
    reports = run_suite(args.only, args.quick, folder, args.models)
    rows = ratios(reports)
    print("== suite")
    print_table([("suite", "suite"), ("model", "model"), ("candidate", "candidate"), ("reference", "over"),
                 ("ratio", "ratio"), ("peak_bytes", "candidate peak MiB"),
                 ("peak_rss_bytes", "candidate peak RSS MiB")], rows)  # fmt: skip
    print_model_table(reports.get("onnx_models", {}))
    (folder / "suite.json").write_text(json.dumps({"reports": reports, "ratios": rows}, indent=2) + "\n")
    drawn = chart(rows, folder / "suite.png")
    chart_note = f" and {folder / 'suite.png'}" if drawn else " (pip install matplotlib for the chart)"
    print(f"wrote {folder / 'suite.json'}{chart_note}")


if __name__ == "__main__":
    main()
