"""The declared domains of ONNX attributes, checked for every node of ``ai.onnx`` before its rule (or its
ONNX function body) reads them: the booleans ONNX writes as integers must be 0 or 1, as ONNX's
specification says (ONNX Runtime reads any non-zero integer as true; hetero-sdk refuses the model
rather than guess what its exporter meant)."""

from __future__ import annotations

import math
from typing import Final

import onnx

from hetero_sdk.element_type import Type
from hetero_sdk.errors import ModelValidationError

__all__ = [
    "FLAGS", "FUNCTION_AXES", "SOFT_CAPS", "check_attention_mask", "check_attribute_domains", "check_function_axes",
    "read_flag",
]  # fmt: skip

FLAGS: Final = frozenset(
    {
        "align_corners", "allowzero", "antialias", "ceil_mode", "center_point_box", "count_include_pad",
        "detect_negative", "detect_positive", "exclude_outside", "exclusive", "fmod", "input_forget",
        "interleaved", "inverse", "is_case_sensitive", "is_causal", "keepdims", "largest", "layout",
        "linear_before_reset", "new_axis", "noop_with_empty_axes", "onesided", "periodic", "reverse",
        "saturate", "select_last_index", "sorted", "spatial", "storage_order", "training_mode", "transA",
        "transB", "upper",
    }
)  # fmt: skip
"""The ``ai.onnx`` attributes that are booleans written as integers: every op with an attribute of one of
these names (``keepdims`` of the reductions, ``ceil_mode`` of the pools...) reads it as 0 or 1."""


SOFT_CAPS: Final = frozenset({"softcap"})
"""The ``ai.onnx`` float attributes that are a soft cap (Attention's ``softcap``, applied as
``softcap * tanh(x / softcap)``, 0 for none): finite and not negative. ONNX's function body caps at
``|softcap|`` for a negative one (and gives NaN for NaN) where ONNX Runtime and ``onnx.reference`` cap only
at a positive one; such a file is refused rather than read one way or the other."""

FUNCTION_AXES: Final = frozenset({"axis", "axes"})
"""The attributes that are axes of the first input in every ``ai.onnx`` op translated through its ONNX
function body (RMSNormalization, MeanVarianceNormalization, CenterCropPad; LayerNormalization, Softmax
and LogSoftmax where their rules hand them over): each value in ``[-rank, rank)``. Checked before the
body is built, since the body turns an absurd axis into work (a Range from the axis to the rank)."""


def read_flag(name: str, value: object, where: str) -> bool:
    """``value`` of the boolean attribute ``name`` as a bool.

    :param where: the node, as messages name it.
    :raises ModelValidationError: for anything but the integers 0 and 1.
    """
    if isinstance(value, bool) or not isinstance(value, int) or value not in (0, 1):
        raise ModelValidationError(
            f"ONNX {where}: attribute {name}={value!r} is outside its domain: a boolean attribute is 0 or 1"
        )
    return bool(value)


def check_attribute_domains(node: onnx.NodeProto, where: str) -> None:
    """Checks the declared domains of ``node``'s attributes (a node of ``ai.onnx``).

    :param where: the node, as messages name it.
    :raises ModelValidationError: naming the node, the attribute and its value.
    """
    for attribute in node.attribute:
        if attribute.name in FLAGS and attribute.type == onnx.AttributeProto.INT:
            read_flag(attribute.name, int(attribute.i), where)
        capped = attribute.name in SOFT_CAPS and attribute.type == onnx.AttributeProto.FLOAT
        if capped and not (math.isfinite(attribute.f) and attribute.f >= 0):
            raise ModelValidationError(
                f"ONNX {where}: attribute {attribute.name}={attribute.f!r} is outside its domain: a soft cap is "
                "a finite number, positive, or 0 for none"
            )


def check_function_axes(node: onnx.NodeProto, rank: int, where: str) -> None:
    """Checks the :data:`FUNCTION_AXES` attributes of ``node``, an ``ai.onnx`` op about to be replaced by
    its ONNX function body, against ``rank``, its first input's rank.

    :param where: the node, as messages name it.
    :raises ModelValidationError: naming the node, the attribute and the axis outside ``[-rank, rank)``.
    """
    for attribute in node.attribute:
        if attribute.name not in FUNCTION_AXES:
            continue
        values = [attribute.i] if attribute.type == onnx.AttributeProto.INT else list(attribute.ints)
        for axis in values:
            if not -rank <= axis < rank:
                expected = f"expected {-rank}..{rank - 1}" if rank else "a scalar has no axis"
                raise ModelValidationError(
                    f"ONNX {where}: attribute {attribute.name}: axis {axis} is out of range for its input "
                    f"of rank {rank} ({expected})"
                )


def check_attention_mask(node: onnx.NodeProto, query: Type, mask: Type | None, where: str) -> None:
    """Checks ``Attention``'s ``attn_mask`` (its input 3): a boolean mask (keys to keep) or an additive
    one of the query's element type, as ONNX's text says. Its type constraint also admits integers,
    which ONNX Runtime reads one way and ``onnx.reference`` cannot read at all: refused, not guessed.

    :raises ModelValidationError: naming the node and the mask's element type.
    """
    if node.op_type != "Attention" or mask is None or mask in (Type.boolean, query):
        return
    raise ModelValidationError(
        f"ONNX {where}: attn_mask is {mask.value}; a mask is boolean (keys to keep) or {query.value} like Q "
        "(added to the scores): cast it first"
    )
