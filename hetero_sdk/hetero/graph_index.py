"""The partitioner's input, validated once and renumbered to integers.

Both algorithms and :func:`~hetero_sdk.hetero.check.check_partition` work on node numbers, not on the
caller's node objects. The numbering is the *stable node order* every tie is broken by: the keys of
``successors`` in iteration order, then the other nodes in the iteration order of ``affinity`` (a node
without successors may be left out of ``successors``). The order inside successor lists never matters.
Devices are numbered in order of first appearance in the stable node order.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from hetero_sdk.errors import AffinityError, ModelValidationError

__all__ = ["IndexedGraph", "NodeT", "describe", "find_cycle", "in_degrees", "index_graph", "topological_order"]

_SHOWN = 10

NodeT = TypeVar("NodeT", bound=Hashable)
"""A node of the caller's graph: any hashable object."""


@dataclass(slots=True)
class IndexedGraph:
    """A validated partitioner input, with nodes numbered ``0..n-1`` in the stable node order.

    :ivar nodes: the caller's node objects, by number.
    :ivar index: node object -> number.
    :ivar succ: successor numbers per node, as given (duplicates kept, so in-degrees stay consistent).
    :ivar device: device number per node.
    :ivar devices: device names, by number, in order of first appearance.
    """

    nodes: list[Hashable]
    index: dict[Hashable, int]
    succ: list[list[int]]
    device: list[int]
    devices: list[str]


def describe(nodes: Iterable[object], limit: int = _SHOWN) -> str:
    """``repr`` of the first ``limit`` items joined by commas, with a count of the rest."""
    items = list(nodes)
    text = ", ".join(repr(n) for n in items[:limit])
    return text + (f" (and {len(items) - limit} more)" if len(items) > limit else "")


def index_graph(successors: Mapping[NodeT, Iterable[NodeT]], affinity: Mapping[NodeT, str]) -> IndexedGraph:
    """Validates and numbers a partitioner input.

    Cycles are not looked for here: each caller finds them during its own topological pass.

    :raises ModelValidationError: when ``successors`` is not a mapping of iterables, or an edge leads to a
        node that is neither a key of ``successors`` nor of ``affinity``.
    :raises AffinityError: when a node has no affinity, or an affinity that is not a device name.
    """
    if not isinstance(successors, Mapping):
        raise ModelValidationError(f"successors must be a mapping node -> successors, got {type(successors).__name__}")
    if not isinstance(affinity, Mapping):
        raise AffinityError(f"affinity must be a mapping node -> device name, got {type(affinity).__name__}")
    nodes: list[Hashable] = list(successors)
    index = dict(zip(nodes, range(len(nodes)), strict=True))
    for node in affinity:
        if node not in index:
            index[node] = len(nodes)
            nodes.append(node)
    number = index.__getitem__
    succ: list[list[int]] = []
    for node, targets in successors.items():
        try:
            if isinstance(targets, str | bytes):
                raise TypeError
            succ.append(list(map(number, targets)))
        except (KeyError, TypeError):
            _raise_bad_row(node, targets, index)
    succ.extend([] for _ in range(len(nodes) - len(succ)))
    device, devices = _devices(nodes, affinity)
    return IndexedGraph(nodes, index, succ, device, devices)


def _raise_bad_row(node: Hashable, targets: object, index: dict[Hashable, int]) -> None:
    """Says what is wrong with a successor list that could not be numbered."""
    if isinstance(targets, str | bytes) or not isinstance(targets, Iterable):
        raise ModelValidationError(
            f"successors[{node!r}] must be an iterable of nodes, got {type(targets).__name__} {targets!r}"
        )
    for t in targets:
        if not isinstance(t, Hashable):
            raise ModelValidationError(f"successors[{node!r}] holds {t!r}, which is not hashable")
        if t not in index:
            raise ModelValidationError(
                f"edge {node!r} -> {t!r} leads to an unknown node: {t!r} is neither a key of successors nor of affinity"
            )
    raise ModelValidationError(f"successors[{node!r}] could not be read as an iterable of nodes")


def _devices(nodes: Sequence[Any], affinity: Mapping[Any, str]) -> tuple[list[int], list[str]]:
    names = list(map(affinity.get, nodes))
    try:
        numbers = dict.fromkeys(names, 0)
    except TypeError:
        node, name = next((n, a) for n, a in zip(nodes, names, strict=True) if not isinstance(a, Hashable))
        raise AffinityError(f"node {node!r} has affinity {name!r}; an affinity is a non-empty device name") from None
    if None in numbers:
        missing = [node for node, name in zip(nodes, names, strict=True) if name is None]
        raise AffinityError(
            f"{len(missing)} node(s) have no affinity: {describe(missing)}; give every node a device in affinity"
        )
    for k, name in enumerate(numbers):
        if not isinstance(name, str) or not name:
            node = nodes[names.index(name)]
            raise AffinityError(f"node {node!r} has affinity {name!r}; an affinity is a non-empty device name")
        numbers[name] = k
    return list(map(numbers.__getitem__, names)), [str(name) for name in numbers]


def in_degrees(g: IndexedGraph) -> list[int]:
    """The number of incoming edges of each node (an edge listed twice counts twice)."""
    indeg = [0] * len(g.nodes)
    for row in g.succ:
        for v in row:
            indeg[v] += 1
    return indeg


def topological_order(g: IndexedGraph) -> list[int]:
    """Kahn's order of the nodes, smallest ready number first in each wave.

    :raises ModelValidationError: naming the nodes of a cycle.
    """
    indeg = in_degrees(g)
    order = [i for i, d in enumerate(indeg) if d == 0]
    succ = g.succ
    for u in order:
        for v in succ[u]:
            indeg[v] -= 1
            if indeg[v] == 0:
                order.append(v)
    if len(order) != len(g.nodes):
        raise_cycle(g, indeg)
    return order


def raise_cycle(g: IndexedGraph, indeg: Sequence[int]) -> None:
    """Raises for a cycle among the nodes whose remaining in-degree is positive after a topological pass.

    :raises ModelValidationError: always, naming the nodes of one cycle in edge order.
    """
    stuck = [i for i, d in enumerate(indeg) if d > 0]
    some_pred: dict[int, int] = {}
    for u in stuck:
        for v in g.succ[u]:
            if indeg[v] > 0:
                some_pred.setdefault(v, u)
    cycle = find_cycle(some_pred.__getitem__, stuck[0])
    path = " -> ".join(repr(g.nodes[i]) for i in [*cycle, cycle[0]])
    raise ModelValidationError(f"successors is not a DAG: it has the cycle {path}")


def find_cycle(pred: Callable[[int], int], start: int) -> list[int]:
    """A cycle found by walking ``pred`` back from ``start``, in edge order (each item precedes the next).

    ``pred`` must give, for every vertex it is asked about, a predecessor that also lies in the stuck
    part of the graph, so the walk must come back to a vertex it has seen.
    """
    seen: dict[int, int] = {}
    walk: list[int] = []
    v = start
    while v not in seen:
        seen[v] = len(walk)
        walk.append(v)
        v = pred(v)
    return walk[seen[v] :][::-1]
