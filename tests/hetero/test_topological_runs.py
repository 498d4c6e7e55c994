"""The default partitioner: always valid, optimal for two devices, never worse than documented."""

from __future__ import annotations

import random
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hetero_sdk.errors import PartitionError
from hetero_sdk.hetero import check_partition, split_by_affinity, topological_runs
from hetero_sdk.hetero.topological_runs import split_default

from .oracles import all_nodes, min_subgraphs, order_problem, quotient_cycle
from .strategies import Case, any_dags, layered_dags, random_dags


def _assert_valid(case: Case, parts: list) -> None:
    successors, affinity = case
    nodes = all_nodes(successors, affinity)
    assert sum(len(p.nodes) for p in parts) == len(nodes)
    assert set().union(*(p.nodes for p in parts)) == nodes
    for part in parts:
        assert {affinity[n] for n in part.nodes} == {part.device}
    assert not quotient_cycle(successors, parts)
    assert not order_problem(successors, parts)
    check_partition(successors, affinity, parts)


def test_default_on_seed_example_gives_three_subgraphs_in_executable_order() -> None:
    successors = {1: [2], 2: [3, 4], 3: [5], 4: [5], 5: [6], 6: [7], 7: []}
    affinity = {n: "A" for n in successors} | {4: "B"}
    parts = split_by_affinity(successors, affinity)
    assert [(p.device, sorted(p.nodes)) for p in parts] == [("A", [1, 2, 3]), ("B", [4]), ("A", [5, 6, 7])]


def test_default_splits_mutually_dependent_pairs_into_three() -> None:
    successors = {"a1": ["a2", "b2"], "b1": ["b2", "a2"], "a2": [], "b2": []}
    affinity = {"a1": "A", "a2": "A", "b1": "B", "b2": "B"}
    parts = split_by_affinity(successors, affinity)
    assert len(parts) == 3 == min_subgraphs(successors, affinity)
    _assert_valid(Case(successors, affinity), parts)


def test_default_joins_independent_branches_of_one_device() -> None:
    successors = {"x": ["a", "b"], "a": ["y"], "b": ["y"], "y": []}
    affinity = {"x": "A", "a": "B", "b": "B", "y": "A"}
    parts = split_by_affinity(successors, affinity)
    assert [(p.device, p.nodes) for p in parts] == [
        ("A", frozenset({"x"})),
        ("B", frozenset({"a", "b"})),
        ("A", frozenset({"y"})),
    ]


def test_default_fixes_the_documented_cyclic_case() -> None:
    successors = {0: [2, 3], 1: [2, 3], 2: [], 3: []}
    affinity = {0: "A", 3: "A", 1: "B", 2: "B"}
    parts = split_by_affinity(successors, affinity)
    assert len(parts) == 3
    _assert_valid(Case(successors, affinity), parts)


@settings(max_examples=50, deadline=None)
@given(any_dags(max_nodes=150))
def test_default_is_always_a_valid_partition(case: Case) -> None:
    _assert_valid(case, split_by_affinity(*case))


@settings(max_examples=50, deadline=None)
@given(any_dags(max_nodes=10, max_devices=2))
def test_default_is_optimal_for_two_devices(case: Case) -> None:
    best = min_subgraphs(*case)
    assert len(split_by_affinity(*case)) == best
    assert len(split_default(*case, width=1)) == best  # both first devices are tried whatever the width


@settings(max_examples=40, deadline=None)
@given(any_dags(max_nodes=9, max_devices=4))
def test_unbounded_beam_is_exact_for_any_number_of_devices(case: Case) -> None:
    parts = split_default(*case, width=10**6)
    assert len(parts) == min_subgraphs(*case)
    assert len(split_default(*case)) >= len(parts)


@settings(max_examples=40, deadline=None)
@given(random_dags(max_nodes=100) | layered_dags(max_nodes=200))
def test_default_is_never_worse_than_a_valid_documented_partition(case: Case) -> None:
    documented = split_by_affinity(*case, algorithm="documented")
    try:
        check_partition(*case, documented)
    except PartitionError:
        return
    assert len(split_by_affinity(*case)) <= len(documented)


@settings(max_examples=30, deadline=None)
@given(any_dags(max_nodes=100), st.randoms(use_true_random=False))
def test_default_ignores_the_order_inside_successor_lists(case: Case, rnd: random.Random) -> None:
    expected = split_by_affinity(*case)
    shuffled = {u: rnd.sample(vs, len(vs)) for u, vs in case.successors.items()}
    assert split_by_affinity(shuffled, case.affinity) == expected
    assert split_by_affinity(*case) == expected


def test_default_width_must_be_positive() -> None:
    with pytest.raises(ValueError, match="width"):
        split_default({1: []}, {1: "A"}, width=0)


def test_default_narrows_its_beam_past_its_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    rnd = random.Random(7)
    successors: dict[int, list[int]] = {i: [] for i in range(400)}
    for v in range(1, 400):
        successors[rnd.randrange(max(0, v - 5), v)].append(v)
    affinity = {v: rnd.choice("ABC") for v in successors}
    wide = split_default(successors, affinity)
    greedy = split_default(successors, affinity, width=1)
    assert len(wide) < len(greedy)  # the full beam finds fewer runs on this graph
    monkeypatch.setattr(topological_runs, "CHILD_BUDGET", 1)
    narrowed = split_default(successors, affinity)
    _assert_valid(Case(successors, affinity), narrowed)
    assert len(wide) < len(narrowed)  # over budget from the first step, it narrows towards the greedy order
    assert split_default(successors, affinity, width=32) == wide  # an explicit width is kept whatever the budget


def _layered(n: int, devices: int, seed: int) -> tuple[dict[int, list[int]], dict[int, str]]:
    rnd = random.Random(seed)
    successors: dict[int, list[int]] = {i: [] for i in range(n)}
    for v in range(8, n):
        for u in rnd.sample(range(max(0, v - 16), v), 2):
            successors[u].append(v)
    names = "ABCD"[:devices]
    affinity = {v: names[(v // 500) % devices] if rnd.random() > 0.01 else rnd.choice(names) for v in range(n)}
    return successors, affinity


@pytest.mark.slow
@pytest.mark.parametrize("devices", [2, 3])
def test_default_partitions_100k_nodes_quickly(devices: int) -> None:
    successors, affinity = _layered(100_000, devices, seed=devices)
    start = time.perf_counter()
    parts = split_by_affinity(successors, affinity)
    elapsed = time.perf_counter() - start
    check_partition(successors, affinity, parts)
    assert elapsed < 5.0  # about 0.2-0.5 s on a quiet machine; generous for loaded CI
