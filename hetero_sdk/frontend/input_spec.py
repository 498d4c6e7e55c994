"""``convert_model``'s ``input=``: what to set on a model's inputs (names, shapes, element types, frozen
values), in every form OpenVINO's ``convert_model(..., input=...)`` takes.

- a shape for a one-input model: ``[1, 3, 224, 224]``, ``(1, 3, 224, 224)``, ``PartialShape([-1, 3])``;
- a dict by input name: ``{"x": [1, 3, 224, 224]}``, ``{"x": np.float16}``, ``{"x": ([1, 3], np.float32)}``,
  ``{"sr": np.array(16000)}`` (a numpy array or scalar freezes the input to that value);
- a tuple describing one input, a list of them (or of shapes, in input order): ``("x", [1, 3, 224, 224],
  np.float32)``, ``[("x", [1, 3]), ("y", [2])]``, ``[[1, 3], [2]]``;
- text: ``"x[1,3,224,224],y[1,10]"``; ``?`` or ``-1`` leaves a dimension dynamic, ``{f16}`` sets a type
  and ``->16000`` (or ``->[1 2 3]``) freezes a value, as OpenVINO's legacy ``mo --input`` wrote it:
  ``"sr[]{i64}->16000"``.

A list, tuple or ``PartialShape`` is always a shape; only a numpy array or numpy scalar is a value.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from hetero_sdk.element_type import Type
from hetero_sdk.errors import ElementTypeError, ModelValidationError, suggest
from hetero_sdk.shape import DYNAMIC, PartialShape

__all__ = ["InputSpec", "parse_input", "resolve_inputs"]

_FORMS = (
    "pass a shape ([1, 3, 224, 224]), a dict by input name ({'x': [1, 3, 224, 224]}, {'sr': np.array(16000)}), "
    "tuples (('x', [1, 3], np.float32)) or text ('x[1,3],y[2]')"
)


@dataclass(frozen=True)
class InputSpec:
    """What ``input=`` sets on one model input; None where it sets nothing.

    :param name: the input's tensor name; None for an input given by position.
    :param shape: its new (partial) shape.
    :param element_type: its new element type.
    :param value: the value it is frozen to (the input then leaves the model).
    """

    name: str | None = None
    shape: PartialShape | None = None
    element_type: Type | None = None
    value: np.ndarray | None = None

    def describe(self) -> str:
        """The input as messages name it."""
        return f"input '{self.name}'" if self.name is not None else "the unnamed input"


def parse_input(argument: Any) -> list[InputSpec]:
    """Reads ``convert_model``'s ``input=`` argument.

    :raises ModelValidationError: for a form that is not one of those above, naming the part and the
        input it is about.
    """
    if argument is None:
        return []
    if isinstance(argument, str):
        return _parse_text(argument)
    if isinstance(argument, Mapping):
        specs = []
        for name, item in argument.items():
            if not isinstance(name, str):
                raise ModelValidationError(f"input=: the key {name!r} is not an input name (a str); {_FORMS}")
            specs.append(_descriptor(item, name))
        return specs
    if isinstance(argument, (list, tuple)) and not argument:
        return []
    if isinstance(argument, (PartialShape, np.ndarray, np.generic)) or _is_shape(argument):
        return [_descriptor(argument, None)]
    if isinstance(argument, tuple) and any(_names_or_types(item) for item in argument):
        return [_descriptor(argument, None)]  # one input: ("x", [1, 3], np.float32), ([1, 3], np.float32)
    if isinstance(argument, (list, tuple)):
        return [_item(item) for item in argument]
    raise ModelValidationError(f"input= cannot be a {type(argument).__name__}; {_FORMS}")


def _item(item: Any) -> InputSpec:
    """One entry of a list: a name, text, a shape, a tuple describing an input, or a value."""
    if isinstance(item, str):
        parsed = _parse_text(item) if re.search(r"[\[{]|->", item) else [InputSpec(name=item)]
        if len(parsed) != 1:
            raise ModelValidationError(f"input=: the list entry {item!r} describes {len(parsed)} inputs; give one")
        return parsed[0]
    return _descriptor(item, None)


def _names_or_types(item: Any) -> bool:
    """Whether ``item`` is a name or an element type: what makes a tuple one input's description."""
    return isinstance(item, (str, Type, np.dtype)) or (isinstance(item, type) and issubclass(item, np.generic))


def _is_shape(value: Any) -> bool:
    return isinstance(value, (list, tuple)) and all(
        isinstance(d, (int, np.integer)) and not isinstance(d, bool) for d in value
    )


def _descriptor(item: Any, name: str | None) -> InputSpec:
    """What one input's entry sets: a shape, a type, a value, or a tuple of those (with a name)."""
    fields: dict[str, Any] = {}
    parts = list(item) if isinstance(item, tuple) and not _is_shape(item) else [item]
    where = f"input '{name}'" if name is not None else f"the input entry {item!r:.80}"
    for part in parts:
        kind, value = _part(part, where)
        if kind == "name" and name is not None and value != name:
            raise ModelValidationError(f"input=: {where} is also named {value!r}; give one name")
        if kind in fields:
            raise ModelValidationError(f"input=: {where} is given two {kind}s ({fields[kind]!r} and {value!r})")
        fields[kind] = value
    spec = InputSpec(name=fields.get("name", name), **{k: v for k, v in fields.items() if k != "name"})
    _check_value(spec)
    return spec


def _part(part: Any, where: str) -> tuple[str, Any]:
    if isinstance(part, (np.ndarray, np.generic)):
        return "value", np.asarray(part)
    if isinstance(part, PartialShape):
        return "shape", part
    if _is_shape(part):
        return "shape", PartialShape([int(d) for d in part])
    if isinstance(part, str):
        if part.strip().startswith("["):
            return "shape", _shape_text(part.strip()[1:-1] if part.strip().endswith("]") else part, part)
        if part in Type.__members__:  # "f16"; numpy's own spellings ("b", "int") could be input names
            return "element_type", Type[part]
        return "name", part
    if isinstance(part, (bool, int, float, complex)):
        raise ModelValidationError(
            f"input=: {where} is given the Python {type(part).__name__} {part!r}, which could be a size or a value; "
            f"pass np.array({part!r}) to freeze the input to it, or [{part!r}] for a shape"
        )
    if isinstance(part, (Type, np.dtype)) or (isinstance(part, type) and issubclass(part, np.generic)):
        return "element_type", Type.of(part)
    if isinstance(part, (list, tuple)):
        raise ModelValidationError(
            f"input=: {where} has {part!r:.80}, which is neither a shape (a list of ints, -1 for a dynamic "
            "dimension) nor a tuple of name, shape and type"
        )
    raise ModelValidationError(f"input=: {where} cannot be set by a {type(part).__name__}; {_FORMS}")


def _check_value(spec: InputSpec) -> None:
    if spec.value is None:
        return
    if spec.shape is not None and not spec.shape.compatible(spec.value.shape):
        raise ModelValidationError(
            f"input=: {spec.describe()} is given the shape {spec.shape} and a value of shape {list(spec.value.shape)}"
        )
    if spec.value.dtype == object:
        raise ModelValidationError(f"input=: {spec.describe()}: an object array cannot be a value; pass numbers")


# -- text -------------------------------------------------------------------------------------------------

_ENTRY = re.compile(
    r"\s*(?P<name>[^\[\]{},\s>-][^\[\]{},]*?)?\s*(?:\[(?P<shape>[^\[\]]*)\])?\s*(?:\{(?P<type>[^{}]*)\})?"
    r"\s*(?:->\s*(?P<value>\[[^\[\]]*\]|[^,\s]+))?\s*(?:,|$)"
)
_TEXT = 'write "x[1,3,224,224]", "x[1,3],y[?,2]", "[1,3]" for a model with one input, "x{f16}" or "sr[]{i64}->16000"'


def _parse_text(text: str) -> list[InputSpec]:
    specs = []
    position, stripped = 0, text.strip()
    if not stripped:
        raise ModelValidationError(f"input= is empty text; {_TEXT}")
    while position < len(stripped):
        match = _ENTRY.match(stripped, position)
        if match is None or match.end() == position or not any(match.group(g) is not None for g in _GROUPS):
            raise ModelValidationError(f"input=: cannot read {stripped[position:]!r}; {_TEXT}")
        position = match.end()
        name = match.group("name").strip() if match.group("name") else None
        where = f"input '{name}'" if name else "the unnamed input"
        shape = _shape_text(match.group("shape"), stripped) if match.group("shape") is not None else None
        element_type = _type_text(match.group("type"), where) if match.group("type") is not None else None
        value = _value_text(match.group("value"), element_type, where) if match.group("value") else None
        flat = value is not None and value.ndim == 1 and shape is not None and shape.is_static
        if flat and value is not None and shape is not None and value.size == int(np.prod(shape.dims)):
            value = value.reshape(shape.dims)  # "b[2,2]->[1 2 3 4]": the values in row-major order
        spec = InputSpec(name, shape, element_type, value)
        _check_value(spec)
        specs.append(spec)
    if len(specs) > 1 and any(s.name is None for s in specs):
        raise ModelValidationError(f"input=: {text!r} mixes an entry without an input name with others; name each")
    return specs


_GROUPS = ("name", "shape", "type", "value")


def _shape_text(body: str, whole: str) -> PartialShape:
    if not body.strip():
        return PartialShape([])
    dims = []
    for part in body.split(","):
        value = part.strip()
        if value in ("?", "-1"):
            dims.append(DYNAMIC)
        elif value.isdigit():
            dims.append(int(value))
        else:
            raise ModelValidationError(
                f"input=: dimension {value!r} in {whole!r} is not a size; dimensions are integers >= 0, or ? "
                "(-1) for a dynamic one" + ("; hetero-sdk takes no ranges" if ".." in value else "")
            )
    return PartialShape(dims)


def _type_text(text: str, where: str) -> Type:
    try:
        return Type.of(text.strip())
    except ElementTypeError as exc:
        raise ModelValidationError(f"input=: {where}: {exc}") from None


def _value_text(text: str, element_type: Type | None, where: str) -> np.ndarray:
    body = text.strip()
    items = body[1:-1].replace(",", " ").split() if body.startswith("[") else [body]
    try:
        numbers = [float(item) if re.search(r"[.eE]|nan|inf", item) else int(item) for item in items]
    except ValueError:
        raise ModelValidationError(
            f"input=: {where}: cannot read the value {text!r}; write ->16000 or ->[1 2 3]"
        ) from None
    value = np.array(numbers if body.startswith("[") else numbers[0])
    return value if element_type is None else value.astype(element_type.numpy)


# -- resolving names --------------------------------------------------------------------------------------


def resolve_inputs(specs: Sequence[InputSpec], names: Sequence[str], where: str) -> dict[str, InputSpec]:
    """``specs`` by the model input each is about: entries without a name are the model's inputs in order.

    :param names: the model's input names, in order.
    :param where: the model, as messages name it.
    :raises ModelValidationError: for a name the model's inputs lack (listing them), an input given
        twice, named and unnamed entries mixed, or more unnamed entries than inputs.
    """
    resolved: dict[str, InputSpec] = {}
    unnamed = [s for s in specs if s.name is None]
    if unnamed and len(unnamed) != len(specs):
        raise ModelValidationError(f"{where}: input= mixes entries with and without input names; name each")
    if len(unnamed) > len(names):
        raise ModelValidationError(
            f"{where}: input= gives {len(unnamed)} unnamed entries for {len(names)} input(s) "
            f"({', '.join(names)}); name them"
        )
    for index, spec in enumerate(specs):
        name = spec.name if spec.name is not None else names[index]
        if name not in names:
            hint = suggest(name, names)
            raise ModelValidationError(
                f"{where}: input= names {name}, but there is no input named {name}; the inputs: {', '.join(names)}"
                + (f"; {hint}" if hint else "")
            )
        if name in resolved:
            raise ModelValidationError(f"{where}: input= gives input '{name}' twice")
        resolved[name] = InputSpec(name, spec.shape, spec.element_type, spec.value)
    return resolved
