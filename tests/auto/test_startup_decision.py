"""AUTO chooses its startup fallback from costs: TEMPLATE serves first only when its compile and first
inference are clearly quicker than the chosen device's compile; the compiled model and the benchmark
header say which device served each phase."""

from __future__ import annotations

import json
import threading

import numpy as np
import pytest

from hetero_sdk import opset
from hetero_sdk.auto import AutoPlugin
from hetero_sdk.auto.priorities import DeviceKind
from hetero_sdk.auto.startup import (
    CLEAR_MARGIN,
    DEFAULT_COSTS,
    CostBook,
    DeviceCosts,
    ModelSize,
    decide_startup,
    model_size,
)
from hetero_sdk.graph import Model
from template_plugin import TemplatePlugin

from .devices import FakeDevice, make_core, matmul_tanh, numpy_matmul_tanh

X = np.random.default_rng(3).standard_normal((4, 8)).astype(np.float32)
CHEAP = DeviceCosts(compile_base_s=0.0, compile_per_op_s=0.001, flops_per_s=1e9)
SLOW_COMPILER = DeviceCosts(compile_base_s=0.0, compile_per_op_s=0.01, flops_per_s=1e11)


@pytest.mark.parametrize("cores", [2, 8])
def test_startup_serves_only_when_clearly_quicker(cores: int) -> None:
    contention = 2.0 if cores < 4 else 1.0
    # 100 ops: startup compile 0.1 s; target compile 1.0 s; inference flops vary
    for flops in (1e6, 1e8, 3e8, 6e8, 1e9):
        size = ModelSize(ops=100, flops=flops)
        expected_first = (0.1 + flops / 1e9) * contention
        decision = decide_startup("TEMPLATE", "XLA", size, CHEAP, SLOW_COMPILER, cores=cores)
        assert decision.startup_first_s == pytest.approx(expected_first)
        assert decision.target_compile_s == pytest.approx(1.0)
        assert decision.use == (expected_first <= CLEAR_MARGIN * 1.0), (flops, cores)


def test_a_large_model_on_two_cores_keeps_template_out_and_says_why() -> None:
    decision = decide_startup("TEMPLATE", "XLA", ModelSize(700, 4e9), CHEAP, SLOW_COMPILER, cores=2)
    assert not decision.use
    assert decision.describe().startswith("TEMPLATE stays out: ")
    assert "XLA to compile" in decision.describe()


def test_model_size_counts_compute_ops_and_multiply_adds() -> None:
    x = opset.parameter([2, 3, 8, 8], np.float32, name="x")
    w = opset.constant(np.ones((4, 3, 3, 3), np.float32), name="w")
    conv = opset.convolution(x, w, strides=[1, 1], pads_begin=[0, 0], pads_end=[0, 0], dilations=[1, 1], name="c")
    relu = opset.relu(conv, name="r")
    m = opset.constant(np.ones((6, 5), np.float32), name="m")
    flat = opset.reshape(relu, opset.constant(np.array([48, 6], np.int64), name="s"), False, name="f")
    out = opset.matmul(flat, m, name="y")
    size = model_size(Model([out], [x], name="sized"))
    conv_out = 2 * 4 * 6 * 6
    expected = 2.0 * conv_out * 27 + conv_out + 48 * 6 + 2.0 * 48 * 5 * 6
    assert size.ops == 4  # conv, relu, reshape, matmul: constants and parameters are structural
    assert size.flops == pytest.approx(expected)


def test_the_cost_book_learns_per_op_compile_and_inference_speed() -> None:
    book = CostBook({kind: CHEAP for kind in DeviceKind})
    size = ModelSize(ops=50, flops=2e8)
    assert book.costs("XLA", DeviceKind.HOST) == CHEAP
    book.record_compile("XLA", DeviceKind.HOST, size, 1.0)
    book.record_inference("TEMPLATE", DeviceKind.REFERENCE, size, 0.5)
    learned = book.costs("XLA", DeviceKind.HOST)
    assert learned.measured and learned.compile_per_op_s == pytest.approx(1.0 / 50)
    assert book.costs("TEMPLATE", DeviceKind.REFERENCE).flops_per_s == pytest.approx(4e8)
    assert book.costs("XLA.1", DeviceKind.HOST) == CHEAP


def _core(target_costs: DeviceCosts, gate: threading.Event | None = None) -> tuple[object, FakeDevice]:
    slow = FakeDevice("cuda", "a GPU", gate=gate)
    costs = {**DEFAULT_COSTS, DeviceKind.REFERENCE: CHEAP, DeviceKind.ACCELERATOR: target_costs}
    return make_core(SLOW=slow, TEMPLATE=TemplatePlugin, AUTO=lambda: AutoPlugin(CostBook(costs))), slow


def test_when_template_cannot_win_the_chosen_device_serves_from_the_start() -> None:
    quick = DeviceCosts(compile_base_s=0.0, compile_per_op_s=1e-6, flops_per_s=1e12)
    core, slow = _core(quick)
    compiled = core.compile_model(matmul_tanh(), "AUTO")  # type: ignore[attr-defined]
    assert slow.compiles == 1 and compiled.serving_device == "SLOW"
    assert compiled.selection.startup is None and not compiled.decision.use
    np.testing.assert_allclose(compiled({"x": X})["y"], numpy_matmul_tanh(X), rtol=1e-6, atol=1e-6)
    assert compiled.get_property("AUTO_EXECUTION_PHASES") == [
        {"device": "SLOW.0", "role": "selected", "inferences": 1, "seconds": None}
    ]
    summary = compiled.get_property("AUTO_SERVING_SUMMARY")
    assert summary.startswith("every inference on SLOW.0; TEMPLATE stays out: ")


def test_phases_name_the_startup_device_its_inferences_and_the_switch() -> None:
    gate = threading.Event()
    big = DeviceCosts(compile_base_s=10.0, compile_per_op_s=0.0, flops_per_s=1e12)
    core, _ = _core(big, gate)
    compiled = core.compile_model(matmul_tanh(), "AUTO")  # type: ignore[attr-defined]
    results = [compiled({"x": X})["y"] for _ in range(3)]
    assert compiled.serving_device == "TEMPLATE"
    assert "TEMPLATE.0 serves while SLOW compiles (3 inferences so far)" in compiled.get_property(
        "AUTO_SERVING_SUMMARY"
    )
    gate.set()
    assert compiled.wait_for_selected_device(timeout=30)
    results.append(compiled({"x": X})["y"])
    phases = compiled.get_property("AUTO_EXECUTION_PHASES")
    assert [(p["device"], p["role"], p["inferences"]) for p in phases] == [
        ("TEMPLATE.0", "startup", 3),
        ("SLOW.0", "selected", 1),
    ]
    assert phases[0]["seconds"] > 0 and phases[1]["seconds"] is None
    summary = compiled.get_property("AUTO_SERVING_SUMMARY")
    assert summary.startswith("first 3 inferences on TEMPLATE.0 while SLOW.0 compiled (")
    assert "then SLOW.0; TEMPLATE serves first: " in summary
    assert "AUTO_SERVING_SUMMARY" in compiled.get_property("SUPPORTED_PROPERTIES")
    for result in results:
        np.testing.assert_allclose(result, numpy_matmul_tanh(X), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize(
    ("target", "expected"),
    [
        (DeviceCosts(0.0, 1e-6, 1e12), "every inference on SLOW.0; TEMPLATE stays out: "),
        (DeviceCosts(100.0, 0.0, 1e12), "TEMPLATE serves first: "),
    ],
)
def test_the_benchmark_header_says_which_device_served(target: DeviceCosts, expected: str) -> None:
    from click.testing import CliRunner

    from hetero_sdk.cli import cli

    core, _ = _core(target)
    args = ["benchmark", "-d", "AUTO", "-niter", "3"]
    text = CliRunner().invoke(cli, args, obj={"core": core})
    assert text.exit_code == 0, text.output
    header = next(line for line in text.output.splitlines() if line.strip().startswith("AUTO"))
    assert expected in header
    data = CliRunner().invoke(cli, [*args, "--json"], obj={"core": core})
    assert expected in json.loads(data.stdout)["auto_serving"]
