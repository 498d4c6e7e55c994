"""A mkdocs hook: ``<!-- onnx-coverage -->`` in a page becomes the table of ONNX's backend node tests
per ONNX op: how many cases, how many TEMPLATE and XLA pass (the cases their expected-failures files do
not list), and how the ONNX frontend translates the op (its own rule, or ONNX's function body inlined).
Generated from the case index (``hetero_sdk.conformance.onnx_node``, regenerated from the installed
onnx on first use) and the checked-in expected-failures files, so the page always matches them.

``python docs/_hooks/onnx_coverage.py`` prints the table.
"""

from __future__ import annotations

import collections
import sys
from typing import Any

_MARKER = "<!-- onnx-coverage -->"
DEVICES = ("TEMPLATE", "XLA")
"""The devices whose shipped expected-failures files make the table's columns."""


def _route(op: str, opsets: set[int]) -> str:
    """How the frontend translates ``op`` at the opsets its cases use."""
    from hetero_sdk.frontend.onnx import supported_ops
    from hetero_sdk.frontend.onnx.functions import has_function

    domain, _, op_type = op.rpartition(":")
    starts = supported_ops().get(op, [])
    routes = set()
    for opset in opsets:
        if any(since <= opset for since in starts):
            routes.add("rule")
        elif has_function(op_type, opset, domain):
            routes.add("function body")
    return ", ".join(sorted(routes)) or "-"


def onnx_coverage() -> str:
    """The Markdown of the totals and the per-op table."""
    import onnx

    from hetero_sdk.conformance.onnx_node import ensure_cache, read, shipped_file

    index = ensure_cache()
    failing = {}
    for device in DEVICES:
        path = shipped_file(device)
        failing[device] = set(read(path)) if path is not None else set()
    cases: dict[str, list[str]] = collections.defaultdict(list)
    opsets: dict[str, set[int]] = collections.defaultdict(set)
    for name, info in index.items():
        cases[info.op].append(name)
        if not info.expanded:
            opsets[info.op].add(info.opset)
    total = len(index)
    passed = {d: total - len(failing[d] & set(index)) for d in DEVICES}
    lines = [
        f"onnx {onnx.__version__}: {total:,} cases of {len(cases)} ops; "
        + "; ".join(f"{d} passes {passed[d]:,}" for d in DEVICES)
        + ".",
        "",
        "| ONNX op | cases | " + " | ".join(f"{d} passed" for d in DEVICES) + " | frontend |",
        "|---|---:|" + "---:|" * len(DEVICES) + "---|",
    ]
    for op in sorted(cases, key=str.lower):
        names = cases[op]
        counts = [str(len(names) - len(failing[d].intersection(names))) for d in DEVICES]
        lines.append(f"| {op} | {len(names)} | " + " | ".join(counts) + f" | {_route(op, opsets[op])} |")
    return "\n".join([*lines, "", *extension_rules()])


def extension_rules() -> list[str]:
    """The ONNX ops the installed extensions translate (ONNX has no node tests for other domains' ops),
    as a list: domain and op type with the first opset, the extension and its distribution."""
    from hetero_sdk.extensions import extension_infos

    lines = ["Ops the installed [extensions](../extensions.md) translate (`hetero-sdk extensions` lists yours):", ""]
    for info in extension_infos():
        where = f"extension {info.name} ({info.distribution or 'added in process'})"
        lines += [f"- `{rule}`: {where}" for rule in info.onnx_rules]
    return lines if len(lines) > 2 else [*lines, "none where this page was built."]


def on_page_markdown(markdown: str, **kwargs: Any) -> str:
    """Replaces the page's marker with the table."""
    return markdown.replace(_MARKER, onnx_coverage()) if _MARKER in markdown else markdown


if __name__ == "__main__":
    sys.stdout.write(onnx_coverage() + "\n")
