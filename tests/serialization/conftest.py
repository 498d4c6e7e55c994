"""Shared fixtures of the model-format tests: a strict model comparison and a small reference model."""

from __future__ import annotations

import dataclasses
import math
import struct
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

import hetero_sdk as hs
from hetero_sdk import opset
from hetero_sdk.graph.op_def import ANY, OPS, Attr


def same_value(a: Any, b: Any) -> bool:
    """Equality that also demands equal types, bit-equal floats and byte-equal arrays."""
    if type(a) is not type(b):
        return False
    if isinstance(a, np.ndarray):
        return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()
    if isinstance(a, np.generic):
        return a.dtype == b.dtype and a.tobytes() == b.tobytes()
    if isinstance(a, float):
        return struct.pack("<d", a) == struct.pack("<d", b)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same_value(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return list(a) == list(b) and all(same_value(a[k], b[k]) for k in a)
    return bool(a == b)


def assert_same_model(expected: hs.Model, actual: hs.Model) -> None:
    """Asserts two models match node for node: order, names, types, attributes, tensor names, rt_info."""
    assert actual.friendly_name == expected.friendly_name
    assert same_value(expected.get_rt_info(), actual.get_rt_info())
    assert [p.friendly_name for p in actual.get_parameters()] == [p.friendly_name for p in expected.get_parameters()]
    assert [r.friendly_name for r in actual.get_results()] == [r.friendly_name for r in expected.get_results()]
    ops_e, ops_a = expected.get_ops(), actual.get_ops()
    assert [n.friendly_name for n in ops_a] == [n.friendly_name for n in ops_e]
    for e, a in zip(ops_e, ops_a):
        where = f"{e.type_name} '{e.friendly_name}'"
        assert (a.type_name, a.version) == (e.type_name, e.version), where
        assert [(s.node.friendly_name, s.index) for s in a.input_values()] == [
            (s.node.friendly_name, s.index) for s in e.input_values()
        ], where
        assert list(a.attrs) == list(e.attrs), where
        for key in e.attrs:
            assert same_value(e.attrs[key], a.attrs[key]), f"{where} {key}: {e.attrs[key]!r} != {a.attrs[key]!r}"
        assert same_value(e.get_rt_info(), a.get_rt_info()), where
        assert a._output_names == e._output_names, where
        for pe, pa in zip(e.outputs(), a.outputs()):
            assert (pa.element_type, pa.partial_shape, pa.names) == (pe.element_type, pe.partial_shape, pe.names)
    assert len(actual.outputs) == len(expected.outputs)
    for pe, pa in zip(expected.outputs, actual.outputs):
        assert pa.names == pe.names


@pytest.fixture
def same_model() -> Callable[[hs.Model, hs.Model], None]:
    """The strict model comparison, :func:`assert_same_model`."""
    return assert_same_model


@pytest.fixture
def bit_equal() -> Callable[[Any, Any], bool]:
    """The strict value comparison, :func:`same_value`."""
    return same_value


def build_reference_model() -> hs.Model:
    """``relu(x * w + b)`` then ``clamp``, with f32 weights w (4 values) and b (4 values)."""
    x = opset.parameter([-1, 4], hs.Type.f32, name="x")
    w = opset.constant(np.array([1.0, -2.0, 0.5, 4.0], np.float32), name="w")
    b = opset.constant(np.array([0.25, 0.0, -1.0, math.pi], np.float32), name="b")
    scaled = opset.multiply(x, w, name="scaled")
    shifted = opset.add(scaled, b, name="shifted")
    y = opset.clamp(opset.relu(shifted, name="act"), 0.0, 3.0, name="y")
    y.get_rt_info()["affinity"] = "TEMPLATE"
    return hs.Model([y], [x], name="reference")


@pytest.fixture
def reference_model() -> hs.Model:
    """A fresh :func:`build_reference_model`."""
    return build_reference_model()


@pytest.fixture
def relu_taking() -> Iterator[Callable[..., None]]:
    """``relu_taking("a", "b")`` makes Relu declare attributes ``a`` and ``b`` of any value until the test
    ends: the format tests carry every kind of value on one node, and an op rejects attributes it does
    not declare."""
    original = OPS.get("Relu")

    def declare(*names: str) -> None:
        attrs = tuple(Attr(name, ANY, None) for name in names)
        OPS.register("Relu", dataclasses.replace(original, attrs=attrs), replace=True)

    yield declare
    OPS.register("Relu", original, replace=True)
