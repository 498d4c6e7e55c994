"""PIPELINE_PARALLEL's planner on random DAGs: every stage fits its cap, stages are contiguous in the
order, and the transfer is the least over every contiguous split (brute force on small graphs)."""

from __future__ import annotations

import itertools
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hetero_sdk.errors import CompilationError
from hetero_sdk.hetero.pipeline import LinearGraph, Tensor, plan_pipeline


def random_graph(rnd: random.Random, n: int) -> LinearGraph:
    """n ops in topological order 0..n-1, random edges forward, random weights (shared names keep one size)."""
    tensors = [Tensor(-1, tuple(sorted({0, *(j for j in range(n) if rnd.random() < 0.3)})), rnd.randint(0, 64))]
    for i in range(n):
        readers = tuple(j for j in range(i + 1, n) if rnd.random() < 0.4)
        tensors.append(Tensor(i, readers, rnd.randint(0, 64), output=not readers or rnd.random() < 0.1))
    sizes = [rnd.randint(0, 128) for _ in range(n + 1)]
    weights = []
    for _ in range(n):
        k = rnd.randint(0, n)
        weights.append({f"w{k}": sizes[k]} if rnd.random() < 0.7 else {})
    return LinearGraph(tuple(f"op{i}" for i in range(n)), tuple(weights), tuple(tensors))


def memory(graph: LinearGraph, start: int, end: int) -> int:
    """Weights plus peak live bytes, by stepping through the stage with a set of live tensors."""
    constants: dict[str, int] = {}
    for q in range(start, end):
        constants.update(graph.weights[q])
    peak = 0
    for step in range(start, end):
        live = 0
        for t in graph.tensors:
            used_here = [c for c in t.consumers if start <= c < end]
            if start <= t.producer < end:
                leaves = t.output or any(c >= end for c in t.consumers)
                last = end - 1 if leaves else max(used_here, default=t.producer)
                if t.producer <= step <= last:
                    live += t.nbytes
            elif t.producer < start and used_here and step <= max(used_here):
                live += t.nbytes
        peak = max(peak, live)
    return sum(constants.values()) + peak


def received(graph: LinearGraph, start: int, end: int) -> int:
    return sum(
        t.nbytes for t in graph.tensors if 0 <= t.producer < start and any(start <= c < end for c in t.consumers)
    )


def brute_force(graph: LinearGraph, caps: list[int]) -> tuple[int, int] | None:
    n, best = len(graph.ops), None
    for cuts in itertools.combinations_with_replacement(range(n + 1), len(caps) - 1):
        edges = [0, *cuts, n]
        bounds = list(itertools.pairwise(edges))
        if all(memory(graph, s, e) <= cap for (s, e), cap in zip(bounds, caps)):
            key = (sum(received(graph, s, e) for s, e in bounds), sum(1 for s, e in bounds if e > s))
            best = key if best is None or key < best else best
    return best


@settings(max_examples=300, deadline=None)
@given(st.randoms(use_true_random=False), st.integers(1, 7), st.integers(1, 3))
def test_plan_fits_every_cap_and_is_the_least_transfer_of_all_contiguous_splits(
    rnd: random.Random, n: int, devices: int
) -> None:
    graph = random_graph(rnd, n)
    caps = [rnd.randint(16, 320) for _ in range(devices)]
    expected = brute_force(graph, caps)
    names = [f"D{k}" for k in range(devices)]
    if expected is None:
        with pytest.raises(CompilationError, match=r"needs .* bytes on one device"):
            plan_pipeline(graph, caps, names)
        return
    plan = plan_pipeline(graph, caps, names)
    edges = [b for bound in plan.bounds for b in bound]
    assert edges[0] == 0 and edges[-1] == n and edges == sorted(edges)  # contiguous, in order
    for (start, end), cap, (weights, peak) in zip(plan.bounds, caps, plan.memory):
        assert memory(graph, start, end) <= cap
        assert (weights + peak == memory(graph, start, end)) if end > start else (weights, peak) == (0, 0)
    assert (plan.transfer_bytes, plan.stages) == expected


@settings(max_examples=150, deadline=None)
@given(st.randoms(use_true_random=False), st.integers(2, 7), st.integers(2, 4))
def test_devices_without_memory_get_the_smallest_equal_share_that_fits(
    rnd: random.Random, n: int, devices: int
) -> None:
    graph = random_graph(rnd, n)
    plan = plan_pipeline(graph, [None] * devices, [f"D{k}" for k in range(devices)])
    share = plan.caps[0]
    assert set(plan.caps) == {share}
    assert all(memory(graph, s, e) <= share for s, e in plan.bounds)
    # no smaller equal share fits any contiguous split
    assert share == 0 or brute_force(graph, [share - 1] * devices) is None


@settings(max_examples=100, deadline=None)
@given(st.randoms(use_true_random=False), st.integers(1, 7))
def test_a_model_that_fits_the_first_device_is_not_split(rnd: random.Random, n: int) -> None:
    graph = random_graph(rnd, n)
    whole = memory(graph, 0, n)
    plan = plan_pipeline(graph, [whole, 1, 1], ["A", "B", "C"])
    assert plan.bounds == ((0, n), (n, n), (n, n)) and plan.stages == 1 and plan.transfer_bytes == 0


def test_unsupported_ops_are_kept_off_a_device() -> None:
    rnd = random.Random(3)
    graph = random_graph(rnd, 6)
    big = 10**9
    plan = plan_pipeline(graph, [big, big], ["A", "B"], [frozenset({0, 1, 2, 4, 5}), frozenset(range(6))])
    assert plan.bounds[0][1] <= 3  # op 3 runs on B, so A's stage ends before it


def test_failure_names_the_bytes_needed_and_available() -> None:
    graph = LinearGraph(
        ("a", "b"), ({"w": 100}, {"v": 100}), (Tensor(-1, (0,), 8), Tensor(0, (1,), 8), Tensor(1, (), 8, True))
    )
    with pytest.raises(CompilationError) as error:
        plan_pipeline(graph, [50, 60], ["X.0", "X.1"])
    message = str(error.value)
    assert "needs 216 bytes on one device (200 of weights, 16 of peak activations)" in message
    assert "X.0 50 bytes, X.1 60 bytes (110 in all)" in message
    assert "'a', needs 116 bytes alone" in message
