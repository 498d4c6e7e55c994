"""Async requests: start_async/wait, timeouts, callbacks, cancellation, busy requests, AsyncInferQueue."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

import hetero_sdk as hs
from hetero_sdk import opset
from hetero_sdk.errors import InferenceError, RequestBusyError, RequestCancelledError
from hetero_sdk.plugin import CompiledModel, RunContext

from .devices import WholeModelDevice, compiled_relu


class GatedModel(CompiledModel):
    """Doubles its input, but only once ``gate`` is set; checks for cancellation while it waits."""

    def __init__(self, model: hs.Model, device_name: str, config: dict[str, Any]) -> None:
        super().__init__(model, device_name, config)
        self.gate = threading.Event()
        self.started = threading.Event()

    def run(self, inputs: Sequence[Any], context: RunContext) -> list[Any]:
        self.started.set()
        while not self.gate.wait(0.002):
            context.check_cancelled()
        if inputs[0][0] < 0:
            raise ValueError("the gated device rejects negative data")
        with context.timed("double", "Multiply", "gated"):
            return [inputs[0] * 2]


X = np.array([1.0, 2.0, 3.0], np.float32)


@pytest.fixture
def gated(core: hs.Core) -> GatedModel:
    compiled = compiled_relu(core, GatedModel, "GATED")
    yield compiled
    compiled.gate.set()
    compiled.release()


def test_start_async_then_wait_gives_the_results(gated: GatedModel) -> None:
    request = gated.create_infer_request()
    request.start_async({"x": X})
    gated.gate.set()
    request.wait()
    np.testing.assert_array_equal(request.results[0], X * 2)


def test_wait_on_an_idle_request_returns_at_once(gated: GatedModel) -> None:
    request = gated.create_infer_request()
    request.wait()
    assert request.wait_for(0) is True


@pytest.mark.parametrize("timeout", ["1", True, [1]])
def test_wait_for_refuses_a_timeout_that_is_not_a_number_of_seconds(gated: GatedModel, timeout: object) -> None:
    request = gated.create_infer_request()
    with pytest.raises(TypeError, match=r"wait_for takes a timeout in seconds"):
        request.wait_for(timeout)  # type: ignore[arg-type]


def test_wait_for_times_out_while_running_then_reports_completion(gated: GatedModel) -> None:
    request = gated.create_infer_request()
    request.start_async({"x": X})
    gated.started.wait(5)
    assert request.wait_for(0.02) is False
    assert request.is_busy
    gated.gate.set()
    assert request.wait_for(5) is True
    assert not request.is_busy


def test_callback_runs_once_per_async_inference_with_its_userdata(gated: GatedModel) -> None:
    gated.gate.set()
    calls: list[tuple[Any, np.ndarray]] = []
    request = gated.create_infer_request()
    request.set_callback(lambda data: calls.append((data, request.results[0].copy())), "default")
    request.start_async({"x": X})
    request.wait()
    request.start_async({"x": X + 1}, userdata="this run")
    request.wait()
    request.start_async({"x": X})
    request.wait()
    assert [data for data, _ in calls] == ["default", "this run", "default"]
    np.testing.assert_array_equal(calls[1][1], (X + 1) * 2)


def test_exception_in_callback_surfaces_from_wait_once(gated: GatedModel) -> None:
    gated.gate.set()
    request = gated.create_infer_request()

    def callback(_: Any) -> None:
        raise LookupError("callback failed")

    request.set_callback(callback)
    request.start_async({"x": X})
    with pytest.raises(LookupError, match="callback failed"):
        request.wait()
    request.wait()  # reported once
    np.testing.assert_array_equal(request.results[0], X * 2)


def test_device_failure_in_async_run_surfaces_from_wait_chained(gated: GatedModel) -> None:
    gated.gate.set()
    request = gated.create_infer_request()
    request.start_async({"x": -X})
    with pytest.raises(InferenceError, match=r"GATED.*'gated'.*ValueError: the gated device rejects") as info:
        request.wait()
    assert isinstance(info.value.__cause__, ValueError)
    assert not request.is_busy


def test_wrong_inputs_fail_start_async_immediately(gated: GatedModel) -> None:
    request = gated.create_infer_request()
    with pytest.raises(InferenceError, match="shape"):
        request.start_async({"x": np.zeros(4, np.float32)})
    assert not request.is_busy


def test_touching_a_running_request_raises_request_busy(gated: GatedModel) -> None:
    request = gated.create_infer_request()
    request.start_async({"x": X})
    gated.started.wait(5)
    for touch in (
        lambda: request.infer({"x": X}),
        lambda: request.start_async({"x": X}),
        lambda: request.set_tensor("x", X),
        lambda: request.set_input_tensor(0, X),
        lambda: request.set_output_tensor(0, np.zeros(3, np.float32)),
    ):
        with pytest.raises(RequestBusyError, match="running"):
            touch()
    gated.gate.set()
    request.wait()
    np.testing.assert_array_equal(request.results[0], X * 2)


def test_cancel_on_an_idle_request_does_nothing(gated: GatedModel) -> None:
    gated.gate.set()
    request = gated.create_infer_request()
    request.cancel()
    np.testing.assert_array_equal(request.infer({"x": X})[0], X * 2)


def test_cancel_before_start_drops_the_pending_inference(gated: GatedModel) -> None:
    running, pending = gated.create_infer_request(), gated.create_infer_request()
    running.start_async({"x": X})
    gated.started.wait(5)
    pending.start_async({"x": X})  # queued: the model has one worker
    pending.cancel()
    with pytest.raises(RequestCancelledError, match="before it started"):
        pending.wait()
    assert not pending.is_busy
    gated.gate.set()
    running.wait()
    np.testing.assert_array_equal(pending.infer({"x": X + 1})[0], (X + 1) * 2)


def test_cancel_during_a_run_stops_it(gated: GatedModel) -> None:
    request = gated.create_infer_request()
    calls: list[Any] = []
    request.set_callback(calls.append, "done")
    request.start_async({"x": X})
    gated.started.wait(5)
    request.cancel()
    with pytest.raises(RequestCancelledError):
        request.wait()
    assert calls == ["done"] and not request.is_busy
    gated.gate.set()
    np.testing.assert_array_equal(request.infer({"x": X})[0], X * 2)


def test_cancelled_error_is_a_runtime_error() -> None:
    assert issubclass(RequestCancelledError, RuntimeError) and issubclass(RequestBusyError, RuntimeError)


@pytest.mark.parametrize("perf_count", [True, False])
def test_profiling_info_after_async_follows_perf_count(core: hs.Core, perf_count: bool) -> None:
    core.register_plugin(WholeModelDevice(GatedModel), "GATED")
    x = opset.parameter([3], hs.Type.f32, name="x")
    compiled = core.compile_model(hs.Model([x], [x]), "GATED", {"PERF_COUNT": perf_count})
    compiled.gate.set()  # type: ignore[attr-defined]
    request = compiled.create_infer_request()
    request.start_async({"x": X})
    request.wait()
    names = [row.node_name for row in request.get_profiling_info()]
    assert names == (["double"] if perf_count else [])


# -- AsyncInferQueue --------------------------------------------------------------------------------------


def test_async_infer_queue_runs_every_job_with_its_userdata(core: hs.Core, mlp, rng) -> None:
    compiled = core.compile_model(mlp.model, "TEMPLATE", {"NUM_STREAMS": 3})
    inputs = [mlp.make_inputs(rng)[0] for _ in range(24)]
    results: dict[int, np.ndarray] = {}
    lock = threading.Lock()
    queue = hs.AsyncInferQueue(compiled, 3)
    assert len(queue) == 3 and all(isinstance(r, hs.InferRequest) for r in queue)

    def done(request: hs.InferRequest, index: int) -> None:
        with lock:
            results[index] = request.results[0].copy()

    queue.set_callback(done)
    for i, x in enumerate(inputs):
        queue.start_async({"x": x}, userdata=i)
    queue.wait_all()
    assert sorted(results) == list(range(24))
    for i, x in enumerate(inputs):
        np.testing.assert_allclose(results[i], mlp.expected([x])[0], rtol=1e-4, atol=1e-4)
    assert queue.is_ready() and 0 <= queue.get_idle_request_id() < 3


def test_async_infer_queue_defaults_to_the_optimal_number_of_requests(core: hs.Core, mlp) -> None:
    compiled = core.compile_model(mlp.model, "TEMPLATE", {"NUM_STREAMS": 2})
    assert len(hs.AsyncInferQueue(compiled)) == compiled.get_property("OPTIMAL_NUMBER_OF_INFER_REQUESTS") == 2


def test_async_infer_queue_reraises_a_callback_error_from_wait_all(core: hs.Core, mlp, rng) -> None:
    queue = hs.AsyncInferQueue(core.compile_model(mlp.model, "TEMPLATE"), 2)

    def done(request: hs.InferRequest, index: int) -> None:
        if index == 3:
            raise ArithmeticError("job 3 failed")

    queue.set_callback(done)
    for i in range(6):
        queue.start_async({"x": mlp.make_inputs(rng)[0]}, userdata=i)
    with pytest.raises(ArithmeticError, match="job 3"):
        queue.wait_all()
    queue.start_async({"x": mlp.make_inputs(rng)[0]}, userdata=0)  # every request came back
    queue.wait_all()
