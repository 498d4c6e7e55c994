"""Remote contexts and tensors: device-resident inputs and outputs, chained requests without host copies."""

from __future__ import annotations

import jax
import numpy as np
import pytest
from hetero_sdk import Model, Type, opset
from hetero_sdk.errors import InferenceError
from hetero_sdk.plugin import RemoteTensor
from xla_helpers import core

from hetero_sdk_jax import XlaContext, XlaPlugin, XlaTensor


def _double() -> Model:
    x = opset.parameter([2, 3], Type.f32, name="x")
    return Model([opset.multiply(x, 2.0, name="y")], [x], name="double")


def test_contexts_make_device_tensors_that_round_trip() -> None:
    context = core().create_context("XLA", {})
    assert isinstance(context, XlaContext) and context.get_device_name() == "XLA.0"
    values = np.arange(6, dtype=np.float32).reshape(2, 3)
    tensor = context.create_tensor(Type.f32, (2, 3), values)
    assert isinstance(tensor, RemoteTensor) and isinstance(tensor.array, jax.Array)
    assert tensor.shape == (2, 3) and tensor.element_type == Type.f32 and tensor.device_name == "XLA.0"
    np.testing.assert_array_equal(np.asarray(tensor), values)
    np.testing.assert_array_equal(context.create_tensor(Type.i64, (2,)).copy_to_host(), np.zeros(2, np.int64))
    assert core().get_default_context("XLA") is core().get_default_context("XLA")


def test_requests_take_remote_inputs_and_give_remote_outputs_for_chaining() -> None:
    compiled = core().compile_model(_double(), "XLA")
    context = core().get_default_context("XLA")
    first, second = compiled.create_infer_request(), compiled.create_infer_request()
    first.remote_outputs = second.remote_outputs = True
    first.infer({"x": context.create_tensor(Type.f32, (2, 3), np.ones((2, 3)))})
    middle = first.get_output_tensor(0)
    assert isinstance(middle, XlaTensor) and middle.device_name == "XLA.0"
    second.infer({"x": middle})
    np.testing.assert_array_equal(np.asarray(second.get_output_tensor(0)), np.full((2, 3), 4.0, np.float32))
    np.testing.assert_array_equal(second.results[0], np.full((2, 3), 4.0, np.float32))


def test_wrapped_jax_arrays_and_mismatched_remote_tensors() -> None:
    compiled = core().compile_model(_double(), "XLA")
    context = core().get_default_context("XLA")
    tensor = context.wrap(jax.numpy.ones((2, 3), jax.numpy.float32))
    np.testing.assert_array_equal(compiled({"x": tensor})[0], np.full((2, 3), 2.0, np.float32))
    with pytest.raises(InferenceError, match="remote tensor"):
        compiled({"x": context.create_tensor(Type.i32, (2, 3))})


def test_compiling_into_a_context_uses_its_device() -> None:
    plugin = XlaPlugin()  # the Core has no compile_model(model, context) yet: call the hook itself
    context = plugin.create_context({}, "XLA", core())
    compiled = plugin.compile_model(_double(), {}, context, "XLA", core())
    assert compiled.get_property("EXECUTION_DEVICES") == ["XLA.0"]
    assert compiled.device is context.device


def test_the_compiled_executable_runs_from_jax_code() -> None:
    compiled = core().compile_model(_double(), "XLA")
    executable = compiled.jax_executable()
    (doubled,) = executable(jax.numpy.ones((2, 3), jax.numpy.float32))
    np.testing.assert_array_equal(np.asarray(doubled), np.full((2, 3), 2.0, np.float32))
