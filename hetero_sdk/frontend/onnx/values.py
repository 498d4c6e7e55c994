"""The values an ONNX graph passes between nodes besides tensors: sequences and optionals, resolved while
translating.

hetero-sdk's models carry tensors only. Where a sequence's length and each of its elements are known
while translating (they are built by SequenceConstruct, SplitToSequence of a static dimension,
SequenceInsert/Erase at constant positions...), the frontend holds the sequence as a Python tuple of
outputs (:class:`TensorSequence`) and each sequence op becomes list work on it; an optional is the
output it holds, or :data:`EMPTY` when it holds nothing. Neither reaches the translated model: a
sequence or an empty optional that a graph output, a sub-graph input or a Loop state would need at run
time is an :class:`~hetero_sdk.errors.UnsupportedOperationError` naming it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from hetero_sdk.element_type import Type
from hetero_sdk.graph.node import Output

__all__ = ["EMPTY", "EmptyOptional", "TensorSequence", "Value", "describe"]


@dataclass(frozen=True)
class TensorSequence:
    """An ONNX sequence of tensors known while translating.

    :ivar items: its elements, in order.
    :ivar element_type: the element type of every item (kept for an empty sequence).
    """

    items: tuple[Output, ...]
    element_type: Type

    def __len__(self) -> int:
        return len(self.items)


class EmptyOptional:
    """An ONNX optional that holds nothing (the only instance is :data:`EMPTY`)."""

    def __repr__(self) -> str:
        return "EMPTY"


EMPTY: Final = EmptyOptional()
"""The empty optional."""

Value = Output | TensorSequence | EmptyOptional
"""What an ONNX tensor name stands for while translating."""


def describe(value: object) -> str:
    """How messages name the kind of ``value``."""
    if isinstance(value, TensorSequence):
        return f"a sequence of {len(value)} tensor(s)"
    if value is EMPTY:
        return "an empty optional"
    return "a tensor"
