"""The partitioner HETERO uses: runs of one device along a topological order, as few as it can find.

**Why runs.** A partition whose graph of subgraphs is acyclic can be executed subgraph after subgraph, so
it is a topological order of the nodes cut into same-device runs; conversely every such cut is a valid
partition whose subgraphs follow each other in an executable order. The fewest subgraphs are therefore the
fewest device switches over all topological orders (adjacent runs of one device merge).

**Draining.** Once a device is chosen, running every node of it that is or becomes ready never hurts:
take any continuation and move such a node to the front; the node joins the current run, and removing a
node from a sequence never adds a device switch. So a search state only ever changes by *draining* a
device (Kahn's algorithm with one ready list per device), and the set a drain takes is unique, whatever
order the lists are in; that is why the order inside successor lists never matters.

**Choosing the next device.** With two devices there is no choice after the first, and trying both first
devices is optimal (the classic two-colour result; tests compare it with brute force). With three or more
the problem is NP-hard; a beam search keeps the ``width`` most promising states per number of runs, ranked
by the number of devices that still have nodes (a lower bound on the runs left), then by the nodes done,
then by the order they were generated. States reaching the same set of nodes (compared by a seeded 64-bit
fingerprint) are merged. All ties follow the stable node order, so the result is deterministic; so is
the narrowing of the beam on graphs that switch devices every few nodes (:data:`CHILD_BUDGET`).

Cost: a state holds the in-degrees left only of the nodes some but not all of whose predecessors have
run (the rest are the graph's own), so a child copies that frontier and the ready lists, not an array
over the whole graph; each node and edge is visited once per state that drains it.
"""

from __future__ import annotations

import random
from array import array
from collections.abc import Iterable, Mapping
from typing import TypeAlias

from hetero_sdk.hetero.graph_index import IndexedGraph, NodeT, in_degrees, index_graph, raise_cycle
from hetero_sdk.hetero.subgraph import Subgraph

__all__ = ["CHILD_BUDGET", "SMALL_WIDTH", "WORK_BUDGET", "runs_of", "split_default"]

SMALL_WIDTH = 32
"""The widest automatic beam."""

WORK_BUDGET = 1_200_000
"""Every beam state drains the whole graph once, so the automatic width is this many node and edge visits
divided by the graph's nodes plus edges, between 2 and :data:`SMALL_WIDTH`: 32 up to about 37,000 nodes
plus edges, 4 for 100,000 nodes with 200,000 edges."""

CHILD_BUDGET = 200_000
"""The search states an automatic beam may make over the whole graph: while the states made so far, per
node done, would exceed it, the width shrinks by one (to 1 at least). Each state costs a few microseconds
of Python, and a graph whose devices alternate every few nodes has a step per few nodes (100,000 nodes
on 3-4 devices at random: 25,000-35,000 runs), so such a graph ends with a narrow beam instead of
searching for seconds; models, whose devices alternate far less often, keep the full width."""


def split_default(
    successors: Mapping[NodeT, Iterable[NodeT]],
    affinity: Mapping[NodeT, str],
    *,
    width: int | None = None,
) -> list[Subgraph]:
    """Partitions a DAG by affinity into same-device runs of a topological order (see the module documentation).

    :param successors: node -> its successors; a DAG.
    :param affinity: node -> device name, for every node.
    :param width: beam width for three or more devices (``None``: from :data:`WORK_BUDGET`). Two devices
        need no search: both first devices are tried, whatever the width.
    :returns: the subgraphs in an executable order: each one's predecessors are in earlier subgraphs.
    :raises ModelValidationError: for a cycle or an edge to an unknown node.
    :raises AffinityError: for a node without affinity.
    """
    if width is not None and width < 1:
        raise ValueError(f"width must be at least 1, got {width}")
    g = index_graph(successors, affinity)
    nodes, names = g.nodes, g.devices
    return [Subgraph(names[d], frozenset([nodes[i] for i in run])) for d, run in runs_of(g, width)]


_Path: TypeAlias = "tuple[int, list[int], _Path | None]"
"""The runs that led to a state, last first: (device, nodes, the runs before)."""


class _State:
    """A point of the search: what is done, what is ready, and the runs that led here."""

    __slots__ = ("done", "key", "last", "left", "live", "path", "pending", "ready")

    def __init__(
        self,
        pending: dict[int, int],
        ready: list[list[int]],
        left: list[int],
        live: int,
        done: int,
        key: int,
        last: int,
        path: _Path | None,
    ) -> None:
        self.pending = pending
        self.ready = ready
        self.left = left
        self.live = live
        self.done = done
        self.key = key
        self.last = last
        self.path = path


def runs_of(g: IndexedGraph, width: int | None = None) -> list[tuple[int, list[int]]]:
    """The runs ``(device number, node numbers)`` of the best order found, first run first.

    :raises ModelValidationError: naming a cycle of the graph.
    """
    n = len(g.nodes)
    if n == 0:
        return []
    automatic = width is None
    if width is None:
        width = max(2, min(SMALL_WIDTH, WORK_BUDGET // (n + sum(map(len, g.succ)))))
    n_dev = len(g.devices)
    indeg = array("i", in_degrees(g))
    if n_dev <= 2:
        return _search(g, indeg, max(width, 2), None, None)
    weight = array("Q")
    weight.frombytes(random.Random(n).randbytes(8 * n))
    return _search(g, indeg, width, weight, CHILD_BUDGET if automatic else None)


def _search(
    g: IndexedGraph, indeg: array[int], width: int, weight: array[int] | None, budget: int | None
) -> list[tuple[int, list[int]]]:
    """The runs of the beam search of ``width`` (``weight``: the nodes' fingerprint terms, to merge
    states reaching the same nodes; None for two devices, where no two states can). With a ``budget``
    the width shrinks, one at a time, while the states made so far per node done would exceed it over
    the whole graph."""
    n, n_dev = len(g.nodes), len(g.devices)
    ready: list[list[int]] = [[] for _ in range(n_dev)]
    left = [0] * n_dev
    for i, d in enumerate(g.device):
        left[d] += 1
        if not indeg[i]:
            ready[d].append(i)
    beam = [_State({}, ready, left, n_dev, 0, 0, -1, None)]
    made = 0
    while True:
        children: list[_State] = []
        for parent in beam:
            choices = [d for d in range(n_dev) if d != parent.last and parent.ready[d]]
            if not choices:
                raise_cycle(g, _remaining(indeg, parent))
            for k, d in enumerate(choices):
                children.append(_drain(g, indeg, parent, d, weight, copy=k < len(choices) - 1))
        finished = [c for c in children if c.done == n]
        if finished:
            return _unwind(finished[0])
        made += len(children)
        beam = _best(children, width, dedup=weight is not None)
        if budget is not None and width > 1 and made * n > budget * beam[0].done:
            width -= 1


def _drain(
    g: IndexedGraph, indeg: array[int], parent: _State, d: int, weight: array[int] | None, *, copy: bool
) -> _State:
    if copy:
        pending = parent.pending.copy()
        ready = [list(r) for r in parent.ready]
    else:
        pending = parent.pending
        ready = parent.ready
    succ, device = g.succ, g.device
    run = ready[d]
    for v in run:
        for w in succ[v]:
            c = pending.pop(w, indeg[w]) - 1
            if c:
                pending[w] = c
            else:
                ready[device[w]].append(w)
    ready[d] = []
    left = parent.left.copy()
    left[d] -= len(run)
    live = parent.live - (not left[d])
    key = parent.key + sum(map(weight.__getitem__, run)) if weight is not None else 0
    return _State(pending, ready, left, live, parent.done + len(run), key, d, (d, run, parent.path))


def _remaining(indeg: array[int], state: _State) -> list[int]:
    """Each node's in-degree from the nodes ``state`` has not run (0 for the nodes it ran)."""
    remaining = list(indeg)
    path = state.path
    while path is not None:
        _, run, path = path
        for v in run:
            remaining[v] = 0
    for v, c in state.pending.items():
        remaining[v] = c
    return remaining


def _best(children: list[_State], width: int, *, dedup: bool) -> list[_State]:
    if len(children) < 2:
        return children
    ranked = sorted(
        range(len(children)),
        key=lambda k: (children[k].live, -children[k].done, k),
    )
    kept: list[_State] = []
    seen: set[tuple[int, int]] = set()
    for k in ranked:
        child = children[k]
        if dedup:
            if (child.done, child.key) in seen:
                continue
            seen.add((child.done, child.key))
        kept.append(child)
        if len(kept) == width:
            break
    return kept


def _unwind(state: _State) -> list[tuple[int, list[int]]]:
    runs: list[tuple[int, list[int]]] = []
    path = state.path
    while path is not None:
        d, run, path = path
        runs.append((d, run))
    return runs[::-1]
