"""GraphViz dumps of a HETERO split: ``hetero_affinity_<model>.dot`` (ops coloured by device) and
``hetero_subgraphs_<model>.dot`` (ops coloured by subgraph), written when ``HETERO_SDK_VISUALIZE``
is set to a folder (or ``1`` for the working directory)."""

from __future__ import annotations

import os
import re
from pathlib import Path

from hetero_sdk.graph import Model
from hetero_sdk.hetero.report import PlacementReport

__all__ = ["ENV_VAR", "affinity_dot", "dump_if_requested", "subgraphs_dot"]

ENV_VAR = "HETERO_SDK_VISUALIZE"
_PALETTE = ["#8dd3c7", "#ffffb3", "#bebada", "#fb8072", "#80b1d3", "#fdb462", "#b3de69", "#fccde5", "#d9d9d9"]


def affinity_dot(model: Model, report: PlacementReport) -> str:
    """The model's graph with each op filled with its device's colour."""
    devices = sorted({d for d, _ in report.placement.values()})
    colour = {d: _PALETTE[i % len(_PALETTE)] for i, d in enumerate(devices)}
    return _dot(
        model,
        lambda op: (
            (colour[report.placement[op][0]], report.placement[op][0]) if op in report.placement else ("white", "")
        ),
    )


def subgraphs_dot(model: Model, report: PlacementReport) -> str:
    """The model's graph with each op filled with its subgraph's colour, labelled device and id."""

    def style(op: str) -> tuple[str, str]:
        if op not in report.placement:
            return "white", ""
        device, index = report.placement[op]
        return _PALETTE[index % len(_PALETTE)], f"{device} #{index}"

    return _dot(model, style)


def dump_if_requested(model: Model, report: PlacementReport) -> list[Path]:
    """Writes both files when ``HETERO_SDK_VISUALIZE`` is set; returns their paths."""
    target = os.environ.get(ENV_VAR)
    if not target or target == "0":
        return []
    folder = Path.cwd() if target == "1" else Path(target)
    folder.mkdir(parents=True, exist_ok=True)
    stem = re.sub(r"[^A-Za-z0-9_.-]", "_", model.friendly_name)
    paths = [folder / f"hetero_affinity_{stem}.dot", folder / f"hetero_subgraphs_{stem}.dot"]
    paths[0].write_text(affinity_dot(model, report))
    paths[1].write_text(subgraphs_dot(model, report))
    return paths


def _dot(model: Model, style) -> str:  # type: ignore[no-untyped-def]
    ids = {id(n): f"n{i}" for i, n in enumerate(model.get_ordered_ops())}
    lines = [f'digraph "{_escape(model.friendly_name)}" {{', "  node [shape=box, style=filled];"]
    for node in model.get_ordered_ops():
        fill, note = style(node.friendly_name)
        label = f"{node.friendly_name}\\n{node.type_name}" + (f"\\n{note}" if note else "")
        lines.append(f'  {ids[id(node)]} [label="{_escape(label)}", fillcolor="{fill}"];')
    for node in model.get_ordered_ops():
        for source in node.input_values():
            lines.append(f"  {ids[id(source.node)]} -> {ids[id(node)]};")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _escape(text: str) -> str:
    return text.replace('"', '\\"')
