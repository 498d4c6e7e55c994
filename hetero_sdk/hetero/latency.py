"""``HETERO_PLACEMENT_POLICY=LATENCY``: placing ops to minimise the estimated latency of one inference.

A pure function of the ops, the tensors between them and a :class:`CostModel`. The estimate of a plan
(a device per op) is the sum of each op's cost on its device plus, for each tensor and each *other*
device that reads it, the cost of sending it there: ``hop[device] + bytes / bandwidth`` (the hop is the
device's fixed cost of one more dispatch and transfer). Ops run one after the other in a sync inference,
so the sum is the latency. Costs are kept in whole nanoseconds, so estimates compare exactly.

- **Two devices**: exact, by a minimum s-t cut. Each op is a vertex; the source side is the first
  device, the sink side the second; the edge op -> sink costs the op on the first device, source -> op
  on the second (infinite where the device does not support the op, which forces it). A tensor read
  on the other side costs its transfer once, however many ops read it there: an auxiliary vertex per
  tensor and direction (producer -> aux with the transfer cost, aux -> each reader unbounded, and the
  mirror for the other direction). Any cut is a plan with the cut's value as its estimate, so the
  minimum cut is the best plan (Dinic's max-flow, O(V^2 E) at worst, fast on model graphs).
- **Three or more devices** (NP-hard in general): start from the best of the plans given (each
  single device that supports the whole model, and PRIORITY's plan), then improve it by pairwise
  swaps: for every pair of devices, the ops on either are re-placed between them by the exact
  two-device cut with every other op held where it is (their tensors become terminal costs). A swap
  is kept only when it lowers the estimate, and the rounds stop when none does (or after a fixed
  number of rounds). The bound: the result is never worse than any starting plan, so never worse
  than the best single device nor than PRIORITY, and it is optimal against every single pair swap.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

__all__ = ["CostModel", "DataTensor", "estimate_ns", "place_for_latency"]

_ROUNDS = 8


@dataclass(frozen=True)
class DataTensor:
    """A tensor between ops: its producer, the ops that read it, and its bytes."""

    producer: str
    consumers: tuple[str, ...]
    nbytes: int


@dataclass(frozen=True)
class CostModel:
    """What the estimate is made of, in nanoseconds.

    :ivar op_ns: op -> device -> nanoseconds; a device missing for an op cannot run it.
    :ivar hop_ns: device -> fixed nanoseconds of receiving one tensor from another device.
    :ivar bytes_per_ns: the bandwidth of moving tensors between devices.
    """

    op_ns: dict[str, dict[str, int]]
    hop_ns: dict[str, int] = field(default_factory=dict)
    bytes_per_ns: float = 1.0

    def transfer_ns(self, nbytes: int, device: str) -> int:
        """Nanoseconds to send ``nbytes`` to ``device``."""
        return self.hop_ns.get(device, 0) + round(nbytes / self.bytes_per_ns)


def estimate_ns(plan: Mapping[str, str], tensors: Sequence[DataTensor], costs: CostModel) -> int | None:
    """The estimated latency of ``plan`` (op -> device) in nanoseconds; None when a device cannot
    run an op it is given."""
    total = 0
    for op, device in plan.items():
        cost = costs.op_ns.get(op, {}).get(device)
        if cost is None:
            return None
        total += cost
    for tensor in tensors:
        source = plan[tensor.producer]
        for device in sorted({plan[c] for c in tensor.consumers} - {source}):
            total += costs.transfer_ns(tensor.nbytes, device)
    return total


def place_for_latency(
    ops: Sequence[str],
    tensors: Sequence[DataTensor],
    costs: CostModel,
    devices: Sequence[str],
    starts: Sequence[Mapping[str, str]],
) -> dict[str, str]:
    """The plan (op -> device) of least estimated latency found (exact for two devices).

    :param ops: every op, in a stable order (ties are broken by it).
    :param tensors: the tensors between ops (model inputs and outputs are left out: they move the same
        whatever the plan).
    :param devices: the devices, in priority order.
    :param starts: feasible plans to start from and never do worse than (at least one).
    :raises ValueError: when no starting plan is feasible.
    """
    scored = [(estimate_ns(p, tensors, costs), i) for i, p in enumerate(starts)]
    feasible = [(cost, i) for cost, i in scored if cost is not None]
    if not feasible:
        raise ValueError("no starting plan is feasible under the cost model")
    best_cost, index = min(feasible)
    plan = dict(starts[index])
    pairs = [(a, b) for i, a in enumerate(devices) for b in devices[i + 1 :]]
    for _ in range(_ROUNDS if len(devices) > 2 else 1):
        improved = False
        for a, b in pairs:
            candidate = _swap(ops, tensors, costs, plan, a, b)
            cost = estimate_ns(candidate, tensors, costs)
            if cost is not None and cost < best_cost:
                plan, best_cost, improved = candidate, cost, True
        if not improved:
            break
    return plan


def _swap(
    ops: Sequence[str], tensors: Sequence[DataTensor], costs: CostModel, plan: Mapping[str, str], a: str, b: str
) -> dict[str, str]:
    """``plan`` with the ops on ``a`` or ``b`` re-placed between them by a minimum cut."""
    free = [op for op in ops if plan[op] in (a, b)]
    if not free:
        return dict(plan)
    vertex = {op: i + 2 for i, op in enumerate(free)}
    flow = _FlowGraph(len(free) + 2)
    source, sink = 0, 1
    infinite = _infinite(costs)
    for op in free:
        on = costs.op_ns.get(op, {})
        flow.add(vertex[op], sink, on.get(a, infinite))
        flow.add(source, vertex[op], on.get(b, infinite))
    for tensor in tensors:
        readers = sorted({vertex[c] for c in tensor.consumers if c in vertex})
        if not readers:
            continue
        to_a, to_b = costs.transfer_ns(tensor.nbytes, a), costs.transfer_ns(tensor.nbytes, b)
        if tensor.producer in vertex:
            producer = vertex[tensor.producer]
            aux = flow.vertex()
            flow.add(producer, aux, to_b)
            back = flow.vertex()
            flow.add(back, producer, to_a)
            for r in readers:
                if r != producer:
                    flow.add(aux, r, infinite)
                    flow.add(r, back, infinite)
        else:
            on_a, on_b = flow.vertex(), flow.vertex()
            flow.add(on_a, sink, to_a)
            flow.add(source, on_b, to_b)
            for r in readers:
                flow.add(r, on_a, infinite)
                flow.add(on_b, r, infinite)
    side = flow.source_side(source, sink)
    result = dict(plan)
    for op in free:
        result[op] = a if vertex[op] in side else b
    return result


def _infinite(costs: CostModel) -> int:
    finite = sum(c for per in costs.op_ns.values() for c in per.values())
    return 4 * (finite + sum(costs.hop_ns.values()) + 1) + 10**15


class _FlowGraph:
    """Dinic's maximum flow on integer capacities."""

    def __init__(self, vertices: int) -> None:
        self.adjacent: list[list[int]] = [[] for _ in range(vertices)]
        self.to: list[int] = []
        self.capacity: list[int] = []

    def vertex(self) -> int:
        self.adjacent.append([])
        return len(self.adjacent) - 1

    def add(self, u: int, v: int, capacity: int) -> None:
        self.adjacent[u].append(len(self.to))
        self.to.append(v)
        self.capacity.append(capacity)
        self.adjacent[v].append(len(self.to))
        self.to.append(u)
        self.capacity.append(0)

    def source_side(self, source: int, sink: int) -> set[int]:
        """Runs the max flow and returns the vertices reachable from ``source`` in the residual graph."""
        while True:
            level = self._levels(source)
            if level[sink] < 0:
                break
            cursor = [0] * len(self.adjacent)
            while self._push(source, sink, level, cursor):
                pass
        level = self._levels(source)
        return {v for v, depth in enumerate(level) if depth >= 0}

    def _levels(self, source: int) -> list[int]:
        level = [-1] * len(self.adjacent)
        level[source] = 0
        queue = deque([source])
        while queue:
            u = queue.popleft()
            for e in self.adjacent[u]:
                if self.capacity[e] > 0 and level[self.to[e]] < 0:
                    level[self.to[e]] = level[u] + 1
                    queue.append(self.to[e])
        return level

    def _push(self, source: int, sink: int, level: list[int], cursor: list[int]) -> int:
        """One augmenting path of the level graph (iterative DFS); its flow, 0 when there is none."""
        path: list[int] = []
        u = source
        while True:
            if u == sink:
                pushed = min(self.capacity[e] for e in path)
                for e in path:
                    self.capacity[e] -= pushed
                    self.capacity[e ^ 1] += pushed
                return pushed
            edges = self.adjacent[u]
            while cursor[u] < len(edges):
                e = edges[cursor[u]]
                if self.capacity[e] > 0 and level[self.to[e]] == level[u] + 1:
                    break
                cursor[u] += 1
            if cursor[u] == len(edges):
                if not path:
                    return 0
                level[u] = -1
                e = path.pop()
                u = self.to[e ^ 1]
                cursor[u] += 1
                continue
            e = edges[cursor[u]]
            path.append(e)
            u = self.to[e]
