"""Independent answers to compare the partitioner with: simple, slow, written without its code."""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any

from hetero_sdk.hetero import Subgraph

__all__ = ["all_nodes", "edges", "min_subgraphs", "order_problem", "quotient_cycle", "weakly_connected"]


def all_nodes(successors: Mapping[Any, list[Any]], affinity: Mapping[Any, str]) -> set[Any]:
    """Every node of the input."""
    return set(successors) | set(affinity) | {v for vs in successors.values() for v in vs}


def edges(successors: Mapping[Any, list[Any]]) -> set[tuple[Any, Any]]:
    """The edges as pairs."""
    return {(u, v) for u, vs in successors.items() for v in vs}


def _quotient(successors: Mapping[Any, list[Any]], parts: Sequence[Subgraph]) -> dict[int, set[int]]:
    where = {node: k for k, part in enumerate(parts) for node in part.nodes}
    out: dict[int, set[int]] = {k: set() for k in range(len(parts))}
    for u, v in edges(successors):
        if where[u] != where[v]:
            out[where[u]].add(where[v])
    return out


def quotient_cycle(successors: Mapping[Any, list[Any]], parts: Sequence[Subgraph]) -> bool:
    """Whether the subgraphs depend on each other in a cycle: some subgraph reaches itself."""
    out = _quotient(successors, parts)

    def reach(k: int) -> set[int]:
        seen: set[int] = set()
        todo = list(out[k])
        while todo:
            j = todo.pop()
            if j not in seen:
                seen.add(j)
                todo.extend(out[j])
        return seen

    return any(k in reach(k) for k in out)


def order_problem(successors: Mapping[Any, list[Any]], parts: Sequence[Subgraph]) -> bool:
    """Whether some subgraph comes before a subgraph it needs."""
    return any(j < k for k, outs in _quotient(successors, parts).items() for j in outs)


def weakly_connected(successors: Mapping[Any, list[Any]], nodes: frozenset[Any]) -> bool:
    """Whether ``nodes`` are connected by edges among themselves, ignoring directions."""
    near: dict[Any, set[Any]] = {n: set() for n in nodes}
    for u, v in edges(successors):
        if u in nodes and v in nodes:
            near[u].add(v)
            near[v].add(u)
    start = next(iter(nodes))
    seen = {start}
    todo = [start]
    while todo:
        for m in near[todo.pop()]:
            if m not in seen:
                seen.add(m)
                todo.append(m)
    return seen == set(nodes)


def min_subgraphs(successors: Mapping[Any, list[Any]], affinity: Mapping[Any, str]) -> int:
    """The fewest subgraphs of any valid partition, by brute force (up to about 12 nodes).

    A valid partition runs its subgraphs one after the other, so it is a topological order cut into runs
    of one device; the fewest runs over all topological orders is found by trying every next node.
    """
    nodes = sorted(all_nodes(successors, affinity), key=repr)
    bit = {node: 1 << i for i, node in enumerate(nodes)}
    needs = {node: 0 for node in nodes}
    for u, v in edges(successors):
        needs[v] |= bit[u]
    full = (1 << len(nodes)) - 1

    @functools.cache
    def best(done: int, last: str | None) -> int:
        if done == full:
            return 0
        return min(
            (affinity[node] != last) + best(done | bit[node], affinity[node])
            for node in nodes
            if not done & bit[node] and needs[node] & done == needs[node]
        )

    return best(0, None)
