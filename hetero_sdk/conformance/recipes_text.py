"""Case recipes of the text family: StringNormalizer, StringSplit, StringConcat, RegexFullMatch and
LabelEncoder, on ``string`` tensors drawn from a small vocabulary (repeats, case changes, inner spaces,
empty strings), so that stop words, delimiters, patterns and keys find matches. The outputs of
StringNormalizer and StringSplit have lengths that depend on the strings."""

from __future__ import annotations

import numpy as np

from hetero_sdk import opset
from hetero_sdk.conformance.case_builder import F32, I64, Builder, OpCase, key_case, recipe

STRINGS = np.dtypes.StringDType()
"""numpy's dtype of ``string`` tensors."""

_WORDS = ("cat", "Cat", "DOG", "a b", "  two  spaces ", "", "x,y,z", "ab12", "Hello, World", "dog")
_PATTERNS = ("[a-z]+", "[A-Z][a-z]*", r"\w+ \w+", "(cat|dog)", r"[a-z]*\d+", ".*o.*", "")


def _strings(b: Builder, shape: list[int]) -> np.ndarray:
    picks = b.rng.integers(0, len(_WORDS), shape)
    return np.array([_WORDS[i] for i in picks.reshape(-1)], dtype=STRINGS).reshape(shape)


@recipe("StringNormalizer")
def _normalizer(b: Builder, op_type: str) -> OpCase:
    shape = [b.integer(1, 5)] if b.flag() else [1, b.integer(1, 5)]
    action = b.pick(("NONE", "LOWER", "UPPER"))
    sensitive = b.flag()
    stopwords = sorted({b.pick(("cat", "dog", "DOG", "a b", "")) for _ in range(b.integer(0, 2))})
    node = opset.string_normalizer(b.input(_strings(b, shape), "x"), action, sensitive, stopwords, name="op")
    return b.case(op_type, node, "exact", case_change_action=action, is_case_sensitive=sensitive, stopwords=stopwords)


@recipe("StringSplit")
def _split(b: Builder, op_type: str) -> OpCase:
    delimiter = b.pick(("", ",", " ", "ab"))
    maxsplit = b.integer(-1, 2)
    node = opset.string_split(b.input(_strings(b, b.shape(0, 2)), "x"), delimiter, maxsplit, name="op")
    return b.case(op_type, node.outputs(), "exact", delimiter=delimiter, maxsplit=maxsplit)


@recipe("StringConcat")
def _concat(b: Builder, op_type: str) -> OpCase:
    shape = b.shape(0, 2)
    other = [1 if b.integer(0, 2) == 0 else d for d in shape[len(shape) - b.integer(0, len(shape)) :]]
    a, c = b.input(_strings(b, shape), "a"), b.operand(_strings(b, other), "b")
    first, second = (a, c) if b.flag() else (c, a)
    return b.case(op_type, opset.string_concat(first, second, name="op"), "exact")


@recipe("RegexFullMatch")
def _regex(b: Builder, op_type: str) -> OpCase:
    pattern = b.pick(_PATTERNS)
    node = opset.regex_full_match(b.input(_strings(b, b.shape(0, 2)), "x"), pattern, name="op")
    return b.case(op_type, node, "exact", pattern=pattern)


@recipe("LabelEncoder")
def _label_encoder(b: Builder, op_type: str) -> OpCase:
    key_kind, value_kind = b.pick(("string", "int64")), b.pick(("int64", "float32", "string"))
    count = b.integer(1, 5)
    if key_kind == "string":
        keys = np.array(sorted(set(_WORDS))[:count], dtype=STRINGS)
        data = _strings(b, b.shape(0, 2))
    else:
        keys = np.array(b.rng.permutation(10)[:count] - 3, I64)
        data = b.values(b.shape(0, 2), I64, -3, 6)
    choices: dict[str, np.ndarray] = {
        "int64": np.arange(count, dtype=I64) * 10 + 1,
        "float32": (np.arange(count) * 0.5 + 0.25).astype(F32),
        "string": np.array([f"label{i}" for i in range(count)], dtype=STRINGS),
    }
    values = choices[value_kind]
    default = {"int64": -1, "float32": -0.5, "string": "unknown"}[value_kind]
    node = opset.label_encoder(b.input(data, "x"), keys, values, default, name="op")
    return b.case(op_type, node, "exact", keys=key_kind, values=value_kind, count=count)


def _split_key_case(text: str, delimiter: str, maxsplit: int, seed: int) -> OpCase:
    b = Builder.fixed(seed)
    node = opset.string_split(b.input(np.array([text, "a b"], dtype=STRINGS), "x"), delimiter, maxsplit, name="op")
    return b.case("StringSplit", node.outputs(), "exact", delimiter=delimiter, maxsplit=maxsplit)


key_case("StringSplit")(lambda: _split_key_case("", ",", -1, 1))  # an empty string is one empty part
key_case("StringSplit")(lambda: _split_key_case("  two  spaces ", "", 1, 2))  # leading whitespace goes
