"""Ops on ``string`` tensors (ONNX's text ops; OpenVINO's core opset has none): StringNormalizer,
StringSplit, StringConcat, RegexFullMatch, and LabelEncoder (ai.onnx.ml), which maps keys of any type
(strings included) to values. Their numpy kernels are in :mod:`hetero_sdk.reference.text`.

RegexFullMatch takes RE2 patterns (ONNX's choice) and runs them with Python's :mod:`re`, which reads
the common syntax alike; ``\\w``, ``\\d``, ``\\s`` and ``\\b`` match ASCII only, as in RE2. What RE2
has and ``re`` lacks or reads otherwise (``\\p{..}`` classes, ``[[:alpha:]]``, ``\\C``, ``\\Q..\\E``,
``\\z``), and what ``re`` has and RE2 rejects (lookaround, backreferences, possessive quantifiers),
is refused with an error naming the construct.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from hetero_sdk.element_type import Type
from hetero_sdk.graph.node import Node
from hetero_sdk.graph.op_def import ARRAY, BOOL, INT, STRING, Attr, AttrKind, Input, OpDef, OutputSpec, define
from hetero_sdk.ops.basic import as_output
from hetero_sdk.ops.checks import broadcast
from hetero_sdk.shape import DYNAMIC, PartialShape

__all__ = [
    "LABEL_ENCODER", "REGEX_FULL_MATCH", "STRING_CONCAT", "STRING_NORMALIZER", "STRING_SPLIT", "label_encoder",
    "python_pattern", "regex_full_match", "string_concat", "string_normalizer", "string_split",
]  # fmt: skip

_STRING = frozenset({Type.string})


def _texts(value: Any) -> list[str]:
    if isinstance(value, str) or not all(isinstance(v, str) for v in value):
        raise ValueError("must be a list of strings")
    return list(value)


TEXTS = AttrKind("list of string", _texts)
"""A list of strings kept as written (case matters)."""


def string_normalizer(
    data: Any,
    case_change_action: str = "NONE",
    is_case_sensitive: bool = False,
    stopwords: list[str] | None = None,
    locale: str = "",
    name: str | None = None,
) -> Node:
    """``data`` (``[C]`` or ``[1, C]`` strings) without its stop words, then upper- or lower-cased
    (``StringNormalizer``); when every string is removed, one empty string remains."""
    attrs = {
        "case_change_action": case_change_action,
        "is_case_sensitive": is_case_sensitive,
        "stopwords": list(stopwords or []),
        "locale": locale,
    }
    return Node(STRING_NORMALIZER, [as_output(data)], attrs, name)


def string_split(data: Any, delimiter: str = "", maxsplit: int = -1, name: str | None = None) -> Node:
    """Each string of ``data`` split at ``delimiter`` (runs of whitespace when empty), at most
    ``maxsplit`` times when not negative (``StringSplit``): the parts, padded with empty strings to the
    most parts of any string (``[*shape, max]``), and each string's part count (i64, ``shape``)."""
    return Node(STRING_SPLIT, [as_output(data)], {"delimiter": delimiter, "maxsplit": maxsplit}, name)


def string_concat(a: Any, b: Any, name: str | None = None) -> Node:
    """``a + b`` string by string, with numpy broadcasting (``StringConcat``)."""
    return Node(STRING_CONCAT, [as_output(a), as_output(b)], {}, name)


def regex_full_match(data: Any, pattern: str, name: str | None = None) -> Node:
    """Whether each string of ``data`` matches ``pattern`` (RE2 syntax) as a whole (``RegexFullMatch``)."""
    return Node(REGEX_FULL_MATCH, [as_output(data)], {"pattern": pattern}, name)


def label_encoder(data: Any, keys: np.ndarray, values: np.ndarray, default: Any, name: str | None = None) -> Node:
    """Each element of ``data`` replaced by the value of the equal key, ``default`` where no key is
    equal (``LabelEncoder``); NaN keys match NaN."""
    values = np.asarray(values)
    attrs = {"keys": np.asarray(keys), "values": values, "default": np.asarray(default, values.dtype)}
    return Node(LABEL_ENCODER, [as_output(data)], attrs, name)


def _infer_normalizer(node: Node) -> list[OutputSpec]:
    shape = node.input_value(0).partial_shape
    if shape.rank not in (1, 2) or (shape.rank == 2 and shape[0] not in (1, DYNAMIC)):
        raise node.error(f"data has shape {shape}; expected [C] or [1, C]")
    if not node.attrs["stopwords"]:
        return [(Type.string, shape)]
    return [(Type.string, PartialShape([*shape.dims[:-1], DYNAMIC]))]


def _infer_split(node: Node) -> list[OutputSpec]:
    shape = node.input_value(0).partial_shape
    if shape.rank is None:
        raise node.error("data needs a known rank")
    return [(Type.string, PartialShape([*shape.dims, DYNAMIC])), (Type.i64, shape)]


def _infer_concat(node: Node) -> list[OutputSpec]:
    a, b = (node.input_value(i).partial_shape for i in range(2))
    return [(Type.string, broadcast(node, a, b))]


def _infer_regex(node: Node) -> list[OutputSpec]:
    try:
        python_pattern(node.attrs["pattern"])
    except ValueError as exc:
        raise node.error(f"pattern {node.attrs['pattern']!r}: {exc}") from None
    return [(Type.boolean, node.input_value(0).partial_shape)]


def _infer_label_encoder(node: Node) -> list[OutputSpec]:
    keys, values, default = (node.attrs[k] for k in ("keys", "values", "default"))
    if keys.ndim != 1 or keys.shape != values.shape:
        raise node.error(f"keys {list(keys.shape)} and values {list(values.shape)} must be 1-D and of one length")
    data = node.input_value(0)
    key_type, value_type = Type.of(keys.dtype), Type.of(values.dtype)
    if data.element_type is not key_type:
        raise node.error(f"data has element type {data.element_type.value}; the keys are {key_type.value}")
    if default.size != 1 or Type.of(default.dtype) is not value_type:
        raise node.error(f"default must be one {value_type.value} value, got {default.dtype}{list(default.shape)}")
    if len(np.unique(keys)) != len(keys):
        raise node.error("keys must be unique")
    return [(value_type, data.partial_shape)]


_UNSUPPORTED_SYNTAX = (
    (re.compile(r"\\[pP]"), "Unicode classes (\\p{...})"),
    (re.compile(r"\[:\^?[a-z]+:\]"), "POSIX classes ([[:alpha:]])"),
    (re.compile(r"\\C"), "\\C (any byte)"),
    (re.compile(r"\\Q"), "\\Q...\\E quoting"),
    (re.compile(r"\\z"), "\\z (write $ for the end of the text)"),
    (re.compile(r"\(\?<?[=!]"), "lookaround, which RE2 rejects"),
    (re.compile(r"\\[1-9]|\(\?P="), "backreferences, which RE2 rejects"),
    (re.compile(r"[*+?}]\+"), "possessive quantifiers, which RE2 rejects"),
)


def python_pattern(pattern: str) -> re.Pattern[str]:
    """The compiled Python regular expression of an RE2 ``pattern`` (ASCII ``\\w``, ``\\d``, ``\\s``, as
    RE2's).

    :raises ValueError: naming the construct, for syntax the two read differently or RE2 lacks, or a
        pattern that does not compile.
    """
    escaped = re.sub(r"\\\\", "", pattern)  # an escaped backslash starts no construct
    for finder, what in _UNSUPPORTED_SYNTAX:
        if finder.search(escaped):
            raise ValueError(f"{what} is not supported; hetero-sdk runs RE2 patterns with Python's re")
    try:
        return re.compile(pattern, re.ASCII)
    except re.error as exc:
        raise ValueError(f"is not a valid regular expression ({exc})") from None


STRING_NORMALIZER = define(
    OpDef(
        "StringNormalizer",
        "text",
        _infer_normalizer,
        inputs=(Input("data", _STRING),),
        attrs=(
            Attr("case_change_action", STRING, "NONE", ("NONE", "LOWER", "UPPER"), "the case strings end in"),
            Attr("is_case_sensitive", BOOL, False, doc="stop words match only in their own case"),
            Attr("stopwords", TEXTS, [], doc="the strings removed"),
            Attr("locale", STRING, "", doc="ignored: cases change as Python's str.upper and str.lower do"),
        ),
        version="onnx10",
        data_dependent=True,
        doc="Removes stop words from 1-D or [1, C] strings, then changes their case; one empty string "
        "remains when every string is removed.",
    )
)
STRING_SPLIT = define(
    OpDef(
        "StringSplit",
        "text",
        _infer_split,
        inputs=(Input("data", _STRING),),
        attrs=(
            Attr("delimiter", STRING, "", doc="where to split; empty: at runs of whitespace, trimmed"),
            Attr("maxsplit", INT, -1, doc="the most splits per string; negative: no limit"),
        ),
        version="onnx20",
        data_dependent=True,
        doc="Splits each string as Python's str.split does; the parts are padded with empty strings to the "
        "longest split, and the second output counts each string's parts.",
    )
)
STRING_CONCAT = define(
    OpDef(
        "StringConcat",
        "text",
        _infer_concat,
        inputs=(Input(types=_STRING), Input(types=_STRING)),
        version="onnx20",
        doc="a + b, string by string (numpy broadcasting).",
    )
)
REGEX_FULL_MATCH = define(
    OpDef(
        "RegexFullMatch",
        "text",
        _infer_regex,
        inputs=(Input("data", _STRING),),
        attrs=(Attr("pattern", STRING, doc="an RE2 regular expression"),),
        version="onnx20",
        doc="Whether each string matches the pattern as a whole (RE2 syntax, run with Python's re: see the "
        "family's docs for what is refused).",
    )
)
LABEL_ENCODER = define(
    OpDef(
        "LabelEncoder",
        "text",
        _infer_label_encoder,
        inputs=(Input("data"),),
        attrs=(
            Attr("keys", ARRAY, doc="1-D keys, of data's element type, unique"),
            Attr("values", ARRAY, doc="1-D values, one per key; their type is the output's"),
            Attr("default", ARRAY, doc="the value where no key is equal (one element)"),
        ),
        version="onnx-ml4",
        doc="Replaces each element by the value of its key, the default where there is none; NaN keys match NaN.",
    )
)
