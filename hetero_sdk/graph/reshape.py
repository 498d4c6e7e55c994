"""What :meth:`Model.reshape <hetero_sdk.graph.Model.reshape>` does: read the requested input shapes,
give them to the Parameters, and re-infer every shape, or put everything back when the graph does not
accept them (as ``ov::Model::reshape``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from hetero_sdk.errors import ModelValidationError, PortNotFoundError, did_you_mean
from hetero_sdk.graph.node import Node, Output
from hetero_sdk.rt_info import DIM_NAMES
from hetero_sdk.shape import DYNAMIC, PartialShape

if TYPE_CHECKING:
    from hetero_sdk.graph.model import Model

__all__ = ["InputKey", "ShapeLike", "reshape_model"]

ShapeLike = PartialShape | Sequence[int]
"""A shape ``Model.reshape`` accepts: a :class:`PartialShape`, or a list or tuple of ints (``-1``: dynamic)."""

InputKey = int | str | Output
"""How ``Model.reshape`` names an input: its index, one of its tensor names, or its port."""


def reshape_model(
    model: Model, shapes: ShapeLike | Mapping[InputKey, ShapeLike] | None, dims: Mapping[str, int] | None
) -> None:
    """Implements :meth:`Model.reshape <hetero_sdk.graph.Model.reshape>` (documented there)."""
    if shapes is None and dims is None:
        raise TypeError("Model.reshape needs shapes (one shape, or {input: shape}) or dims ({dimension name: size})")
    parameters = model.get_parameters()
    wanted: dict[int, PartialShape] = {}  # parameter index -> new shape
    if dims:
        wanted.update(_named_dims(model, parameters, dims))
    if shapes is not None:
        wanted.update(_requested(model, parameters, shapes))
    changed = {i: s for i, s in wanted.items() if parameters[i].attrs["shape"] != s}
    if not changed:
        return
    # Control-flow ops reshape their bodies while inferring: the snapshot covers the bodies too.
    saved = [(node, dict(node.attrs), list(node._output_types), list(node._output_shapes)) for node in _nodes(model)]
    for index, shape in changed.items():
        parameters[index].attrs["shape"] = shape
    try:
        model.validate_nodes_and_infer_types()
    except Exception as exc:
        for node, attrs, types, output_shapes in saved:
            node.attrs, node._output_types, node._output_shapes = attrs, types, output_shapes
        asked = ", ".join(f"'{parameters[i].output(0).any_name}': {s}" for i, s in changed.items())
        raise ModelValidationError(
            f"model '{model.friendly_name}' does not accept the input shapes {{{asked}}}: {exc}; the model is "
            "unchanged (give shapes every op accepts, or -1 for dimensions that vary)"
        ) from exc
    for index in changed:
        names = parameters[index].get_rt_info().get(DIM_NAMES)
        if isinstance(names, list) and len(names) != len(changed[index]):
            del parameters[index].get_rt_info()[DIM_NAMES]  # the rank changed: the names fit no longer


def _nodes(model: Model) -> list[Node]:
    """Every node of ``model`` and of the sub-graphs its nodes hold, at any depth."""
    found: list[Node] = []
    for node in model.get_ops():
        found.append(node)
        for value in node.attrs.values():
            if isinstance(value, type(model)):  # a body
                found += _nodes(value)
    return found


def _requested(
    model: Model, parameters: list[Node], shapes: ShapeLike | Mapping[InputKey, ShapeLike]
) -> dict[int, PartialShape]:
    if not isinstance(shapes, Mapping):
        if len(parameters) != 1:
            names = ", ".join(p.output(0).any_name for p in parameters) or "none"
            raise ModelValidationError(
                f"model '{model.friendly_name}' has {len(parameters)} inputs ({names}); one shape fits a one-input "
                "model only: pass {input name, index or port: shape}"
            )
        return {0: _shape(model, parameters[0], shapes)}
    found: dict[int, PartialShape] = {}
    for key, value in shapes.items():
        index = _index(model, parameters, key)
        shape = _shape(model, parameters[index], value)
        if found.get(index, shape) != shape:
            raise ModelValidationError(
                f"model '{model.friendly_name}': input '{parameters[index].output(0).any_name}' is given two "
                f"shapes, {found[index]} and {shape}"
            )
        found[index] = shape
    return found


def _index(model: Model, parameters: list[Node], key: Any) -> int:
    ports = [p.output(0) for p in parameters]
    listing = ", ".join(f"{i}: {sorted(p.names)}" for i, p in enumerate(ports)) or "none"
    if isinstance(key, Output):
        if key in ports:
            return ports.index(key)
        raise PortNotFoundError(f"model '{model.friendly_name}': {key!r} is not one of its inputs; inputs: {listing}")
    if isinstance(key, (int, np.integer)) and not isinstance(key, (bool, np.bool_)):
        if -len(ports) <= key < len(ports):
            return int(key) % len(ports)
        raise PortNotFoundError(
            f"model '{model.friendly_name}' has {len(ports)} input(s); index {key} does not exist; inputs: {listing}"
        )
    if isinstance(key, str):
        for i, port in enumerate(ports):
            if key in port.names:
                return i
        names = [n for p in ports for n in p.names]
        raise PortNotFoundError(
            f"model '{model.friendly_name}' has no input named '{key}'; {did_you_mean(key, names, listing='inputs')}"
        )
    raise TypeError(f"Model.reshape: an input is named by index, tensor name or port, not {type(key).__name__}")


def _shape(model: Model, parameter: Node, value: Any) -> PartialShape:
    if isinstance(value, PartialShape):
        return value
    what = f"model '{model.friendly_name}': the shape for input '{parameter.output(0).any_name}'"
    if isinstance(value, (str, bytes)) or not isinstance(value, (Sequence, np.ndarray)):
        raise ModelValidationError(f"{what} must be a PartialShape or a list of ints (-1: dynamic), got {value!r}")
    dims = list(value)
    if not all(isinstance(d, (int, np.integer)) and not isinstance(d, (bool, np.bool_)) and d >= DYNAMIC for d in dims):
        raise ModelValidationError(f"{what} must hold ints >= 0, or -1 for a dynamic dimension; got {dims}")
    return PartialShape(dims)


def _named_dims(model: Model, parameters: list[Node], dims: Mapping[str, int]) -> dict[int, PartialShape]:
    known: set[str] = set()
    found: dict[int, PartialShape] = {}
    for index, parameter in enumerate(parameters):
        names = parameter.get_rt_info().get(DIM_NAMES)
        shape = parameter.attrs["shape"]
        if not isinstance(names, (list, tuple)) or len(names) != len(shape):
            continue
        known.update(n for n in names if isinstance(n, str))
        new = [dims.get(n, d) if isinstance(n, str) else d for n, d in zip(names, shape)]
        found[index] = _shape(model, parameter, new)
    unknown = sorted(set(dims) - known)
    if unknown:
        raise PortNotFoundError(
            f"model '{model.friendly_name}': no input has a dimension named '{unknown[0]}'; "
            + did_you_mean(unknown[0], known, listing="dimension names")
        )
    return found
