"""``PIPELINE_PARALLEL``: cutting one topological order of a model into contiguous stages that fit the
memory of their devices, with as few bytes crossing the cuts as the fit allows.

The algorithm is a pure function of a :class:`LinearGraph` (ops in one topological order, the tensors
between them, each op's weights) and one memory cap per device, in the devices' order:

- **Memory of a stage** ``[i, j)`` (ops ``i`` to ``j - 1`` on one device): the bytes of the distinct
  Constants its ops read (a Constant used by two stages counts in both: HETERO copies it) plus its
  *peak live activations*: running the stage's ops in order, a tensor made in the stage is live from
  its op until its last use (to the stage's end when it leaves the stage or is a model output), and a
  tensor from outside (a model input or an earlier stage's output) from the stage's start until its last
  use in the stage; the peak is the largest sum of live bytes over the stage's steps, an op's inputs and
  outputs being live at once. Both parts only grow as a stage grows at either end.
- **Cut bytes of a stage**: the bytes of the distinct tensors it receives from earlier stages (model
  inputs come from the host either way and are not counted); a plan's transfer is the sum over stages.
- **Plan**: a dynamic programme over cut positions. For each start ``i`` one sweep extends the stage to
  every end ``j`` while it still fits the largest cap, keeping memory and cut bytes incrementally;
  ``best[k][j]`` is the least (transfer bytes, stages) covering ops ``[0, j)`` with devices ``0..k``
  (a device may get no ops). This is exact over the contiguous splits of the order, in
  O(n * L * D) steps for n ops, D devices and stages of at most L ops (plus the range updates of
  tensors entering a stage).
- **Devices without a cap** (no reported memory, no budget) get an *equal share*: the smallest cap,
  the same for all of them, under which a plan exists (a binary search over a greedy feasibility check,
  which is exact because stage memory is monotone), then the plan is made with it.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from hetero_sdk.errors import CompilationError

__all__ = ["LinearGraph", "PipelinePlan", "Tensor", "plan_pipeline", "stage_cut_bytes", "stage_memory"]


@dataclass(frozen=True)
class Tensor:
    """A tensor of a :class:`LinearGraph`.

    :ivar producer: the position of its op in the order, ``-1`` for a model input.
    :ivar consumers: the positions of the ops that read it.
    :ivar nbytes: its size (as planned: each dynamic dimension counted as 1).
    :ivar output: True when it is a model output.
    """

    producer: int
    consumers: tuple[int, ...]
    nbytes: int
    output: bool = False


@dataclass(frozen=True)
class LinearGraph:
    """Ops in one topological order with their weights, and the tensors between them.

    :ivar ops: op names, in the order.
    :ivar weights: per op, the Constants it reads as ``{name: bytes}``.
    :ivar tensors: every tensor made by an op or given as a model input.
    """

    ops: tuple[str, ...]
    weights: tuple[dict[str, int], ...]
    tensors: tuple[Tensor, ...]


@dataclass(frozen=True)
class PipelinePlan:
    """Where the order is cut.

    :ivar bounds: ``(start, end)`` per device, in the devices' order; ``start == end`` for a device
        that gets no ops.
    :ivar caps: the cap each device was planned with (equal shares filled in).
    :ivar memory: per device, ``(weight bytes, peak activation bytes)`` of its stage.
    :ivar transfer_bytes: bytes received by stages from earlier stages per inference.
    """

    bounds: tuple[tuple[int, int], ...]
    caps: tuple[int, ...]
    memory: tuple[tuple[int, int], ...]
    transfer_bytes: int

    @property
    def stages(self) -> int:
        """The number of devices that got ops."""
        return sum(1 for start, end in self.bounds if end > start)


def stage_memory(graph: LinearGraph, start: int, end: int) -> tuple[int, int]:
    """``(weight bytes, peak live activation bytes)`` of the stage running ops ``[start, end)``."""
    weights: dict[str, int] = {}
    for q in range(start, end):
        weights.update(graph.weights[q])
    live = [0] * max(end - start, 0)
    for tensor in graph.tensors:
        inside = [c for c in tensor.consumers if start <= c < end]
        if start <= tensor.producer < end:
            last = _last_use(tensor, len(graph.ops))
            first, until = tensor.producer, min(last, end - 1)
        elif tensor.producer < start and inside:
            first, until = start, max(inside)
        else:
            continue
        for t in range(first, until + 1):
            live[t - start] += tensor.nbytes
    return sum(weights.values()), max(live, default=0)


def stage_cut_bytes(graph: LinearGraph, start: int, end: int) -> int:
    """Bytes of the distinct tensors the stage ``[start, end)`` receives from earlier stages."""
    return sum(
        t.nbytes for t in graph.tensors if 0 <= t.producer < start and any(start <= c < end for c in t.consumers)
    )


def plan_pipeline(
    graph: LinearGraph,
    caps: Sequence[int | None],
    devices: Sequence[str],
    supported: Sequence[frozenset[int]] | None = None,
) -> PipelinePlan:
    """Cuts ``graph``'s order into one contiguous stage per device (some possibly empty) so that every
    stage fits its device's cap, with the least transfer bytes, then the fewest stages; ties go to the
    earliest cuts.

    :param caps: per device, its memory in bytes, or None for an equal share.
    :param devices: the device names, for messages.
    :param supported: per device, the positions of the ops it can run (all when None).
    :raises CompilationError: when no split fits, naming the bytes needed and available.
    """
    n = len(graph.ops)
    sweeper = _Sweeper(graph)
    allowed = [frozenset(range(n)) if supported is None else supported[k] for k in range(len(caps))]
    unknown = [k for k, cap in enumerate(caps) if cap is None]
    whole = sum(sweeper.total_memory())
    filled: list[int] = [cap if cap is not None else whole for cap in caps]
    if unknown:
        if _reach(sweeper, filled, allowed) != n:
            raise _failure(graph, sweeper, caps, devices, filled, allowed)
        low, high = 0, whole
        while low < high:
            middle = (low + high) // 2
            trial = [middle if k in unknown else cap for k, cap in enumerate(filled)]
            if _reach(sweeper, trial, allowed) == n:
                high = middle
            else:
                low = middle + 1
        filled = [high if k in unknown else cap for k, cap in enumerate(filled)]
    bounds, transfer = _best_split(sweeper, filled, allowed)
    if bounds is None:
        raise _failure(graph, sweeper, caps, devices, filled, allowed)
    memory = tuple(stage_memory(graph, s, e) if e > s else (0, 0) for s, e in bounds)
    return PipelinePlan(tuple(bounds), tuple(filled), memory, transfer)


def _last_use(tensor: Tensor, n: int) -> int:
    if tensor.output:
        return n - 1
    return max(tensor.consumers, default=tensor.producer)


class _Sweeper:
    """Grows stages from a start, yielding each end's memory and cut bytes incrementally."""

    def __init__(self, graph: LinearGraph) -> None:
        n = len(graph.ops)
        self.graph = graph
        self.n = n
        self.made: list[int] = [0] * n
        self.ends: list[list[Tensor]] = [[] for _ in range(n)]
        self.read: list[list[tuple[int, Tensor]]] = [[] for _ in range(n)]
        for index, tensor in enumerate(graph.tensors):
            if tensor.producer >= 0:
                self.made[tensor.producer] += tensor.nbytes
                self.ends[_last_use(tensor, n)].append(tensor)
            for c in sorted(set(tensor.consumers)):
                self.read[c].append((index, tensor))

    def total_memory(self) -> tuple[int, int]:
        return stage_memory(self.graph, 0, self.n)

    def sweep(self, start: int, limit: int) -> Iterator[tuple[int, int, int]]:
        """``(end, memory, cut bytes)`` for ``end = start + 1 ...`` while memory stays within ``limit``."""
        seen: set[str] = set()
        weights = 0
        live: list[int] = []
        alive = 0
        peak = 0
        cut = 0
        entered: dict[int, int] = {}
        for q in range(start, self.n):
            for name, size in self.graph.weights[q].items():
                if name not in seen:
                    seen.add(name)
                    weights += size
            if q > start:
                alive -= sum(t.nbytes for t in self.ends[q - 1] if t.producer >= start)
            alive += self.made[q]
            live.append(alive)
            peak = max(peak, alive)
            for index, tensor in self.read[q]:
                if tensor.producer >= start or tensor.nbytes == 0:
                    continue
                first = entered.get(index, start - 1) + 1
                if index not in entered and tensor.producer >= 0:
                    cut += tensor.nbytes
                entered[index] = q
                for t in range(first - start, q - start + 1):
                    live[t] += tensor.nbytes
                    peak = max(peak, live[t])
            if weights + peak > limit:
                return
            yield q + 1, weights + peak, cut


def _reach(sweeper: _Sweeper, caps: Sequence[int], allowed: Sequence[frozenset[int]]) -> int:
    """How far the greedy split (each device takes the longest stage that fits) gets."""
    position = 0
    for k, cap in enumerate(caps):
        for end, _, _ in sweeper.sweep(position, cap):
            if end - 1 not in allowed[k]:
                break
            position = end
        if position == sweeper.n:
            break
    return position


def _best_split(
    sweeper: _Sweeper, caps: Sequence[int], allowed: Sequence[frozenset[int]]
) -> tuple[list[tuple[int, int]] | None, int]:
    n, devices = sweeper.n, len(caps)
    infinite = (float("inf"), 0)
    # best[k][i]: the least (bytes, stages) covering ops [0, i) with devices 0..k, device k's stage
    # ending at i (or device k empty); parent[k][i]: where device k's stage starts
    best: list[list[tuple[float, int]]] = [[infinite] * (n + 1) for _ in range(devices)]
    parent: list[list[int]] = [[-1] * (n + 1) for _ in range(devices)]
    for k in range(devices):
        best[k][0], parent[k][0] = (0.0, 0), 0
    for i in range(n):
        for k in range(1, devices):
            if best[k - 1][i] <= best[k][i]:
                best[k][i], parent[k][i] = best[k - 1][i], i
        sources = [(0.0, 0) if k == 0 else best[k - 1][i] for k in range(devices)]
        if i:
            sources[0] = infinite
        able = {k for k in range(devices) if sources[k] != infinite}
        if not able:
            continue
        for end, memory, cut in sweeper.sweep(i, max(caps[k] for k in able)):
            able = {k for k in able if end - 1 in allowed[k]}
            if not able:
                break
            for k in able:
                candidate = (sources[k][0] + cut, sources[k][1] + 1)
                if memory <= caps[k] and candidate < best[k][end]:
                    best[k][end], parent[k][end] = candidate, i
    for k in range(1, devices):
        if best[k - 1][n] <= best[k][n]:
            best[k][n], parent[k][n] = best[k - 1][n], n
    if best[devices - 1][n] == infinite:
        return None, 0
    bounds: list[tuple[int, int]] = []
    end = n
    for k in range(devices - 1, -1, -1):
        start = parent[k][end]
        bounds.append((start, end))
        end = start
    bounds.reverse()
    return bounds, int(best[devices - 1][n][0])


def _failure(
    graph: LinearGraph,
    sweeper: _Sweeper,
    caps: Sequence[int | None],
    devices: Sequence[str],
    filled: Sequence[int],
    allowed: Sequence[frozenset[int]],
) -> CompilationError:
    weights, peak = sweeper.total_memory()
    available = ", ".join(
        f"{d} {cap} bytes" if cap is not None else f"{d} (no memory reported)" for d, cap in zip(devices, caps)
    )
    reached = _reach(sweeper, filled, allowed)
    largest = max(range(len(graph.ops)), key=lambda q: sum(stage_memory(graph, q, q + 1)))
    alone = sum(stage_memory(graph, largest, largest + 1))
    return CompilationError(
        f"PIPELINE_PARALLEL: the model does not fit on {', '.join(devices)}: it needs {weights + peak} bytes on "
        f"one device ({weights} of weights, {peak} of peak activations); available: {available} "
        f"({sum(filled)} in all). Contiguous stages fit only up to op {reached} of {len(graph.ops)}"
        f"{f' ({graph.ops[reached]!r})' if reached < len(graph.ops) else ''}; the largest op, "
        f"{graph.ops[largest]!r}, needs {alone} bytes alone. Add devices, raise their DEVICE_TOTAL_MEM_SIZE "
        "budgets in DEVICE_PROPERTIES, or use a smaller model or batch"
    )
