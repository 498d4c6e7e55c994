"""The fused-names record: which original ops a transformed op stands for (OpenVINO's ``fused_names``).

Every transformation that replaces, folds or removes ops writes the friendly names of the ops it
replaced into ``node.get_rt_info()["fused_names"]`` of the op that now does their work, as a sorted
list of strings. ``query_model`` reads the record to map a device's answer about a transformed model
back onto the original model's op names.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hetero_sdk.graph.node import Node

__all__ = ["FUSED_NAMES", "clear_fused_names", "fused_names", "merge_fused_names", "set_fused_names"]

FUSED_NAMES = "fused_names"
"""The rt_info key of the record."""


def fused_names(node: Node) -> set[str]:
    """The original friendly names ``node`` stands for: its record, or ``{friendly_name}`` without one.

    :param node: any node.
    :returns: a new set (changing it does not change the record).
    """
    record = node.get_rt_info().get(FUSED_NAMES)
    if record is None:
        return {node.friendly_name}
    return {str(name) for name in record}


def set_fused_names(node: Node, names: Iterable[str]) -> None:
    """Writes ``names`` (sorted, deduplicated) as ``node``'s record."""
    node.get_rt_info()[FUSED_NAMES] = sorted(set(names))


def merge_fused_names(target: Node, sources: Iterable[Node]) -> set[str]:
    """Records on ``target`` the union of its own record and the records of ``sources``.

    :param target: the op that takes over the sources' work (its own record is kept).
    :param sources: the ops it replaces or absorbs.
    :returns: the merged record.
    """
    names = fused_names(target)
    for source in sources:
        names |= fused_names(source)
    set_fused_names(target, names)
    return names


def clear_fused_names(node: Node) -> None:
    """Removes ``node``'s record, so that it stands for its own friendly name only."""
    node.get_rt_info().pop(FUSED_NAMES, None)
