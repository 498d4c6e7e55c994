"""What the commands share: the MODEL argument (a file or a built-in sample), the -d option, the
default device and the random inputs a benchmark feeds."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click
import numpy as np

from hetero_sdk.core import Core
from hetero_sdk.device_name import parse_device_name
from hetero_sdk.graph import Model, Output
from hetero_sdk.samples import SAMPLES, get_sample

__all__ = ["LoadedModel", "default_device", "load_model", "random_inputs", "validate_device"]

MAIN_JOB_DEVICES = ("XLA", "TEMPLATE")
"""The main job's HETERO priorities: the accelerator first, TEMPLATE for what it refuses."""


@dataclass(frozen=True)
class LoadedModel:
    """A model with where it came from (``sample:detection`` or a path)."""

    model: Model
    source: str

    def describe(self) -> str:
        """``detection (built-in sample)`` or ``model (path/model.json)``."""
        if self.source.startswith("sample:"):
            return f"{self.model.friendly_name} (built-in sample)"
        return f"{self.model.friendly_name} ({self.source})"

    def to_dict(self) -> dict[str, Any]:
        """Name, source, inputs and outputs with their element types and shapes."""

        def ports(items: list[Output]) -> list[dict[str, str]]:
            return [
                {"name": p.any_name, "element_type": p.element_type.value, "shape": str(p.partial_shape)} for p in items
            ]

        return {
            "name": self.model.friendly_name,
            "source": self.source,
            "inputs": ports(self.model.inputs),
            "outputs": ports(self.model.outputs),
        }


def load_model(core: Core, spec: str) -> LoadedModel:
    """Reads ``spec`` as a model file when it exists, else builds the built-in sample of that name.

    :raises click.BadParameter: when ``spec`` is neither.
    :raises ModelFormatError: when the file is not a readable model.
    """
    path = Path(spec)
    if path.exists():
        return LoadedModel(core.read_model(path), str(path))
    if spec in SAMPLES:
        return LoadedModel(get_sample(spec), f"sample:{spec}")
    raise click.BadParameter(
        f"{spec!r} is neither a model file nor a built-in sample ({', '.join(sorted(SAMPLES))})",
        param_hint="MODEL",
    )


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
    ``[0, 10)``, booleans fair coins. Dynamic dimensions are 1.
    """
    rng = np.random.default_rng(seed)
    inputs = {}
    for port in model.inputs:
        shape = tuple(d if d >= 0 else 1 for d in port.partial_shape.dims)
        dtype = np.dtype(port.element_type.numpy)
        value: np.ndarray
        if dtype == np.bool_:
            value = rng.random(shape) < 0.5
        elif np.issubdtype(dtype, np.integer):
            value = rng.integers(0, 10, shape)
        else:
            value = rng.standard_normal(shape)
        inputs[port.any_name] = np.asarray(value).astype(dtype)
    return inputs
