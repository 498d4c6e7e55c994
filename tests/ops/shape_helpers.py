"""Helpers shared by the shape and movement op tests."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import settings

import hetero_sdk as hs
from hetero_sdk import opset
from hetero_sdk.errors import ModelValidationError
from hetero_sdk.reference import evaluate

FAST = settings(max_examples=40, deadline=None)
INT64_MAX, INT64_MIN = np.iinfo(np.int64).max, np.iinfo(np.int64).min


def run(build: Callable[..., hs.Node], *arrays: np.ndarray) -> tuple[hs.Node, list[np.ndarray]]:
    """Builds ``build(*parameters)``, runs it with the reference kernels, checks inferred shapes."""
    params = [opset.parameter(a.shape, a.dtype, name=f"in{i}") for i, a in enumerate(arrays)]
    node = build(*params)
    outs = evaluate(hs.Model(node.outputs(), params), list(arrays))
    for port, out in zip(node.outputs(), outs):
        assert port.partial_shape.compatible(out.shape), (port.partial_shape, out.shape)
        assert port.element_type == hs.Type.of(out.dtype)
    return node, outs


def shape(node: hs.Node, port: int = 0) -> list[int]:
    return list(node.get_output_partial_shape(port))


def dyn(*dims: int) -> hs.Node:
    return opset.parameter(list(dims), hs.Type.f32)


def iota(*dims: int, dtype: Any = np.float32) -> np.ndarray:
    return np.arange(int(np.prod(dims)), dtype=dtype).reshape(dims)


def raises(node_type: str, message: str) -> Any:
    return pytest.raises(ModelValidationError, match=rf"{node_type} 'bad'.*{message}")
