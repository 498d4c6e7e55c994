"""bench/bench_quantized.py's non-timing parts: where quantized files are cached, seeded calibration, the
output scale it reads from a model, and the tolerance a device's output is checked with before timing;
and, when the model cache holds PP-OCR cls, its QDQ quantization run on XLA against ONNX Runtime."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from bench_modules import load_bench_module
from onnx import helper, numpy_helper

_saved = dict(os.environ)
quantized = load_bench_module("bench_quantized")  # (it sets the thread variables for its own process)
os.environ.clear()
os.environ.update(_saved)
real_models = load_bench_module("real_models")


def test_quantized_files_sit_beside_the_original() -> None:
    original = Path("/cache/pkg/models/det.onnx")
    assert quantized.quantized_path(original, "qdq") == Path("/cache/pkg/models/det.int8-qdq.onnx")
    assert {quantized.quantized_path(original, s).name for s in quantized.SCHEMES} == {
        "det.int8-dynamic.onnx", "det.int8-qdq.onnx", "det.int8-qoperator.onnx"
    }  # fmt: skip
    with pytest.raises(ValueError, match="qdq"):
        quantized.quantized_path(original, "int4")


def test_calibration_is_seeded_and_shaped_like_the_feeds() -> None:
    model = real_models.RealModel("p==1", "m.onnx", {"x": np.zeros((1, 3, 4, 5), np.float32)})
    first, again = quantized.calibration_feeds(model, 3), quantized.calibration_feeds(model, 3)
    assert len(first) == 3 and all(f["x"].shape == (1, 3, 4, 5) and f["x"].dtype == np.float32 for f in first)
    for a, b in zip(first, again):
        np.testing.assert_array_equal(a["x"], b["x"])
    assert not np.array_equal(first[0]["x"], first[1]["x"])
    assert not np.array_equal(first[0]["x"], quantized.calibration_feeds(model, 1, seed=1)[0]["x"])
    reader = quantized.SeededCalibration(first)
    assert [reader.get_next() is not None for _ in range(4)] == [True, True, True, False]


def test_output_scales_are_those_of_the_dequantize_writing_an_output() -> None:
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"]),
        helper.make_node("DequantizeLinear", ["q", "s", "z"], ["y"]),
        helper.make_node("Relu", ["x"], ["r"]),
    ]
    inits = [
        numpy_helper.from_array(np.array(0.25, np.float32), "s"),
        numpy_helper.from_array(np.array(3, np.uint8), "z"),
    ]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", 1, [2])],
                              [helper.make_tensor_value_info(n, 1, [2]) for n in ("y", "r")], inits)  # fmt: skip
    assert quantized.output_scales(helper.make_model(graph)) == {"y": 0.25}


def test_a_value_a_few_levels_off_passes_and_many_do_not() -> None:
    want = np.linspace(0, 10, 1000)
    assert quantized.within_tolerance(want, want, 0.1).passed
    one_off = want.copy()
    one_off[3] += 0.1 * quantized.TOLERANCE_LEVELS * 10  # far off, but one value in a thousand
    check = quantized.within_tolerance(one_off, want, 0.1)
    assert check.passed and check.beyond == pytest.approx(0.001) and check.levels == pytest.approx(40)
    many_off = want + np.where(np.arange(1000) % 50 == 0, 1.0, 0.0)  # 2 % of the values, 10 levels each
    assert not quantized.within_tolerance(many_off, want, 0.1).passed
    assert quantized.within_tolerance(many_off, want, 0.3).passed  # 3.3 levels of a coarser scale
    assert quantized.within_tolerance(want + 0.4, want, None).passed  # 4 % of the range, no scale


def test_an_output_all_but_constant_is_judged_by_the_absolute_tolerance() -> None:
    want = np.full(100, 1e-7)
    want[0] = 1.2e-7
    got = want + 5e-8  # 250 % of the range, 100 levels of a 5e-10 scale, but 5e-8 apart
    assert quantized.within_tolerance(got, want, 5e-10).passed
    assert not quantized.within_tolerance(want + 1e-3, want, 5e-10).passed


def test_nan_shapes_and_infinities_must_match() -> None:
    want = np.array([1.0, np.inf, 2.0])
    assert quantized.within_tolerance(want.copy(), want, 0.1).passed
    assert not quantized.within_tolerance(np.array([1.0, 3.0, 2.0]), want, 0.1).passed
    assert not quantized.within_tolerance(np.array([np.nan, np.inf, 2.0]), want, 0.1).passed
    assert not quantized.within_tolerance(np.array([1.0, np.inf]), want, 0.1).passed


def test_ppocr_cls_quantized_qdq_runs_on_xla_as_onnx_runtime() -> None:
    """The real PP-OCR classifier through quantize_static (QDQ), when the model cache holds it."""
    pytest.importorskip("onnxruntime.quantization")
    model = real_models.MODELS["ppocr-cls"]
    original = real_models.CACHE / f"{model.package.replace('==', '-')}" / model.member
    if not original.exists():
        pytest.skip(f"{original} is not in the model cache (python bench/bench_quantized.py fetches it)")
    import hetero_sdk as hs

    path = quantized.quantize(model, original, "qdq")
    want = real_models.onnx_runtime_outputs(path, model.feeds)
    got = hs.Core().compile_model(hs.convert_model(path), "XLA")(model.feeds)
    for name, value in want.items():
        check = quantized.within_tolerance(np.asarray(got[name]), value, None)
        assert check.passed and check.max_abs_err < 0.05, check
