"""What IR spells differently from the SDK: op type names, attribute names, versions accepted for each
op, port precisions, and attribute values as text (``"1,1"``, ``"true"``, ``"?,3,1..10"``)."""

from __future__ import annotations

import re
from typing import Any

from hetero_sdk.element_type import Type
from hetero_sdk.graph.op_def import Attr
from hetero_sdk.shape import DYNAMIC, PartialShape

__all__ = [
    "ATTR_NAMES", "IR_ONLY_ATTRS", "OLDER_DEFAULTS", "OLDER_VERSIONS", "OP_NAMES", "PRECISIONS", "WRITTEN_VERSIONS",
    "format_value", "ir_attr_name", "ir_type_name", "join_names", "parse_dims", "parse_value", "port_rt_info_key",
    "precision_of", "split_names",
]  # fmt: skip

OP_NAMES = {"Const": "Constant", "ReLU": "Relu", "SoftMax": "Softmax"}
"""IR type names that differ from the SDK's (IR -> SDK)."""

_IR_NAMES = {ours: ir for ir, ours in OP_NAMES.items()}

WRITTEN_VERSIONS = {"HSwish": "opset4"}
"""Versions written for SDK ops whose label differs from the opset OpenVINO defines them in."""

ATTR_NAMES: dict[str, dict[str, str]] = {
    "AvgPool": {"kernel": "kernel_shape", "exclude-pad": "exclude_pad"},
    "MaxPool": {"kernel": "kernel_shape"},
    "Divide": {"m_pythondiv": "python_division"},
}
"""Per SDK op type, IR attribute names that differ from the SDK's (IR -> SDK)."""

IR_ONLY_ATTRS: dict[str, frozenset[str]] = {
    "Squeeze": frozenset({"allow_axis_skip"}),
}
"""IR attributes the SDK's op has no field for, read only when they hold the value that means the SDK's
semantics (checked by the reader: ``allow_axis_skip`` must be false)."""

OLDER_VERSIONS: dict[str, frozenset[str]] = {
    "Gather": frozenset({"opset1", "opset7"}),  # batch_dims absent (0) or non-negative: a subset of opset8
    "Softmax": frozenset({"opset1"}),  # axis non-negative: a subset of opset8
    "HSwish": frozenset({"opset4"}),  # OpenVINO's opset4 op; the SDK labels it opset1
    "Broadcast": frozenset({"opset1"}),  # modes numpy/explicit: a subset of opset3
    "ShapeOf": frozenset({"opset1"}),  # i64 output, the opset3 default
    "TopK": frozenset({"opset1", "opset3"}),  # no 'stable' (false)
    "ScatterElementsUpdate": frozenset({"opset3"}),  # no 'reduction' ("none")
    "ScatterNDUpdate": frozenset({"opset3"}),  # no 'reduction' ("none")
    "Pad": frozenset({"opset1"}),  # non-negative pads: a subset of opset12
    "Gelu": frozenset({"opset2"}),  # erf only: opset7's default
    "Squeeze": frozenset({"opset15"}),  # allow_axis_skip=false is opset1's semantics
    "MaxPool": frozenset({"opset1"}),  # one output: opset8's first with dilations 1
}
"""Versions of an op, other than the SDK's own, whose semantics are a subset of the SDK's version."""

OLDER_DEFAULTS = {
    ("MaxPool", "opset1"): lambda attrs: {"dilations": [1] * len(attrs.get("kernel_shape", []))},
}
"""Attributes an older version lacks, as the SDK's version spells its semantics (by type and version)."""

PRECISIONS = {
    "FP32": Type.f32, "FP16": Type.f16, "BF16": Type.bf16, "FP64": Type.f64, "I4": Type.i4, "I8": Type.i8,
    "I16": Type.i16, "I32": Type.i32, "I64": Type.i64, "U4": Type.u4, "U8": Type.u8, "U16": Type.u16,
    "U32": Type.u32, "U64": Type.u64, "BOOL": Type.boolean, "STRING": Type.string,
}  # fmt: skip
"""Port precisions as IR spells them."""

_PRECISION_NAMES = {t: name for name, t in PRECISIONS.items()}

_ESCAPED_COMMA = re.compile(r"(?<!\\),")


def port_rt_info_key(index: int) -> str:
    """The key of a node's rt_info holding output port ``index``'s rt_info (``{"layout": "[N,C,H,W]"}``):
    the SDK's ports carry no rt_info of their own."""
    return f"output:{index}"


def ir_type_name(type_name: str) -> str:
    """The IR type name of an SDK op type."""
    return _IR_NAMES.get(type_name, type_name)


def ir_attr_name(type_name: str, name: str) -> str:
    """The IR name of the SDK attribute ``name`` of ``type_name``."""
    for ir, ours in ATTR_NAMES.get(type_name, {}).items():
        if ours == name:
            return ir
    return name


def precision_of(element_type: Type) -> str:
    """A port precision: IR's name where it has one, else the element type's own (``f8e4m3``)."""
    return _PRECISION_NAMES.get(element_type, element_type.value)


def split_names(text: str) -> list[str]:
    """Tensor names of a port's ``names`` attribute (commas separate, ``\\,`` is a comma in a name)."""
    return [n.replace("\\,", ",") for n in _ESCAPED_COMMA.split(text) if n]


def join_names(names: set[str]) -> str:
    """The ``names`` attribute of a port holding ``names``."""
    return ",".join(sorted(n.replace(",", "\\,") for n in names))


def parse_dims(text: str) -> list[int]:
    """A shape as ``Parameter`` writes it: ``"?,3,1..10"`` (``?`` and ranges are dynamic), ``""`` a
    scalar.

    :raises ValueError: for anything else.
    """
    text = text.strip().strip("[]")
    if not text:
        return []
    dims = []
    for part in text.split(","):
        part = part.strip()
        if part in ("?", "-1") or ".." in part:
            dims.append(DYNAMIC)
        elif part.isdigit():
            dims.append(int(part))
        else:
            raise ValueError(f"{part!r} is not a dimension (a number, '?', or a range 'a..b')")
    return dims


def parse_value(attr: Attr, text: str) -> Any:
    """The value of ``attr`` written as ``text`` in a ``<data>`` element.

    :raises ValueError: when the text does not read as the attribute's kind.
    """
    kind = attr.kind.name
    if kind in ("int",):
        return int(text)
    if kind == "float":
        return float(text)
    if kind == "bool":
        if text.lower() not in ("true", "false", "1", "0"):
            raise ValueError(f"{text!r} is not a boolean (true or false)")
        return text.lower() in ("true", "1")
    if kind.startswith("string"):
        return text
    if kind == "list of int":
        return [int(v) for v in text.split(",") if v.strip()]
    if kind == "list of float":
        return [float(v) for v in text.split(",") if v.strip()]
    if kind.startswith("list of string"):
        return [v for v in text.split(",") if v]
    if kind == "element type":
        return Type.of("boolean" if text == "boolean" else text)
    if kind == "shape":
        return PartialShape(parse_dims(text))
    raise ValueError(f"attributes of kind {kind} have no IR form")


def format_value(value: Any) -> str:
    """``value`` (an SDK attribute value) as IR writes it.

    :raises TypeError: for a value IR cannot hold (an array, a sub-graph).
    """
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, Type):
        return value.value
    if isinstance(value, PartialShape):
        return ",".join("?" if d == DYNAMIC else str(d) for d in value)
    if isinstance(value, (int, str)):
        return str(value)
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, (list, tuple)) and all(isinstance(v, (int, float, str)) for v in value):
        return ",".join(repr(v) if isinstance(v, float) else str(v) for v in value)
    raise TypeError(f"a {type(value).__name__} has no IR form")
