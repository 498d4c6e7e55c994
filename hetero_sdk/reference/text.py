"""Numpy kernels of the ``string`` ops (:mod:`hetero_sdk.ops.text`): ``np.strings`` where it has the
operation, Python's ``str`` methods string by string where it has not (splitting, matching)."""

from __future__ import annotations

import numpy as np

from hetero_sdk.element_type import Type
from hetero_sdk.graph.node import Node
from hetero_sdk.ops.text import python_pattern
from hetero_sdk.reference.registry import kernel

_STRING = Type.string.numpy


@kernel("StringNormalizer")
def string_normalizer(node: Node, x: np.ndarray) -> np.ndarray:
    stopwords = node.attrs["stopwords"]
    kept = x
    if stopwords:
        if node.attrs["is_case_sensitive"]:
            drop = np.isin(x, np.array(stopwords, _STRING))
        else:
            drop = np.isin(np.strings.lower(x), np.strings.lower(np.array(stopwords, _STRING)))
        kept = x[..., ~drop.reshape(-1)] if x.ndim == 2 else x[~drop]
        if kept.shape[-1] == 0:
            kept = np.zeros((*x.shape[:-1], 1), _STRING)
    action = node.attrs["case_change_action"]
    if action == "UPPER":
        return np.strings.upper(kept)
    if action == "LOWER":
        return np.strings.lower(kept)
    return kept


@kernel("StringSplit")
def string_split(node: Node, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    delimiter = node.attrs["delimiter"] or None
    limit = node.attrs["maxsplit"]
    parts = [str(s).split(delimiter, limit if limit >= 0 else -1) for s in x.flat]
    width = max((len(p) for p in parts), default=0)
    out = np.zeros((len(parts), width), _STRING)
    for row, split in enumerate(parts):
        out[row, : len(split)] = split
    counts = np.array([len(p) for p in parts], np.int64).reshape(x.shape)
    return out.reshape(*x.shape, width), counts


@kernel("StringConcat")
def string_concat(node: Node, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.strings.add(a, b)


@kernel("RegexFullMatch")
def regex_full_match(node: Node, x: np.ndarray) -> np.ndarray:
    pattern = python_pattern(node.attrs["pattern"])
    matched = [pattern.fullmatch(str(s)) is not None for s in x.flat]
    return np.array(matched, np.bool_).reshape(x.shape)


@kernel("LabelEncoder")
def label_encoder(node: Node, x: np.ndarray) -> np.ndarray:
    keys, values, default = node.attrs["keys"], node.attrs["values"], node.attrs["default"]
    order = np.argsort(keys, kind="stable")
    ordered = keys[order]
    out = np.full(x.shape, default.reshape(()), values.dtype)
    if not len(keys):
        return out
    place = np.minimum(np.searchsorted(ordered, x), len(keys) - 1)
    found = ordered[place] == x
    if keys.dtype.kind == "f":  # NaN keys sort last and match NaN
        found |= np.isnan(ordered[place]) & np.isnan(x)
        nan_key = np.flatnonzero(np.isnan(ordered))
        if nan_key.size:
            place = np.where(np.isnan(x), nan_key[0], place)
            found |= np.isnan(x)
    out[found] = values[order[place[found]]]
    return out
