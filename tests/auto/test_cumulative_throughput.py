"""AUTO with ``PERFORMANCE_HINT=CUMULATIVE_THROUGHPUT`` (OpenVINO's MULTI): the model compiled on every
candidate that runs all of it, each request on the device with the fewest requests in flight."""

from __future__ import annotations

import threading
from typing import Any

import numpy as np
import pytest

import hetero_sdk as hs
from hetero_sdk.errors import DeviceNotFoundError, UnsupportedOperationError
from template_plugin import TemplatePlugin

from .devices import FakeDevice, make_core, matmul_tanh, numpy_matmul_tanh

CUMULATIVE = {"PERFORMANCE_HINT": "CUMULATIVE_THROUGHPUT"}
X = np.random.default_rng(3).standard_normal((4, 8)).astype(np.float32)


@pytest.fixture
def core() -> hs.Core:
    return make_core(GPU=FakeDevice("cuda", "a GPU"), TEMPLATE=TemplatePlugin)


def test_every_capable_device_compiles_and_executes(core: hs.Core) -> None:
    compiled = core.compile_model(matmul_tanh(), "AUTO:GPU,TEMPLATE", CUMULATIVE)
    assert compiled.get_property("EXECUTION_DEVICES") == ["GPU.0", "TEMPLATE.0"]
    alone = [core.compile_model(matmul_tanh(), d, {"PERFORMANCE_HINT": "THROUGHPUT"}) for d in ("GPU", "TEMPLATE")]
    optimal = sum(c.get_property("OPTIMAL_NUMBER_OF_INFER_REQUESTS") for c in alone)
    assert compiled.get_property("OPTIMAL_NUMBER_OF_INFER_REQUESTS") == optimal
    np.testing.assert_allclose(compiled({"x": X})["y"], numpy_matmul_tanh(X), rtol=1e-6, atol=1e-6)


def test_devices_hand_back_host_outputs_so_in_flight_counts_whole_runs(core: hs.Core) -> None:
    """A request lets a device return outputs still being copied back; AUTO's devices do not get that,
    or a run would stop counting as in flight before it ends."""
    compiled = core.compile_model(matmul_tanh(), "AUTO:GPU,TEMPLATE", CUMULATIVE)
    gpu = compiled.served[0].compiled
    seen, honest = [], gpu.run

    def recorded(inputs: Any, context: Any) -> Any:
        seen.append(context.host_outputs_later)
        return honest(inputs, context)

    gpu.run = recorded  # type: ignore[method-assign]
    np.testing.assert_allclose(compiled({"x": X})["y"], numpy_matmul_tanh(X), rtol=1e-6, atol=1e-6)
    assert seen == [False]


def test_a_request_goes_to_the_device_with_fewest_in_flight(core: hs.Core) -> None:
    """While the GPU holds a request, the next one runs on TEMPLATE; idle, the GPU (priority) wins."""
    compiled = core.compile_model(matmul_tanh(), "AUTO:GPU,TEMPLATE", CUMULATIVE)
    gpu = compiled.served[0].compiled
    entered, release = threading.Event(), threading.Event()
    honest = gpu.run

    def held(inputs: Any, context: Any) -> Any:
        entered.set()
        assert release.wait(30)
        return honest(inputs, context)

    gpu.run = held  # type: ignore[method-assign]
    first = compiled.create_infer_request()
    first.start_async({"x": X})
    assert entered.wait(30)
    second = compiled.create_infer_request()
    second.infer({"x": X * 2})
    assert compiled.inferences_per_device == {"GPU": 0, "TEMPLATE": 1}
    release.set()
    first.wait()
    assert compiled.inferences_per_device == {"GPU": 1, "TEMPLATE": 1}
    np.testing.assert_allclose(first.get_output_tensor(0), numpy_matmul_tanh(X), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(second.get_output_tensor(0), numpy_matmul_tanh(X * 2), rtol=1e-6, atol=1e-6)


def test_many_async_requests_all_return_the_right_results(core: hs.Core) -> None:
    compiled = core.compile_model(matmul_tanh(), "AUTO:GPU,TEMPLATE", CUMULATIVE)
    inputs = [np.full((4, 8), i / 10, dtype=np.float32) for i in range(24)]
    results: dict[int, np.ndarray] = {}
    queue = hs.AsyncInferQueue(compiled, 6)
    queue.set_callback(lambda request, i: results.__setitem__(i, request.get_output_tensor(0).data.copy()))
    for i, x in enumerate(inputs):
        queue.start_async({"x": x}, i)
    queue.wait_all()
    for i, x in enumerate(inputs):
        np.testing.assert_allclose(results[i], numpy_matmul_tanh(x), rtol=1e-6, atol=1e-6)
    assert sum(compiled.inferences_per_device.values()) == len(inputs)


def test_devices_that_cannot_run_the_whole_model_are_left_out(core: hs.Core) -> None:
    partial = make_core(GPU=FakeDevice("cuda", declines=("Tanh",)), TEMPLATE=TemplatePlugin)
    compiled = partial.compile_model(matmul_tanh(), "AUTO:GPU,TEMPLATE", CUMULATIVE)
    assert compiled.get_property("EXECUTION_DEVICES") == ["TEMPLATE.0"]


def test_export_says_how_to_get_a_blob(core: hs.Core) -> None:
    compiled = core.compile_model(matmul_tanh(), "AUTO:GPU,TEMPLATE", CUMULATIVE)
    with pytest.raises(UnsupportedOperationError, match="compile with PERFORMANCE_HINT=THROUGHPUT or LATENCY"):
        compiled.export_model()


def test_multi_points_to_auto_with_the_cumulative_hint(core: hs.Core) -> None:
    with pytest.raises(DeviceNotFoundError, match="MULTI is AUTO with PERFORMANCE_HINT=CUMULATIVE_THROUGHPUT"):
        core.compile_model(matmul_tanh(), "MULTI:GPU,TEMPLATE")
