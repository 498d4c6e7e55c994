"""``split_by_affinity``: the partitioner as a pure function of a DAG and its affinities."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Literal

from hetero_sdk.errors import PropertyValueError
from hetero_sdk.hetero.documented_selection import split_documented
from hetero_sdk.hetero.graph_index import NodeT
from hetero_sdk.hetero.subgraph import Subgraph
from hetero_sdk.hetero.topological_runs import split_default
from hetero_sdk.registry import Registry

__all__ = ["PARTITIONERS", "split_by_affinity"]

Partitioner = Callable[[Mapping[NodeT, Iterable[NodeT]], Mapping[NodeT, str]], list[Subgraph]]

PARTITIONERS: Registry[Partitioner] = Registry("partition algorithm", PropertyValueError)
"""The algorithms :func:`split_by_affinity` runs, by name (HETERO's ``HETERO_PARTITIONER`` values)."""
PARTITIONERS.register("default", split_default)
PARTITIONERS.register("documented", split_documented)


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
        :func:`~hetero_sdk.hetero.check.check_partition` rejects (see :mod:`hetero_sdk.hetero.documented_selection`).
    :returns: the subgraphs, each predecessor subgraph before the subgraphs that need it (for
        ``"documented"``, as far as its result allows).
    :raises ModelValidationError: when ``successors`` has a cycle (naming its nodes) or an edge to a node
        that is neither a key of ``successors`` nor of ``affinity``.
    :raises AffinityError: naming the nodes without an affinity, or with one that is not a device name.
    :raises PropertyValueError: (a ``ValueError``) for an unknown ``algorithm``, naming the known ones.
    """
    return PARTITIONERS.get(algorithm)(successors, affinity)
