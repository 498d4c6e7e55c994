"""Rules for ONNX's text ops: StringNormalizer, StringSplit, StringConcat, RegexFullMatch, LabelEncoder
(ai.onnx.ml), and TfIdfVectorizer on integer tokens, counting the pool's n-grams (with skips)
in each row, as comparisons of shifted slices with the pool (Equal, ReduceMin, ReduceSum) and one MatMul
placing each n-gram's count at its output index. Token sequences must have a length known while
translating. String tokens (``pool_strings``) are numbered first: a LabelEncoder maps each pool string to
its index in the pool's distinct strings, and every other token to -1, which no n-gram holds."""

from __future__ import annotations

import numpy as np

from hetero_sdk import opset
from hetero_sdk.element_type import Type
from hetero_sdk.frontend.onnx.node_context import NodeContext
from hetero_sdk.frontend.onnx.rules import Outputs, rule
from hetero_sdk.graph.limits import CONSTANT_ELEMENTS, UNROLLED_COPIES
from hetero_sdk.graph.node import Output
from hetero_sdk.ops import text

__all__: list[str] = []

_I64 = np.int64


def _out(node: object) -> Output:
    return node.output(0)  # type: ignore[attr-defined, no-any-return]


def _pool(ctx: NodeContext) -> tuple[list[np.ndarray], np.ndarray | None]:
    """The pool's n-grams per length n (index n - 1): ``[count, n]`` arrays, in pool order; and for a
    pool of strings, the distinct strings, whose indices stand for them in the n-grams."""
    words = None
    if ctx.has_attr("pool_strings"):
        words, numbered = np.unique(np.array(ctx.attr("pool_strings"), Type.string.numpy), return_inverse=True)
        pool = numbered.astype(_I64)
    else:
        pool = np.asarray(ctx.attr("pool_int64s"), _I64)
    starts = [*ctx.attr("ngram_counts"), len(pool)]
    grams = []
    for n in range(1, len(starts)):
        chunk = pool[starts[n - 1] : starts[n]]
        if chunk.size % n:
            raise ctx.error(f"the pool's {n}-grams ({chunk.size} tokens) do not divide into {n}-token n-grams")
        grams.append(chunk.reshape(-1, n))
    return grams, words


def _counts(ctx: NodeContext, x: Output, gram: np.ndarray, skip: int) -> Output:
    """How often each n-gram of ``gram`` (``[count, n]``) occurs in each row of ``x``, its tokens ``skip``
    apart: ``[..., count]`` (i64)."""
    n, length = gram.shape[1], x.partial_shape[-1]
    span = (n - 1) * (skip + 1)
    if span >= length:
        shape = [*x.partial_shape.dims[:-1], gram.shape[0]]
        return _out(opset.broadcast(ctx.const(0, _I64), ctx.const(shape, _I64)))
    last = ctx.const([-1], _I64)
    tokens = []
    for k in range(n):
        begin = k * (skip + 1)
        part = opset.slice(
            x, ctx.const([begin], _I64), ctx.const([begin + length - span], _I64), ctx.const([1], _I64), last
        )
        tokens.append(_out(opset.unsqueeze(part, ctx.const([-1, -2], _I64))))  # [..., P, 1, 1]
    windows = tokens[0] if n == 1 else _out(opset.concat(tokens, -1))  # [..., P, 1, n]
    matches = opset.equal(windows, ctx.const(gram.astype(x.element_type.numpy)))  # [..., P, count, n]
    whole = opset.reduce_min(opset.convert(matches, Type.i64), ctx.const([-1], _I64))  # [..., P, count]
    return _out(opset.reduce_sum(whole, ctx.const([-2], _I64)))


def _skips(ctx: NodeContext, n: int, most: int, length: int) -> range:
    """The skip distances of ``n``-grams that fit in ``length`` tokens, at most ``most``: a larger skip
    finds nothing, so it costs no work, whatever ``max_skip_count`` says."""
    if n == 1:
        return range(1)
    fitting = min(most, max((length - 1) // (n - 1) - 1, 0))
    UNROLLED_COPIES.check(fitting + 1, f"counting {n}-grams with skips up to {fitting}", ctx.error)
    return range(fitting + 1)


@rule("TfIdfVectorizer", since=9)
def tfidf_vectorizer(ctx: NodeContext) -> Outputs:
    x = ctx.input(0)
    if x.partial_shape.rank not in (1, 2) or x.partial_shape[-1] < 0:
        raise ctx.unsupported("TfIdfVectorizer of other than 1-D or 2-D tokens of a length known while translating")
    low, high, skips = ctx.attr("min_gram_length"), ctx.attr("max_gram_length"), ctx.attr("max_skip_count")
    if not 1 <= low <= high or skips < 0:
        raise ctx.error(
            f"attributes min_gram_length={low}, max_gram_length={high}, max_skip_count={skips} are outside their "
            "domains",
            "1 <= min_gram_length <= max_gram_length, and max_skip_count >= 0",
        )
    mode = ctx.attr("mode")
    if mode not in ("TF", "IDF", "TFIDF"):
        raise ctx.error(f"mode must be TF, IDF or TFIDF, not '{mode}'")
    grams, words = _pool(ctx)
    if words is not None:
        if x.element_type is not Type.string:
            raise ctx.error(f"pool_strings needs string tokens, got {x.element_type.value}")
        x = text.label_encoder(x, words, np.arange(len(words), dtype=_I64), -1).output(0)
    elif x.element_type is Type.string:
        raise ctx.error("string tokens need pool_strings, not pool_int64s")
    indexes = list(ctx.attr("ngram_indexes"))
    if len(indexes) != sum(g.shape[0] for g in grams):
        raise ctx.error(f"ngram_indexes has {len(indexes)} entries for {sum(g.shape[0] for g in grams)} pool n-grams")
    if any(i < 0 for i in indexes):
        raise ctx.error(f"ngram_indexes holds the negative index {min(indexes)}")
    width = max(indexes) + 1 if indexes else 0
    CONSTANT_ELEMENTS.check(len(indexes) * width, f"placing {len(indexes)} n-gram(s) in {width} output(s)", ctx.error)
    weights = np.asarray(ctx.attr("weights", [1.0] * len(indexes)), np.float32)
    total: Output | None = None
    first = 0
    for n, gram in enumerate(grams, start=1):
        count = gram.shape[0]
        if low <= n <= high and count:
            parts = [_counts(ctx, x, gram, s) for s in _skips(ctx, n, skips, x.partial_shape[-1])]
            counts = parts[0]
            for part in parts[1:]:
                counts = _out(opset.add(counts, part))
            counts = _out(opset.convert(counts, Type.f32))
            if mode == "IDF":
                counts = _out(opset.convert(opset.greater(counts, ctx.const(0, np.float32)), Type.f32))
            placement = np.zeros((count, width), np.float32)
            for j in range(count):
                placement[j, indexes[first + j]] = weights[first + j] if mode != "TF" else 1.0
            placed = _out(opset.matmul(counts, ctx.const(placement)))
            total = placed if total is None else _out(opset.add(total, placed))
        first += count
    if total is None:
        shape = [*x.partial_shape.dims[:-1], width]
        total = _out(opset.broadcast(ctx.const(0, np.float32), ctx.const(shape, _I64)))
    return [total]


@rule("StringNormalizer", since=10)
def string_normalizer(ctx: NodeContext) -> Outputs:
    node = text.string_normalizer(
        ctx.input(0),
        ctx.attr("case_change_action", "NONE"),
        ctx.flag("is_case_sensitive", False),
        ctx.attr("stopwords", []),
        ctx.attr("locale", ""),
    )
    return [node.output(0)]


@rule("StringSplit", since=20)
def string_split(ctx: NodeContext) -> Outputs:
    maxsplit = ctx.attr("maxsplit", -1)
    node = text.string_split(ctx.input(0), ctx.attr("delimiter", ""), maxsplit if maxsplit >= 0 else -1)
    return [node.output(0), node.output(1)]


@rule("StringConcat", since=20)
def string_concat(ctx: NodeContext) -> Outputs:
    return [text.string_concat(ctx.input(0), ctx.input(1)).output(0)]


@rule("RegexFullMatch", since=20)
def regex_full_match(ctx: NodeContext) -> Outputs:
    try:
        text.python_pattern(ctx.attr("pattern"))
    except ValueError as exc:
        raise ctx.unsupported(f"pattern {ctx.attr('pattern')!r}: {exc}") from None
    return [text.regex_full_match(ctx.input(0), ctx.attr("pattern")).output(0)]


_LISTS = {"strings": Type.string, "int64s": Type.i64, "floats": Type.f32}


def _spec_default(value_type: Type) -> np.ndarray:
    """LabelEncoder's output for a key not found when no default is set, as ONNX's ``default_tensor``
    says (and ONNX Runtime gives): ``"_Unused"`` for strings, -1 for any integral type (wrapped for an
    unsigned one), -0.0 for any float type."""
    if value_type.is_string:
        return np.array("_Unused", value_type.numpy)
    if value_type.is_integral:
        return np.array(-1).astype(value_type.numpy)
    return np.array(-0.0 if value_type.is_real else 0, value_type.numpy)


def _mapping_side(ctx: NodeContext, side: str) -> np.ndarray:
    """The keys or values (``side``) of a LabelEncoder, from ``{side}_tensor`` or one ``{side}_<type>s`` list."""
    if ctx.has_attr(f"{side}_tensor"):
        return np.asarray(ctx.attr(f"{side}_tensor")).reshape(-1)
    found = [(kind, t) for kind, t in _LISTS.items() if ctx.has_attr(f"{side}_{kind}")]
    if len(found) != 1:
        raise ctx.error(f"exactly one of {side}_tensor, {side}_strings, {side}_int64s, {side}_floats must be set")
    kind, element_type = found[0]
    return np.array(ctx.attr(f"{side}_{kind}"), element_type.numpy)


@rule("LabelEncoder", domain="ai.onnx.ml")
def label_encoder(ctx: NodeContext) -> Outputs:
    keys, values = _mapping_side(ctx, "keys"), _mapping_side(ctx, "values")
    value_type = Type.of(values.dtype)
    if ctx.has_attr("default_tensor"):
        default = np.asarray(ctx.attr("default_tensor")).reshape(-1)[:1].reshape(())
    else:
        kind = {Type.string: "string", Type.i64: "int64", Type.f32: "float"}.get(value_type)
        given = ctx.attr(f"default_{kind}", None) if kind else None
        default = _spec_default(value_type) if given is None else np.array(given, value_type.numpy)
    x = ctx.input(0)
    if Type.of(keys.dtype) is not x.element_type:
        keys = keys.astype(x.element_type.numpy)  # ONNX stores float keys as f32 for a double input
    return [text.label_encoder(x, keys, values, default).output(0)]
