"""``hetero-sdk onnx-tests DEVICE``: ONNX's backend node tests on a device, counted per ONNX op and
judged against the device's expected-failures file. The command's options live here; the run (which
imports ``onnx`` and the node-test kit) in :mod:`hetero_sdk.cli.onnx_tests_run`, imported when the
command runs, so that ``hetero-sdk`` starts without ``onnx``."""

from __future__ import annotations

import os
import re
from typing import Any

import click

from hetero_sdk.cli.models import validate_device

__all__ = ["onnx_tests"]


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
def onnx_tests(ctx: click.Context, **options: Any) -> None:
    """Run ONNX's backend node tests (regenerated from the installed onnx) on DEVICE.

    Prints the cases of each ONNX op that passed, failed (dtype, shape or values), were unsupported
    (the frontend has no translation) or raised an error, and exits with 1 when a case not listed in
    the expected-failures file does not pass.
    """
    from hetero_sdk.cli.onnx_tests_run import run_onnx_tests

    run_onnx_tests(ctx, **options)
