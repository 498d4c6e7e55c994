"""``hetero-sdk onnx-tests DEVICE``: ONNX's backend node tests on a device, counted per ONNX op and
judged against the device's expected-failures file."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import click
import onnx

from hetero_sdk.cli.context import EXIT_FAILURE, EXIT_USAGE, CLIError, check_installed, get_core
from hetero_sdk.cli.models import validate_device
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

__all__ = ["onnx_tests"]

_LISTED = 20
"""How many regressions, unexpected passes and changed cases the summary names (``--json`` has all)."""


def _regex(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    if value is not None:
        try:
            re.compile(value)
        except re.error as exc:
            raise click.BadParameter(f"{value!r} is not a regular expression: {exc}", ctx=ctx, param=param) from None
    return value


def _shard(ctx: click.Context, param: click.Parameter, value: str | None) -> tuple[int, int] | None:
    if value is None:
        return None
    match = re.fullmatch(r"(\d+)/(\d+)", value)
    if match is None or not 1 <= int(match[1]) <= int(match[2]):
        raise click.BadParameter(f"{value!r}: expected I/N with 1 <= I <= N, e.g. 1/8", ctx=ctx, param=param)
    return int(match[1]), int(match[2])


@click.command("onnx-tests", short_help="Run ONNX's backend node tests on a device.")
@click.argument("device", callback=validate_device)
@click.option("--include", metavar="REGEX", callback=_regex, help="Run only the cases whose names match.")
@click.option("--exclude", metavar="REGEX", callback=_regex, help="Leave out the cases whose names match.")
@click.option("--shard", metavar="I/N", callback=_shard, help="Run the I-th of every N selected cases (sorted).")
@click.option(
    "--jobs",
    type=click.IntRange(min=1),
    default=max(1, (os.cpu_count() or 2) // 2),
    show_default="half the CPUs",
    help="Worker processes.",
)
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True), default=60.0, show_default=True,
              help="Seconds per case; a case past it is killed and counted as an error.")  # fmt: skip
@click.option("--json", "json_file", type=click.Path(dir_okay=False), help="Write every case's result here.")
@click.option(
    "--expected",
    "expected_file",
    type=click.Path(dir_okay=False),
    help="The expected-failures file (default: the one shipped for DEVICE, if any).",
)
@click.option("--update-expected", is_flag=True, help="Rewrite the expected-failures file from this run.")
@click.option("--strict", is_flag=True, help="Fail on listed cases that now pass or fail differently, too.")
@click.pass_context
def onnx_tests(
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
    """Run ONNX's backend node tests (regenerated from the installed onnx) on DEVICE.

    Prints the cases of each ONNX op that passed, failed (dtype, shape or values), were unsupported
    (the frontend has no translation) or raised an error, and exits with 1 when a case not listed in
    the expected-failures file does not pass.
    """
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
