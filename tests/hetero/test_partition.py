"""split_by_affinity: the public contract, input validation and the stable node order."""

from __future__ import annotations

import dataclasses
import random
import re
from typing import Literal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hetero_sdk.hetero as hetero
from hetero_sdk.errors import AffinityError, ModelValidationError
from hetero_sdk.hetero import PARTITIONERS, Subgraph, check_partition, split_by_affinity

from .strategies import Case, any_dags

Algorithm = Literal["default", "documented"]
ALGORITHMS: list[Algorithm] = PARTITIONERS.names()  # type: ignore[assignment]


def test_package_exports_the_partitioner() -> None:
    assert {"split_by_affinity", "check_partition", "Subgraph"} <= set(hetero.__all__)
    assert hetero.split_by_affinity is split_by_affinity and hetero.Subgraph is Subgraph


def test_subgraph_is_a_small_immutable_record() -> None:
    part = Subgraph("A", [1, 2, 2])  # type: ignore[arg-type]
    assert part.nodes == frozenset({1, 2}) and part.device == "A"
    assert [f.name for f in dataclasses.fields(Subgraph)] == ["device", "nodes"]
    assert not hasattr(part, "__dict__")
    with pytest.raises(dataclasses.FrozenInstanceError):
        part.device = "B"  # type: ignore[misc]
    assert part == Subgraph("A", frozenset({1, 2})) and hash(part) == hash(Subgraph("A", frozenset({2, 1})))


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_empty_graph_has_no_subgraphs(algorithm: Algorithm) -> None:
    assert split_by_affinity({}, {}, algorithm) == []  # type: ignore[arg-type]


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_nodes_only_in_successors_or_affinity_are_partitioned(algorithm: Algorithm) -> None:
    successors = {"p": ["q"]}
    affinity = {"p": "A", "q": "A", "lone": "B"}
    parts = split_by_affinity(successors, affinity, algorithm)
    assert sorted((p.device, sorted(p.nodes)) for p in parts) == [("A", ["p", "q"]), ("B", ["lone"])]
    check_partition(successors, affinity, parts)


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_single_device_graph_is_one_subgraph(algorithm: Algorithm) -> None:
    successors = {i: [i + 1, i + 2] for i in range(10)} | {10: [], 11: []}
    parts = split_by_affinity(successors, dict.fromkeys(range(12), "X"), algorithm)
    assert parts == [Subgraph("X", frozenset(range(12)))]


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_an_edge_listed_twice_is_one_edge(algorithm: Algorithm) -> None:
    successors = {"x": ["y", "y"], "y": ["z"], "z": []}
    affinity = {"x": "A", "y": "B", "z": "A"}
    parts = split_by_affinity(successors, affinity, algorithm)
    assert [(p.device, p.nodes) for p in parts] == [
        ("A", frozenset({"x"})),
        ("B", frozenset({"y"})),
        ("A", frozenset({"z"})),
    ]
    check_partition(successors, affinity, parts)


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_cycle_raises_naming_its_nodes_and_not_others(algorithm: Algorithm) -> None:
    successors = {"d": ["a"], "a": ["b"], "b": ["c"], "c": ["a"]}
    affinity = dict.fromkeys(successors, "A")
    with pytest.raises(ModelValidationError, match="cycle") as info:
        split_by_affinity(successors, affinity, algorithm)
    message = str(info.value)
    assert re.search(r"'a' -> 'b' -> 'c' -> 'a'|'b' -> 'c' -> 'a' -> 'b'|'c' -> 'a' -> 'b' -> 'c'", message)
    assert "'d'" not in message


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_self_loop_is_a_cycle(algorithm: Algorithm) -> None:
    with pytest.raises(ModelValidationError, match="'s' -> 's'"):
        split_by_affinity({"s": ["s"]}, {"s": "A"}, algorithm)


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_missing_affinity_raises_naming_the_nodes(algorithm: Algorithm) -> None:
    with pytest.raises(AffinityError, match=r"2 node\(s\) have no affinity: 'y', 'z'"):
        split_by_affinity({"x": ["y"], "y": ["z"], "z": []}, {"x": "A"}, algorithm)


@pytest.mark.parametrize("algorithm", ALGORITHMS)
@pytest.mark.parametrize("bad", ["", 3, None])
def test_affinity_must_be_a_device_name(algorithm: Algorithm, bad: object) -> None:
    expected = "no affinity: 'y'" if bad is None else f"node 'y' has affinity {bad!r}"
    with pytest.raises(AffinityError, match=re.escape(expected)):
        split_by_affinity({"x": ["y"], "y": []}, {"x": "A", "y": bad}, algorithm)  # type: ignore[dict-item]


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_edge_to_unknown_node_raises_naming_the_edge(algorithm: Algorithm) -> None:
    with pytest.raises(ModelValidationError, match=r"edge 'x' -> 'ghost' leads to an unknown node"):
        split_by_affinity({"x": ["ghost"]}, {"x": "A"}, algorithm)


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_successors_must_be_a_mapping_of_iterables(algorithm: Algorithm) -> None:
    with pytest.raises(ModelValidationError, match=r"successors\['x'\] must be an iterable of nodes, got int"):
        split_by_affinity({"x": 1, "y": []}, {"x": "A", "y": "A"}, algorithm)  # type: ignore[dict-item]
    with pytest.raises(ModelValidationError, match="must be a mapping"):
        split_by_affinity([("x", [])], {"x": "A"}, algorithm)  # type: ignore[arg-type]


def test_unknown_algorithm_lists_the_known_ones() -> None:
    with pytest.raises(ValueError, match=r"'fastest'.*default, documented"):
        split_by_affinity({}, {}, "fastest")  # type: ignore[arg-type]


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_ties_follow_the_stable_node_order(algorithm: Algorithm) -> None:
    # Two independent nodes on different devices: the first device in node order runs first.
    parts = split_by_affinity({"u": [], "v": []}, {"u": "B", "v": "A"}, algorithm)
    assert [p.device for p in parts] == ["B", "A"]
    parts = split_by_affinity({"v": [], "u": []}, {"u": "B", "v": "A"}, algorithm)
    assert [p.device for p in parts] == ["A", "B"]


@settings(max_examples=30, deadline=None)
@given(any_dags(max_nodes=80), st.sampled_from(ALGORITHMS), st.randoms(use_true_random=False))
def test_same_input_gives_the_same_output(case: Case, algorithm: Algorithm, rnd: random.Random) -> None:
    expected = split_by_affinity(*case, algorithm)
    shuffled = {u: rnd.sample(vs, len(vs)) for u, vs in case.successors.items()}
    affinity = dict(rnd.sample(list(case.affinity.items()), len(case.affinity)))
    assert split_by_affinity(shuffled, case.affinity, algorithm) == expected
    assert split_by_affinity(case.successors, affinity, algorithm) == expected or _order_depends_on_affinity(case)


def _order_depends_on_affinity(case: Case) -> bool:
    """Nodes outside ``successors`` take their place in the stable order from ``affinity``."""
    return any(node not in case.successors for node in case.affinity)
