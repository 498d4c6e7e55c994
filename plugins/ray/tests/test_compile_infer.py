"""Models compiled on a RAY id run on its actor and give the values numpy computes."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("ray")

import hetero_sdk as hs
from ray_helpers import RAY_CONFIG, dense, dense_expected, inputs

from hetero_sdk_ray import RayCompiledModel, RayPlugin


def test_ray_ids_are_listed_without_starting_anything() -> None:
    core = hs.Core(plugins={"RAY": RayPlugin()}, autoload=False)
    assert core.get_property("RAY", "AVAILABLE_DEVICES") == ["0", "1"]
    assert core.available_devices == ["RAY.0", "RAY.1"]


def test_compiled_model_runs_on_the_actor_and_matches_numpy(core: hs.Core) -> None:
    compiled = core.compile_model(dense(), "RAY.1", RAY_CONFIG)
    assert isinstance(compiled, RayCompiledModel)
    assert compiled.get_property("EXECUTION_DEVICES") == ["RAY.1"]
    assert compiled.target == "TEMPLATE.0"  # the device the actor compiled on
    for seed in range(3):
        x = inputs(seed)
        result = compiled({"x": x})["out"]
        np.testing.assert_allclose(result, dense_expected(x), rtol=1e-5, atol=1e-6)
        assert result.flags.writeable  # not a read-only view of Ray's object store


def test_async_requests_run_together_and_each_gets_its_own_result(core: hs.Core) -> None:
    compiled = core.compile_model(dense(), "RAY.0", RAY_CONFIG)
    requests = [compiled.create_infer_request() for _ in range(4)]
    for seed, request in enumerate(requests):
        request.start_async({"x": inputs(seed)})
    for seed, request in enumerate(requests):
        request.wait()
        np.testing.assert_allclose(request.results[0], dense_expected(inputs(seed)), rtol=1e-5, atol=1e-6)
    done: list[int] = []
    queue = hs.AsyncInferQueue(compiled, 2)
    queue.set_callback(lambda request, seed: done.append(seed))
    for seed in range(6):
        queue.start_async({"x": inputs(seed)}, seed)
    queue.wait_all()
    assert sorted(done) == list(range(6))


def test_profiling_rows_come_back_from_the_actor(core: hs.Core) -> None:
    compiled = core.compile_model(dense(), "RAY.0", {**RAY_CONFIG, "PERF_COUNT": True})
    request = compiled.create_infer_request()
    request.infer({"x": inputs()})
    rows = {row.node_name: row for row in request.get_profiling_info()}
    assert {"mm1", "act"} <= rows.keys()  # TEMPLATE fuses mm2 and out
    assert rows["act"].node_type == "Relu" and rows["act"].status == "EXECUTED"
    runtime = compiled.get_runtime_model()
    assert any("execTimeMcs" in op.get_rt_info() for op in runtime.get_ops())


def test_query_model_is_answered_by_the_remote_device(core: hs.Core) -> None:
    answer = core.query_model(dense(), "RAY.1", RAY_CONFIG)
    assert {"mm1", "act", "mm2", "out"} <= answer.keys()
    assert set(answer.values()) == {"RAY.1"}


def test_the_device_reports_memory_for_pipeline_planning(core: hs.Core) -> None:
    # TEMPLATE reports none: the actor's host memory bounds what it can hold
    assert core.get_property("RAY.0", "DEVICE_TOTAL_MEM_SIZE") > 100 * 2**20
