"""Inference as OpenVINO users write it: pre-allocated request tensors filled through ``.data``,
``infer()`` and ``AsyncInferQueue.start_async()`` without inputs, ``latency``, ``share_inputs`` and
``share_outputs``; values checked against numpy."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import hetero_sdk as hs
from hetero_sdk import opset
from hetero_sdk.errors import InferenceError

W = np.arange(12, dtype=np.float32).reshape(4, 3) / 10.0


def _model(batch: int = 2) -> hs.Model:
    x = opset.parameter([batch, 4], hs.Type.f32, name="x")
    y = opset.relu(opset.matmul(x, opset.constant(W)), name="y")
    return hs.Model([y], [x], name="dense")


def _numpy(x: np.ndarray) -> np.ndarray:
    return np.maximum(x @ W, 0.0)


def throughput_loop(ov: Any, core: Any, model: Any, device: str, frames: list[np.ndarray]) -> dict[int, np.ndarray]:
    """A loop as OpenVINO's benchmark samples write it: only ``ov`` (the module) is ours."""
    compiled = core.compile_model(model, device, {"PERFORMANCE_HINT": "THROUGHPUT"})
    queue = ov.AsyncInferQueue(compiled, 3)
    results: dict[int, np.ndarray] = {}
    latencies: list[float] = []

    def callback(request: Any, frame_id: int) -> None:
        results[frame_id] = request.get_output_tensor().data.copy()
        latencies.append(request.latency)

    queue.set_callback(callback)
    for frame_id, frame in enumerate(frames):
        request = queue[queue.get_idle_request_id()]
        request.get_input_tensor().data[:] = frame
        queue.start_async(userdata=frame_id)
    queue.wait_all()
    assert len(latencies) == len(frames) and all(ms > 0.0 for ms in latencies)
    assert all(queue[i].latency > 0.0 for i in range(len(queue)))
    return results


def test_an_openvino_throughput_loop_runs_unchanged(core: hs.Core, rng: np.random.Generator) -> None:
    frames = [rng.standard_normal((2, 4)).astype(np.float32) for _ in range(10)]
    results = throughput_loop(hs, core, _model(), "TEMPLATE", frames)
    assert sorted(results) == list(range(len(frames)))
    for frame_id, frame in enumerate(frames):
        np.testing.assert_allclose(results[frame_id], _numpy(frame), rtol=1e-6, atol=1e-6)


def test_pre_allocated_tensors_are_filled_in_place_and_used_by_infer(core: hs.Core) -> None:
    request = core.compile_model(_model(), "TEMPLATE").create_infer_request()
    tensor = request.get_tensor("x")
    assert isinstance(tensor, hs.Tensor) and tensor.shape == (2, 4) and tensor.element_type == hs.Type.f32
    output = request.get_output_tensor(0)
    assert isinstance(output, hs.Tensor) and output.shape == (2, 3)
    x = np.linspace(-1, 1, 8, dtype=np.float32).reshape(2, 4)
    tensor.data[:] = x
    request.infer()
    np.testing.assert_allclose(output.data, _numpy(x), rtol=1e-6)  # written into the pre-allocated output
    tensor.data[:] = -x
    request.start_async()
    request.wait()
    np.testing.assert_allclose(request.get_output_tensor(0).data, _numpy(-x), rtol=1e-6)
    assert request.get_input_tensor(0).data is tensor.data
    assert request.latency > 0.0


def test_a_tensor_set_on_a_dynamic_input_is_kept_and_an_unset_one_is_a_typed_error(core: hs.Core) -> None:
    request = core.compile_model(_model(batch=-1), "TEMPLATE").create_infer_request()
    assert request.latency == 0.0
    with pytest.raises(InferenceError, match=r"'x' has the dynamic shape .*set_tensor"):
        request.get_input_tensor(0)
    with pytest.raises(InferenceError, match="no inference has completed"):
        request.get_output_tensor(0)
    x = np.ones((5, 4), np.float32)
    request.set_tensor("x", hs.Tensor(x))
    request.infer()
    x[:] = 2.0  # the tensor set is the request's: the next inference reads its new values
    second = request.infer()
    np.testing.assert_allclose(second["y"], _numpy(np.full((5, 4), 2.0, np.float32)), rtol=1e-6)
    assert request.get_input_tensor(0).data is x


def test_share_outputs_returns_the_request_buffers_and_the_default_copies_them(core: hs.Core) -> None:
    request = core.compile_model(_model(), "TEMPLATE").create_infer_request()
    buffer = request.get_output_tensor(0).data
    x = np.ones((2, 4), np.float32)
    copied = request.infer({"x": x})
    shared = request.infer({"x": 2 * x}, share_outputs=True)
    assert shared["y"] is buffer and not np.shares_memory(copied["y"], buffer)
    np.testing.assert_allclose(copied["y"], _numpy(x), rtol=1e-6)  # not overwritten by the second run
    np.testing.assert_allclose(shared["y"], _numpy(2 * x), rtol=1e-6)


def test_start_async_copies_inputs_unless_they_are_shared(core: hs.Core) -> None:
    compiled = core.compile_model(_model(), "TEMPLATE")
    request = compiled.create_infer_request()
    x = np.ones((2, 4), np.float32)
    request.start_async({"x": x})
    request.wait()
    assert request.get_input_tensor(0).data is not x
    request.start_async({"x": x}, share_inputs=True)
    request.wait()
    assert request.get_input_tensor(0).data is x
    np.testing.assert_allclose(compiled({"x": x}, share_inputs=True, share_outputs=False)[0], _numpy(x), rtol=1e-6)
    np.testing.assert_allclose(compiled.infer_new_request({"x": x}, share_inputs=False)[0], _numpy(x), rtol=1e-6)


def test_output_tensors_are_tensors_that_numpy_reads(core: hs.Core) -> None:
    request = core.compile_model(_model(), "TEMPLATE").create_infer_request()
    x = np.eye(2, 4, dtype=np.float32)
    request.infer({"x": x})
    out = request.get_output_tensor(0)
    np.testing.assert_allclose(np.asarray(out), _numpy(x), rtol=1e-6)
    assert np.sum(out) == pytest.approx(float(_numpy(x).sum()), rel=1e-6)
    assert out.data.copy().flags.writeable
