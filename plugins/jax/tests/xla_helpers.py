"""Shared helpers of the XLA plugin's tests: a Core with XLA and TEMPLATE, and op checks against the reference."""

from __future__ import annotations

import functools
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import hetero_sdk as hs
import numpy as np
from hetero_sdk import Model, Node, opset
from hetero_sdk.errors import ModelValidationError
from hetero_sdk.reference import evaluate
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from template_plugin import TemplatePlugin

from hetero_sdk_jax import XlaPlugin

OPS = settings(
    max_examples=int(os.environ.get("HETERO_SDK_XLA_EXAMPLES", "10")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
"""Hypothesis settings of the op tests: each example compiles one XLA executable (about 0.1 s on a
small CPU), so tests put several ops in one model where they can. ``HETERO_SDK_XLA_EXAMPLES=200``
runs a thorough search."""


def activated(y: np.ndarray, activation: str) -> np.ndarray:
    """``activation`` (none, relu, silu ``y * sigmoid(y)``, hswish ``y * min(max(y + 3, 0), 6) / 6``) of ``y``
    as numpy computes it from the definitions: the expected values of the fused kernels' epilogues."""
    if activation == "relu":
        return np.maximum(y, 0)
    if activation == "silu":
        return y / (1 + np.exp(-y))
    if activation == "hswish":
        return y * np.minimum(np.maximum(y + 3, 0), 6) / 6
    if activation != "none":
        raise ValueError(f"activated: unknown activation {activation!r}")
    return y


@functools.cache
def core() -> hs.Core:
    """A Core with only the XLA (this plugin) and TEMPLATE devices, whatever else is installed."""
    return hs.Core(plugins={"XLA": XlaPlugin, "TEMPLATE": TemplatePlugin}, autoload=False)


def single_op(node: Node, parameters: Sequence[Node], name: str = "op") -> Model:
    """A model returning every output of ``node``."""
    return Model(node.outputs(), list(parameters), name=name)


def many_ops(nodes: Sequence[Node], parameters: Sequence[Node], name: str = "ops") -> Model:
    """A model returning every output of each of ``nodes`` (one compile checks them all)."""
    return Model([o for node in nodes for o in node.outputs()], list(parameters), name=name)


def run_xla(model: Model, inputs: Sequence[np.ndarray], config: dict[str, Any] | None = None) -> list[np.ndarray]:
    """Compiles ``model`` on XLA and runs it once."""
    compiled = core().compile_model(model, "XLA", config or {})
    return list(compiled(list(inputs)).to_tuple())


def assert_close(
    got: np.ndarray, expected: np.ndarray, rtol: float, atol: float, what: str = "", int_atol: int = 0
) -> None:
    """Same dtype and shape; equal values for integers and booleans (within ``int_atol``), close ones for floats."""
    assert got.dtype == expected.dtype, f"{what}: dtype {got.dtype} != {expected.dtype}"
    assert got.shape == expected.shape, f"{what}: shape {got.shape} != {expected.shape}"
    if expected.dtype.kind in "iu" and int_atol:
        np.testing.assert_allclose(got.astype(np.int64), expected.astype(np.int64), rtol=0, atol=int_atol, err_msg=what)
    elif expected.dtype.kind in "iub":
        np.testing.assert_array_equal(got, expected, err_msg=what)
    else:
        np.testing.assert_allclose(
            got.astype(np.float64), expected.astype(np.float64), rtol=rtol, atol=atol, equal_nan=True, err_msg=what
        )


def check_against_reference(
    model: Model,
    inputs: Sequence[np.ndarray],
    rtol: float = 1e-5,
    atol: float = 1e-5,
    config: dict[str, Any] | None = None,
    int_atol: int = 0,
) -> list[np.ndarray]:
    """Runs ``model`` on XLA and asserts each output matches the reference evaluator (TEMPLATE's oracle)."""
    expected = evaluate(model, list(inputs))
    got = run_xla(model, inputs, config)
    assert len(got) == len(expected)
    for g, e, port in zip(got, expected, model.outputs):
        assert_close(g, e, rtol, atol, f"output {port.any_name}", int_atol)
    return got


def build(factory: Any, *args: Any, **kwargs: Any) -> Node:
    """Calls an opset factory, turning a geometry the op rejects into a rejected hypothesis example."""
    from hypothesis import reject

    try:
        return factory(*args, **kwargs)
    except ModelValidationError:
        reject()


def floats(shape: Any, dtype: Any = np.float32, low: float = -10, high: float = 10) -> st.SearchStrategy[np.ndarray]:
    """Finite floats in ``[low, high]``, without subnormals (XLA flushes them to zero)."""
    itemsize = np.dtype(dtype).itemsize
    width: Literal[16, 32, 64] = 16 if itemsize == 2 else 32 if itemsize == 4 else 64
    low, high = (float(np.dtype(dtype).type(v)) for v in (low, high))
    return hnp.arrays(dtype, shape, elements=st.floats(low, high, width=width, allow_subnormal=False))


def ints(
    shape: Any, dtype: Any = np.int32, low: int | None = None, high: int | None = None
) -> st.SearchStrategy[np.ndarray]:
    """Integers of ``dtype`` in ``[low, high]`` (the type's range by default)."""
    info = np.iinfo(dtype)
    return hnp.arrays(
        dtype, shape, elements=st.integers(info.min if low is None else low, info.max if high is None else high)
    )


def param(array: np.ndarray, name: str = "x") -> Node:
    """A Parameter shaped like ``array``."""
    return opset.parameter(list(array.shape), array.dtype, name=name)


shapes = hnp.array_shapes


def run_without_a_compiler(tmp_path: Path, script: str, arguments: Sequence[Path | str]) -> str:
    """Runs ``script`` (``python -c``) with ``arguments`` in a fresh process with no C++ compiler (``CXX`` pointing
    nowhere) and an empty native-kernel cache under ``tmp_path``, this directory importable; asserts it succeeded
    and returns what it printed."""
    env = {**os.environ, "CXX": "/nonexistent/c++", "XDG_CACHE_HOME": str(tmp_path / "cache")}
    env["PYTHONPATH"] = os.pathsep.join([str(Path(__file__).parent), env.get("PYTHONPATH", "")])
    done = subprocess.run(
        [sys.executable, "-c", script, *map(str, arguments)], env=env, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout
