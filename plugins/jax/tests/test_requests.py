"""Infer requests on XLA: tensors by name, index and port; errors; async, callbacks, cancel; threads; profiling."""

from __future__ import annotations

import threading
import time

import hetero_sdk as hs
import jax
import numpy as np
import pytest
from hetero_sdk import Model, Type, opset
from hetero_sdk.errors import InferenceError, RequestBusyError, RequestCancelledError
from hetero_sdk.plugin import RunContext
from hetero_sdk.reference import evaluate
from xla_helpers import core

from hetero_sdk_jax import XlaPlugin


def _model() -> Model:
    rng = np.random.default_rng(0)
    a = opset.parameter([2, 8], Type.f32, name="a")
    b = opset.parameter([2, 8], Type.f32, name="b")
    hidden = opset.tanh(
        opset.matmul(opset.add(a, b, name="sum"), rng.standard_normal((8, 8)).astype(np.float32)), name="hidden"
    )
    results = [opset.result(hidden, name="out0"), opset.result(opset.reduce_max(a, [1], name="peak"), name="out1")]
    return Model(results, [a, b], name="two_in_two_out")


def _inputs(seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {"a": rng.standard_normal((2, 8)).astype(np.float32), "b": rng.standard_normal((2, 8)).astype(np.float32)}


@pytest.fixture(scope="module")
def compiled() -> hs.CompiledModel:
    return core().compile_model(_model(), "XLA", {"PERF_COUNT": True, "PERFORMANCE_HINT": "THROUGHPUT"})


def _expected(inputs: dict[str, np.ndarray]) -> list[np.ndarray]:
    return evaluate(_model(), inputs)


def test_ports_keep_names_types_shapes_and_friendly_names(compiled: hs.CompiledModel) -> None:
    model = _model()
    for got, want in zip(compiled.inputs + compiled.outputs, model.inputs + model.outputs):
        assert (got.names, got.element_type, got.partial_shape, got.node.friendly_name) == (
            want.names, want.element_type, want.partial_shape, want.node.friendly_name,
        )  # fmt: skip


def test_set_and_get_tensors_by_name_index_and_port(compiled: hs.CompiledModel) -> None:
    inputs = _inputs()
    request = compiled.create_infer_request()
    request.set_tensor("a", inputs["a"])
    request.set_input_tensor(1, inputs["b"])
    request.infer()
    expected = _expected(inputs)
    np.testing.assert_allclose(request.get_tensor("hidden"), expected[0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(request.get_output_tensor(1), expected[1])
    np.testing.assert_allclose(request.results[compiled.outputs[0]], expected[0], rtol=1e-5, atol=1e-6)
    assert request.get_tensor(compiled.inputs[0]).data is inputs["a"]


def test_wrong_names_shapes_and_types_raise_inference_errors(compiled: hs.CompiledModel) -> None:
    request = compiled.create_infer_request()
    with pytest.raises(InferenceError, match="no input or output named 'c'"):
        request.set_tensor("c", np.zeros((2, 8), np.float32))
    with pytest.raises(InferenceError, match="shape"):
        request.infer({"a": np.zeros((3, 8), np.float32), "b": np.zeros((2, 8), np.float32)})
    with pytest.raises(InferenceError, match="element type"):
        request.infer({"a": np.zeros((2, 8), np.float64), "b": np.zeros((2, 8), np.float32)})


def test_inputs_are_not_modified_and_buffers_are_reused_or_user_provided(compiled: hs.CompiledModel) -> None:
    inputs = _inputs()
    copies = {k: v.copy() for k, v in inputs.items()}
    request = compiled.create_infer_request()
    buffer = np.zeros((2, 8), np.float32)
    request.set_output_tensor(0, buffer)
    for _ in range(3):
        request.infer(inputs)
    for key in inputs:
        np.testing.assert_array_equal(inputs[key], copies[key])
    np.testing.assert_allclose(buffer, _expected(inputs)[0], rtol=1e-5, atol=1e-6)
    assert request.get_output_tensor(0).data is buffer


def _numpy_forward(inputs: dict[str, np.ndarray]) -> list[np.ndarray]:
    weights = np.random.default_rng(0).standard_normal((8, 8)).astype(np.float32)  # _model()'s
    return [np.tanh((inputs["a"] + inputs["b"]) @ weights), inputs["a"].max(axis=1)]


@pytest.mark.parametrize("copy_ahead", [False, True], ids=["copied-when-read", "copied-ahead"])
def test_the_fast_path_keeps_each_runs_results_and_honours_buffers_set_later(copy_ahead: bool) -> None:
    """Without PERF_COUNT a static model runs the fast path: each inference's results stay its own,
    an output buffer set between runs is written, and a request cancelled while idle runs again; with
    the outputs read back as they are read on the CPU, and copied ahead as on an accelerator."""
    compiled = core().compile_model(_model(), "XLA")
    compiled.copy_ahead = copy_ahead
    request = compiled.create_infer_request()
    first = request.infer(_inputs(1))
    second = request.infer([_inputs(2)["a"], _inputs(2)["b"]])
    for results, seed in ((first, 1), (second, 2)):
        for got, want in zip(results.to_tuple(), _numpy_forward(_inputs(seed))):
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    buffer = np.full((2,), np.nan, np.float32)
    request.set_output_tensor(1, buffer)
    request.cancel()  # nothing running: no effect
    third = request.infer(_inputs(3), share_outputs=True)
    np.testing.assert_array_equal(buffer, _inputs(3)["a"].max(axis=1))
    assert third[1] is buffer and request.get_output_tensor(1).data is buffer
    assert request.get_profiling_info() == []


@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
@pytest.mark.parametrize("accelerator", [False, True], ids=["cpu", "accelerator"])
def test_run_returns_jax_arrays_only_to_callers_that_read_them_later(dynamic: bool, accelerator: bool) -> None:
    """An infer request sets ``host_outputs_later``: on an accelerator (copies ahead) the run hands back
    the JAX arrays as soon as it is queued; on the CPU, and to any other caller, host arrays. All hold
    the same values."""
    model = _model()
    if dynamic:
        model.reshape({"a": [-1, 8], "b": [-1, 8]})
    compiled = core().compile_model(model, "XLA")
    compiled.copy_ahead = accelerator
    inputs = _inputs(4)
    later = compiled.run([inputs["a"], inputs["b"]], RunContext(False, host_outputs_later=True))
    now = compiled.run([inputs["a"], inputs["b"]], RunContext(False))
    assert all(isinstance(o, jax.Array) if accelerator else type(o) is np.ndarray for o in later)
    assert all(type(o) is np.ndarray for o in now)
    for got_later, got_now, want in zip(later, now, _numpy_forward(inputs)):
        np.testing.assert_allclose(np.asarray(got_later), want, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(got_now, want, rtol=1e-5, atol=1e-5)


def test_async_with_callbacks_timeouts_and_errors(compiled: hs.CompiledModel) -> None:
    request = compiled.create_infer_request()
    done = []
    request.set_callback(lambda userdata: done.append(userdata), "first")
    request.infer(_inputs())
    assert done == []  # not called for sync infer
    request.start_async(_inputs(1), userdata="second")
    assert request.wait_for(10.0)
    assert done == ["second"]
    np.testing.assert_allclose(request.get_output_tensor(0), _expected(_inputs(1))[0], rtol=1e-5, atol=1e-6)
    assert request.get_profiling_info()

    def fail(_: object) -> None:
        raise ValueError("callback failed")

    request.set_callback(fail)
    request.start_async(_inputs())
    with pytest.raises(ValueError, match="callback failed"):
        request.wait()


def test_busy_and_cancelled_requests(compiled: hs.CompiledModel) -> None:
    gate = threading.Event()
    blocker = compiled.create_infer_request()
    blocker.set_callback(lambda _: gate.wait(5))
    requests = [compiled.create_infer_request() for _ in range(8)]
    blocker.start_async(_inputs())
    for request in requests:  # fill the executor so that the last request stays pending
        request.start_async(_inputs())
    last = requests[-1]
    with pytest.raises(RequestBusyError):
        last.set_tensor("a", np.zeros((2, 8), np.float32))
    last.cancel()
    gate.set()
    blocker.wait()
    for request in requests[:-1]:
        request.wait()
    try:
        last.wait()
    except RequestCancelledError:
        pass
    else:  # it had started already: cancelling a running request is allowed to lose the race
        assert last.get_output_tensor(0).shape == (2, 8)
    cancelled = compiled.create_infer_request()
    cancelled.cancel()  # nothing running: no effect
    cancelled.infer(_inputs())


def test_three_threads_give_the_sequential_results(compiled: hs.CompiledModel) -> None:
    sequential = [compiled.create_infer_request().infer(_inputs(seed)).to_tuple() for seed in range(3)]
    results: dict[int, tuple[np.ndarray, ...]] = {}

    def work(seed: int) -> None:
        request = compiled.create_infer_request()
        for _ in range(10):
            if seed % 2:
                request.start_async(_inputs(seed))
                request.wait()
                results[seed] = tuple(request.get_output_tensor(i) for i in range(2))
            else:
                results[seed] = request.infer(_inputs(seed)).to_tuple()

    threads = [threading.Thread(target=work, args=(seed,)) for seed in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for seed in range(3):
        for got, want in zip(results[seed], sequential[seed]):
            np.testing.assert_array_equal(got, want)


def test_async_infer_queue(compiled: hs.CompiledModel) -> None:
    collected: dict[int, np.ndarray] = {}
    queue = hs.AsyncInferQueue(compiled, 4)
    queue.set_callback(lambda request, job: collected.__setitem__(job, request.get_output_tensor(1).data.copy()))
    for job in range(12):
        queue.start_async(_inputs(job), job)
    queue.wait_all()
    for job in range(12):
        np.testing.assert_array_equal(collected[job], _inputs(job)["a"].max(axis=1))


def test_an_openvino_throughput_loop_fills_each_requests_own_tensors(compiled: hs.CompiledModel) -> None:
    """OpenVINO's benchmark habit: fill an idle request's pre-allocated tensors through ``.data``,
    start it without inputs, read ``get_output_tensor().data`` and ``latency`` in the callback."""
    collected: dict[int, list[np.ndarray]] = {}
    latencies: list[float] = []
    queue = hs.AsyncInferQueue(compiled, 3)

    def callback(request: hs.InferRequest, job: int) -> None:
        collected[job] = [request.get_output_tensor(i).data.copy() for i in range(2)]
        latencies.append(request.latency)

    queue.set_callback(callback)
    for job in range(9):
        request = queue[queue.get_idle_request_id()]
        for name, value in _inputs(job).items():
            request.get_tensor(name).data[:] = value
        queue.start_async(userdata=job)
    queue.wait_all()
    assert len(latencies) == 9 and min(latencies) > 0.0
    for job in range(9):
        for got, want in zip(collected[job], _numpy_forward(_inputs(job))):
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_remote_outputs_stay_device_tensors_beside_pre_allocated_inputs(compiled: hs.CompiledModel) -> None:
    request = compiled.create_infer_request()
    request.remote_outputs = True
    for name, value in _inputs(4).items():
        request.get_input_tensor(compiled.inputs.index(compiled.input(name))).data[:] = value
    request.infer()
    remote = request.get_output_tensor(0)
    assert not isinstance(remote, hs.Tensor) and remote.device_name.startswith("XLA")
    np.testing.assert_allclose(np.asarray(remote), _numpy_forward(_inputs(4))[0], rtol=1e-5, atol=1e-5)


def test_profiling_has_a_row_per_executable_and_its_transfers(compiled: hs.CompiledModel) -> None:
    request = compiled.create_infer_request()
    request.infer(_inputs())
    rows = {row.node_name: row for row in request.get_profiling_info()}
    name = "two_in_two_out"
    assert set(rows) == {name, f"{name}/host_to_device", f"{name}/device_to_host"}
    assert rows[name].exec_type.startswith("xla:") and rows[name].node_type == "XlaExecutable"
    assert all(row.real_time.total_seconds() >= 0 for row in rows.values())
    runtime = compiled.get_runtime_model()
    ops = {n.friendly_name: n.get_rt_info() for n in runtime.get_ops()}
    assert ops["hidden"]["originalLayersNames"] == "hidden" and ops["hidden"]["execType"].startswith("xla:")
    assert "execTimeMcs" in ops["hidden"]


def test_objects_outlive_each_other_in_any_order() -> None:
    local = hs.Core(plugins={"XLA": XlaPlugin}, autoload=False)
    compiled_model = local.compile_model(_model(), "XLA")
    request = compiled_model.create_infer_request()
    del local, compiled_model
    time.sleep(0.01)
    request.infer(_inputs())
    assert request.get_output_tensor(0).shape == (2, 8)
