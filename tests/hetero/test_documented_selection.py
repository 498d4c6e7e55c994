"""The documented algorithm reproduces the design documents' example, walk-through and flaw."""

from __future__ import annotations

import random
from itertools import pairwise

import pytest
from hypothesis import given, settings

from hetero_sdk.errors import PartitionError
from hetero_sdk.hetero import Subgraph, check_partition, split_by_affinity
from hetero_sdk.hetero.documented_selection import TraceStep, split_documented

from .oracles import all_nodes, order_problem, quotient_cycle, weakly_connected
from .strategies import Case, layered_dags, random_dags

SEED_SUCCESSORS = {1: [2], 2: [3, 4], 3: [5], 4: [5], 5: [6], 6: [7], 7: []}
SEED_AFFINITY = {1: "A", 2: "A", 3: "A", 4: "B", 5: "A", 6: "A", 7: "A"}

# The walk-through of the design documents, step by step: (action, node, subgraph, rejected, condition ok).
FIRST_ROOT = [
    ("root", 1, [1], [], True),
    ("merge", 2, [1, 2], [], True),
    ("merge", 3, [1, 2, 3], [], True),
    ("merge", 5, [1, 2, 3, 5], [], True),
    ("merge", 6, [1, 2, 3, 5, 6], [], True),
    ("merge", 7, [1, 2, 3, 5, 6, 7], [], True),
    ("fail", 4, [1, 2, 3, 5, 6, 7], [4], False),
    ("rollback", 7, [1, 2, 3, 5, 6], [4, 7], False),
    ("rollback", 6, [1, 2, 3, 5], [4, 6, 7], False),
    ("rollback", 5, [1, 2, 3], [4, 5, 6, 7], True),
]
SECOND_ROOT = [
    ("root", 5, [5], [], True),
    ("merge", 6, [5, 6], [], True),
    ("merge", 7, [5, 6, 7], [], True),
    ("merge", 3, [3, 5, 6, 7], [], True),
    ("merge", 2, [2, 3, 5, 6, 7], [], True),
    ("fail", 4, [2, 3, 5, 6, 7], [4], False),
    ("rollback", 2, [3, 5, 6, 7], [2, 4], True),
]


def _growth(steps: list[TraceStep]) -> list[tuple[object, ...]]:
    return [(s.action, s.node, list(s.nodes), list(s.rejected), s.ok) for s in steps]


def test_documented_algorithm_reproduces_seed_example() -> None:
    parts = split_by_affinity(SEED_SUCCESSORS, SEED_AFFINITY, "documented")
    assert sorted((p.device, sorted(p.nodes)) for p in parts) == [("A", [1, 2]), ("A", [3, 5, 6, 7]), ("B", [4])]
    assert [sorted(p.nodes) for p in parts] == [[1, 2], [4], [3, 5, 6, 7]]  # the only executable order
    check_partition(SEED_SUCCESSORS, SEED_AFFINITY, parts)


def test_documented_trace_matches_seed_walkthrough_step_by_step() -> None:
    trace: list[TraceStep] = []
    split_documented(SEED_SUCCESSORS, SEED_AFFINITY, trace=trace)
    assert trace[0] == TraceStep("roots", "A", None, (1, 2, 3, 5, 6, 7), (), True)
    assert _growth(trace[1:11]) == FIRST_ROOT
    assert trace[11] == TraceStep("roots", "A", None, (5, 6, 7), (), True)
    assert _growth(trace[12:19]) == SECOND_ROOT
    assert trace[19] == TraceStep("roots", "A", None, (), (), True)
    assert trace[20] == TraceStep("select", "A", None, (3, 5, 6, 7), (), True)
    # "Repeat previous steps with remaining nodes [1,2]": node 3, already in a subgraph, cannot merge.
    assert trace[21] == TraceStep("roots", "A", None, (1, 2), (), True)
    assert _growth(trace[22:26]) == [
        ("root", 1, [1], [], True),
        ("merge", 2, [1, 2], [], True),
        ("fail", 3, [1, 2], [3], True),
        ("fail", 4, [1, 2], [3, 4], True),
    ]
    assert trace[26:28] == [
        TraceStep("roots", "A", None, (), (), True),
        TraceStep("select", "A", None, (1, 2), (), True),
    ]
    assert [s.device for s in trace[28:]] == ["B"] * 6
    assert [(s.action, s.nodes) for s in trace[28:]] == [
        ("roots", (4,)),
        ("root", (4,)),
        ("fail", (4,)),
        ("fail", (4,)),
        ("roots", ()),
        ("select", (4,)),
    ]


def test_documented_returns_the_known_cyclic_partition_and_check_rejects_it() -> None:
    successors = {0: [2, 3], 1: [2, 3], 2: [], 3: []}
    affinity = {0: "A", 3: "A", 1: "B", 2: "B"}
    parts = split_by_affinity(successors, affinity, "documented")
    assert {(p.device, p.nodes) for p in parts} == {("A", frozenset({0, 3})), ("B", frozenset({1, 2}))}
    assert quotient_cycle(successors, parts)
    with pytest.raises(PartitionError, match=r"cycle") as info:
        check_partition(successors, affinity, parts)
    message = str(info.value)
    assert "(A)" in message and "(B)" in message
    assert "0 -> 2" in message and "1 -> 3" in message


def test_documented_result_does_not_depend_on_successor_list_order() -> None:
    rnd = random.Random(5)
    successors = {u: list(vs) for u, vs in SEED_SUCCESSORS.items()}
    expected = split_documented(successors, SEED_AFFINITY)
    for _ in range(5):
        for vs in successors.values():
            rnd.shuffle(vs)
        assert split_documented(successors, SEED_AFFINITY) == expected


def _check_documented(case: Case) -> None:
    successors, affinity = case
    parts = split_by_affinity(successors, affinity, "documented")
    nodes = all_nodes(successors, affinity)
    assert sum(len(p.nodes) for p in parts) == len(nodes)
    assert set().union(*(p.nodes for p in parts)) == nodes
    for part in parts:
        assert isinstance(part, Subgraph)
        assert {affinity[n] for n in part.nodes} == {part.device}
        assert weakly_connected(successors, part.nodes)  # grown from a root through adjacent nodes
    if quotient_cycle(successors, parts):
        with pytest.raises(PartitionError, match="cycle"):
            check_partition(successors, affinity, parts)
    else:
        assert not order_problem(successors, parts)
        check_partition(successors, affinity, parts)


@settings(max_examples=40, deadline=None)
@given(random_dags(max_nodes=80))
def test_documented_covers_each_node_once_and_check_rejects_exactly_its_cycles_random(case: Case) -> None:
    _check_documented(case)


@settings(max_examples=40, deadline=None)
@given(layered_dags(max_nodes=150))
def test_documented_covers_each_node_once_and_check_rejects_exactly_its_cycles_layered(case: Case) -> None:
    _check_documented(case)


@settings(max_examples=25, deadline=None)
@given(random_dags(max_nodes=60))
def test_documented_trace_replays_to_its_result(case: Case) -> None:
    trace: list[TraceStep] = []
    parts = split_documented(*case, trace=trace)
    selected = {(s.device, frozenset(s.nodes)) for s in trace if s.action == "select"}
    assert selected == {(p.device, p.nodes) for p in parts}
    for before, step in pairwise(trace):
        if step.action == "merge":
            assert set(step.nodes) == set(before.nodes) | {step.node}
        elif step.action == "rollback":
            assert set(step.nodes) == set(before.nodes) - {step.node} and step.node in step.rejected
            assert not before.ok
        elif step.action == "fail":
            assert step.node in step.rejected and step.nodes == before.nodes
