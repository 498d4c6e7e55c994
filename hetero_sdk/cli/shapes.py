"""The ``-shape`` option in OpenVINO benchmark_app's syntax: ``"[1,3,224,224]"`` for a model's one input,
``"x[1,3,224,224]"`` by name, several as ``"a[1,3],b[2]"``; ``?`` or ``-1`` leaves a dimension dynamic."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import click

from hetero_sdk.cli.context import EXIT_USAGE, CLIError
from hetero_sdk.element_type import Type
from hetero_sdk.graph import Model, Output
from hetero_sdk.rt_info import DIM_NAMES
from hetero_sdk.shape import DYNAMIC, PartialShape

__all__ = [
    "SHAPES",
    "InputShapes",
    "ShapesParam",
    "parse_shapes",
    "require_static",
    "resolve_shapes",
    "shapes_text",
    "suggested_shape",
    "with_batch",
]

TYPICAL_IMAGE_SIZE = 640
"""The height and width suggested for an image input whose spatial dimensions are dynamic: the size
detectors such as YOLO are trained and exported at."""

_IMAGE_CHANNELS = (1, 3, 4)

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

    :raises CLIError: (usage) naming the dynamic inputs (with the file's names for their dimensions)
        and a ``-shape`` to try (:func:`suggested_shape` for every input).
    """
    dynamic = [port for port in model.inputs if port.partial_shape.is_dynamic]
    if not dynamic:
        return
    example = ",".join(f"{p.any_name}{suggested_shape(p)}" for p in model.inputs)
    names = ", ".join(f"{p.any_name}{_declared(p)}" for p in dynamic)
    images = [p.any_name for p in dynamic if _spatial_axes(p)]
    typical = (
        f" ({TYPICAL_IMAGE_SIZE}x{TYPICAL_IMAGE_SIZE}, a typical detector input size, for the image input(s) "
        f"{', '.join(images)}; use the size the model was trained at)"
        if images
        else ""
    )
    raise CLIError(
        f"{source} has inputs with dynamic dimensions ({names}); pass static shapes with -shape, "
        f'e.g. -shape "{example}"{typical}',
        EXIT_USAGE,
    )


def suggested_shape(port: Output) -> PartialShape:
    """A static shape to try for ``port``: its static dimensions as the model declares them,
    :data:`TYPICAL_IMAGE_SIZE` for the height and width of an image-like input (rank 4, floating point
    or u8, 1, 3 or 4 channels first or last, both spatial dimensions dynamic), 1 for any other dynamic
    dimension (a batch, a sequence)."""
    spatial = _spatial_axes(port)
    return PartialShape(
        dim if dim != DYNAMIC else TYPICAL_IMAGE_SIZE if axis in spatial else 1
        for axis, dim in enumerate(port.partial_shape.dims)
    )


def _spatial_axes(port: Output) -> tuple[int, ...]:
    dims = port.partial_shape.dims
    if len(dims) != 4 or not (port.element_type.is_real or port.element_type is Type.u8):
        return ()
    if dims[1] in _IMAGE_CHANNELS and dims[2] == dims[3] == DYNAMIC:
        return (2, 3)  # NCHW
    if dims[3] in _IMAGE_CHANNELS and dims[1] == dims[2] == DYNAMIC:
        return (1, 2)  # NHWC
    return ()


def _declared(port: Output) -> str:
    """``[batch,3,height,width]``: the shape with the file's names for its dynamic dimensions (``?`` where
    it names none)."""
    names = port.get_node().get_rt_info().get(DIM_NAMES) or []
    dims = port.partial_shape.dims
    named = [names[i] if i < len(names) and names[i] and d == DYNAMIC else None for i, d in enumerate(dims)]
    return "[" + ",".join(n or ("?" if d == DYNAMIC else str(d)) for n, d in zip(named, dims)) + "]"


def shapes_text(shapes: Mapping[str, PartialShape]) -> str:
    """``x[1,3],y[2]``: the shapes back in ``-shape`` syntax."""
    return ",".join(f"{name}{shape}" for name, shape in shapes.items())
