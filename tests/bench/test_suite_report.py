"""bench/run.py's table: one ratio row per measured pair, with the candidate's reported memory beside it,
and the devices' memory figures (TEMPLATE's peak, XLA's buffer assignment) as the devices report them."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from bench_modules import load_bench_module

import hetero_sdk as hs
from hetero_sdk import opset

run = load_bench_module("run")
timing = load_bench_module("timing")


def test_ratio_rows_carry_the_candidates_peak_memory() -> None:
    reports = {
        "template": {"rows": [
            {"model": "cnn", "runtime": "TEMPLATE", "template_over": 1.0, "peak_bytes": 2048},
            {"model": "cnn", "runtime": "ORT", "template_over": 3.0, "peak_bytes": None},
        ]},
        "onnx_models": {"rows": [
            {"model": "ppocr-det", "input": "1x3x320x320", "runtime": "XLA", "vs_ort": 1.2, "vs_openvino": 1.5,
             "peak_bytes": 4096},
            {"model": "ppocr-det", "input": "1x3x320x320", "runtime": "onnxruntime", "vs_ort": 1.0},
        ]},
    }  # fmt: skip
    rows = run.ratios(reports)
    assert rows == [
        {"suite": "template", "model": "cnn", "candidate": "TEMPLATE", "reference": "ORT", "ratio": 3.0,
         "peak_bytes": 2048, "peak_rss_bytes": None},
        {"suite": "onnx_models", "model": "ppocr-det 1x3x320x320", "candidate": "XLA", "reference": "onnxruntime",
         "ratio": 1.2, "peak_bytes": 4096, "peak_rss_bytes": None},
        {"suite": "onnx_models", "model": "ppocr-det 1x3x320x320", "candidate": "XLA", "reference": "openvino",
         "ratio": 1.5, "peak_bytes": 4096, "peak_rss_bytes": None},
    ]  # fmt: skip


def test_the_quantized_models_give_a_row_per_timed_device_and_scheme() -> None:
    reports = {
        "quantized": {"rows": [
            {"model": "ppocr-cls", "scheme": "qdq", "runtime": "onnxruntime", "vs_ort": 1.0},
            {"model": "ppocr-cls", "scheme": "qdq", "runtime": "XLA", "vs_ort": 1.07},
            {"model": "ppocr-cls", "scheme": "qdq", "runtime": "TEMPLATE", "vs_ort": None},  # failed its check
        ]},
    }  # fmt: skip
    assert run.ratios(reports) == [
        {"suite": "quantized", "model": "ppocr-cls int8 qdq", "candidate": "XLA", "reference": "onnxruntime",
         "ratio": 1.07, "peak_bytes": None, "peak_rss_bytes": None},
    ]  # fmt: skip
    assert run.SUITE["quantized"][0] == "bench_quantized.py"


def test_devices_report_their_memory_for_one_inference() -> None:
    x = opset.parameter([4, 256], name="x")
    model = hs.Model([opset.relu(opset.multiply(x, np.float32(2)))], [x])
    core = hs.Core()
    template = core.compile_model(model, "TEMPLATE", {"TEMPLATE_DISABLE_TRANSFORMATIONS": True})
    template(np.ones((4, 256), np.float32))
    assert timing.device_peak_bytes(template) == 2 * 4 * 256 * 4  # the input and one result alive at once
    xla = core.compile_model(model, "XLA")
    assert timing.device_peak_bytes(xla) >= 2 * 4 * 256 * 4  # at least its argument and its output


def test_measure_times_every_call_on_the_clock_it_is_given() -> None:
    ticks = iter(range(0, 10_000, 3))  # each reading 3 later than the previous one
    calls = {"a": 0, "b": 0}

    def call(name: str):
        return lambda: calls.__setitem__(name, calls[name] + 1)

    times = timing.measure({"a": call("a"), "b": call("b")}, runs=4, warmup=1, block=2, clock=lambda: next(ticks))
    assert times == {"a": [3] * 4, "b": [3] * 4}
    assert calls == {"a": 1 + 4 + 2, "b": 1 + 4 + 2}  # warm-up, timed, one untimed call per round


def test_paired_overhead_is_the_median_difference_with_the_reference_call_of_each_round() -> None:
    """A fake clock each call moves on by its own duration: the reference 10 us, "slower" 13 us except
    in one round where it takes 40 us (an outlier the median ignores), "faster" 7 us."""
    now = [0.0]
    slow_rounds = iter([13e-6] * 5 + [40e-6] + [13e-6] * 5)
    calls = {"reference": 0, "slower": 0, "faster": 0}

    def call(name: str, seconds) -> Any:
        def run() -> None:
            calls[name] += 1
            now[0] += seconds() if callable(seconds) else seconds

        return run

    over = timing.paired_overhead(
        {"reference": call("reference", 10e-6), "slower": call("slower", lambda: next(slow_rounds)),
         "faster": call("faster", 7e-6)},
        "reference", runs=11, clock=lambda: now[0],
    )  # fmt: skip
    assert over == {"slower": pytest.approx(3.0), "faster": pytest.approx(-3.0)}
    assert calls == {"reference": 11, "slower": 11, "faster": 11}
