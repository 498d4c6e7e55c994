"""OpenVINO itself (the ``openvino`` package, when installed) as the test reference for ops that follow
its specifications: the same op built with OpenVINO's opset, compiled for its CPU device at f32
precision, run on the same inputs. Never part of a device's execution path."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest

import hetero_sdk as hs
from hetero_sdk import opset
from hetero_sdk.reference import evaluate

__all__ = ["run_openvino", "run_ours"]

EXACT = {"INFERENCE_PRECISION_HINT": "f32"}
"""OpenVINO's CPU device may otherwise compute in bf16."""


def run_openvino(build: Callable[..., Any], arrays: Sequence[np.ndarray], constants: Sequence[np.ndarray] = ()) -> Any:
    """The output of ``build(*parameters, *constants)``, an OpenVINO node, on ``arrays``.

    :param build: makes the node from OpenVINO parameters (one per array) and then the ``constants``.
    """
    ov = pytest.importorskip("openvino")
    ops = pytest.importorskip("openvino.opset15")
    params = [ops.parameter(list(a.shape), a.dtype) for a in arrays]
    node = build(*params, *[ops.constant(np.asarray(c)) for c in constants])
    compiled = ov.Core().compile_model(ov.Model([node.output(0)], params), "CPU", EXACT)
    return np.asarray(compiled(list(arrays))[0])


def run_ours(
    build: Callable[..., Any], arrays: Sequence[np.ndarray], constants: Sequence[np.ndarray] = (), device: str = ""
) -> np.ndarray:
    """The output of ``build(*parameters, *constants)``, one of our nodes, on ``arrays``: by the reference
    evaluator, or compiled for ``device``. Asserts the inferred shape is the computed one."""
    params = [opset.parameter(list(a.shape), a.dtype, name=f"p{i}") for i, a in enumerate(arrays)]
    node = build(*params, *[np.asarray(c) for c in constants])
    model = hs.Model([node], params)
    if device:
        out = np.asarray(hs.Core().compile_model(model, device)(list(arrays))[0])
    else:
        (out,) = evaluate(model, list(arrays))
    assert node.get_output_partial_shape(0) == list(out.shape)
    return np.asarray(out)
