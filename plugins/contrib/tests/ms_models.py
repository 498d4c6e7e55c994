"""Single-node com.microsoft models built with ``onnx.helper``, run on hetero-sdk devices and on ONNX
Runtime (the reference: never in a device's execution path)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cache
from typing import Any

import hetero_sdk as hs
import numpy as np
import onnx
import pytest
from hetero_sdk.hetero.plugin import HeteroPlugin
from onnx import helper
from template_plugin import TemplatePlugin

ort = pytest.importorskip("onnxruntime")

__all__ = ["DEVICES", "check", "core", "ms_model", "run_ort", "run_sdk", "typed_model"]

DOMAIN = "com.microsoft"
DEVICES = ("TEMPLATE", "XLA", "HETERO:XLA,TEMPLATE")
"""The devices every op is checked on."""


def ms_model(
    op_type: str,
    inputs: Mapping[str, np.ndarray | None],
    outputs: Sequence[str] = ("y",),
    domain: str = DOMAIN,
    constants: Sequence[str] = (),
    output_types: Mapping[str, Any] | None = None,
    **attributes: Any,
) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    """A model of one ``op_type`` node of ``domain`` and the feeds to run it with.

    :param inputs: the node's inputs in order, by name; None leaves an optional input out.
    :param outputs: the node's output names ("" leaves one out). Their types and shapes are filled in
        once a run tells them (:func:`check`): ONNX has no shape inference for com.microsoft ops.
    :param constants: names among ``inputs`` that become initializers rather than graph inputs.
    :param output_types: numpy dtypes of the outputs that are not float32, by name.
    """
    types = {o: helper.np_dtype_to_tensor_dtype(np.dtype((output_types or {}).get(o, np.float32))) for o in outputs}
    names = [k if v is not None else "" for k, v in inputs.items()]
    while names and not names[-1]:
        names.pop()
    node = helper.make_node(op_type, names, list(outputs), domain=domain, **attributes)
    feeds = {k: np.asarray(v) for k, v in inputs.items() if v is not None and k not in constants}
    graph = helper.make_graph(
        [node],
        "g",
        [
            helper.make_tensor_value_info(k, helper.np_dtype_to_tensor_dtype(v.dtype), list(v.shape))
            for k, v in feeds.items()
        ],
        [helper.make_tensor_value_info(o, types[o], None) for o in outputs if o],
        [onnx.numpy_helper.from_array(np.asarray(inputs[k]), k) for k in constants],
    )
    opsets = [helper.make_opsetid("", 17), helper.make_opsetid(DOMAIN, 1)]
    return helper.make_model(graph, opset_imports=opsets, ir_version=8), feeds


def run_ort(model: onnx.ModelProto, feeds: Mapping[str, np.ndarray]) -> list[np.ndarray]:
    """``model``'s outputs from ONNX Runtime's CPU provider, without graph optimizations."""
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    return [np.asarray(v) for v in session.run(None, dict(feeds))]


def typed_model(model: onnx.ModelProto, results: Sequence[np.ndarray]) -> onnx.ModelProto:
    """``model`` with each graph output's type and shape those of ``results`` (ONNX's checker wants them)."""
    typed = onnx.ModelProto()
    typed.CopyFrom(model)
    for output, value in zip(typed.graph.output, results):
        dtype = helper.np_dtype_to_tensor_dtype(value.dtype)
        output.CopyFrom(helper.make_tensor_value_info(output.name, dtype, list(value.shape)))
    return typed


@cache
def core() -> hs.Core:
    """A Core of TEMPLATE, XLA and HETERO with the contrib extension added."""
    from hetero_sdk_jax import XlaPlugin

    from hetero_sdk_contrib import extension

    plugins = {"TEMPLATE": TemplatePlugin, "XLA": XlaPlugin, "HETERO": HeteroPlugin()}
    core = hs.Core(plugins=plugins, autoload=False)
    core.add_extension(extension)
    return core


def run_sdk(model: onnx.ModelProto, feeds: Mapping[str, np.ndarray], device: str) -> list[np.ndarray]:
    """``model``'s outputs, in ONNX order, compiled for ``device``."""
    results = core().compile_model(model, device)(dict(feeds))
    return [np.asarray(results[o.name]) for o in model.graph.output]


def check(
    model: onnx.ModelProto,
    feeds: Mapping[str, np.ndarray],
    expected: Sequence[np.ndarray] | None = None,
    devices: Sequence[str] = DEVICES,
    rtol: float = 1e-5,
    atol: float = 1e-5,
) -> list[np.ndarray]:
    """Runs ``model`` on ``devices`` and asserts each output's dtype, shape and values match
    ``expected`` (ONNX Runtime's outputs when None). Returns the expected outputs."""
    want = [np.asarray(w) for w in (expected if expected is not None else run_ort(model, feeds))]
    typed = typed_model(model, want)
    for device in devices:
        got = run_sdk(typed, feeds, device)
        assert len(got) == len(want), device
        for output, g, w in zip(typed.graph.output, got, want):
            message = f"{device} output {output.name}"
            assert g.dtype == w.dtype, f"{message}: dtype {g.dtype} != {w.dtype}"
            assert g.shape == w.shape, f"{message}: shape {g.shape} != {w.shape}"
            np.testing.assert_allclose(
                g.astype(np.float64), w.astype(np.float64), rtol=rtol, atol=atol, err_msg=message
            )
    return want
