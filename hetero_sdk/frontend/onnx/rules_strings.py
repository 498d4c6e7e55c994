"""Rules for ONNX's ops on strings: StringNormalizer, StringSplit, StringConcat and RegexFullMatch (one
op each), and ai.onnx.ml's LabelEncoder (keys and values as lists of one type, or as tensors)."""

from __future__ import annotations

import numpy as np

from hetero_sdk.element_type import Type
from hetero_sdk.frontend.onnx.node_context import NodeContext
from hetero_sdk.frontend.onnx.rules import Outputs, rule
from hetero_sdk.ops import text

__all__: list[str] = []


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
