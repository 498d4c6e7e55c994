"""Random DAG models for the HETERO checks: elementwise ops and small MatMuls over two inputs, with an
optional random affinity per op, and the partition HETERO chose, read back from its runtime model."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from hypothesis import strategies as st

import hetero_sdk as hs
from hetero_sdk import opset, rt_info
from hetero_sdk.graph import Model, Node
from hetero_sdk.hetero import Subgraph

__all__ = ["DAG_OPS", "DagCase", "dag_models", "partition_of", "probe_model"]

_UNARY: dict[str, Callable[..., Node]] = {
    "Relu": opset.relu,
    "Abs": opset.abs,
    "Negative": opset.negative,
    "Tanh": opset.tanh,
    "Sigmoid": opset.sigmoid,
}
_BINARY: dict[str, Callable[..., Node]] = {
    "Add": opset.add,
    "Subtract": opset.subtract,
    "Multiply": opset.multiply,
    "Maximum": opset.maximum,
    "Minimum": opset.minimum,
}
DAG_OPS = (*_UNARY, *_BINARY, "MatMul")
"""The op types random DAGs are made of."""

_SHAPE = [2, 3]


@dataclass
class DagCase:
    """A random model, its inputs and (manual mode) the affinity given to each compute op."""

    model: Model
    inputs: dict[str, np.ndarray]
    affinity: dict[str, str]

    def __repr__(self) -> str:
        ops = [
            f"{n.friendly_name}:{n.type_name}@{self.affinity.get(n.friendly_name, 'auto')}"
            for n in _compute(self.model)
        ]
        return f"<DAG {self.model.friendly_name}: {' '.join(ops)}>"


def _compute(model: Model) -> list[Node]:
    return [n for n in model.get_ordered_ops() if not n.op.structural]


def probe_model() -> Model:
    """One op of each DAG op type, to ask ``query_model`` which the device claims."""
    x = opset.parameter(_SHAPE, hs.Type.f32, name="x")
    outputs = [fn(x, name=f"probe_{t}") for t, fn in _UNARY.items()]
    outputs += [fn(x, x, name=f"probe_{t}") for t, fn in _BINARY.items()]
    outputs.append(opset.matmul(x, opset.constant(np.eye(3, dtype=np.float32), name="eye"), name="probe_MatMul"))
    return hs.Model(outputs, [x], name="conformance_dag_probe")


@st.composite
def dag_models(
    draw: st.DrawFn, op_types: Sequence[str], devices: Sequence[str] | None, device_ops: Sequence[str] = ()
) -> DagCase:
    """Random DAGs over ``op_types``; with ``devices`` (first: the device under test) each compute op gets
    a random affinity, the device under test only for ops in ``device_ops``."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    params = [opset.parameter(_SHAPE, hs.Type.f32, name=f"p{i}") for i in range(2)]
    values: list[Node] = list(params)
    affinity: dict[str, str] = {}
    for i in range(draw(st.integers(1, 12))):
        op_type = draw(st.sampled_from(list(op_types)))
        first = draw(st.sampled_from(values))
        name = f"n{i}"
        if op_type in _UNARY:
            node = _UNARY[op_type](first, name=name)
        elif op_type in _BINARY:
            if draw(st.integers(0, 4)) == 0:
                second: Node = opset.constant(rng.uniform(-1, 1, _SHAPE).astype(np.float32), name=f"c{i}")
            else:
                second = draw(st.sampled_from(values))
            node = _BINARY[op_type](first, second, name=name)
        else:
            weights = opset.constant(rng.uniform(-1, 1, (3, 3)).astype(np.float32), name=f"w{i}")
            node = opset.matmul(first, weights, name=name)
        if devices is not None:
            allowed = list(devices) if op_type in device_ops else list(devices[1:])
            node.get_rt_info()[rt_info.AFFINITY] = affinity[name] = draw(st.sampled_from(allowed))
        values.append(node)
    computed = values[2:]
    extra = draw(st.lists(st.sampled_from(computed), max_size=2))
    outputs = list(dict.fromkeys([computed[-1], *extra]))
    model = hs.Model(outputs, params, name="conformance_dag")
    reachable = {n.friendly_name for n in model.get_ops()}
    affinity = {k: v for k, v in affinity.items() if k in reachable}
    inputs = {p.friendly_name: rng.uniform(-1.5, 1.5, _SHAPE).astype(np.float32) for p in params}
    return DagCase(model, inputs, affinity)


def partition_of(runtime: Model) -> tuple[dict[str, list[str]], dict[str, str], list[Subgraph]]:
    """``successors``, ``affinity`` and the subgraphs (in order) of a HETERO runtime model, whose
    compute ops carry ``affinity`` and ``subgraph`` in rt_info."""
    ops = [n for n in _compute(runtime) if rt_info.SUBGRAPH in n.get_rt_info()]
    members = {n.friendly_name for n in ops}
    successors: dict[str, list[str]] = {n.friendly_name: [] for n in ops}
    for node in ops:
        for source in node.input_values():
            if source.node.friendly_name in members:
                successors[source.node.friendly_name].append(node.friendly_name)
    affinity = {n.friendly_name: str(n.get_rt_info()[rt_info.AFFINITY]) for n in ops}
    groups: dict[int, set[str]] = {}
    for node in ops:
        groups.setdefault(int(node.get_rt_info()[rt_info.SUBGRAPH]), set()).add(node.friendly_name)
    parts = [Subgraph(affinity[next(iter(names))], frozenset(names)) for _, names in sorted(groups.items())]
    return successors, affinity, parts
