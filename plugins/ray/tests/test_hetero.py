"""HETERO and PIPELINE_PARALLEL split one model across RAY actors; the results do not change."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("ray")

import hetero_sdk as hs
from ray_helpers import RAY_CONFIG, dense, dense_expected, inputs

ON_RAY = {"DEVICE_PROPERTIES": {"RAY": RAY_CONFIG}}


def _split_by_hand() -> hs.Model:
    model = dense()
    for op in model.get_ops():
        if op.type_name not in ("Parameter", "Constant", "Result"):
            op.get_rt_info()["affinity"] = "RAY.0" if op.friendly_name in ("mm1", "act") else "RAY.1"
    return model


def test_hetero_over_two_actors_equals_the_unsplit_model(core: hs.Core) -> None:
    split = core.compile_model(_split_by_hand(), "HETERO:RAY.0,RAY.1", ON_RAY)
    whole = core.compile_model(dense(), "RAY.0", RAY_CONFIG)
    assert split.get_property("HETERO_NUMBER_OF_SUBMODELS") == 2
    assert split.get_property("EXECUTION_DEVICES") == ["RAY.0", "RAY.1"]
    for seed in range(3):
        x = inputs(seed)
        got = split({"x": x})[0]
        np.testing.assert_allclose(got, dense_expected(x), rtol=1e-5, atol=1e-6)
        np.testing.assert_array_equal(got, whole({"x": x})[0])


def test_async_requests_pipeline_across_actors(core: hs.Core) -> None:
    split = core.compile_model(_split_by_hand(), "HETERO:RAY.0,RAY.1", ON_RAY)
    requests = [split.create_infer_request() for _ in range(3)]
    for seed, request in enumerate(requests):
        request.start_async({"x": inputs(seed)})
    for seed, request in enumerate(requests):
        request.wait()
        np.testing.assert_allclose(request.results[0], dense_expected(inputs(seed)), rtol=1e-5, atol=1e-6)


def test_pipeline_parallel_splits_by_the_actors_memory_budgets(core: hs.Core) -> None:
    # the whole model needs 268 bytes: 172 of weights (96 + 72 + 4), 96 of peak activations
    budget = {"DEVICE_TOTAL_MEM_SIZE": 200}
    config = {
        "MODEL_DISTRIBUTION_POLICY": {"PIPELINE_PARALLEL"},
        "DEVICE_PROPERTIES": {"RAY": RAY_CONFIG, "RAY.0": budget, "RAY.1": budget},
    }
    compiled = core.compile_model(dense(), "HETERO:RAY.0,RAY.1", config)
    assert compiled.get_property("HETERO_NUMBER_OF_SUBMODELS") == 2
    assert compiled.get_property("EXECUTION_DEVICES") == ["RAY.0", "RAY.1"]
    x = inputs(7)
    np.testing.assert_allclose(compiled({"x": x})[0], dense_expected(x), rtol=1e-5, atol=1e-6)


def test_pipeline_parallel_does_not_split_a_model_that_fits_one_actor(core: hs.Core) -> None:
    config = {"MODEL_DISTRIBUTION_POLICY": {"PIPELINE_PARALLEL"}, "DEVICE_PROPERTIES": {"RAY": RAY_CONFIG}}
    compiled = core.compile_model(dense(), "HETERO:RAY.0,RAY.1", config)
    assert compiled.get_property("HETERO_NUMBER_OF_SUBMODELS") == 1
