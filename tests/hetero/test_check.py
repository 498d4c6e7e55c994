"""check_partition accepts exactly the partitions HETERO can run, and names what is wrong otherwise."""

from __future__ import annotations

import random
import re
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hetero_sdk.errors import AffinityError, ModelValidationError, PartitionError
from hetero_sdk.hetero import Subgraph, check_partition

from .oracles import all_nodes, order_problem, quotient_cycle
from .strategies import Case, any_dags

# a1 -> a2, b1 -> b2, a1 -> b2, b1 -> a2: each subgraph is fine alone, together they are a cycle.
CROSS = {"a1": ["a2", "b2"], "b1": ["b2", "a2"], "a2": [], "b2": []}
CROSS_AFFINITY = {"a1": "A", "a2": "A", "b1": "B", "b2": "B"}
CHAIN = {"x": ["y"], "y": ["z"], "z": []}
CHAIN_AFFINITY = {"x": "A", "y": "B", "z": "A"}


def S(device: str, *nodes: object) -> Subgraph:
    return Subgraph(device, frozenset(nodes))


def test_valid_partition_passes() -> None:
    check_partition(CHAIN, CHAIN_AFFINITY, [S("A", "x"), S("B", "y"), S("A", "z")])
    parts = [S("A", "a1"), S("B", "b1", "b2"), S("A", "a2")]
    check_partition(CROSS, CROSS_AFFINITY, parts)


def test_cycle_between_subgraphs_is_named_with_indices_devices_and_edges() -> None:
    with pytest.raises(PartitionError) as info:
        check_partition(CROSS, CROSS_AFFINITY, [S("A", "a1", "a2"), S("B", "b1", "b2")])
    message = str(info.value)
    assert re.search(r"subgraph (0 \(A\) -> 1 \(B\) -> 0 \(A\)|1 \(B\) -> 0 \(A\) -> 1 \(B\))", message)
    assert "'a1' -> 'b2'" in message and "'b1' -> 'a2'" in message


def test_three_subgraph_cycle_is_named_in_full() -> None:
    successors = {"x1": ["y"], "y": ["z"], "z": ["x2"], "x2": []}
    affinity = {"x1": "A", "x2": "A", "y": "B", "z": "C"}
    with pytest.raises(PartitionError) as info:
        check_partition(successors, affinity, [S("A", "x1", "x2"), S("B", "y"), S("C", "z")])
    found = [int(k) for k in re.findall(r"(\d) \([ABC]\)", str(info.value))]
    assert len(found) == 4 and found[0] == found[-1]
    cycle = found[:-1]
    assert cycle in ([0, 1, 2], [1, 2, 0], [2, 0, 1])


def test_order_that_is_not_executable_is_rejected() -> None:
    with pytest.raises(PartitionError, match=r"subgraph 0 \(B\) runs before subgraph 1 \(A\).*'x' -> 'y'"):
        check_partition(CHAIN, CHAIN_AFFINITY, [S("B", "y"), S("A", "x"), S("A", "z")])


def test_node_in_two_subgraphs_is_named() -> None:
    with pytest.raises(PartitionError, match=r"node 'y' is in two subgraphs: 1 \(B\) and 2 \(B\)"):
        check_partition(CHAIN, CHAIN_AFFINITY, [S("A", "x"), S("B", "y"), S("B", "y"), S("A", "z")])


def test_node_in_no_subgraph_is_named() -> None:
    with pytest.raises(PartitionError, match=r"1 node\(s\) are in no subgraph: 'z'"):
        check_partition(CHAIN, CHAIN_AFFINITY, [S("A", "x"), S("B", "y")])


def test_unknown_node_in_a_subgraph_is_named() -> None:
    with pytest.raises(PartitionError, match=r"subgraph 1 \(B\) holds 'w', which is not a node"):
        check_partition(CHAIN, CHAIN_AFFINITY, [S("A", "x"), S("B", "y", "w"), S("A", "z")])


def test_mixed_devices_are_named() -> None:
    with pytest.raises(PartitionError, match=r"subgraph 0 runs on 'A' but holds node 'y', whose affinity is 'B'"):
        check_partition(CHAIN, CHAIN_AFFINITY, [S("A", "x", "y", "z")])


def test_device_differing_from_affinity_is_named() -> None:
    with pytest.raises(PartitionError, match=r"subgraph 1 runs on 'C' but holds node 'y', whose affinity is 'B'"):
        check_partition(CHAIN, CHAIN_AFFINITY, [S("A", "x"), S("C", "y"), S("A", "z")])


def test_empty_subgraph_and_foreign_objects_are_rejected() -> None:
    with pytest.raises(PartitionError, match=r"subgraph 1 \(B\) is empty"):
        check_partition(CHAIN, CHAIN_AFFINITY, [S("A", "x"), S("B"), S("B", "y"), S("A", "z")])
    with pytest.raises(PartitionError, match=r"parts\[0\] is a tuple, not a Subgraph"):
        check_partition(CHAIN, CHAIN_AFFINITY, [("A", {"x"})])  # type: ignore[list-item]


def test_bad_graph_input_raises_input_errors() -> None:
    with pytest.raises(ModelValidationError, match="cycle"):
        check_partition({"x": ["y"], "y": ["x"]}, {"x": "A", "y": "A"}, [S("A", "x", "y")])
    with pytest.raises(AffinityError, match="'z'"):
        check_partition(CHAIN, {"x": "A", "y": "B"}, [S("A", "x"), S("B", "y"), S("A", "z")])


@st.composite
def cases_with_partitions(draw: st.DrawFn) -> tuple[Case, list[Subgraph]]:
    """A DAG and an arbitrary partition of it: each device's nodes dealt into 1-3 groups, groups shuffled."""
    case = draw(any_dags(max_nodes=40))
    rnd = draw(st.randoms(use_true_random=False))
    groups: dict[tuple[str, int], set[object]] = {}
    for node in sorted(all_nodes(*case), key=repr):
        device = case.affinity[node]
        groups.setdefault((device, rnd.randrange(rnd.choice((1, 2, 3)))), set()).add(node)
    parts = [Subgraph(device, frozenset(nodes)) for (device, _), nodes in groups.items()]
    rnd.shuffle(parts)
    return case, parts


@settings(max_examples=50, deadline=None)
@given(cases_with_partitions())
def test_check_rejects_exactly_cyclic_or_misordered_partitions(drawn: tuple[Case, list[Subgraph]]) -> None:
    case, parts = drawn
    if quotient_cycle(case.successors, parts):
        with pytest.raises(PartitionError, match="cycle"):
            check_partition(*case, parts)
    elif order_problem(case.successors, parts):
        with pytest.raises(PartitionError, match="not executable"):
            check_partition(*case, parts)
    else:
        check_partition(*case, parts)


def test_check_is_linear_enough_for_100k_nodes() -> None:
    rnd = random.Random(0)
    n = 100_000
    successors = {i: [j for j in (i + 1, i + rnd.randint(2, 9)) if j < n] for i in range(n)}
    affinity = {i: "A" if i < n // 2 else "B" for i in range(n)}
    parts = [Subgraph("A", frozenset(range(n // 2))), Subgraph("B", frozenset(range(n // 2, n)))]
    start = time.perf_counter()
    check_partition(successors, affinity, parts)
    assert time.perf_counter() - start < 5.0
    with pytest.raises(PartitionError, match="runs before"):
        check_partition(successors, affinity, parts[::-1])
