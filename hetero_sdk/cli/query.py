"""``hetero-sdk query -m MODEL -d DEVICE``: compile a model and show where each op runs and why, as a
table, JSON or a Graphviz picture coloured by device."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import click

from hetero_sdk import rt_info
from hetero_sdk.cli.context import EXIT_USAGE, LOAD_CONFIG, CLIError, apply_config_file, check_installed, get_core
from hetero_sdk.cli.dash_options import DashOptionCommand
from hetero_sdk.cli.dot import placement_dot
from hetero_sdk.cli.models import LoadedModel, default_device, load_model, model_source, validate_device
from hetero_sdk.cli.output import Printer, emit_json, status
from hetero_sdk.cli.shapes import SHAPES, InputShapes
from hetero_sdk.graph import Model
from hetero_sdk.hetero.report import PlacementReport
from hetero_sdk.runtime import CompiledModel

__all__ = ["placement_of", "print_report", "query", "report_dict"]

GRAPHVIZ_HINT = (
    "drawing --svg or --png needs Graphviz's 'dot' program, which is not on PATH; install it "
    "(apt-get install graphviz, brew install graphviz or conda install graphviz), or write --dot FILE "
    "and render it elsewhere"
)


def placement_of(compiled: CompiledModel, model: Model) -> PlacementReport:
    """The compiled model's placement report (HETERO's); else the affinities its runtime model gives
    (AUTO serving a HETERO split); else every op on the device that runs it (``EXECUTION_DEVICES``:
    ``TEMPLATE.0`` for ``AUTO`` running there, not ``AUTO``; several when each runs the whole model)."""
    report = getattr(compiled, "placement_report", None)
    if callable(report):
        return report()
    ops = [n.friendly_name for n in model.get_ordered_ops() if not n.op.structural]
    placed = _runtime_affinities(compiled)
    if placed and all(op in placed for op in ops):
        subgraphs: dict[int, tuple[str, list[str]]] = {}
        for op in ops:
            device, index = placed[op]
            subgraphs.setdefault(index, (device, []))[1].append(op)
        return PlacementReport({op: placed[op] for op in ops}, subgraphs=[subgraphs[i] for i in sorted(subgraphs)])
    device = ", ".join(compiled.get_property("EXECUTION_DEVICES")) or compiled.device_name
    return PlacementReport({op: (device, 0) for op in ops}, subgraphs=[(device, ops)])


def _runtime_affinities(compiled: CompiledModel) -> dict[str, tuple[str, int]]:
    """``{op: (device, subgraph)}`` from the runtime model's ``affinity`` and ``subgraph`` rt_info."""
    placed = {}
    for node in compiled.get_runtime_model().get_ops():
        info = node.get_rt_info()
        if rt_info.AFFINITY in info and rt_info.SUBGRAPH in info:
            placed[node.friendly_name] = (str(info[rt_info.AFFINITY]), int(info[rt_info.SUBGRAPH]))
    return placed


def report_dict(loaded: LoadedModel, device: str, compiled: CompiledModel, report: PlacementReport) -> dict[str, Any]:
    """The JSON of ``query``: the model, the device, the execution devices, the report's own
    fields and an ``ops`` list (name, type, device, subgraph, rejected_by) in model order."""
    types = {n.friendly_name: n.type_name for n in loaded.model.get_ordered_ops()}
    ops = [
        {
            "name": op,
            "type": types.get(op),
            "device": where[0],
            "subgraph": where[1],
            "rejected_by": report.rejected_by.get(op, []),
        }
        for op, where in _in_model_order(loaded.model, report)
    ]
    return {
        "model": loaded.to_dict(),
        "device": device,
        "execution_devices": compiled.get_property("EXECUTION_DEVICES"),
        **report.to_dict(),
        "ops": ops,
    }


def _in_model_order(model: Model, report: PlacementReport) -> list[tuple[str, tuple[str, int]]]:
    order = {n.friendly_name: i for i, n in enumerate(model.get_ordered_ops())}
    return sorted(report.placement.items(), key=lambda item: order.get(item[0], len(order)))


def print_summary(out: Printer, report: PlacementReport) -> None:
    """The subgraphs, the fallbacks and the cut tensors: what ``benchmark`` shows of a partition."""
    mode = "manual" if report.manual else "automatic"
    ops = sum(len(names) for _, names in report.subgraphs)
    out.line(
        f"{ops} ops in {len(report.subgraphs)} subgraph(s), {mode} affinities, {report.transfer_bytes} bytes "
        "cross per inference"
    )
    out.table(
        ["SUBGRAPH", "DEVICE", "OPS", "FIRST OPS"],
        [
            [i, device, len(ops), ", ".join(ops[:4]) + (", ..." if len(ops) > 4 else "")]
            for i, (device, ops) in enumerate(report.subgraphs)
        ],
    )
    if report.rejected_by:
        fallbacks = sorted(report.rejected_by.items())
        out.line("  fell back: " + "; ".join(f"{op} (rejected by {', '.join(d)})" for op, d in fallbacks))
    for index, (failed, used, reason) in sorted(report.fallbacks.items()):
        out.line(f"  subgraph{index}: {failed} failed to compile ({reason}); moved to {used}", style="yellow")
    if report.cuts:
        out.table(
            ["CUT TENSOR", "FROM", "TO", "TYPE", "SHAPE", "BYTES"],
            [
                [c.tensor, c.producer, list(c.consumers), c.element_type, c.shape, c.nbytes if c.nbytes else "dynamic"]
                for c in report.cuts
            ],
        )
    _print_stages_and_latency(out, report)


def _print_stages_and_latency(out: Printer, report: PlacementReport) -> None:
    """PIPELINE_PARALLEL's stages with their memory, the notes, and LATENCY's estimates."""
    if report.stages:
        out.table(
            ["STAGE", "DEVICE", "OPS", "FROM", "TO", "WEIGHTS", "ACTIVATIONS", "MEMORY", "PLANNED AGAINST"],
            [
                [i, s.device, s.ops, s.first_op, s.last_op, s.weight_bytes, s.activation_bytes, s.memory_bytes,
                 f"{s.budget} ({s.budget_source})"]
                for i, s in enumerate(report.stages)
            ],
        )  # fmt: skip
    for note in report.notes:
        out.line(f"  note: {note}")
    if report.latency is not None:
        out.table(
            ["PLAN", "ESTIMATED US", "MEASURED US"],
            [
                [plan, round(seconds * 1e6, 1), _microseconds(report.latency.measured.get(plan))]
                for plan, seconds in report.latency.estimated.items()
            ],
        )


def _microseconds(seconds: float | None) -> object:
    return "-" if seconds is None else round(seconds * 1e6, 1)


def print_report(out: Printer, data: dict[str, Any], report: PlacementReport) -> None:
    """The full text report: every op with its device and why it fell back, then the summary."""
    out.heading(f"Placement of {data['model']['name']} on {data['device']}")
    out.table(
        ["OP", "TYPE", "DEVICE", "SUBGRAPH", "REJECTED BY"],
        [[o["name"], o["type"], o["device"], o["subgraph"], o["rejected_by"]] for o in data["ops"]],
    )
    out.heading("Subgraphs")
    print_summary(out, report)


def _render(dot_text: str, fmt: str, target: str) -> None:
    executable = shutil.which("dot")
    if executable is None:
        raise CLIError(GRAPHVIZ_HINT, EXIT_USAGE)
    done = subprocess.run(
        [executable, f"-T{fmt}", "-o", target], input=dot_text.encode(), capture_output=True, check=False
    )
    if done.returncode != 0:
        message = done.stderr.decode(errors="replace").strip() or f"exit status {done.returncode}"
        raise CLIError(f"Graphviz failed to draw {target}: {message}")


@click.command(cls=DashOptionCommand, short_help="Show where each op of a model runs, and why.")
@click.argument("model", required=False)
@click.option("-m", "--model", "model_option", metavar="MODEL", help="The model, as benchmark_app spells it.")
@click.option(
    "-d",
    "--device",
    callback=validate_device,
    help="The device to compile on, usually HETERO:A,B,... [default: HETERO:XLA,TEMPLATE when XLA "
    "is installed, else TEMPLATE]",
)
@click.option(
    "-shape",
    "--input-shape",
    "shape",
    type=SHAPES,
    help='Input shapes, as benchmark_app: "[1,3,224,224]" for one input, "a[1,3],b[2]" by name.',
)
@LOAD_CONFIG
@click.option("--json", "as_json", is_flag=True, help="Print the placement report as JSON.")
@click.option(
    "--dot", "dot_file", type=click.Path(dir_okay=False), help="Write the graph, coloured by device, as Graphviz DOT."
)
@click.option("--svg", "svg_file", type=click.Path(dir_okay=False), help="Draw that graph as SVG (needs Graphviz).")
@click.option("--png", "png_file", type=click.Path(dir_okay=False), help="Draw that graph as PNG (needs Graphviz).")
@click.pass_context
def query(
    ctx: click.Context,
    model: str | None,
    model_option: str | None,
    device: str | None,
    shape: InputShapes | None,
    config_file: str | None,
    as_json: bool,
    dot_file: str | None,
    svg_file: str | None,
    png_file: str | None,
) -> None:
    """Compile MODEL on a device and show where each op runs: the device of each op, which devices
    rejected the ops that fell back, the subgraphs, and the tensors cut between them with their sizes.

    MODEL (or -m MODEL) is a model file, ONNX (.onnx) or native (.json with its .bin), or a built-in
    sample: detection, mlp.
    """
    spec = model_source(ctx, model, model_option)
    if spec is None:
        raise click.UsageError("Missing argument 'MODEL' (or -m MODEL)", ctx)
    if (svg_file or png_file) and shutil.which("dot") is None:
        raise CLIError(GRAPHVIZ_HINT, EXIT_USAGE)
    core = get_core(ctx)
    device = device or default_device(core)
    check_installed(core, device)  # a wrong name is answered before the model is read or a device loaded
    loaded = load_model(core, spec, shape)
    config = apply_config_file(core, config_file, device)
    with status(f"compiling {loaded.model.friendly_name} on {device}"):
        compiled = core.compile_model(loaded.model, device, config)
    report = placement_of(compiled, loaded.model)
    data = report_dict(loaded, device, compiled, report)
    dot_text = placement_dot(loaded.model, report, f"{loaded.model.friendly_name} on {device}")
    written = []
    if dot_file:
        Path(dot_file).write_text(dot_text)
        written.append(dot_file)
    for fmt, target in (("svg", svg_file), ("png", png_file)):
        if target:
            _render(dot_text, fmt, target)
            written.append(target)
    if as_json:
        emit_json({**data, "files": written})
        return
    out = Printer()
    print_report(out, data, report)
    for path in written:
        out.line(f"wrote {path}")
