"""``hetero-sdk convert MODEL [-o OUT.json|OUT.xml] [-shape ...]``: read any model ``Core.read_model`` reads
(ONNX, OpenVINO IR, the native format) or a built-in sample, optionally fix its input shapes, and save it
in the native format (``.json`` + ``.bin``) or as OpenVINO IR (``.xml`` + ``.bin``), as OpenVINO's ``ovc``
converts to IR."""

from __future__ import annotations

from pathlib import Path

import click

from hetero_sdk.cli.context import EXIT_USAGE, CLIError, get_core
from hetero_sdk.cli.dash_options import DashOptionCommand
from hetero_sdk.cli.models import LoadedModel, load_model
from hetero_sdk.cli.output import Printer, emit_json, status
from hetero_sdk.cli.shapes import SHAPES, InputShapes
from hetero_sdk.errors import PathExistsError
from hetero_sdk.frontend.save import save_model

__all__ = ["convert", "output_path", "refuse_overwrite"]

NATIVE_SUFFIX = ".json"
IR_SUFFIX = ".xml"


def output_path(loaded: LoadedModel, spec: str, output: str | None) -> Path:
    """Where ``convert`` writes: ``output`` (``.json`` added when it has no suffix; ``.xml`` writes IR),
    else the input's stem
    plus ``.json`` beside it (a sample: ``<name>.json`` in the working folder).

    :raises CLIError: (usage) when ``output`` has another suffix, or the default would overwrite the input.
    """
    if output is not None:
        target = Path(output)
        if target.suffix == "":
            target = target.with_suffix(NATIVE_SUFFIX)
        if target.suffix.lower() not in (NATIVE_SUFFIX, IR_SUFFIX):
            raise CLIError(
                f"-o {output}: the native format is a .json graph file and OpenVINO IR a .xml file (their "
                f"weights go beside them as .bin); name the output {target.with_suffix(NATIVE_SUFFIX).name}",
                EXIT_USAGE,
            )
        return target
    if loaded.source.startswith("sample:"):
        return Path(f"{loaded.model.friendly_name}{NATIVE_SUFFIX}")
    target = Path(spec).with_suffix(NATIVE_SUFFIX)
    if target.resolve() == Path(spec).resolve():
        raise CLIError(f"{spec} is already in the native format; pass -o to write a copy elsewhere", EXIT_USAGE)
    return target


def refuse_overwrite(target: Path) -> None:
    """Refuses to replace an existing graph file or its ``.bin`` beside it (OpenVINO's ``ovc`` overwrites
    silently; a converted model can take long to produce again).

    :raises PathExistsError: naming the files that exist and ``--force``.
    """
    existing = [str(path) for path in (target, target.with_suffix(".bin")) if path.exists()]
    if existing:
        raise PathExistsError(
            f"{' and '.join(existing)} already exist{'s' if len(existing) == 1 else ''}; pass -f/--force to "
            "overwrite, or -o to write elsewhere"
        )


@click.command(
    cls=DashOptionCommand, short_help="Convert a model (ONNX, IR...) to the native .json or IR .xml + .bin, like ovc."
)
@click.argument("model")
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False),
    help="The .json (native) or .xml (OpenVINO IR) file to write; its weights go beside it as .bin "
    "[default: MODEL's stem + .json, beside it]",
)
@click.option(
    "-shape",
    "--input-shape",
    "shape",
    type=SHAPES,
    help='Fix input shapes, as benchmark_app\'s -shape: "[1,3,224,224]" for one input, "a[1,3],b[?,2]" by '
    "name (? stays dynamic)",
)
@click.option("-f", "--force", is_flag=True, help="Overwrite the output (and its .bin) when they exist.")
@click.option("--json", "as_json", is_flag=True, help="Print what was written as JSON.")
@click.pass_context
def convert(
    ctx: click.Context, model: str, output: str | None, shape: InputShapes | None, force: bool, as_json: bool
) -> None:
    """Read MODEL and save it in hetero-sdk's native format (a .json graph and its .bin weights), or as
    OpenVINO IR when -o names a .xml file.

    MODEL is any file hetero-sdk reads (an ONNX .onnx file, OpenVINO IR .xml, a native .json) or a built-in sample
    (detection, mlp). -shape fixes input shapes: an ONNX model gets them while it is translated, so
    shape computations fold to constants. The saved model reads back with core.read_model. An existing
    output is not replaced without -f/--force.
    """
    core = get_core(ctx)
    with status(f"reading {model}"):
        loaded = load_model(core, model, shape)
    target = output_path(loaded, model, output)
    if not force:
        refuse_overwrite(target)
    save_model(loaded.model, target)
    weights = target.with_suffix(".bin")
    data = {**loaded.to_dict(), "files": [str(target), str(weights)]}
    if as_json:
        emit_json(data)
        return
    out = Printer()
    out.fields(
        [
            ("model", loaded.describe()),
            ("inputs", ", ".join(f"{p['name']} {p['element_type']}{p['shape']}" for p in data["inputs"])),
            ("outputs", ", ".join(f"{p['name']} {p['element_type']}{p['shape']}" for p in data["outputs"])),
            ("graph", loaded.ops_text()),
        ],
        indent=0,
    )
    out.line(f"wrote {target} and {weights}")
