"""Builds small ONNX models with ``onnx.helper`` and runs them on hetero-sdk devices and on ONNX Runtime,
the test reference for the ONNX frontend's rules (never part of a device's execution path)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cache
from typing import Any

import numpy as np
import onnx
import onnxruntime as ort
from hypothesis import settings
from onnx import helper

import hetero_sdk as hs

__all__ = [
    "FEW", "check", "conv_relu_model", "graph_model", "node_model", "run_ort", "run_sdk", "value_info",
]  # fmt: skip

FEW = settings(max_examples=10, deadline=None)
"""Hypothesis settings for the rule tests: each example compiles a model, so keep them few."""

IR_VERSION = 8
"""An IR version every ONNX Runtime the tests accept reads."""


def value_info(name: str, dtype: Any, shape: Sequence[int | str | None] | None) -> onnx.ValueInfoProto:
    """A graph input or output named ``name`` of numpy ``dtype`` and ``shape`` (None: unknown rank)."""
    elem = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    return helper.make_tensor_value_info(name, elem, None if shape is None else list(shape))


def graph_model(
    nodes: Sequence[onnx.NodeProto],
    inputs: Sequence[onnx.ValueInfoProto],
    outputs: Sequence[onnx.ValueInfoProto],
    opset: int,
    initializers: Mapping[str, np.ndarray] | None = None,
    full_check: bool = True,
) -> onnx.ModelProto:
    """A checked model of ``nodes`` in ``ai.onnx`` opset ``opset`` (``full_check``: with ONNX's strict
    shape inference, which rejects some valid graphs, such as If branches of different ranks)."""
    graph = helper.make_graph(
        list(nodes),
        "g",
        list(inputs),
        list(outputs),
        [onnx.numpy_helper.from_array(np.asarray(v), k) for k, v in (initializers or {}).items()],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=IR_VERSION)
    onnx.checker.check_model(model, full_check=full_check)
    return model


def node_model(
    op_type: str,
    inputs: Mapping[str, np.ndarray | None],
    opset: int,
    outputs: int | Sequence[str] = 1,
    constants: Sequence[str] = (),
    output_types: Sequence[Any] | None = None,
    **attributes: Any,
) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    """A model of one ``op_type`` node, and the feeds to run it with.

    :param inputs: the node's inputs in order, by name, each with the value it gets; None leaves an
        optional input out (an empty name).
    :param constants: names among ``inputs`` that become initializers rather than graph inputs.
    :param outputs: how many outputs the node has (named ``y0, y1...``), or their names ("" leaves one out).
    :param output_types: numpy dtypes of the outputs, when they are not float32 (None: unknown elem type).
    :returns: the model and the feeds for its graph inputs.
    """
    names = [f"y{i}" for i in range(outputs)] if isinstance(outputs, int) else list(outputs)
    input_names = [k if v is not None else "" for k, v in inputs.items()]
    while input_names and not input_names[-1]:  # trailing optional inputs left out are not listed
        input_names.pop()
    node = helper.make_node(op_type, input_names, names, **attributes)
    feeds = {k: np.asarray(v) for k, v in inputs.items() if v is not None and k not in constants}
    graph_inputs = [value_info(k, v.dtype, v.shape) for k, v in feeds.items()]
    types = list(output_types) if output_types is not None else [None] * len(names)
    graph_outputs = [
        helper.make_tensor_value_info(n, 0 if t is None else helper.np_dtype_to_tensor_dtype(np.dtype(t)), None)
        for n, t in zip(names, types)
        if n
    ]
    initializers = {k: np.asarray(v) for k, v in inputs.items() if k in constants and v is not None}
    graph = helper.make_graph([node], "g", graph_inputs, graph_outputs, [
        onnx.numpy_helper.from_array(v, k) for k, v in initializers.items()
    ])  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=IR_VERSION)
    return onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True), feeds


@cache
def _core() -> hs.Core:
    return hs.Core()


def run_sdk(model: onnx.ModelProto, feeds: Mapping[str, np.ndarray], device: str = "TEMPLATE") -> list[np.ndarray]:
    """``model``'s outputs, in ONNX order, compiled from the ModelProto for ``device``."""
    compiled = _core().compile_model(model, device)
    results = compiled({k: np.asarray(v) for k, v in feeds.items()})
    return [np.asarray(results[o.name]) for o in model.graph.output]


def run_ort(model: onnx.ModelProto, feeds: Mapping[str, np.ndarray]) -> list[np.ndarray]:
    """``model``'s outputs from ONNX Runtime's CPU provider: the reference."""
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    return [np.asarray(v) for v in session.run(None, dict(feeds))]


def check(
    model: onnx.ModelProto,
    feeds: Mapping[str, np.ndarray],
    devices: Sequence[str] = ("TEMPLATE",),
    rtol: float = 1e-5,
    atol: float = 1e-6,
    expected: Sequence[np.ndarray] | None = None,
) -> list[np.ndarray]:
    """Runs ``model`` on each of ``devices`` and asserts its outputs (dtype, shape, values) match
    ``expected``, ONNX Runtime's by default. Returns the expected outputs."""
    want = list(expected) if expected is not None else run_ort(model, feeds)
    for device in devices:
        got = run_sdk(model, feeds, device)
        assert len(got) == len(want), device
        for index, (g, w) in enumerate(zip(got, want)):
            w = np.asarray(w)
            message = f"{device} output {index} ({model.graph.output[index].name})"
            assert g.dtype == w.dtype, f"{message}: dtype {g.dtype} != {w.dtype}"
            assert g.shape == w.shape, f"{message}: shape {g.shape} != {w.shape}"
            if w.dtype.kind in "fc":
                np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, err_msg=message)
            else:
                np.testing.assert_array_equal(g, w, err_msg=message)
    return want


def conv_relu_model(batch: int | str = "batch") -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    """``relu(conv(x, w) + b)`` then a global average pool: x[batch,3,8,8] -> y[batch,4,1,1]."""
    rng = np.random.default_rng(0)
    weights = {
        "w": rng.standard_normal((4, 3, 3, 3)).astype(np.float32),
        "b": rng.standard_normal(4).astype(np.float32),
    }
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["r"], name="relu"),
        helper.make_node("GlobalAveragePool", ["r"], ["y"], name="pool"),
    ]
    inputs = [value_info("x", np.float32, [batch, 3, 8, 8])]
    model = graph_model(nodes, inputs, [value_info("y", np.float32, [batch, 4, 1, 1])], 17, weights)
    return model, weights
