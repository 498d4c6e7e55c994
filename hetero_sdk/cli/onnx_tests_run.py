"""The run of ``hetero-sdk onnx-tests`` (:mod:`hetero_sdk.cli.onnx_tests`): the selected node tests on a
device, the table per ONNX op and the verdict against the expected-failures file."""

from __future__ import annotations

import json
from pathlib import Path

import click
import onnx

from hetero_sdk.cli.context import EXIT_FAILURE, EXIT_USAGE, CLIError, check_installed, get_core
from hetero_sdk.cli.output import Printer, progress
from hetero_sdk.conformance.onnx_node import (
    STATUSES,
    Expected,
    ExpectedFileError,
    NodeTestRun,
    Verdict,
    document,
    judge,
    per_op,
    read,
    run_node_tests,
    shipped_file,
    totals,
    updated,
)
from hetero_sdk.conformance.onnx_node.cases import ensure_cache, select
from hetero_sdk.conformance.onnx_node.report import unsupported_ops

__all__ = ["run_onnx_tests"]

_LISTED = 20
"""How many regressions, unexpected passes and changed cases the summary names (``--json`` has all)."""


def run_onnx_tests(
    ctx: click.Context,
    device: str,
    include: str | None,
    exclude: str | None,
    shard: tuple[int, int] | None,
    jobs: int,
    timeout: float,
    json_file: str | None,
    expected_file: str | None,
    update_expected: bool,
    strict: bool,
) -> None:
    """Runs the command with its parsed options (see :func:`hetero_sdk.cli.onnx_tests.onnx_tests`)."""
    check_installed(get_core(ctx), device)
    path = Path(expected_file) if expected_file else shipped_file(device)
    if update_expected and path is None:
        message = f"--update-expected: no expected-failures file ships for {device}; name one with --expected FILE"
        raise CLIError(message, EXIT_USAGE)
    expected = _read_expected(path, must_exist=not update_expected)
    total = len(select(ensure_cache(), include, exclude, shard))
    with progress(f"ONNX node tests on {device}", total, by_time=False) as bar:
        run = run_node_tests(
            device, include=include, exclude=exclude, shard=shard, jobs=jobs, timeout=timeout,
            on_result=lambda name, result: bar.advance(),
        )  # fmt: skip
    verdict = judge(run.results, expected)
    if json_file:
        data = document(device, run.results, run.index, verdict, run.seconds)
        Path(json_file).write_text(json.dumps(data, indent=1) + "\n")
    printer = Printer()
    _print_run(printer, run)
    if update_expected and path is not None:
        header = [
            f"ONNX backend node tests (onnx {onnx.__version__}) that {device} does not pass: case  status  reason.",
            f"Regenerate: hetero-sdk onnx-tests {device} --update-expected"
            + ("" if shipped_file(device) == path else f" --expected {path}"),
        ]
        path.write_text(updated(run.results, expected, header))
        printer.line(f"wrote {path}")
        return
    ok = _print_verdict(printer, device, run, verdict, path, strict)
    if not ok:
        ctx.exit(EXIT_FAILURE)


def _read_expected(path: Path | None, must_exist: bool) -> dict[str, Expected]:
    if path is None or (not must_exist and not path.exists()):
        return {}
    try:
        return read(path)
    except ExpectedFileError as exc:
        raise CLIError(f"ExpectedFileError: {exc}", EXIT_USAGE) from None


def _print_run(printer: Printer, run: NodeTestRun) -> None:
    counts = per_op(run.results, run.index)
    everything = totals(run.results)
    rows = [[op, *c.row()] for op, c in counts.items()]
    printer.table(["ONNX op", "cases", *STATUSES], [*rows, ["total", *everything.row()]])
    printer.line(
        f"{run.device}: {everything.cases} cases: {everything.passed} passed, {everything.failed} failed, "
        f"{everything.unsupported} unsupported, {everything.error} errors ({run.seconds:.0f} s)"
    )
    common = unsupported_ops(run.results)
    if common:
        printer.line("most common unsupported op types: " + ", ".join(f"{k} ({v})" for k, v in common.items()))


def _print_verdict(
    printer: Printer, device: str, run: NodeTestRun, verdict: Verdict, path: Path | None, strict: bool
) -> bool:
    if path is None:
        printer.line(
            f"no expected-failures file for {device}: every case that does not pass is a regression "
            f"(record the current ones with --update-expected --expected FILE)"
        )
    for name in verdict.regressions[:_LISTED]:
        result = run.results[name]
        printer.line(f"  regression: {name}: {result.status}: {result.reason.splitlines()[0] if result.reason else ''}")
    if verdict.unexpected_passes:
        printer.line(f"{len(verdict.unexpected_passes)} listed case(s) now pass: remove them from the file {path}:")
        for name in verdict.unexpected_passes[:_LISTED]:
            printer.line(f"  {name}")
    for name, (was, now) in list(verdict.changed.items())[:_LISTED]:
        printer.line(f"  changed: {name}: listed as {was}, now {now}")
    ok = verdict.ok(strict)
    count = len(verdict.regressions)
    extra = f", {len(verdict.unexpected_passes)} unexpected pass(es), {len(verdict.changed)} changed"
    printer.verdict(ok, f"{device}: {count} regression(s){extra}" + (f" (file: {path})" if path else ""))
    return ok
