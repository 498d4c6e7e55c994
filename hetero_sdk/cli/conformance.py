"""``hetero-sdk conformance DEVICE``: runs the conformance kit (needs the ``testing`` extra)."""

from __future__ import annotations

import importlib

import click

from hetero_sdk.cli.context import EXIT_USAGE, CLIError, check_installed, get_core
from hetero_sdk.cli.models import validate_device

__all__ = ["conformance"]

_INSTALL_HINT = "pip install 'hetero-sdk[testing]'"
_TESTING_EXTRA = frozenset({"pytest", "_pytest", "hypothesis"})


@click.command(short_help="Run the conformance kit on a device.", context_settings={"ignore_unknown_options": True})
@click.argument("device", callback=validate_device)
@click.option("--xfail-file", type=click.Path(exists=True, dir_okay=False), help="Expected failures, a reason each.")
@click.option("--report-json", type=click.Path(dir_okay=False), help="Write the results as JSON to this file.")
@click.option(
    "--profile",
    type=click.Choice(["ci", "thorough"]),
    default="ci",
    show_default=True,
    help="How many hypothesis examples per check (ci: few, thorough: many).",
)
@click.option("--onnx-node-tests", is_flag=True, help="Also run ONNX's backend node tests, one check per case.")
@click.option(
    "--onnx-node-expected",
    type=click.Path(exists=True, dir_okay=False),
    help="The node tests' expected failures (default: the file shipped for DEVICE, if any).",
)
@click.argument("pytest_args", nargs=-1, type=click.UNPROCESSED)
@click.pass_context
def conformance(
    ctx: click.Context,
    device: str,
    xfail_file: str | None,
    report_json: str | None,
    profile: str,
    onnx_node_tests: bool,
    onnx_node_expected: str | None,
    pytest_args: tuple[str, ...],
) -> None:
    """Run the conformance kit on DEVICE; extra arguments (e.g. -k conv -x) go to pytest."""
    if not any(arg.startswith("--conformance-plugin") for arg in pytest_args):
        check_installed(get_core(ctx), device)  # the kit's own check speaks pytest's voice, not ours
    try:
        kit = importlib.import_module("hetero_sdk.conformance")
        run = getattr(kit, "run", None)
        if run is None:
            raise CLIError("this installation of hetero-sdk has no conformance kit runner", EXIT_USAGE)
        node_tests = {"onnx_node_tests": True, "onnx_node_expected": onnx_node_expected}
        status = run(
            device, extra_args=pytest_args, xfail_file=xfail_file, report_json=report_json, profile=profile,
            **(node_tests if onnx_node_tests or onnx_node_expected else {}),
        )  # fmt: skip
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] not in _TESTING_EXTRA:
            raise
        raise CLIError(
            f"the conformance kit needs {exc.name}, which is not installed; install it with {_INSTALL_HINT}",
            EXIT_USAGE,
        ) from exc
    ctx.exit(int(status))
