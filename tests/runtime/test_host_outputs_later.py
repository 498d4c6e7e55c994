"""``RunContext.host_outputs_later``: a synchronous ``infer()`` lets a device hand back outputs whose copies
to the host are still in flight, and turns them into host arrays itself when they are read."""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

import hetero_sdk as hs
from hetero_sdk import opset
from hetero_sdk.errors import InferenceError
from hetero_sdk.hetero.plugin import HeteroPlugin
from hetero_sdk.plugin import CompiledModel, RunContext
from template_plugin import TemplatePlugin

from .devices import WholeModelDevice, compiled_relu

X = np.array([1.0, -2.0, 3.5], np.float32)


class InFlight:
    """An output still being copied back: an array-like that becomes ``value`` (or fails) when read."""

    def __init__(self, value: np.ndarray, failure: Exception | None, reads: list[int]) -> None:
        self.value, self.failure, self.reads = value, failure, reads

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        self.reads.append(1)
        if self.failure is not None:
            raise self.failure
        return self.value if dtype is None else self.value.astype(dtype)


class LaterModel(CompiledModel):
    """Doubles its input; returns :class:`InFlight` outputs when the caller takes host outputs later."""

    def __init__(self, model: hs.Model, device_name: str, config: dict[str, Any]) -> None:
        super().__init__(model, device_name, config)
        self.failure: Exception | None = None
        self.reads: list[int] = []
        self.seen: list[bool] = []
        self.handed_out: list[weakref.ref[InFlight]] = []
        self.alive_at_run: list[int] = []

    def run(self, inputs: Sequence[Any], context: RunContext) -> list[Any]:
        self.seen.append(context.host_outputs_later)
        self.alive_at_run.append(sum(ref() is not None for ref in self.handed_out))
        doubled = np.asarray(inputs[0]) * np.float32(2)
        if not context.host_outputs_later:
            return [doubled]
        output = InFlight(doubled, self.failure, self.reads)
        self.handed_out.append(weakref.ref(output))
        return [output]


@pytest.fixture
def later(core: hs.Core) -> LaterModel:
    return compiled_relu(core, LaterModel, "LATER")


def test_a_request_takes_outputs_later_and_reads_them_as_host_arrays_once(later: LaterModel) -> None:
    request = later.create_infer_request()
    results = request.infer({"x": X})
    assert later.seen == [True]
    assert type(results["y"]) is np.ndarray
    np.testing.assert_array_equal(results["y"], [2.0, -4.0, 7.0])
    np.testing.assert_array_equal(request.get_output_tensor(0), [2.0, -4.0, 7.0])
    assert later.reads == [1]  # the results and the output tensor share one host array
    request.infer({"x": X})
    assert later.alive_at_run == [0, 0]  # a request lets go of its last outputs before it runs again


def test_output_buffers_receive_outputs_taken_later(later: LaterModel) -> None:
    request = later.create_infer_request()
    buffer = np.zeros(3, np.float32)
    request.set_output_tensor(0, buffer)
    request.infer({"x": X})
    np.testing.assert_array_equal(buffer, [2.0, -4.0, 7.0])
    assert request.results["y"] is buffer


def test_a_failure_met_while_reading_an_output_is_an_inference_error(later: LaterModel) -> None:
    later.failure = RuntimeError("the device lost its context")
    request = later.create_infer_request()
    failed = "device LATER failed to run 'later': RuntimeError: the device lost"
    with pytest.raises(InferenceError, match=failed) as info:
        request.infer({"x": X})
    assert isinstance(info.value.__cause__, RuntimeError)
    later.failure = None
    np.testing.assert_array_equal(request.infer({"x": X})["y"], [2.0, -4.0, 7.0])  # the request still works


def test_an_async_inference_has_ended_when_wait_returns(later: LaterModel) -> None:
    """``wait()`` and the callback mean the run is over: async inferences get host arrays."""
    request = later.create_infer_request()
    request.start_async({"x": X})
    request.wait()
    assert later.seen == [False]
    assert type(request.get_output_tensor(0).data) is np.ndarray
    np.testing.assert_array_equal(request.results["y"], [2.0, -4.0, 7.0])


def test_callers_other_than_requests_get_host_arrays(later: LaterModel) -> None:
    (output,) = later.run([X], RunContext(False))
    assert later.seen == [False]
    assert type(output) is np.ndarray


def test_hetero_lets_its_last_submodel_return_outputs_later_for_a_request() -> None:
    core = hs.Core(plugins={"LATER": WholeModelDevice(LaterModel), "HETERO": HeteroPlugin()}, autoload=False)
    x = opset.parameter([3], hs.Type.f32, name="x")
    compiled = core.compile_model(hs.Model([opset.relu(x, name="y")], [x], name="later"), "HETERO:LATER")
    (submodel,) = compiled.compiled
    np.testing.assert_array_equal(compiled.create_infer_request().infer({"x": X})["y"], [2.0, -4.0, 7.0])
    (output,) = compiled.run([X], RunContext(False))
    assert submodel.seen == [True, False]
    assert type(output) is np.ndarray


def test_a_submodel_that_feeds_another_finishes_before_the_next_starts() -> None:
    core = hs.Core(
        plugins={"LATER": WholeModelDevice(LaterModel), "TEMPLATE": TemplatePlugin(), "HETERO": HeteroPlugin()},
        autoload=False,
    )
    x = opset.parameter([3], hs.Type.f32, name="x")
    model = hs.Model([opset.negative(opset.relu(x, name="relu"), name="y")], [x], name="two")
    for op in model.get_ops():
        op.get_rt_info()["affinity"] = "TEMPLATE" if op.friendly_name == "y" else "LATER"
    compiled = core.compile_model(model, "HETERO:LATER,TEMPLATE")
    first = next(c for c in compiled.compiled if isinstance(c, LaterModel))
    np.testing.assert_array_equal(compiled.create_infer_request().infer({"x": X})["y"], -2 * X)
    assert first.seen == [False]
