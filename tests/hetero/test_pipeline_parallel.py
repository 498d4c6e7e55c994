"""MODEL_DISTRIBUTION_POLICY=PIPELINE_PARALLEL on four TEMPLATE devices: budgets in DEVICE_PROPERTIES,
equal shares, no split when the model fits, errors, results equal to one device, and async requests
running as a pipeline."""

from __future__ import annotations

import itertools
import threading
import time
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hetero_sdk as hs
from hetero_sdk import opset
from hetero_sdk.errors import AffinityError, CompilationError
from hetero_sdk.hetero.plugin import HeteroPlugin
from template_plugin import TemplatePlugin

DEVICES = "HETERO:TEMPLATE.0,TEMPLATE.1,TEMPLATE.2,TEMPLATE.3"
PIPELINE = {"MODEL_DISTRIBUTION_POLICY": {"PIPELINE_PARALLEL"}}
WIDTH = 32
LAYER_WEIGHTS = WIDTH * WIDTH * 4


@pytest.fixture(scope="module")
def core() -> hs.Core:
    return hs.Core(plugins={"TEMPLATE": TemplatePlugin(num_devices=4), "HETERO": HeteroPlugin()}, autoload=False)


def mlp(layers: int, batch: int = 2, seed: int = 0) -> hs.Model:
    """x -> (MatMul -> Relu) * layers, each MatMul with its own WIDTH x WIDTH f32 weights."""
    rng = np.random.default_rng(seed)
    h = x = opset.parameter([batch, WIDTH], hs.Type.f32, name="x")
    for i in range(layers):
        w = opset.constant((rng.standard_normal((WIDTH, WIDTH)) / np.sqrt(WIDTH)).astype(np.float32), name=f"w{i}")
        h = opset.relu(opset.matmul(h, w, name=f"mm{i}"), name=f"relu{i}")
    return hs.Model([h], [x], name="mlp")


def budgets(value: int) -> dict[str, Any]:
    return {"DEVICE_PROPERTIES": {f"TEMPLATE.{i}": {"DEVICE_TOTAL_MEM_SIZE": value} for i in range(4)}}


def test_each_stage_fits_its_budget_and_results_equal_one_device(core: hs.Core) -> None:
    model = mlp(8)
    x = np.random.default_rng(1).standard_normal((2, WIDTH)).astype(np.float32)
    expected = core.compile_model(model, "TEMPLATE")(x)[0]
    # room for two layers' weights and some activations per device: four stages of two layers
    compiled = core.compile_model(model, DEVICES, {**PIPELINE, **budgets(2 * LAYER_WEIGHTS + 2048)})
    report = compiled.placement_report()
    assert compiled.get_property("HETERO_NUMBER_OF_SUBMODELS") == 4
    assert [s.device for s in report.stages] == [f"TEMPLATE.{i}" for i in range(4)]
    assert all(s.weight_bytes == 2 * LAYER_WEIGHTS and s.memory_bytes <= s.budget for s in report.stages)
    assert all(s.budget_source == "budget" for s in report.stages)
    # the cuts carry one [2, 32] f32 activation each
    assert [c.nbytes for c in report.cuts] == [2 * WIDTH * 4] * 3
    np.testing.assert_allclose(compiled(x)[0], expected, rtol=1e-6)


def test_the_budget_is_not_passed_on_to_the_device(core: hs.Core) -> None:
    compiled = core.compile_model(mlp(4), DEVICES, {**PIPELINE, **budgets(10**6)})
    assert "DEVICE_TOTAL_MEM_SIZE" not in compiled.get_property("DEVICE_PROPERTIES")["TEMPLATE.0"]


def test_a_model_that_fits_the_first_device_is_not_split_and_the_report_says_so(core: hs.Core) -> None:
    compiled = core.compile_model(mlp(4), DEVICES, {**PIPELINE, **budgets(10**6)})
    report = compiled.placement_report()
    assert compiled.get_property("HETERO_NUMBER_OF_SUBMODELS") == 1
    assert report.policy == "PIPELINE_PARALLEL" and len(report.stages) == 1
    assert any("fits on TEMPLATE.0" in note and "not split" in note for note in report.notes)
    assert "not split" in report.to_text()


def test_devices_without_memory_get_equal_shares(core: hs.Core) -> None:
    compiled = core.compile_model(mlp(8), DEVICES, PIPELINE)
    stages = compiled.placement_report().stages
    assert len(stages) == 4 and {s.budget_source for s in stages} == {"equal share"}
    assert [s.weight_bytes for s in stages] == [2 * LAYER_WEIGHTS] * 4


def test_nothing_fits_raises_naming_bytes_needed_and_available(core: hs.Core) -> None:
    with pytest.raises(CompilationError, match=r"needs \d+ bytes on one device .* TEMPLATE.0 4000 bytes"):
        core.compile_model(mlp(4), DEVICES, {**PIPELINE, **budgets(4000)})


def test_manual_affinities_and_pipeline_parallel_conflict(core: hs.Core) -> None:
    model = mlp(2)
    for op in model.get_ops():
        op.get_rt_info()["affinity"] = "TEMPLATE.0"
    with pytest.raises(AffinityError, match="remove them"):
        core.compile_model(model, DEVICES, PIPELINE)


def test_export_import_keeps_the_stages(core: hs.Core) -> None:
    compiled = core.compile_model(mlp(8), DEVICES, {**PIPELINE, **budgets(2 * LAYER_WEIGHTS + 2048)})
    again = core.import_model(compiled.export_model(), "HETERO")
    assert again.placement_report().stages == compiled.placement_report().stages
    x = np.ones((2, WIDTH), np.float32)
    np.testing.assert_array_equal(again(x)[0], compiled(x)[0])


@settings(max_examples=15, deadline=None)
@given(st.integers(1, 10), st.integers(1, 6), st.integers(0, 1000))
def test_split_outputs_equal_unsplit_outputs(core: hs.Core, layers: int, per_device: int, seed: int) -> None:
    model = mlp(layers, seed=seed)
    x = np.random.default_rng(seed).standard_normal((2, WIDTH)).astype(np.float32)
    budget = per_device * LAYER_WEIGHTS + 4096
    if -(-layers // per_device) > 4:
        with pytest.raises(CompilationError):
            core.compile_model(model, DEVICES, {**PIPELINE, **budgets(budget)})
        return
    compiled = core.compile_model(model, DEVICES, {**PIPELINE, **budgets(budget)})
    assert compiled.get_property("HETERO_NUMBER_OF_SUBMODELS") == -(-layers // per_device)
    np.testing.assert_allclose(compiled(x)[0], core.compile_model(model, "TEMPLATE")(x)[0], rtol=1e-6)


def test_async_requests_run_as_a_pipeline(core: hs.Core) -> None:
    compiled = core.compile_model(mlp(8), DEVICES, PIPELINE)
    spans: list[tuple[int, float, float]] = []  # (stage, start, end)
    lock = threading.Lock()
    for stage, sub in enumerate(compiled.compiled):
        original = sub.run

        def timed(inputs: Any, context: Any, stage: int = stage, original: Any = original) -> Any:
            started = time.perf_counter()
            time.sleep(0.03)
            outputs = original(inputs, context)
            with lock:
                spans.append((stage, started, time.perf_counter()))
            return outputs

        sub.run = timed  # type: ignore[method-assign]
    queue = hs.AsyncInferQueue(compiled, 4)
    started = time.perf_counter()
    for i in range(8):
        queue.start_async(np.full((2, WIDTH), i, np.float32))
    queue.wait_all()
    elapsed = time.perf_counter() - started
    # 8 requests x 4 stages x 30 ms = 0.96 s one at a time; pipelined about (8 + 3) x 30 ms = 0.33 s
    assert elapsed < 0.6
    for stage in range(4):  # one stage at a time per device
        mine = sorted((s, e) for k, s, e in spans if k == stage)
        assert all(a[1] <= b[0] + 1e-4 for a, b in itertools.pairwise(mine))
    overlapping = [(a, b) for a in spans for b in spans if b[0] == a[0] + 1 and a[1] < b[2] and b[1] < a[2]]
    assert overlapping  # stage k of one request ran while stage k + 1 of another did
