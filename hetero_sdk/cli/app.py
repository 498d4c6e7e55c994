"""The ``hetero-sdk`` command group and its error handling: every user mistake or device failure
ends as one line on stderr and a non-zero exit status, never a traceback."""

from __future__ import annotations

import re
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

import click

from hetero_sdk.cli.advice import cli_advice
from hetero_sdk.cli.benchmark import benchmark
from hetero_sdk.cli.conformance import conformance
from hetero_sdk.cli.context import EXIT_FAILURE, EXIT_USAGE, CLIError
from hetero_sdk.cli.convert import convert
from hetero_sdk.cli.devices import devices
from hetero_sdk.cli.extensions import extensions
from hetero_sdk.cli.generate import generate
from hetero_sdk.cli.new_extension import new_extension
from hetero_sdk.cli.new_plugin import new_plugin
from hetero_sdk.cli.onnx_tests import onnx_tests
from hetero_sdk.cli.query import query
from hetero_sdk.errors import HeteroSDKError, suggest

__all__ = ["cli", "describe"]


def describe(exc: BaseException) -> str:
    """One line saying what went wrong: the error's type for SDK errors, the file for OS errors, and the
    command line's own advice (:func:`~hetero_sdk.cli.advice.cli_advice`)."""
    if isinstance(exc, FileNotFoundError) and exc.filename is not None:
        text = f"{type(exc).__name__}: no such file or directory: {exc.filename}"
    elif isinstance(exc, OSError) and exc.filename is not None:
        text = f"{type(exc).__name__}: {exc.strerror or 'cannot use'}: {exc.filename}"
    elif isinstance(exc, HeteroSDKError):
        text = f"{type(exc).__name__}: {exc}{cli_advice(exc)}"
    else:
        text = str(exc) or type(exc).__name__
    return " ".join(text.split())


class _Group(click.Group):
    """A click group whose errors are single lines: SDK and OS errors become :class:`CLIError`,
    usage errors lose click's multi-line usage banner (the hint to ``--help`` stays)."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except BrokenPipeError:
            raise
        except (HeteroSDKError, OSError) as exc:
            if ctx.obj and ctx.obj.get("debug"):
                raise
            raise CLIError(describe(exc)) from exc

    def main(  # type: ignore[override]
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, False, **extra)
        argv = list(sys.argv[1:] if args is None else args)
        try:
            status = super().main(argv, prog_name, complete_var, False, **extra)
        except click.NoSuchOption as exc:
            path = exc.ctx.command_path if exc.ctx is not None else "hetero-sdk"
            _fail(f"{_unknown_option(exc, argv)} (see '{path} --help')", exc.exit_code)
        except click.UsageError as exc:
            path = exc.ctx.command_path if exc.ctx is not None else "hetero-sdk"
            _fail(f"{exc.format_message()} (see '{path} --help')", exc.exit_code)
        except click.ClickException as exc:
            _fail(exc.format_message(), exc.exit_code)
        except click.Abort:
            _fail("aborted", EXIT_FAILURE)
        sys.exit(status if isinstance(status, int) else 0)


def _unknown_option(exc: click.NoSuchOption, argv: Sequence[str]) -> str:
    """The option as typed: click reads ``-apii`` as ``-a`` followed by ``pii`` and reports ``-a``; the
    user wrote ``-apii``, the first argument starting with ``-a`` that is not itself an option of the
    command (``-niter 2 -nthreads x`` names ``-nthreads``, not ``-niter``). Suggestions come from the
    command's own options."""
    known = (
        [opt for param in exc.ctx.command.params for opt in (*param.opts, *param.secondary_opts)]
        if exc.ctx is not None
        else []
    )
    reported = exc.option_name
    typed = next(
        (
            name
            for name in (arg.split("=", 1)[0] for arg in argv)
            if name.startswith(reported) and not name.startswith("--") and name not in known
        ),
        reported,
    )
    hint = suggest(typed, known)
    return f"no such option {typed!r}" + (f"; {hint}" if hint else "")


_TYPED = re.compile(r"[A-Z][A-Za-z]*(Error|Exception|Warning): ")


def _fail(message: str, status: int) -> NoReturn:
    """``hetero-sdk: error: <Type>: <message>``: SDK and OS errors keep their type; a wrong command
    line is a ``UsageError`` (status 2), anything else an ``Error`` (status 1)."""
    text = " ".join(message.split())
    if not _TYPED.match(text):
        text = f"{'UsageError' if status == EXIT_USAGE else 'Error'}: {text}"
    click.echo(f"hetero-sdk: error: {text}", err=True)
    sys.exit(status)


@click.group(
    "hetero-sdk", cls=_Group, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100}
)
@click.version_option(package_name="hetero-sdk", prog_name="hetero-sdk")
@click.option("--debug", is_flag=True, help="Show the full traceback of device and model errors.")
@click.pass_context
def cli(ctx: click.Context, debug: bool) -> None:
    """hetero-sdk: run one model across several devices.

    \b
    hetero-sdk devices                    list the devices and why any failed to load
    hetero-sdk query -m model.onnx        where each op of a model runs, and why
    hetero-sdk benchmark --time 2         the main job: split, check and time the sample model
    hetero-sdk benchmark -m model.onnx -shape "[1,3,224,224]"   the same on your model
    hetero-sdk convert model.onnx         save a model in the native .json + .bin format
    hetero-sdk generate -m decoder.onnx --prompt-ids 1,2,3 -n 32   generate tokens with a decoder
    hetero-sdk conformance TEMPLATE       run the conformance kit on a device
    hetero-sdk onnx-tests XLA             ONNX's backend node tests on a device, per op
    hetero-sdk new-plugin npu             scaffold a device package, hetero-sdk-npu
    hetero-sdk extensions                 list the op extensions and why any failed to load
    hetero-sdk new-extension myops        scaffold an op extension package, hetero-sdk-myops
    """
    ctx.ensure_object(dict)["debug"] = debug


for _command in (
    devices,
    extensions,
    query,
    benchmark,
    convert,
    generate,
    conformance,
    onnx_tests,
    new_plugin,
    new_extension,
):
    cli.add_command(_command)
