"""``split_by_affinity``: the partitioner as a pure function of a DAG and its affinities."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Literal

from hetero_sdk.hetero.default import split_default
from hetero_sdk.hetero.documented import split_documented
from hetero_sdk.hetero.indexed import NodeT
from hetero_sdk.hetero.subgraph import Subgraph

__all__ = ["ALGORITHMS", "split_by_affinity"]

ALGORITHMS = ("default", "documented")
"""The algorithms :func:`split_by_affinity` accepts."""


def split_by_affinity(
    successors: Mapping[NodeT, Iterable[NodeT]],
    affinity: Mapping[NodeT, str],
    algorithm: Literal["default", "documented"] = "default",
) -> list[Subgraph]:
    """Splits a DAG into subgraphs of one device each.

    Nodes are any hashable objects. The *stable node order*, which breaks every tie, is the iteration
    order of ``successors``, then that of ``affinity`` for nodes that are not keys of ``successors``. The
    order inside successor lists does not matter.

    :param successors: node -> its successors; must be a DAG. A node may be left out as a key when it has
        no successors and appears in ``affinity``.
    :param affinity: node -> device name, for every node.
    :param algorithm: ``"default"``: subgraphs are same-device runs of a topological order, acyclic by
        construction, as few as can be found (optimal for two devices; a beam search for more), in
        O(V + E) per search state. ``"documented"``: OpenVINO's documented selection, reproduced
        faithfully, flaw included: its result can be cyclic, which
        :func:`~hetero_sdk.hetero.check.check_partition` rejects (see :mod:`hetero_sdk.hetero.documented`).
    :returns: the subgraphs, each predecessor subgraph before the subgraphs that need it (for
        ``"documented"``, as far as its result allows).
    :raises ModelValidationError: when ``successors`` has a cycle (naming its nodes) or an edge to a node
        that is neither a key of ``successors`` nor of ``affinity``.
    :raises AffinityError: naming the nodes without an affinity, or with one that is not a device name.
    :raises ValueError: for an unknown ``algorithm``.
    """
    if algorithm == "default":
        return split_default(successors, affinity)
    if algorithm == "documented":
        return split_documented(successors, affinity)
    raise ValueError(f"unknown partition algorithm {algorithm!r}; choose one of {', '.join(ALGORITHMS)}")
