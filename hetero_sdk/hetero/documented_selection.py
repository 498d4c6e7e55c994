"""The subgraph selection of OpenVINO's HETERO design documents, reproduced faithfully.

For each device, in order of first appearance, and while the device has unassigned nodes, one *round*:

1. the possible roots are the device's unassigned nodes not covered by a candidate of this round;
   the first of them in the stable node order is the root of a new candidate, with an empty rejected list;
2. the candidate grows by an adjacent node that is neither in it nor rejected; a node of another affinity,
   or one already assigned to a subgraph, fails to merge and is rejected; a node of the device merges;
3. after every merge or failure the *global condition* is checked: no two nodes ``src``, ``dst`` of the
   candidate may have a rejected node among their *path nodes* (the nodes reachable from ``src`` through
   which ``dst`` is reachable). While it fails, the last merged node is rolled back into the rejected list;
4. when no adjacent node is left, the candidate is complete; the round then starts from the next root;
5. when no root is left, the largest candidate (the first found among equals) becomes a subgraph.

**Visiting order.** The walk-through in the design documents fixes it: the candidate grows depth first,
from the most recently merged node that still has an unvisited neighbour, and a node's neighbours are
visited successors first, then predecessors, each in the stable node order. From root 1 of the example
this gives 2, 3, 5, 6, 7 and then 4 (5's predecessor, reached once 7 and 6 have nothing left); from root 5
it gives 6, 7, then 3 (5's predecessor), 2 (3's predecessor), then 4 (2's successor), as documented.

**Path nodes.** The union over all pairs of path nodes equals ``D & A``, where ``D`` is everything reachable
from the candidate and ``A`` everything that reaches it (a node on a path from ``src`` to ``dst`` is in
both; one in both lies between two candidate nodes, which differ because the graph is acyclic). ``D`` and
``A`` are unions of the transitive closure's rows, kept per merged node so a rollback is a pop; the
closure rows are Python integers used as bitsets, which keeps a check to a few big-integer operations.

**The flaw, kept.** The condition only looks at paths between nodes of one candidate, never at how the
subgraphs depend on each other, so the result can be cyclic (nodes 0-3, edges 0->2, 0->3, 1->2, 1->3,
{0, 3} on A and {1, 2} on B gives A = {0, 3} and B = {1, 2}, each needing the other). The result is then
not executable and :func:`~hetero_sdk.hetero.check.check_partition` rejects it.
"""

from __future__ import annotations

import heapq
from collections.abc import Hashable, Iterable, Mapping
from typing import NamedTuple

from hetero_sdk.hetero.graph_index import IndexedGraph, NodeT, index_graph, topological_order
from hetero_sdk.hetero.subgraph import Subgraph

__all__ = ["TraceStep", "split_documented"]


class TraceStep(NamedTuple):
    """One step of the documented algorithm, as the design documents' walk-through lists them.

    :ivar action: ``"roots"`` (the possible roots of a round, in ``nodes``), ``"root"``, ``"merge"``,
        ``"fail"`` (a node rejected because it cannot join), ``"rollback"``, or ``"select"`` (the candidate
        that becomes a subgraph, in ``nodes``).
    :ivar device: the device of the round.
    :ivar node: the node the step is about (``None`` for ``"roots"`` and ``"select"``).
    :ivar nodes: the candidate after the step (the possible roots for ``"roots"``), in stable node order.
    :ivar rejected: the rejected list after the step, in stable node order.
    :ivar ok: whether the global condition holds after the step.
    """

    action: str
    device: str
    node: Hashable | None
    nodes: tuple[Hashable, ...]
    rejected: tuple[Hashable, ...]
    ok: bool


def split_documented(
    successors: Mapping[NodeT, Iterable[NodeT]],
    affinity: Mapping[NodeT, str],
    *,
    trace: list[TraceStep] | None = None,
) -> list[Subgraph]:
    """Partitions a DAG by affinity with the documented algorithm (see the module documentation).

    Costs O(V * E / 64) for the transitive closure, then a few big-integer operations per step; fine up
    to a few thousand nodes.

    :param successors: node -> its successors; a DAG.
    :param affinity: node -> device name, for every node.
    :param trace: when given, every step is appended to it as a :class:`TraceStep`.
    :returns: the subgraphs in an executable order when there is one; when the result is cyclic (the
        algorithm's known flaw), those it can order first, then the rest in the order they were made.
    :raises ModelValidationError: for a cycle or an edge to an unknown node.
    :raises AffinityError: for a node without affinity.
    """
    g = index_graph(successors, affinity)
    made = _Documented(g, trace).run()
    return [Subgraph(g.devices[d], frozenset(g.nodes[i] for i in part)) for d, part in _in_order(g, made)]


class _Documented:
    """The algorithm's state over one graph."""

    def __init__(self, g: IndexedGraph, trace: list[TraceStep] | None) -> None:
        order = topological_order(g)
        n = len(g.nodes)
        succ = [sorted(set(row)) for row in g.succ]
        pred: list[list[int]] = [[] for _ in range(n)]
        for u in range(n):
            for v in succ[u]:
                pred[v].append(u)
        self.g = g
        self.trace = trace
        self.neighbours = [s + p for s, p in zip(succ, pred, strict=True)]
        bit = [1 << i for i in range(n)]
        self.desc = [0] * n
        for u in reversed(order):
            reach = 0
            for v in succ[u]:
                reach |= self.desc[v] | bit[v]
            self.desc[u] = reach
        self.anc = [0] * n
        for v in order:
            reach = 0
            for u in pred[v]:
                reach |= self.anc[u] | bit[u]
            self.anc[v] = reach
        self.bit = bit
        self.assigned = [False] * n

    def run(self) -> list[tuple[int, list[int]]]:
        made: list[tuple[int, list[int]]] = []
        for d in range(len(self.g.devices)):
            own = [i for i, dev in enumerate(self.g.device) if dev == d]
            while True:
                left = [i for i in own if not self.assigned[i]]
                if not left:
                    break
                best = self._round(d, left)
                for i in best:
                    self.assigned[i] = True
                made.append((d, best))
        return made

    def _round(self, d: int, left: list[int]) -> list[int]:
        covered: set[int] = set()
        candidates: list[list[int]] = []
        for root in left:
            if root in covered:
                continue
            if self.trace is not None:
                self._record("roots", d, None, [i for i in left if i not in covered], 0, True)
            candidate = self._grow(d, root)
            covered.update(candidate)
            candidates.append(candidate)
        best = max(candidates, key=len)
        if self.trace is not None:
            self._record("roots", d, None, [], 0, True)
            self._record("select", d, None, best, 0, True)
        return best

    def _grow(self, d: int, root: int) -> list[int]:
        dev, assigned, neighbours, desc, anc, bit = (
            self.g.device,
            self.assigned,
            self.neighbours,
            self.desc,
            self.anc,
            self.bit,
        )
        members = [root]
        inside = {root}
        visited = {root}  # merged or rejected: never selected again in this attempt
        reach_down = [desc[root]]
        reach_up = [anc[root]]
        rejected = 0
        self._step("root", d, root, members, rejected, True)
        frames = [[root, 0]]
        while frames:
            frame = frames[-1]
            u, k = frame
            if u not in inside:
                frames.pop()
                continue
            nbrs = neighbours[u]
            while k < len(nbrs) and nbrs[k] in visited:
                k += 1
            if k == len(nbrs):
                frames.pop()
                continue
            v = nbrs[k]
            frame[1] = k + 1
            visited.add(v)
            if dev[v] == d and not assigned[v]:
                members.append(v)
                inside.add(v)
                reach_down.append(reach_down[-1] | desc[v])
                reach_up.append(reach_up[-1] | anc[v])
                frames.append([v, 0])
                action = "merge"
            else:
                rejected |= bit[v]
                action = "fail"
            ok = not (reach_down[-1] & reach_up[-1] & rejected)
            self._step(action, d, v, members, rejected, ok)
            while not ok:
                last = members.pop()
                inside.discard(last)
                reach_down.pop()
                reach_up.pop()
                rejected |= bit[last]
                ok = not (reach_down[-1] & reach_up[-1] & rejected)
                self._step("rollback", d, last, members, rejected, ok)
        return members

    def _step(self, action: str, d: int, node: int, members: list[int], rejected: int, ok: bool) -> None:
        if self.trace is not None:
            self._record(action, d, node, members, rejected, ok)

    def _record(self, action: str, d: int, node: int | None, members: list[int], rejected: int, ok: bool) -> None:
        assert self.trace is not None
        nodes = self.g.nodes
        out = [i for i in range(rejected.bit_length()) if rejected >> i & 1]
        self.trace.append(
            TraceStep(
                action,
                self.g.devices[d],
                None if node is None else nodes[node],
                tuple(nodes[i] for i in sorted(members)),
                tuple(nodes[i] for i in out),
                ok,
            )
        )


def _in_order(g: IndexedGraph, made: list[tuple[int, list[int]]]) -> list[tuple[int, list[int]]]:
    """The subgraphs in an executable order, ties by the order they were made; a cyclic rest follows."""
    owner = [0] * len(g.nodes)
    for k, (_, part) in enumerate(made):
        for i in part:
            owner[i] = k
    needs: list[set[int]] = [set() for _ in made]
    for u, row in enumerate(g.succ):
        for v in row:
            if owner[u] != owner[v]:
                needs[owner[v]].add(owner[u])
    users: list[list[int]] = [[] for _ in made]
    waiting = [len(s) for s in needs]
    for k, s in enumerate(needs):
        for p in s:
            users[p].append(k)
    ready = [k for k, w in enumerate(waiting) if w == 0]
    heapq.heapify(ready)
    order: list[int] = []
    while ready:
        k = heapq.heappop(ready)
        order.append(k)
        for j in users[k]:
            waiting[j] -= 1
            if waiting[j] == 0:
                heapq.heappush(ready, j)
    placed = set(order)
    order.extend(k for k in range(len(made)) if k not in placed)
    return [made[k] for k in order]
