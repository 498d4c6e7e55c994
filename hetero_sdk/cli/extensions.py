"""``hetero-sdk extensions``: the installed and added extensions, their ops, and why any failed to load."""

from __future__ import annotations

from typing import Any

import click

from hetero_sdk.cli.context import get_core
from hetero_sdk.cli.output import Printer, emit_json
from hetero_sdk.core import Core

__all__ = ["collect_extensions", "extensions"]


def collect_extensions(core: Core) -> list[dict[str, Any]]:
    """Each extension, JSON-ready: ``name``, ``distribution``, ``version``, ``status`` (``loaded`` or
    ``broken``), ``ops`` and ``error`` (why a broken one failed; empty otherwise)."""
    return [
        {
            "name": info.name,
            "distribution": info.distribution,
            "version": info.version,
            "status": info.status,
            "ops": list(info.ops),
            "error": info.error,
        }
        for info in core.extensions
    ]


@click.command(short_help="List the op extensions, their ops, and why any failed to load.")
@click.option("--json", "as_json", is_flag=True, help="Print the extensions as JSON.")
@click.pass_context
def extensions(ctx: click.Context, as_json: bool) -> None:
    """List the extensions (entry-point group hetero_sdk.extensions, or added with Core.add_extension):
    name, distribution and version, status, and the ops each defines; a broken one with its error."""
    found = collect_extensions(get_core(ctx))
    if as_json:
        emit_json(found)
        return
    out = Printer()
    out.heading("Extensions")
    if not found:
        out.line("  none: install an extension package (pip install -e ./plugins/contrib) or add one")
        return
    out.table(
        ["NAME", "DISTRIBUTION", "VERSION", "STATUS", "OPS"],
        [[e["name"], e["distribution"] or "-", e["version"] or "-", e["status"], ", ".join(e["ops"])] for e in found],
    )
    for entry in found:
        if entry["error"]:
            out.line(f"  {entry['name']} ({entry['distribution'] or 'added in process'}): {entry['error']}",
                     style="yellow")  # fmt: skip
