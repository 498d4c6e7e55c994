"""HETERO_PLACEMENT_POLICY=LATENCY: the min-cut placement on random DAGs with synthetic costs is optimal
for two devices (brute force), and never worse than the best single device nor PRIORITY for more; on
real devices, the chosen plan computes what PRIORITY's does and the report carries its estimates."""

from __future__ import annotations

import itertools
import random

import numpy as np
import pytest
from hetero_sdk_tutorial import TutorialPlugin
from hypothesis import given, settings
from hypothesis import strategies as st

import hetero_sdk as hs
from hetero_sdk import opset
from hetero_sdk.hetero.latency import CostModel, DataTensor, estimate_ns, place_for_latency
from hetero_sdk.hetero.plugin import HeteroPlugin
from template_plugin import TemplatePlugin


def synthetic(rnd: random.Random, n: int, devices: list[str]) -> tuple[list[str], list[DataTensor], CostModel]:
    """A random DAG (edges forward in 0..n-1) with random op costs; the first device runs every op, the
    others each miss some."""
    ops = [f"op{i}" for i in range(n)]
    tensors = []
    for i in range(n):
        readers = tuple(ops[j] for j in range(i + 1, n) if rnd.random() < 0.4)
        if readers:
            tensors.append(DataTensor(ops[i], readers, rnd.randint(0, 400)))
    op_ns = {op: {d: rnd.randint(0, 100) for d in devices if d == devices[0] or rnd.random() < 0.75} for op in ops}
    hop = {d: rnd.randint(0, 30) for d in devices}
    return ops, tensors, CostModel(op_ns, hop, rnd.choice([0.5, 1.0, 8.0]))


def priority_plan(ops: list[str], costs: CostModel, devices: list[str]) -> dict[str, str]:
    order = devices[1:] + devices[:1]  # the accelerator first, the device that runs everything last
    return {op: next(d for d in order if d in costs.op_ns[op]) for op in ops}


def brute_force(ops: list[str], tensors: list[DataTensor], costs: CostModel, devices: list[str]) -> int:
    plans = (dict(zip(ops, choice)) for choice in itertools.product(devices, repeat=len(ops)))
    return min(c for c in (estimate_ns(p, tensors, costs) for p in plans) if c is not None)


@settings(max_examples=300, deadline=None)
@given(st.randoms(use_true_random=False), st.integers(1, 9))
def test_two_devices_the_min_cut_is_optimal(rnd: random.Random, n: int) -> None:
    devices = ["CPU", "ACC"]
    ops, tensors, costs = synthetic(rnd, n, devices)
    starts = [priority_plan(ops, costs, devices), dict.fromkeys(ops, "CPU")]
    plan = place_for_latency(ops, tensors, costs, devices, starts)
    assert estimate_ns(plan, tensors, costs) == brute_force(ops, tensors, costs, devices)


@settings(max_examples=200, deadline=None)
@given(st.randoms(use_true_random=False), st.integers(1, 7))
def test_more_devices_never_lose_to_a_single_device_nor_priority(rnd: random.Random, n: int) -> None:
    devices = ["CPU", "ACC", "NPU"]
    ops, tensors, costs = synthetic(rnd, n, devices)
    priority = priority_plan(ops, costs, devices)
    singles = [dict.fromkeys(ops, d) for d in devices if all(d in costs.op_ns[op] for op in ops)]
    plan = place_for_latency(ops, tensors, costs, devices, [priority, *singles])
    got = estimate_ns(plan, tensors, costs)
    assert got is not None
    assert all(got <= estimate_ns(p, tensors, costs) for p in [priority, *singles])  # type: ignore[operator]
    assert got >= brute_force(ops, tensors, costs, devices)


def test_unsupported_ops_are_forced_and_transfers_are_paid_once_per_device() -> None:
    # a -> b -> c; b only on ACC; a and c cheaper on CPU; the tensors are big: all on ACC wins
    costs = CostModel(
        {"a": {"CPU": 1, "ACC": 5}, "b": {"ACC": 1}, "c": {"CPU": 1, "ACC": 5}}, {"CPU": 0, "ACC": 0}, 1.0
    )
    tensors = [DataTensor("a", ("b",), 100), DataTensor("b", ("c",), 100)]
    plan = place_for_latency(["a", "b", "c"], tensors, costs, ["CPU", "ACC"], [{"a": "CPU", "b": "ACC", "c": "CPU"}])
    assert plan == {"a": "ACC", "b": "ACC", "c": "ACC"}
    assert estimate_ns(plan, tensors, costs) == 11
    # one tensor read by two ops on the other device moves once
    fan = [DataTensor("a", ("b", "c"), 100)]
    assert estimate_ns({"a": "CPU", "b": "ACC", "c": "ACC"}, fan, costs) == 1 + 1 + 5 + 100


def ping_pong(blocks: int = 4) -> hs.Model:
    """MatMul -> Relu -> Softmax, repeated: TUTORIAL lacks Softmax, so PRIORITY switches every block."""
    rng = np.random.default_rng(0)
    h = x = opset.parameter([4, 32], hs.Type.f32, name="x")
    for i in range(blocks):
        w = opset.constant((rng.standard_normal((32, 32)) / 6).astype(np.float32), name=f"w{i}")
        h = opset.softmax(opset.relu(opset.matmul(h, w, name=f"mm{i}"), name=f"relu{i}"), 1, name=f"softmax{i}")
    return hs.Model([h], [x], name="ping_pong")


@pytest.fixture(scope="module")
def core() -> hs.Core:
    plugins = {"TEMPLATE": TemplatePlugin(), "TUTORIAL": TutorialPlugin(), "HETERO": HeteroPlugin()}
    return hs.Core(plugins=plugins, autoload=False)


def test_latency_policy_on_devices_reports_estimates_and_computes_the_same(core: hs.Core) -> None:
    model = ping_pong()
    x = np.random.default_rng(2).standard_normal((4, 32)).astype(np.float32)
    priority = core.compile_model(model, "HETERO:TUTORIAL,TEMPLATE")
    latency = core.compile_model(model, "HETERO:TUTORIAL,TEMPLATE", {"HETERO_PLACEMENT_POLICY": "LATENCY"})
    report = latency.placement_report()
    assert report.policy == "LATENCY" and report.latency is not None
    estimated = report.latency.estimated
    assert set(estimated) == {"chosen", "PRIORITY", "TEMPLATE"}  # TUTORIAL cannot run the whole model
    assert estimated["chosen"] <= min(estimated["PRIORITY"], estimated["TEMPLATE"])
    assert set(report.latency.measured) == {"chosen", "TEMPLATE"}
    assert all(report.placement[op][0] == "TEMPLATE" for op in report.placement if op.startswith("softmax"))
    assert latency.get_property("HETERO_NUMBER_OF_SUBMODELS") <= priority.get_property("HETERO_NUMBER_OF_SUBMODELS")
    np.testing.assert_allclose(latency(x)[0], priority(x)[0], rtol=1e-5, atol=1e-7)
    assert "latency of chosen: estimated" in report.to_text()


def test_imported_models_keep_the_costs_without_calibrating(core: hs.Core, monkeypatch: pytest.MonkeyPatch) -> None:
    compiled = core.compile_model(ping_pong(), "HETERO:TUTORIAL,TEMPLATE", {"HETERO_PLACEMENT_POLICY": "LATENCY"})
    blob = compiled.export_model()

    def no_calibration(*args: object) -> None:
        raise AssertionError("import_model calibrated")

    monkeypatch.setattr("hetero_sdk.hetero.calibration.calibrate", no_calibration)
    again = core.import_model(blob, "HETERO")
    assert again.placement_report().latency == compiled.placement_report().latency
    assert again.placement_report().placement == compiled.placement_report().placement
