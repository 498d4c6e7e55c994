"""Limits on the work building a model may do for one node.

A model file declares sizes: dimensions, attribute values (``max_skip_count``, ``num_scan_inputs``),
lengths known while translating. Where translating a node or inferring its shapes does work in
proportion to such a size (unrolling a body once per batch entry, building a constant matrix, listing
one output per slice), a crafted or broken file could make reading it hang or exhaust memory. Each such
place checks the size against a :class:`Limit` first, before it does any of the work, and refuses an
absurd one with a :class:`~hetero_sdk.errors.ModelValidationError` that names the node, the size and
the limit (or, for optional work such as constant folding, skips it).

Every limit is listed in :data:`LIMITS` (and in the ONNX frontend's documentation); a program that
reads models larger than these may raise one, e.g. ``hetero_sdk.graph.limits.UNROLLED_COPIES.value = 10_000``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from hetero_sdk.errors import ModelValidationError

__all__ = ["CONSTANT_ELEMENTS", "FOLDED_ELEMENTS", "LIMITS", "LISTED_VALUES", "Limit", "RANK", "UNROLLED_COPIES"]


@dataclass
class Limit:
    """The most of one kind of work building a model does for one node.

    :ivar name: the limit's name in messages and docs (``UNROLLED_COPIES``).
    :ivar value: the most allowed; may be raised by a program that needs more.
    :ivar what: what is counted, for messages and docs.
    """

    name: str
    value: int
    what: str

    def allows(self, count: int) -> bool:
        """Whether ``count`` is within the limit (for work that is skipped, not refused, beyond it)."""
        return count <= self.value

    def check(self, count: int, why: str, error: Callable[[str], Exception] = ModelValidationError) -> None:
        """Refuses ``count`` when it exceeds the limit; call it before doing the work.

        :param why: the size the count comes from (``"the batch dimension 100000 of input 1"``).
        :param error: builds the exception from the message (a node's ``error`` names the node).
        :raises ModelValidationError: (or what ``error`` builds) naming the count, the reason and the limit.
        """
        if count > self.value:
            raise error(
                f"{why}: {count:,} {self.what}, more than the limit of {self.value:,} "
                f"(hetero_sdk.graph.limits.{self.name}); the file's sizes are likely wrong, or raise the "
                "limit for a model that needs it"
            )


UNROLLED_COPIES: Final = Limit("UNROLLED_COPIES", 4096, "copies of a sub-graph or of an op")
"""Copies of a body or of an op that a translation makes in a loop (opset-8 Scan's batch entries,
TfIdfVectorizer's skip distances)."""

CONSTANT_ELEMENTS: Final = Limit("CONSTANT_ELEMENTS", 1 << 26, "elements of constants built while translating")
"""Elements of a constant a translation builds from declared sizes (DFT's cosine and sine matrices)."""

LISTED_VALUES: Final = Limit("LISTED_VALUES", 1 << 16, "listed values")
"""Inputs, outputs or per-item values a node lists (Scan's scan inputs, a sequence's items)."""

RANK: Final = Limit("RANK", 64, "dimensions")
"""Dimensions of a shape an op takes from the length of an input (Reshape's target shape, Tile's repeats,
Unsqueeze's axes): numpy holds at most 64."""

FOLDED_ELEMENTS: Final = Limit("FOLDED_ELEMENTS", 1 << 16, "elements of a value folded while building")
"""Elements of a value computed while building (constant folding of shapes and constants): a larger
value, input or output, is not folded, and stays computed at run time (never an error)."""

LIMITS: Final = (UNROLLED_COPIES, CONSTANT_ELEMENTS, LISTED_VALUES, RANK, FOLDED_ELEMENTS)
"""Every limit, for docs and tests."""
