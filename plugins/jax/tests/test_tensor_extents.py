"""Shapes too large to exist (an int64 overflow in XLA's extent product, or more than any device holds)
are rejected with a typed error naming the node, before XLA sees them: XLA aborts the process on them."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from hetero_sdk import Model, Type, opset
from hetero_sdk.errors import CompilationError, InferenceError
from xla_helpers import core

from hetero_sdk_jax.lowering import MAX_TENSOR_BYTES, check_extents


def _broadcast_by_value() -> Model:
    s = opset.parameter([2], Type.i64, name="s")
    return Model([opset.broadcast(opset.constant(np.float32(1), name="c"), s, name="bc")], [s], name="bcast")


def test_a_shape_value_whose_extent_overflows_gives_an_inference_error_naming_the_node() -> None:
    compiled = core().compile_model(_broadcast_by_value(), "XLA")
    with pytest.raises(InferenceError, match=r"Broadcast 'bc'.*\[2147483648, 2147483648\]"):
        compiled({"s": np.array([2**31, 2**31], np.int64)})
    assert compiled({"s": np.array([2, 3], np.int64)})[0].shape == (2, 3)  # the model still runs


_CHILD = textwrap.dedent(
    """
    import numpy as np, hetero_sdk as hs
    from hetero_sdk import opset
    from hetero_sdk.errors import InferenceError
    s = opset.parameter([2], hs.Type.i64, name="s")
    m = hs.Model([opset.broadcast(opset.constant(np.float32(1)), s, name="bc")], [s])
    try:
        hs.Core().compile_model(m, "XLA")({"s": np.array([2**31, 2**31], np.int64)})
    except InferenceError as exc:
        print("typed:", exc)
    """
)


def test_the_overflow_does_not_abort_the_process() -> None:
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    done = subprocess.run([sys.executable, "-c", _CHILD], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "typed:" in done.stdout and "Broadcast 'bc'" in done.stdout, done.stdout + done.stderr[-3000:]


def test_input_shapes_that_give_a_too_large_tensor_are_rejected() -> None:
    x = opset.parameter([-1], Type.f32, name="x")
    tiled = opset.tile(x, opset.constant(np.array([2**40], np.int64)), name="tiled")
    compiled = core().compile_model(Model([tiled], [x], name="tile"), "XLA")
    with pytest.raises(InferenceError, match=r"Tile 'tiled'.*for input shapes \[\[4\]\]"):
        compiled({"x": np.ones(4, np.float32)})


def test_a_static_model_whose_constants_give_a_too_large_tensor_fails_to_compile() -> None:
    shape = opset.constant(np.array([2**31, 2**31], np.int64))
    model = Model([opset.broadcast(opset.constant(np.float32(1)), shape, name="bc")], [], name="static")
    with pytest.raises(CompilationError, match=r"Broadcast 'bc'.*model's constants"):
        core().compile_model(model, "XLA")


def test_the_cap_is_in_bytes_and_inclusive() -> None:
    def model(elements: int, element_type: Type) -> Model:
        value = opset.constant(np.zeros((), element_type.numpy), name="c")
        shape = opset.constant(np.array([elements], np.int64))
        return Model([opset.broadcast(value, shape, name="bc")], [], name="cap")

    check_extents(model(MAX_TENSOR_BYTES // 4, Type.f32), InferenceError)
    check_extents(model(MAX_TENSOR_BYTES, Type.u8), InferenceError)
    with pytest.raises(InferenceError, match="Broadcast 'bc'"):
        check_extents(model(MAX_TENSOR_BYTES // 2, Type.f32), InferenceError)
