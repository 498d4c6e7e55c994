"""The ``-shape`` option in OpenVINO benchmark_app's syntax: ``"[1,3,224,224]"`` for a model's one input,
``"x[1,3,224,224]"`` by name, several as ``"a[1,3],b[2]"``; ``?`` or ``-1`` leaves a dimension dynamic."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import click

from hetero_sdk.cli.context import EXIT_USAGE, CLIError
from hetero_sdk.graph import Model
from hetero_sdk.shape import DYNAMIC, PartialShape

__all__ = [
    "SHAPES",
    "InputShapes",
    "ShapesParam",
    "parse_shapes",
    "require_static",
    "resolve_shapes",
    "shapes_text",
    "with_batch",
]

InputShapes = dict[str | None, PartialShape]
"""Shapes by input name; the key ``None`` is the shape given without a name (the model's one input)."""

_GROUP = re.compile(r"\s*([^\[\],\s][^\[\]]*?)?\s*\[([^\[\]]*)\]\s*(?:,|\s|$)")
_SYNTAX = 'write "[1,3,224,224]" for a model with one input, or "name[1,3,224,224],other[1,10]" by input name'


def parse_shapes(text: str) -> InputShapes:
    """Parses benchmark_app's ``-shape`` value.

    :raises ValueError: naming the part that does not parse and the accepted syntax.
    """
    shapes: InputShapes = {}
    position = 0
    text = text.strip()
    if not text:
        raise ValueError(f"the shape is empty; {_SYNTAX}")
    while position < len(text):
        match = _GROUP.match(text, position)
        if match is None or match.end() == position:
            raise ValueError(f"cannot read {text[position:]!r} as a shape; {_SYNTAX}")
        name, body = match.group(1), match.group(2)
        name = name.strip() if name else None
        if name in shapes:
            raise ValueError(f"input {name or '(unnamed)'} is given two shapes in {text!r}")
        shapes[name] = PartialShape([_dimension(d, text) for d in body.split(",")] if body.strip() else [])
        position = match.end()
    if None in shapes and len(shapes) > 1:
        raise ValueError(f"{text!r} mixes a shape without an input name with named ones; name every input")
    return shapes


def _dimension(text: str, whole: str) -> int:
    value = text.strip()
    if value in ("?", "-1"):
        return DYNAMIC
    if ".." in value:
        raise ValueError(f"dimension {value!r} in {whole!r} is a range; hetero-sdk takes one size, or ? for dynamic")
    if not value.isdigit():
        raise ValueError(f"dimension {value!r} in {whole!r} is not a size; dimensions are integers >= 0, or ?")
    return int(value)


class ShapesParam(click.ParamType):
    """A click type reading ``-shape`` values with :func:`parse_shapes`."""

    name = "SHAPE"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> InputShapes:
        """The parsed shapes; a usage error for text that does not parse."""
        if isinstance(value, dict):
            return value
        try:
            return parse_shapes(str(value))
        except ValueError as exc:
            self.fail(str(exc), param, ctx)


SHAPES = ShapesParam()
"""The click type of every command's ``-shape`` option."""


def resolve_shapes(model: Model, shapes: InputShapes, source: str) -> dict[str, PartialShape]:
    """Names the unnamed shape after the model's one input and checks each name and rank.

    :raises CLIError: (usage) for an unnamed shape on a model with several inputs, a name the model
        does not have, or a shape of the wrong rank; each lists the model's inputs.
    """
    inputs = {port.any_name: port.partial_shape for port in model.inputs}
    listing = ", ".join(f"{name}{shape}" for name, shape in inputs.items()) or "none"
    if None in shapes:
        if len(inputs) != 1:
            raise CLIError(
                f"-shape {shapes[None]} has no input name, but {source} has {len(inputs)} inputs ({listing}); "
                'name each one: -shape "name[...],other[...]"',
                EXIT_USAGE,
            )
        shapes = {next(iter(inputs)): shapes[None]}
    resolved: dict[str, PartialShape] = {}
    for name, shape in shapes.items():
        assert name is not None
        if name not in inputs:
            raise CLIError(
                f"-shape names input {name!r}, which {source} does not have; its inputs: {listing}", EXIT_USAGE
            )
        if shape.rank != inputs[name].rank:
            raise CLIError(
                f"-shape gives input {name!r} rank {shape.rank} ({shape}), but it is {inputs[name]} in {source}",
                EXIT_USAGE,
            )
        resolved[name] = shape
    return resolved


def with_batch(model: Model, shapes: Mapping[str, PartialShape], batch: int) -> dict[str, PartialShape]:
    """benchmark_app's ``-b``: the first dimension of every input becomes ``batch``, over ``shapes``
    (``-shape``) where given, else the model's own shapes. Inputs of rank 0 keep theirs.

    :raises CLIError: (usage) when no input has a first dimension.
    """
    batched = dict(shapes)
    for port in model.inputs:
        shape = shapes.get(port.any_name, port.partial_shape)
        if shape.rank > 0:
            batched[port.any_name] = PartialShape([batch, *list(shape.dims)[1:]])
    if not batched:
        raise CLIError(f"-b {batch}: no input of the model has a batch dimension (all are scalars)", EXIT_USAGE)
    return batched


def require_static(model: Model, source: str) -> None:
    """Fails, as benchmark_app does, when an input's shape is still dynamic: the command needs concrete
    inputs, and ``-shape`` says which.

    :raises CLIError: (usage) naming the first dynamic input and an example ``-shape``.
    """
    dynamic = [port for port in model.inputs if port.partial_shape.is_dynamic]
    if not dynamic:
        return
    example = ",".join(
        f"{p.any_name}" + str(PartialShape(1 if d == DYNAMIC else d for d in p.partial_shape.dims))
        for p in model.inputs
    )
    names = ", ".join(f"{p.any_name}{p.partial_shape}" for p in dynamic)
    raise CLIError(
        f"{source} has inputs with dynamic dimensions ({names}); pass static shapes with -shape, "
        f'e.g. -shape "{example}"',
        EXIT_USAGE,
    )


def shapes_text(shapes: Mapping[str, PartialShape]) -> str:
    """``x[1,3],y[2]``: the shapes back in ``-shape`` syntax."""
    return ",".join(f"{name}{shape}" for name, shape in shapes.items())
