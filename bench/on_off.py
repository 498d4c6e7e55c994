"""The command line of a bench that compiles each real model two ways (a rule or pass off, then on) in one
process and times the two interleaved on one CPU (:func:`timing.on_off_row`), one table row per model."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from typing import Any

from bench_onnx_models import model_at
from real_models import RealModel
from timing import on_off_row, one_cpu_clock, print_table

__all__ = ["on_off_main"]


def on_off_main(
    doc: str,
    title: str,
    states: tuple[tuple[str, str], tuple[str, str]],
    ratio: str,
    models: Sequence[str],
    request_for: Callable[[RealModel, bool], Any],
) -> None:
    """Parses ``--models`` (default ``models``), ``--runs`` and ``--cpu-time``; for each model (at the issue's
    size) builds the infer requests ``request_for(model, False)`` and ``request_for(model, True)``, named and
    headed by ``states`` (off first), and prints ``title`` over their medians, the ``ratio`` on / off and the
    largest difference of their outputs."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=list(models))
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--cpu-time", action="store_true", help="time by the process's CPU time")
    args = parser.parse_args()
    clock = one_cpu_clock(args.cpu_time)
    (off, off_header), (on, on_header) = states
    rows = []
    for key in args.models:
        model = model_at(key, True)
        requests = {off: request_for(model, False), on: request_for(model, True)}
        rows.append(on_off_row(key, model.feeds, requests, args.runs, clock))
    print(f"{title}, median ms ({'CPU' if args.cpu_time else 'wall'} time)")
    columns = [("model", "model"), (off, off_header), (on, on_header), ("ratio", ratio), ("error", "max |diff|")]
    print_table(columns, rows)
