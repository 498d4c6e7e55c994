"""What the commands share: the model (``-m``/MODEL: a file any reader takes, or a built-in sample) with
its ``-shape``, the -d option, the default device and the random inputs a benchmark feeds."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import click
import numpy as np

from hetero_sdk.cli.context import CLIError
from hetero_sdk.cli.shapes import InputShapes, resolve_shapes, with_batch
from hetero_sdk.core import Core
from hetero_sdk.device_name import parse_device_name
from hetero_sdk.errors import did_you_mean
from hetero_sdk.frontend import convert_model
from hetero_sdk.graph import Model, Output
from hetero_sdk.samples import SAMPLES, get_sample
from hetero_sdk.shape import PartialShape

__all__ = ["LoadedModel", "default_device", "load_model", "model_source", "random_inputs", "validate_device"]

MAIN_JOB_DEVICES = ("XLA", "TEMPLATE")
"""The main job's HETERO priorities: the accelerator first, TEMPLATE for what it refuses."""


@dataclass(frozen=True)
class LoadedModel:
    """A model with where it came from (``sample:detection`` or a path)."""

    model: Model
    source: str
    shapes: dict[str, PartialShape] = field(default_factory=dict)
    """The ``-shape`` values applied, by input name."""

    def describe(self) -> str:
        """``detection (built-in sample)`` or ``model (path/model.json)``."""
        if self.source.startswith("sample:"):
            return f"{self.model.friendly_name} (built-in sample)"
        return f"{self.model.friendly_name} ({self.source})"

    def op_counts(self) -> tuple[int, int]:
        """``(ops, nodes)``: the ops that compute (what ``query`` and ``benchmark`` place and count),
        and every node of the graph, constants, parameters and results included."""
        nodes = self.model.get_ordered_ops()
        return sum(not node.op.structural for node in nodes), len(nodes)

    def ops_text(self) -> str:
        """``468 ops (860 nodes including constants, parameters and results)``, as every command words it."""
        ops, nodes = self.op_counts()
        return f"{ops} ops ({nodes} nodes including constants, parameters and results)"

    def to_dict(self) -> dict[str, Any]:
        """Name, source, the ``-shape`` values applied, inputs and outputs with their element types and
        shapes, and the counts of :meth:`op_counts` (``ops`` and ``nodes``)."""

        def ports(items: list[Output]) -> list[dict[str, str]]:
            return [
                {"name": p.any_name, "element_type": p.element_type.value, "shape": str(p.partial_shape)} for p in items
            ]

        return {
            "name": self.model.friendly_name,
            "source": self.source,
            "shape": {name: str(shape) for name, shape in self.shapes.items()},
            "inputs": ports(self.model.inputs),
            "outputs": ports(self.model.outputs),
            **dict(zip(("ops", "nodes"), self.op_counts())),
        }


def model_source(ctx: click.Context, argument: str | None, option: str | None) -> str | None:
    """The model named by the positional MODEL or by ``-m``/``--model`` (benchmark_app's spelling).

    :raises click.UsageError: when both are given and differ.
    """
    if argument is not None and option is not None and argument != option:
        raise click.UsageError(f"two models given, {argument!r} and -m {option!r}; give one", ctx)
    return option if option is not None else argument


def load_model(core: Core, spec: str, shapes: InputShapes | None = None, batch: int | None = None) -> LoadedModel:
    """Reads ``spec`` as a model file (whatever :meth:`Core.read_model` reads: ONNX, the native .json)
    when it exists, else builds the built-in sample of that name; then applies ``shapes`` (``-shape``)
    and ``batch`` (``-b``: every input's first dimension).

    An ONNX file gets its shapes while it is translated (as OpenVINO's ``ovc --input``: what they make
    static folds); any other model through :meth:`Model.reshape` (as benchmark_app's ``-shape``).

    :raises CLIError: ``FileNotFoundError`` (exit 1) when ``spec`` is neither a file nor a sample.
    :raises CLIError: when a shape names no input or has the wrong rank.
    :raises ModelFormatError: when the file is not a readable model.
    :raises ModelValidationError: when the model cannot take the shapes (naming the node).
    """
    path = Path(spec)
    if path.exists():
        loaded = LoadedModel(core.read_model(path), str(path))
    elif spec in SAMPLES:
        loaded = LoadedModel(get_sample(spec), f"sample:{spec}")
    else:  # as benchmark_app: a missing model is an error (exit 1), not a wrong command line
        raise CLIError(
            f"FileNotFoundError: no such file or directory: {spec}, nor a built-in sample; "
            + did_you_mean(spec, SAMPLES, listing="built-in samples")
        )
    resolved = resolve_shapes(loaded.model, shapes, loaded.describe()) if shapes else {}
    if batch is not None:
        resolved = with_batch(loaded.model, resolved, batch)
    if not resolved:
        return loaded
    current = {port.any_name: port.partial_shape for port in loaded.model.inputs}
    if all(current[name] == shape for name, shape in resolved.items()):
        return LoadedModel(loaded.model, loaded.source, resolved)
    if path.suffix.lower() == ".onnx" and path.exists():
        return LoadedModel(convert_model(path, input=resolved), loaded.source, resolved)
    loaded.model.reshape({name: list(shape.dims) for name, shape in resolved.items()})
    return LoadedModel(loaded.model, loaded.source, resolved)


def default_device(core: Core) -> str:
    """``HETERO:XLA,TEMPLATE`` when XLA is available, else ``TEMPLATE``."""
    available = {parse_device_name(d).name for d in core.available_devices}
    if all(d in available for d in MAIN_JOB_DEVICES):
        return "HETERO:" + ",".join(MAIN_JOB_DEVICES)
    return "TEMPLATE"


def validate_device(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """A click callback: rejects malformed device strings with the accepted forms."""
    if value is None:
        return None
    try:
        parse_device_name(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc), ctx=ctx, param=param) from None
    return value


def random_inputs(model: Model, seed: int) -> dict[str, np.ndarray]:
    """One array per model input, drawn from ``seed``: floats standard normal, integers in
    ``[0, 10)`` (strings: those digits as text), booleans fair coins. Dynamic dimensions (which
    ``benchmark`` refuses first, see :func:`~hetero_sdk.cli.shapes.require_static`) are 1.
    """
    rng = np.random.default_rng(seed)
    inputs = {}
    for port in model.inputs:
        shape = tuple(d if d >= 0 else 1 for d in port.partial_shape.dims)
        dtype = np.dtype(port.element_type.numpy)
        value: np.ndarray
        if dtype == np.bool_:
            value = rng.random(shape) < 0.5
        elif np.issubdtype(dtype, np.integer) or port.element_type.is_string:
            value = rng.integers(0, 10, shape)
        else:
            value = rng.standard_normal(shape)
        inputs[port.any_name] = np.asarray(value).astype(dtype)
    return inputs
