"""com.microsoft BifurcationDetector, the bookkeeping step of aggressive (speculative) decoding against a
source sequence (ONNX Runtime's CPU kernel, ``contrib_ops/cpu/bert/bifurcation_detector.h``):

1. with predicted tokens, find the first predicted token that differs from the source tokens read from
   ``prev_suffix_match_idx`` on, and append the predictions up to and including it to the current
   tokens (without predictions, the tokens are the current ones);
2. for n-gram sizes ``min_ngram_size`` to ``max_ngram_size``, look for the tokens' last n tokens in the
   source: the match index is just past the n-gram's only occurrence, -1 when it occurs more than once;
   the search stops at a size with no occurrence, or at an index that reaches the source's end.

The token count depends on the values (how far the predictions agree), so the op is data-dependent: TEMPLATE
runs its numpy kernel; XLA, which compiles static shapes, declines it and HETERO places it on TEMPLATE.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from hetero_sdk import Node, PartialShape, Type
from hetero_sdk.errors import InferenceError
from hetero_sdk.extensions import REFERENCE, OnnxRule
from hetero_sdk.plugin import INT, Attr, Input, OpDef, OutputSpec, expect_rank
from hetero_sdk.plugin import OnnxNodeContext as NodeContext

from hetero_sdk_contrib.checks import Outputs
from hetero_sdk_contrib.constants import DOMAIN, VERSION

__all__ = ["BIFURCATION_DETECTOR", "KERNELS", "ONNX_RULES", "OPS", "RECIPES", "bifurcation", "suffix_match"]

_I64 = frozenset({Type.i64})


def _infer(node: Node) -> list[OutputSpec]:
    expect_rank(node, 0, 1, what="src_tokens")
    current = expect_rank(node, 1, 1, what="cur_tokens")
    previous = node.input_value(2).partial_shape
    if previous.is_static and int(np.prod(previous.to_shape(), dtype=np.int64)) != 1:
        raise node.error(f"prev_suffix_match_idx has shape {previous}; expected one value")
    if node.get_input_size() > 3:
        expect_rank(node, 3, 1, what="pred_tokens")
        current = PartialShape([-1])  # how many predictions are kept depends on their values
    minimum, maximum = node.attrs["min_ngram_size"], node.attrs["max_ngram_size"]
    if maximum < minimum:
        raise node.error(f"max_ngram_size={maximum} is below min_ngram_size={minimum}")
    return [(Type.i64, current), (Type.i64, previous)]


def bifurcation(source: np.ndarray, predicted: np.ndarray, start: int) -> int:
    """How many predicted tokens agree with ``source[start:]`` before the first that does not (at most
    ``len(source) - start``)."""
    window = min(len(source) - start, len(predicted))
    differs = np.flatnonzero(predicted[:window] != source[start : start + window])
    return int(differs[0]) if differs.size else window


def _occurrences(source: np.ndarray, gram: np.ndarray) -> np.ndarray:
    """The starting positions of ``gram`` in ``source``."""
    if len(gram) > len(source):
        return np.zeros(0, np.int64)
    windows = np.lib.stride_tricks.sliding_window_view(source, len(gram))
    return np.flatnonzero((windows == gram).all(axis=1))


def suffix_match(source: np.ndarray, tokens: np.ndarray, smallest: int, largest: int) -> int:
    """The index just past the only occurrence in ``source`` of the tokens' last n-gram, trying n from
    ``smallest`` to ``largest`` as ONNX Runtime does; -1 when none qualifies."""
    index = -1
    for size in range(smallest, largest + 1):
        if size > len(tokens):
            break
        found = _occurrences(source, tokens[len(tokens) - size :])
        if not found.size:
            break
        index = int(found[0]) + size
        if index >= len(source):
            break
        if found.size > 1:
            index = -1
    return index


def _check_previous(node: Node, start: int, source: int, predicted: int) -> None:
    where = f"{node.type_name} '{node.friendly_name}'"
    if not 0 <= start <= source:
        raise InferenceError(f"{where}: prev_suffix_match_idx={start} must lie in [0, {source}] (the source's "
                             "length) when pred_tokens are given")  # fmt: skip
    if predicted != source + 1 - start:
        raise InferenceError(f"{where}: pred_tokens holds {predicted} tokens; expected {source + 1 - start} (the "
                             f"source's {source} tokens from prev_suffix_match_idx={start} on, plus one)")  # fmt: skip


def _kernel(node: Node, source: Any, current: Any, previous: Any, predicted: Any = None) -> list[np.ndarray]:
    source, current, previous = np.asarray(source), np.asarray(current), np.asarray(previous)
    tokens = current
    if predicted is not None:
        predicted = np.asarray(predicted)
        start = int(previous.reshape(-1)[0])
        _check_previous(node, start, len(source), len(predicted))
        tokens = np.concatenate([current, predicted[: bifurcation(source, predicted, start) + 1]])
    index = suffix_match(source, tokens, node.attrs["min_ngram_size"], node.attrs["max_ngram_size"])
    return [tokens.astype(np.int64), np.full(previous.shape, index, np.int64)]


BIFURCATION_DETECTOR = OpDef(
    "BifurcationDetector",
    "contrib",
    _infer,
    inputs=(
        Input("src_tokens", _I64, doc="the source (encoder input) tokens"),
        Input("cur_tokens", _I64, doc="the current decoder tokens"),
        Input("prev_suffix_match_idx", _I64, doc="the previous suffix match index (one value)"),
        Input("pred_tokens", _I64, optional=True, doc="predicted tokens: the source's from the index on, plus one"),
    ),
    attrs=(
        Attr("min_ngram_size", INT, 1, minimum=1, doc="the smallest n-gram matched"),
        Attr("max_ngram_size", INT, 1, minimum=1, doc="the largest n-gram matched"),
    ),
    version=VERSION,
    data_dependent=True,
    doc="Aggressive decoding's bookkeeping: the current tokens plus the predictions up to the first that "
    "leaves the source, and the index just past the only source occurrence of their last n-gram (-1: none "
    "or several).",
)

OPS = [BIFURCATION_DETECTOR]
"""The op definitions this module contributes."""

KERNELS = {REFERENCE: {"BifurcationDetector": _kernel}}
"""numpy kernel (the oracle and TEMPLATE); XLA declines the data-dependent op."""


def bifurcation_rule(ctx: NodeContext) -> Outputs:
    """com.microsoft BifurcationDetector: src_tokens, cur_tokens, prev_suffix_match_idx[, pred_tokens];
    ``min_ngram_size``/``max_ngram_size`` default to 1 (as OpenVINO reads them)."""
    inputs = [ctx.input(i) for i in range(3)]
    if ctx.has_input(3):
        inputs.append(ctx.input(3))
    attrs = {"min_ngram_size": ctx.attr("min_ngram_size", 1), "max_ngram_size": ctx.attr("max_ngram_size", 1)}
    node = Node(BIFURCATION_DETECTOR, inputs, attrs)
    return [node.output(0), node.output(1)]


ONNX_RULES = [OnnxRule(DOMAIN, "BifurcationDetector", bifurcation_rule, makes=("BifurcationDetector",))]
"""The ONNX ops this module translates."""


# -- conformance-kit recipes -----------------------------------------------------------------------------


def _bifurcation_case(b: Any, op_type: str) -> Any:
    """Source tokens from a small vocabulary (so n-grams repeat), predictions that follow the source
    for a while and then may leave it."""
    vocabulary, length = b.integer(2, 6), b.integer(1, 8)
    source = b.values([length], np.int64, 0, vocabulary - 1)
    start = b.integer(0, length)
    predicted = np.concatenate([source[start:], b.values([1], np.int64, 0, vocabulary - 1)])
    if b.flag() and len(predicted) > 1:
        cut = b.integer(0, len(predicted) - 1)
        predicted[cut] = vocabulary  # a token the source never holds
    smallest = b.integer(1, 3)
    attrs = {"min_ngram_size": smallest, "max_ngram_size": smallest + b.integer(0, 2)}
    inputs = [
        b.input(source, "src_tokens").output(0),
        b.input(b.values([b.integer(1, 4)], np.int64, 0, vocabulary - 1), "cur_tokens").output(0),
        b.input(np.array([start], np.int64), "prev_suffix_match_idx").output(0),
        b.input(predicted, "pred_tokens").output(0),
    ]
    node = Node(BIFURCATION_DETECTOR, inputs, attrs, "op")
    return b.case(op_type, [node.output(0), node.output(1)], "simple", 1, **attrs)


RECIPES = {"BifurcationDetector": _bifurcation_case}
"""Conformance-kit case recipes by op type."""
