"""Hypothesis strategies for partitioner inputs: a DAG as ``successors`` and its ``affinity``.

Import them from other tests (``from tests.hetero.strategies import dags`` or relatively). Node labels are
shuffled so that the stable node order (the order of ``successors``) is not a topological order, and
some sinks are left out of ``successors`` (they appear only as successors and in ``affinity``).
"""

from __future__ import annotations

import random
from typing import Any, NamedTuple

from hypothesis import strategies as st

__all__ = ["DEVICES", "Case", "any_dags", "layered_dags", "random_dags"]

DEVICES = ("A", "B", "C", "D")


class Case(NamedTuple):
    """A partitioner input."""

    successors: dict[Any, list[Any]]
    affinity: dict[Any, str]


def _affinities(rnd: random.Random, groups: list[list[int]], devices: tuple[str, ...], mode: str) -> list[str]:
    """One device per node. ``groups`` are the nodes in topological groups (layers), used by ``blocks``."""
    n = sum(len(g) for g in groups)
    if mode == "uniform":
        return [rnd.choice(devices) for _ in range(n)]
    if mode == "mostly":
        main = rnd.choice(devices)
        return [main if rnd.random() < 0.8 else rnd.choice(devices) for _ in range(n)]
    out = [""] * n
    current = rnd.choice(devices)
    fallback = rnd.choice((0.0, 0.05, 0.2))
    for group in groups:
        if rnd.random() < 0.15:
            current = rnd.choice(devices)
        for i in group:
            out[i] = rnd.choice(devices) if rnd.random() < fallback else current
    return out


def _case(rnd: random.Random, edges: list[list[int]], devices_used: list[str], omit_sinks: bool) -> Case:
    """Relabels nodes ``0..n-1`` (a topological numbering) by a shuffle and builds the mappings."""
    n = len(edges)
    labels = list(range(n))
    rnd.shuffle(labels)
    key_order = list(range(n))
    rnd.shuffle(key_order)
    has_pred = {j for e in edges for j in e}
    successors: dict[Any, list[Any]] = {}
    for i in key_order:
        if omit_sinks and not edges[i] and i in has_pred:
            continue
        targets = [labels[j] for j in edges[i]]
        rnd.shuffle(targets)
        successors[labels[i]] = targets
    affinity = {labels[i]: devices_used[i] for i in key_order}
    return Case(successors, affinity)


@st.composite
def random_dags(draw: st.DrawFn, min_nodes: int = 1, max_nodes: int = 120, max_devices: int = 4) -> Case:
    """Arbitrary DAGs: each forward pair of a random topological numbering is an edge with some probability."""
    n = draw(st.integers(min_nodes, max_nodes))
    k = draw(st.integers(2, max_devices))
    degree = draw(st.sampled_from((0.5, 1.5, 3.0)))
    mode = draw(st.sampled_from(("uniform", "mostly", "blocks")))
    omit_sinks = draw(st.booleans())
    rnd = draw(st.randoms(use_true_random=False))
    p = min(1.0, degree / max(n - 1, 1))
    edges = [[j for j in range(i + 1, n) if rnd.random() < p] for i in range(n)]
    groups = [[i] for i in range(n)]
    return _case(rnd, edges, _affinities(rnd, groups, DEVICES[:k], mode), omit_sinks)


@st.composite
def layered_dags(draw: st.DrawFn, min_nodes: int = 1, max_nodes: int = 200, max_devices: int = 4) -> Case:
    """NN-like DAGs: layers of 1-6 nodes, inputs mostly from the previous layer, some skip connections;
    affinities by blocks of layers with fallback nodes, uniform, or mostly one device."""
    n = draw(st.integers(min_nodes, max_nodes))
    k = draw(st.integers(2, max_devices))
    mode = draw(st.sampled_from(("blocks", "blocks", "uniform", "mostly")))
    omit_sinks = draw(st.booleans())
    rnd = draw(st.randoms(use_true_random=False))
    max_width = rnd.randint(1, 6)
    layers: list[list[int]] = []
    count = 0
    while count < n:
        w = min(rnd.randint(1, max_width), n - count)
        layers.append(list(range(count, count + w)))
        count += w
    edges: list[list[int]] = [[] for _ in range(n)]
    for li in range(1, len(layers)):
        for v in layers[li]:
            for _ in range(rnd.choice((1, 1, 2, 3))):
                back = 1 if rnd.random() < 0.8 else rnd.randint(1, min(4, li))
                u = rnd.choice(layers[li - back])
                if v not in edges[u]:
                    edges[u].append(v)
    return _case(rnd, edges, _affinities(rnd, layers, DEVICES[:k], mode), omit_sinks)


def any_dags(min_nodes: int = 1, max_nodes: int = 120, max_devices: int = 4) -> st.SearchStrategy[Case]:
    """Either kind of DAG."""
    return random_dags(min_nodes, max_nodes, max_devices) | layered_dags(min_nodes, max_nodes, max_devices)
