"""``query --dot``: the model's graph as Graphviz DOT text, each op filled with the colour of the device it
runs on. Plain text written here, so no Graphviz program or package is needed to produce it."""

from __future__ import annotations

from hetero_sdk.graph import Model, Node
from hetero_sdk.hetero.report import PlacementReport

__all__ = ["DEVICE_COLOURS", "UNPLACED_COLOUR", "device_colours", "placement_dot"]

DEVICE_COLOURS = ("#80b1d3", "#fdb462", "#b3de69", "#fb8072", "#bebada", "#8dd3c7", "#fccde5", "#ffffb3")
"""The fill colours of the devices, given in the order the devices first run a subgraph."""
UNPLACED_COLOUR = "#f0f0f0"
"""The fill of what no device runs: Parameters, Constants, Results."""
_CUT_COLOUR = "#d62728"


def device_colours(report: PlacementReport) -> dict[str, str]:
    """Each device of the placement with its fill colour, in the order the devices first run a subgraph."""
    devices: list[str] = []
    for device in [d for d, _ in report.subgraphs] + [d for d, _ in report.placement.values()]:
        if device not in devices:
            devices.append(device)
    return {device: DEVICE_COLOURS[i % len(DEVICE_COLOURS)] for i, device in enumerate(devices)}


def placement_dot(model: Model, report: PlacementReport, title: str | None = None) -> str:
    """The graph of ``model`` in DOT: every op a box labelled name, type and ``DEVICE #subgraph``,
    filled with its device's colour; ops no device runs (Parameter, Constant, Result) in light grey;
    tensors crossing subgraphs as bold red edges labelled with their type and shape; a legend of the
    devices' colours.

    :param title: the graph's caption; the model's name by default.
    """
    colours = device_colours(report)
    ordered = model.get_ordered_ops()
    ids = {id(node): f"n{i}" for i, node in enumerate(ordered)}
    caption = title or model.friendly_name
    lines = [
        f"digraph {_quote(model.friendly_name)} {{",
        f"  graph [label={_quote(caption)}, labelloc=t, fontname=Helvetica];",
        "  node [shape=box, style=filled, fontname=Helvetica];",
        "  edge [fontname=Helvetica, fontsize=10];",
    ]
    for node in ordered:
        lines.append(f"  {ids[id(node)]} [{_node_attributes(node, report, colours)}];")
    for node in ordered:
        for source in node.input_values():
            edge = f"  {ids[id(source.node)]} -> {ids[id(node)]}"
            start = report.placement.get(source.node.friendly_name)
            end = report.placement.get(node.friendly_name)
            if start is not None and end is not None and start[1] != end[1]:
                label = f"{source.element_type.value}{source.partial_shape}"
                edge += f" [label={_quote(label)}, color={_quote(_CUT_COLOUR)}, penwidth=2]"
            lines.append(edge + ";")
    if colours:
        lines.append("  subgraph cluster_legend {")
        lines.append('    label="devices"; style=dashed;')
        for i, (device, colour) in enumerate(colours.items()):
            lines.append(f"    legend{i} [label={_quote(device)}, fillcolor={_quote(colour)}];")
        lines.append("  }")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _node_attributes(node: Node, report: PlacementReport, colours: dict[str, str]) -> str:
    where = report.placement.get(node.friendly_name)
    label = [node.friendly_name, node.type_name]
    if where is not None:
        label.append(f"{where[0]} #{where[1]}")
        return f"label={_quote(chr(10).join(label))}, fillcolor={_quote(colours[where[0]])}"
    if node.type_name == "Parameter" and node.outputs():
        port = node.output(0)
        label.append(f"{port.element_type.value}{port.partial_shape}")
    return f"label={_quote(chr(10).join(label))}, fillcolor={_quote(UNPLACED_COLOUR)}, shape=ellipse"


def _quote(text: str) -> str:
    """A DOT quoted string: backslashes and quotes escaped, line breaks as DOT's ``\\n``."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\r", "")
    return '"' + escaped.replace("\n", "\\n") + '"'
