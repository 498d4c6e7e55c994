"""The whole benchmark suite in one command: every benchmark of bench/, one thread, then one table of
the ratios that matter (with the memory each of our devices reports for one inference beside them),
a JSON file of everything and (with matplotlib) a chart of the ratios.

Usage::

    pip install -e ".[bench]"                      # ONNX Runtime, OpenVINO, matplotlib
    python bench/run.py                             # writes bench/results/suite.json and suite.png
    python bench/run.py --quick                     # fewer runs, for a look

Each benchmark runs in its own process (``bench_template.py``, ``bench_xla.py``, ``bench_hetero.py``,
``bench_request_tensors.py``, ``bench_onnx_models.py``, ``bench_decoders.py``) with ``--json``; this script
only reads their reports.
Ratios are medians of the candidate over the reference measured in the same run, never absolute times
across runs.
"""

from __future__ import annotations

import argparse
import json
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
    "onnx_models": ("bench_onnx_models.py", ["--runs", "50", "--issue-sizes"], ["--runs", "15"]),
    "decoders": (
        "bench_decoders.py",
        ["--rounds", "9", "--cpu-time"],
        ["--rounds", "3", "--tokens", "16", "--medium-tokens", "8", "--xla-probe-tokens", "3", "--cpu-time"],
    ),
}
"""Each benchmark's script, and its arguments for a full and a ``--quick`` run (the full run takes the
real convnets at the issue's sizes: PP-OCR det at 320x320, rec at 48x320; the decoders timed by CPU time,
which a busy shared machine does not inflate, the medium Llama exported once when absent: see
``bench_decoders.py``)."""


def run_suite(names: list[str], quick: bool, folder: Path) -> dict[str, Any]:
    """Runs the benchmarks ``names`` one after another; returns each one's JSON report (or its error)."""
    env = {**os.environ, **dict.fromkeys(THREAD_VARIABLES, "1")}
    reports: dict[str, Any] = {}
    for name in names:
        script, full, short = SUITE[name]
        target = folder / f"{name}.json"
        print(f"== {script}", flush=True)
        done = subprocess.run(
            [sys.executable, str(HERE / script), *(short if quick else full), "--json", str(target)], env=env
        )
        reports[name] = (
            json.loads(target.read_text())
            if done.returncode == 0 and target.exists()
            else {"error": f"{script} exited with status {done.returncode}"}
        )
    return reports


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
        if row["runtime"] not in ("onnxruntime", "openvino"):
            model, peak = f"{row['model']} {row.get('input', '')}".strip(), row.get("peak_bytes")
            rows.append(_row("onnx_models", model, row["runtime"], "onnxruntime", row["vs_ort"], peak))
            if row.get("vs_openvino") is not None:
                rows.append(_row("onnx_models", model, row["runtime"], "openvino", row["vs_openvino"], peak))
    for row in reports.get("decoders", {}).get("rows", []):
        if row.get("token_vs_ort") is not None and row["runtime"] != "onnxruntime":
            model = f"{row['model']} ms/token"
            rows.append(_row("decoders", model, row["runtime"], "onnxruntime", row["token_vs_ort"]))
    return rows


def _row(
    suite: str, model: str, candidate: str, reference: str, ratio: float, peak: int | None = None
) -> dict[str, Any]:
    return {
        "suite": suite, "model": model, "candidate": candidate, "reference": reference, "ratio": ratio,
        "peak_bytes": peak,
    }  # fmt: skip


def chart(rows: list[dict[str, Any]], target: Path) -> bool:
    """A horizontal bar chart of the ratios (1.0 marked); False when matplotlib is not installed."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    labels = [f"{r['suite']}: {r['model']} {r['candidate']} / {r['reference']}" for r in rows]
    figure, axes = plt.subplots(figsize=(10, 0.28 * len(rows) + 1))
    axes.barh(labels, [r["ratio"] for r in rows], color="#4c78a8")
    axes.axvline(1.0, color="black", linewidth=1)
    axes.set_xscale("log")
    axes.set_xlabel("median time / reference median (log scale; 1 = as fast as the reference)")
    axes.invert_yaxis()
    figure.tight_layout()
    figure.savefig(target, dpi=110)
    return True


def main(argv: list[str] | None = None) -> None:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", choices=list(SUITE), default=list(SUITE), help="benchmarks to run")
    parser.add_argument("--quick", action="store_true", help="fewer runs per candidate")
    parser.add_argument("--out", default=str(HERE / "results"), help="folder for suite.json and suite.png")
    args = parser.parse_args(argv)
    folder = Path(args.out)
    folder.mkdir(parents=True, exist_ok=True)
    reports = run_suite(args.only, args.quick, folder)
    rows = ratios(reports)
    print("== suite")
    print_table([("suite", "suite"), ("model", "model"), ("candidate", "candidate"), ("reference", "over"),
                 ("ratio", "ratio"), ("peak_bytes", "candidate peak MiB")], rows)  # fmt: skip
    (folder / "suite.json").write_text(json.dumps({"reports": reports, "ratios": rows}, indent=2) + "\n")
    drawn = chart(rows, folder / "suite.png")
    chart_note = f" and {folder / 'suite.png'}" if drawn else " (pip install matplotlib for the chart)"
    print(f"wrote {folder / 'suite.json'}{chart_note}")


if __name__ == "__main__":
    main()
