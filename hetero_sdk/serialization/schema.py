"""The native model format's constants, element-type names and the checked access to its JSON document.

A model is stored as a JSON document (the graph) and a weights buffer (every array attribute). The
document's top level::

    {"format": "hetero-sdk-model", "version": 1, "name": ..., "rt_info": {...},
     "weights": {"size": ..., "sha256": ..., "alignment": 64},
     "parameters": [node names], "results": [node names], "sinks": [node names], "nodes": [...]}

``sinks`` (the Assign nodes of a stateful model) came with version 2; a document without sinks is
written as version 1 and leaves the key out, so that older SDKs still read it.

Each node, in topological order::

    {"name": ..., "type": "Relu", "version": "opset1", "inputs": [[producer name, port], ...],
     "attrs": {...}, "outputs": [{"element_type": "f32", "shape": [1, -1], "names": [...] | null}],
     "rt_info": {...}}
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

import numpy as np

from hetero_sdk.element_type import Type
from hetero_sdk.errors import ModelFormatError

__all__ = [
    "ALIGNMENT",
    "DTYPES",
    "FORMAT_NAME",
    "FORMAT_VERSION",
    "STATELESS_VERSION",
    "SUBGRAPH_TAG",
    "RESAVE_HINT",
    "dtype_name",
    "field",
    "check_version",
    "format_error",
]

FORMAT_NAME = "hetero-sdk-model"
"""The value of the document's ``format`` key."""

FORMAT_VERSION = 2
"""The newest format version this SDK reads and writes (2: ``sinks``, for stateful models)."""

STATELESS_VERSION = 1
"""The version written for a model without sinks: version 1 holds it, and older SDKs read it."""

SUBGRAPH_TAG = "$model"
"""The key of the one-key object holding a sub-graph attribute (an If's branches, a Loop's body): the
graph's name, rt_info, parameters, results and nodes, its arrays in the same weights file."""

ALIGNMENT = 64
"""Byte alignment of every array in the weights buffer."""

RESAVE_HINT = "the file is damaged or was edited by hand; re-save the model with hetero_sdk.save_model"

DTYPES: dict[str, np.dtype[Any]] = {
    **{t.value: t.numpy for t in Type},
    "i16": np.dtype(np.int16),
    "u16": np.dtype(np.uint16),
    "u32": np.dtype(np.uint32),
    "u64": np.dtype(np.uint64),
}
"""The element types an array may have in the weights, by the name the document uses."""

_NAMES: dict[np.dtype[Any], str] = {dtype: name for name, dtype in DTYPES.items()}

T = TypeVar("T")


def dtype_name(dtype: np.dtype[Any]) -> str | None:
    """The document's name of a numpy dtype (any byte order), or None when the format cannot store it."""
    return _NAMES.get(dtype.newbyteorder("=") if dtype.byteorder in "<>" else dtype)


def format_error(source: str, where: str, problem: str, hint: str = RESAVE_HINT) -> ModelFormatError:
    """A :class:`ModelFormatError` naming the file (or blob), the place in it, the problem and a fix."""
    place = f" {where}:" if where else ""
    return ModelFormatError(f"{source}:{place} {problem}" + (f"; {hint}" if hint else ""))


_REQUIRED: Any = object()


def field(
    obj: Mapping[str, Any],
    key: str,
    kind: type[T] | tuple[type, ...],
    source: str,
    where: str,
    default: Any = _REQUIRED,
) -> T:
    """``obj[key]``, checked to be of ``kind`` (``bool`` never counts as ``int``).

    :param default: returned when the key is absent; without it the key is required.
    :raises ModelFormatError: naming ``where.key`` when the key is missing or has another type.
    """
    path = f"{where}.{key}" if where else key
    if key not in obj:
        if default is not _REQUIRED:
            return default  # type: ignore[no-any-return]
        raise format_error(source, path, "is missing")
    value = obj[key]
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if (isinstance(value, bool) and bool not in kinds) or not isinstance(value, kinds):
        wanted = " or ".join(_JSON_KIND.get(k, k.__name__) for k in kinds)
        raise format_error(source, path, f"must be {wanted}, got {_describe(value)}")
    return value  # type: ignore[return-value]


_JSON_KIND: dict[type, str] = {
    str: "a string",
    int: "an integer",
    float: "a number",
    bool: "a boolean",
    list: "a list",
    dict: "an object",
    type(None): "null",
}


def _describe(value: Any) -> str:
    for kind, label in _JSON_KIND.items():
        if type(value) is kind:
            return f"{label} ({value!r})" if kind in (str, int, float, bool) else label
    return type(value).__name__


def check_version(version: int, source: str, where: str, remedy: str) -> None:
    """Rejects a format version this SDK cannot read (newer, or below 1), naming ``where``.

    :param remedy: what to do with a newer file (save or export it again with this version).
    """
    if version > FORMAT_VERSION:
        raise format_error(
            source,
            where,
            f"has format version {version}; this SDK reads versions up to {FORMAT_VERSION}",
            f"upgrade hetero-sdk, or {remedy} with this version",
        )
    if version < 1:
        raise format_error(source, where, f"{version} is not a valid format version")
