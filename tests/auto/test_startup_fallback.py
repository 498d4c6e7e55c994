"""OpenVINO's accelerated first inference: while the chosen device compiles in the background, TEMPLATE
serves requests; once the compile ends, requests switch to the chosen device. Results are the same
either way. The chosen device here compiles slowly on purpose (a test-only plugin)."""

from __future__ import annotations

import threading
import time

import numpy as np

import hetero_sdk as hs
from template_plugin import TemplatePlugin

from .devices import FakeDevice, make_core, matmul_tanh, numpy_matmul_tanh

DELAY = 0.6
X = np.random.default_rng(1).standard_normal((4, 8)).astype(np.float32)


def _slow_core(**options: object) -> tuple[hs.Core, FakeDevice]:
    slow = FakeDevice("cuda", "a GPU that compiles slowly", compile_delay=DELAY, **options)  # type: ignore[arg-type]
    return make_core(SLOW=slow, TEMPLATE=TemplatePlugin), slow


def test_template_serves_until_the_chosen_device_has_compiled_then_requests_switch() -> None:
    gate = threading.Event()
    slow = FakeDevice("cuda", "a GPU whose compile ends when the test says", gate=gate)
    core = make_core(SLOW=slow, TEMPLATE=TemplatePlugin)
    compiled = core.compile_model(matmul_tanh(), "AUTO")
    first = compiled({"x": X})["y"]
    assert slow.compiles == 0, "the first inference waited for the chosen device"
    assert compiled.serving_device == "TEMPLATE"
    assert compiled.get_property("EXECUTION_DEVICES") == ["TEMPLATE.0"]
    assert compiled.selection.device == "SLOW" and compiled.selection.startup == "TEMPLATE"
    assert compiled.wait_for_selected_device(timeout=0.05) is False

    gate.set()
    assert compiled.wait_for_selected_device(timeout=30)
    assert slow.compiles == 1
    assert compiled.serving_device == "SLOW"
    assert compiled.get_property("EXECUTION_DEVICES") == ["SLOW.0"]
    after = compiled({"x": X})["y"]
    np.testing.assert_allclose(first, numpy_matmul_tanh(X), rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(after, first)


def test_the_first_inference_does_not_wait_for_a_slow_compile() -> None:
    core, _ = _slow_core()
    started = time.perf_counter()
    compiled = core.compile_model(matmul_tanh(), "AUTO")
    compiled({"x": X})
    assert time.perf_counter() - started < DELAY, "the first inference waited for the slow compile"
    assert compiled.wait_for_selected_device(timeout=30)


def test_async_requests_started_before_the_switch_and_after_agree() -> None:
    gate = threading.Event()
    core = make_core(SLOW=FakeDevice("cuda", gate=gate), TEMPLATE=TemplatePlugin)
    compiled = core.compile_model(matmul_tanh(), "AUTO")
    queue = hs.AsyncInferQueue(compiled, 2)
    results: dict[int, np.ndarray] = {}
    queue.set_callback(lambda request, i: results.__setitem__(i, request.get_output_tensor(0).data.copy()))
    queue.start_async({"x": X}, 0)
    queue.wait_all()
    assert compiled.serving_device == "TEMPLATE"
    gate.set()
    assert compiled.wait_for_selected_device(timeout=30)
    queue.start_async({"x": X}, 1)
    queue.wait_all()
    np.testing.assert_allclose(results[0], numpy_matmul_tanh(X), rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(results[0], results[1])


def test_without_the_fallback_compile_waits_for_the_chosen_device() -> None:
    core, slow = _slow_core()
    started = time.perf_counter()
    compiled = core.compile_model(matmul_tanh(), "AUTO", {"ENABLE_STARTUP_FALLBACK": False})
    assert time.perf_counter() - started >= DELAY
    assert slow.compiles == 1 and compiled.serving_device == "SLOW"
    np.testing.assert_allclose(compiled({"x": X})["y"], numpy_matmul_tanh(X), rtol=1e-6, atol=1e-6)


def test_the_fallback_can_be_switched_off_on_the_device() -> None:
    core, _ = _slow_core()
    core.set_property("AUTO", {"ENABLE_STARTUP_FALLBACK": "NO"})
    assert core.get_property("AUTO", "ENABLE_STARTUP_FALLBACK") is False
    assert core.compile_model(matmul_tanh(), "AUTO").serving_device == "SLOW"


def test_when_the_chosen_device_fails_in_the_background_template_keeps_serving() -> None:
    core, _ = _slow_core(fail_compile=True)
    compiled = core.compile_model(matmul_tanh(), "AUTO")
    assert compiled.wait_for_selected_device(timeout=30) is False
    assert "failed on purpose" in str(compiled.compile_failure)
    assert compiled.get_property("EXECUTION_DEVICES") == ["TEMPLATE.0"]
    np.testing.assert_allclose(compiled({"x": X})["y"], numpy_matmul_tanh(X), rtol=1e-6, atol=1e-6)


def test_no_fallback_when_template_is_not_a_candidate_or_is_the_choice() -> None:
    core, _ = _slow_core()
    assert core.compile_model(matmul_tanh(), "AUTO:SLOW").serving_device == "SLOW"
    assert core.compile_model(matmul_tanh(), "AUTO:TEMPLATE,SLOW").selection.startup is None


def test_waiting_can_time_out() -> None:
    gate = threading.Event()
    core = make_core(SLOW=FakeDevice("cuda", gate=gate), TEMPLATE=TemplatePlugin)
    compiled = core.compile_model(matmul_tanh(), "AUTO")
    assert compiled.wait_for_selected_device(timeout=0.01) is False
    gate.set()
    assert compiled.wait_for_selected_device() is True
