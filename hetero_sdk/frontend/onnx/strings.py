"""The one check of an ONNX model's text: every string field (names, op types, domains, attribute names)
must be valid UTF-8; doc strings, prose that nothing reads, are left as they are.

ONNX declares them ``string`` in a proto2 file, where protobuf does not check the encoding: Python's
protobuf hands an invalid one back as ``bytes``, which ONNX's schema functions refuse with a
``TypeError`` and ONNX's checker quotes into an undecodable message. The model is checked once, after
parsing and before anything reads a name, so that the rest of the frontend can take every name as a
``str``. (String *attributes* and string tensors are ``bytes`` in ONNX's schema: the node context
decodes attributes when a rule reads them; tensor strings are data.)
"""

from __future__ import annotations

import functools
from typing import Any

from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message

from hetero_sdk.errors import ModelFormatError

__all__ = ["check_strings"]

_SHOWN = 40
"""Bytes of an undecodable string quoted in the error."""


def check_strings(message: Message, source: str) -> None:
    """Raises for the first string field of ``message`` (and of every message it holds) that is not
    valid UTF-8.

    :param source: the file or object the model came from, for the message.
    :raises ModelFormatError: naming the field's place (``graph.node[3].op_type``), the node it belongs
        to where there is one, and the undecodable bytes.
    """
    found = _first_invalid(message, "")
    if found is None:
        return
    path, value, node = found
    owner = f" (node {node})" if node else ""
    raise ModelFormatError(
        f"{source}: {path.lstrip('.')}{owner} is not valid UTF-8 text: {value[:_SHOWN]!r}; ONNX names, op types "
        "and domains are UTF-8 strings: fix the name where the model is made and export it again"
    )


def _first_invalid(message: Message, path: str, node: str = "") -> tuple[str, bytes, str] | None:
    """``(path, bytes, node)`` of the first undecodable string under ``message``, or None."""
    if message.DESCRIPTOR.full_name == "onnx.NodeProto":
        node = _node_label(message)
    for field in _text_fields(message.DESCRIPTOR):
        if field.is_repeated:
            items: list[tuple[int | None, Any]] = list(enumerate(getattr(message, field.name)))
        elif message.HasField(field.name):
            items = [(None, getattr(message, field.name))]
        else:
            continue
        for index, item in items:
            where = f"{path}.{field.name}" + ("" if index is None else f"[{index}]")
            if field.type == FieldDescriptor.TYPE_STRING and not isinstance(item, str):
                return where, bytes(item), node
            if field.type == FieldDescriptor.TYPE_MESSAGE:
                found = _first_invalid(item, where, node)
                if found is not None:
                    return found
    return None


@functools.cache
def _text_fields(descriptor: Descriptor) -> tuple[FieldDescriptor, ...]:
    """The fields of a message type that hold names or messages: numbers and bytes (tensor data) are
    never read, so a large initializer is not copied; doc strings are prose no one reads."""
    kinds = (FieldDescriptor.TYPE_STRING, FieldDescriptor.TYPE_MESSAGE)
    return tuple(f for f in descriptor.fields if f.type in kinds and f.name != "doc_string")


def _node_label(node: Message) -> str:
    """How the error names a node: its name and op type, those that decode."""
    name, op_type = getattr(node, "name", ""), getattr(node, "op_type", "")
    parts = [f"'{name}'" if isinstance(name, str) and name else "", op_type if isinstance(op_type, str) else ""]
    return ", ".join(p for p in parts if p)
