"""Claim: for random models (DAGs of elementwise and activation ops over random constants and parameters),
save then read gives an equal model that computes bit-identical results."""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import hetero_sdk as hs
from hetero_sdk import opset
from hetero_sdk.reference import evaluate
from hetero_sdk.serialization import model_from_bytes, model_to_bytes, read_model, save_model

FLOAT_TYPES = [hs.Type.f32, hs.Type.f64, hs.Type.f16, hs.Type.bf16]
UNARY: list[Callable[..., hs.Node]] = [
    opset.relu, opset.sigmoid, opset.tanh, opset.exp, opset.log, opset.sqrt, opset.abs, opset.negative,
    opset.erf, opset.floor, opset.ceiling, opset.sin, opset.cos, opset.hswish, opset.swish,
]  # fmt: skip
BINARY: list[Callable[..., hs.Node]] = [
    opset.add, opset.subtract, opset.multiply, opset.divide, opset.power, opset.maximum, opset.minimum,
    opset.squared_difference,
]  # fmt: skip

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)


@st.composite
def constants(draw: st.DrawFn, element_type: hs.Type, shape: list[int]) -> hs.Node:
    """A constant broadcastable to ``shape``, with arbitrary bit patterns (nan payloads, denormals, inf)."""
    rank = draw(st.integers(0, len(shape)))
    dims = [draw(st.sampled_from([1, d])) for d in shape[len(shape) - rank :]]
    itemsize = element_type.numpy.itemsize
    count = int(np.prod(dims, dtype=np.int64))
    raw = draw(st.binary(min_size=count * itemsize, max_size=count * itemsize))
    return opset.constant(np.frombuffer(raw, element_type.numpy).reshape(dims))


@st.composite
def random_models(draw: st.DrawFn) -> tuple[hs.Model, list[np.ndarray]]:
    """A random model and one set of inputs for it."""
    element_type = draw(st.sampled_from(FLOAT_TYPES))
    shape = draw(st.lists(st.integers(1, 3), max_size=3))
    parameters = []
    for i in range(draw(st.integers(1, 3))):
        declared = [-1 if draw(st.booleans()) else d for d in shape]
        parameters.append(opset.parameter(declared, element_type, name=f"p{i}"))
    values: list[hs.Output] = [p.output(0) for p in parameters]
    for step in range(draw(st.integers(1, 8))):
        name = draw(st.sampled_from([None, f"n{step}"]))
        source = draw(st.sampled_from(values))
        kind = draw(st.sampled_from(["unary", "binary", "constant", "clamp", "convert", "gelu"]))
        if kind == "unary":
            node = draw(st.sampled_from(UNARY))(source, name=name)
        elif kind == "binary":
            node = draw(st.sampled_from(BINARY))(source, draw(st.sampled_from(values)), name=name)
        elif kind == "constant":
            operands = [source, draw(constants(element_type, shape)).output(0)]
            node = draw(st.sampled_from(BINARY))(*draw(st.permutations(operands)), name=name)
        elif kind == "clamp":
            low, high = sorted(draw(st.lists(st.floats(allow_nan=False), min_size=2, max_size=2)))
            node = opset.clamp(source, low, high, name=name)
        elif kind == "convert":
            middle = opset.convert(source, draw(st.sampled_from(FLOAT_TYPES)))
            node = opset.convert(middle, element_type, name=name)
        else:
            node = opset.gelu(source, draw(st.sampled_from(["ERF", "TANH"])), name=name)
        if draw(st.booleans()):
            node.get_rt_info()["affinity"] = draw(st.sampled_from(["TEMPLATE", "XLA"]))
        if draw(st.integers(0, 3)) == 0:
            node.get_rt_info()["extra"] = draw(JSON_VALUES)
        if draw(st.integers(0, 3)) == 0:
            node.output(0).set_names({f"tensor{step}", f"alias{step}"})
        values.append(node.output(0))
    outputs = draw(st.lists(st.sampled_from(values), min_size=1, max_size=3))
    model = hs.Model(outputs, parameters, name=draw(st.text(min_size=1, max_size=10)))
    model.get_rt_info().update(draw(st.dictionaries(st.text(max_size=5), JSON_VALUES, max_size=3)))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    inputs = [(rng.standard_normal(shape) * 4).astype(element_type.numpy) for _ in parameters]
    return model, inputs


def _evaluate(model: hs.Model, inputs: list[np.ndarray]) -> list[np.ndarray]:
    with np.errstate(all="ignore"):
        return evaluate(model, inputs)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=random_models())
def test_random_models_round_trip_exactly(case: tuple[hs.Model, list[np.ndarray]], same_model: Any, bit_equal: Any):
    model, inputs = case
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "random.json"
        save_model(model, path)
        from_file = read_model(path)
    from_bytes = model_from_bytes(model_to_bytes(model))
    expected = _evaluate(model, inputs)
    for loaded in (from_file, from_bytes):
        same_model(model, loaded)
        got = _evaluate(loaded, inputs)
        assert len(got) == len(expected)
        assert all(bit_equal(a, b) for a, b in zip(expected, got))
