"""bench/bench_decoders.py's honesty and arithmetic, on fake candidates: a candidate whose tokens differ from
ONNX Runtime's gets no figure, one that compiles per token is reported from one short generation, ratios
are medians of per-round ratios; and bench/run.py's table takes its ms/token ratios."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from bench_modules import load_bench_module

_saved = dict(os.environ)
decoders = load_bench_module("bench_decoders")  # (it sets the thread variables for its own process)
os.environ.clear()
os.environ.update(_saved)
run = load_bench_module("run")


def _fake(tokens: list[int], per_token: list[float], compiles_per_token: int | None = None) -> Any:
    """A candidate generating ``tokens[:n]``, its rounds taking ``per_token`` seconds a token in turn."""
    times = iter(per_token)

    def generate(prompt: list[int], n: int) -> Any:
        compiles = None if compiles_per_token is None else compiles_per_token * n
        return decoders.Generation(tokens[:n], ttft=0.01, per_token=next(times), compiles=compiles)

    return generate


def test_tokens_that_differ_from_onnx_runtime_are_reported_without_a_figure() -> None:
    candidates = {
        "onnxruntime": _fake([1, 2, 3, 4], [1.0] * 5),
        "good": _fake([1, 2, 3, 4], [2.0] * 5),
        "bad": _fake([1, 2, 9, 4], [0.5] * 5),
    }
    measured = decoders.measure_generations(candidates, [5], 4, rounds=3, probe=2, probed=[])
    rows = {row["runtime"]: row for row in decoders.rows_of("m", measured)}
    assert rows["bad"] == {"model": "m", "runtime": "bad", "note": "tokens differ from ONNX Runtime's at step 2: 9 "
                           "instead of 3"}  # fmt: skip
    assert rows["good"]["token_vs_ort"] == pytest.approx(2.0)
    assert rows["good"]["ms_per_token"] == pytest.approx(2000.0)


def test_ratios_are_medians_of_the_ratios_of_each_round() -> None:
    candidates = {
        "onnxruntime": _fake([7] * 3, [9.0, 9.0, 1.0, 2.0, 4.0]),  # untimed: the expected tokens, the warm-up
        "other": _fake([7] * 3, [9.0, 3.0, 2.0, 12.0]),  # untimed: the warm-up
    }
    measured = decoders.measure_generations(candidates, [1], 3, rounds=3, probe=2, probed=[])
    (row,) = [r for r in decoders.rows_of("m", measured) if r["runtime"] == "other"]
    # rounds run onnxruntime then other, then other then onnxruntime...: pairs (1, 3), (2, 2), (4, 12)
    assert row["token_vs_ort"] == pytest.approx(3.0)  # median of 3, 1 and 3
    assert row["first_ms_per_token"] == pytest.approx(9000.0) and row["rounds"] == 3


def test_a_device_compiling_per_token_is_reported_from_its_probe_alone() -> None:
    candidates = {
        "onnxruntime": _fake([1, 2, 3, 4, 5, 6], [1.0] * 4),
        "XLA slow": _fake([1, 2, 3, 4, 5, 6], [100.0], compiles_per_token=1),
        "XLA fast": _fake([1, 2, 3, 4, 5, 6], [1.0] * 5, compiles_per_token=0),
    }
    measured = decoders.measure_generations(candidates, [1], 6, rounds=2, probe=3, probed=["XLA slow", "XLA fast"])
    rows = {row["runtime"]: row for row in decoders.rows_of("m", measured)}
    assert rows["XLA slow"]["tokens"] == 3 and rows["XLA slow"]["rounds"] == 1
    assert rows["XLA slow"]["compiles"] == 3 and "compiles per token" in rows["XLA slow"]["note"]
    assert rows["XLA fast"]["tokens"] == 6 and rows["XLA fast"]["rounds"] == 2 and rows["XLA fast"]["compiles"] == 0


def test_the_medium_model_without_a_torch_environment_is_skipped_saying_how_to_make_it(tmp_path: Path) -> None:
    path, why = decoders.medium_path(tmp_path, str(tmp_path / "no-python"))
    assert path is None
    assert "tools/export_decoders.py --arch llama --size medium --out" in why and str(tmp_path) in why


def test_the_suite_table_takes_the_decoders_ms_per_token_ratios() -> None:
    reports = {"decoders": {"rows": [
        {"model": "llama", "runtime": "onnxruntime", "token_vs_ort": 1.0},
        {"model": "llama", "runtime": "TEMPLATE stateful", "token_vs_ort": 4.5},
        {"model": "llama", "runtime": "XLA genai", "note": "fails: ..."},
    ]}}  # fmt: skip
    assert run.ratios(reports) == [
        {"suite": "decoders", "model": "llama ms/token", "candidate": "TEMPLATE stateful", "reference": "onnxruntime",
         "ratio": 4.5, "peak_bytes": None, "peak_rss_bytes": None},
    ]  # fmt: skip
