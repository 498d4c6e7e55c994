"""The validity check every partition must pass before HETERO runs it."""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from itertools import pairwise

from hetero_sdk.errors import PartitionError
from hetero_sdk.hetero.graph_index import NodeT, describe, find_cycle, index_graph, topological_order
from hetero_sdk.hetero.subgraph import Subgraph

__all__ = ["check_partition"]


def check_partition(
    successors: Mapping[NodeT, Iterable[NodeT]],
    affinity: Mapping[NodeT, str],
    parts: Iterable[Subgraph],
) -> None:
    """Checks that ``parts`` is a partition HETERO can execute, in O(V + E).

    Checking each subgraph alone is not enough: A = {a1, a2} and B = {b1, b2} with edges a1->a2, b1->b2,
    a1->b2, b1->a2 are each fine, yet A needs B and B needs A. So the whole graph of subgraphs is checked.

    :param successors: node -> its successors; a DAG.
    :param affinity: node -> device name, for every node.
    :param parts: the subgraphs, in the order they would run.
    :returns: ``None`` when every node is in exactly one non-empty subgraph, every subgraph's device is
        the affinity of each of its nodes, the subgraphs do not depend on each other in a cycle, and each
        subgraph comes after every subgraph it needs.
    :raises PartitionError: naming the first problem found: the node in no or in two subgraphs, the
        subgraph and node whose devices differ, the cycle of subgraphs (indices, devices and one edge per
        step), or the subgraph that runs before one it needs.
    :raises ModelValidationError: for a cycle in ``successors`` or an edge to an unknown node.
    :raises AffinityError: for a node without affinity.
    """
    g = index_graph(successors, affinity)
    topological_order(g)
    parts = list(parts)
    nodes, devices = g.nodes, g.devices
    owner = [-1] * len(nodes)
    for k, part in enumerate(parts):
        if not isinstance(part, Subgraph):
            raise PartitionError(f"parts[{k}] is a {type(part).__name__}, not a Subgraph")
        if not part.nodes:
            raise PartitionError(f"subgraph {k} ({part.device}) is empty")
        for node in part.nodes:
            i = g.index.get(node)
            if i is None:
                raise PartitionError(f"subgraph {k} ({part.device}) holds {node!r}, which is not a node of the graph")
            if owner[i] != -1:
                j = owner[i]
                raise PartitionError(
                    f"node {node!r} is in two subgraphs: {j} ({parts[j].device}) and {k} ({part.device})"
                )
            owner[i] = k
            if devices[g.device[i]] != part.device:
                raise PartitionError(
                    f"subgraph {k} runs on {part.device!r} but holds node {node!r}, whose affinity is "
                    f"{devices[g.device[i]]!r}; a subgraph takes nodes of its own device only"
                )
    missing = [nodes[i] for i, k in enumerate(owner) if k == -1]
    if missing:
        raise PartitionError(f"{len(missing)} node(s) are in no subgraph: {describe(missing)}")
    _check_quotient(g.succ, nodes, owner, parts)


def _check_quotient(succ: list[list[int]], nodes: list[Hashable], owner: list[int], parts: Sequence[Subgraph]) -> None:
    """Checks the graph of subgraphs: acyclic first (the clearer message), then the order."""
    witness: list[dict[int, tuple[int, int]]] = [{} for _ in parts]
    for u, row in enumerate(succ):
        pu = owner[u]
        for v in row:
            pv = owner[v]
            if pu != pv and pv not in witness[pu]:
                witness[pu][pv] = (u, v)
    waiting = [0] * len(parts)
    for out in witness:
        for q in out:
            waiting[q] += 1
    order = [k for k, w in enumerate(waiting) if w == 0]
    for p in order:
        for q in witness[p]:
            waiting[q] -= 1
            if not waiting[q]:
                order.append(q)
    if len(order) != len(parts):
        some_pred: dict[int, int] = {}
        for p, out in enumerate(witness):
            if waiting[p]:
                for q in out:
                    if waiting[q]:
                        some_pred.setdefault(q, p)
        cycle = find_cycle(some_pred.__getitem__, next(k for k, w in enumerate(waiting) if w))
        steps = [*cycle, cycle[0]]
        chain = " -> ".join(f"{k} ({parts[k].device})" for k in steps)
        edges = ", ".join(_edge(nodes, *witness[p][q]) for p, q in pairwise(steps))
        raise PartitionError(
            f"the subgraphs depend on each other in a cycle: subgraph {chain}, through the edges {edges}; "
            "no order can run them"
        )
    for p, out in enumerate(witness):
        for q in out:
            if q < p:
                raise PartitionError(
                    f"subgraph {q} ({parts[q].device}) runs before subgraph {p} ({parts[p].device}), which it "
                    f"needs (edge {_edge(nodes, *out[q])}); the order is not executable"
                )


def _edge(nodes: list[Hashable], u: int, v: int) -> str:
    return f"{nodes[u]!r} -> {nodes[v]!r}"
