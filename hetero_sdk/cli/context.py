"""What the ``hetero-sdk`` commands share: exit statuses, the one-line error, and the Core."""

from __future__ import annotations

import click

from hetero_sdk.core import Core

__all__ = ["EXIT_FAILURE", "EXIT_USAGE", "CLIError", "get_core"]

EXIT_FAILURE = 1
"""A device, model or file problem, or a failed results check."""
EXIT_USAGE = 2
"""A wrong command line, or a missing tool the command needs (as click uses it)."""


class CLIError(click.ClickException):
    """A one-line error with its exit status."""

    def __init__(self, message: str, exit_code: int = EXIT_FAILURE) -> None:
        super().__init__(message)
        self.exit_code = exit_code  # type: ignore[misc]


def get_core(ctx: click.Context) -> Core:
    """The Core the commands share: ``obj["core"]`` when the caller passed one (tests, embedding
    applications: ``cli.main(args, obj={"core": core})``), else a new ``Core()`` finding the installed
    devices."""
    obj = ctx.find_root().ensure_object(dict)
    if obj.get("core") is None:
        obj["core"] = Core()
    return obj["core"]
