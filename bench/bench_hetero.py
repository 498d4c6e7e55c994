"""HETERO's overhead per inference: a model split over two devices against the same model on one.

Usage::

    python bench/bench_hetero.py                                    # all three models, ours and OpenVINO's
    python bench/bench_hetero.py --models transformer --runs 500 --json bench/results/hetero.json

hetero-sdk: each model (``bench/models.py``) is compiled on ``TEMPLATE.0`` alone (``plain``) and on
``HETERO:TEMPLATE.0,TEMPLATE.1`` with manual affinities by stage: everything on ``TEMPLATE.0``
(``hetero/1``: the wrapper alone), the first and second halves on different devices (``hetero/2``),
and the devices alternating stage by stage (``hetero/4``: four subgraphs, three cuts).

OpenVINO, when installed: the same model built with OpenVINO's opset, on ``CPU`` alone and on OpenVINO's
own HETERO over ``CPU`` and ``CPU2``, the CPU plugin library registered a second time under another
name, split the same way. Its CPU device has a per-inference cost in the tens of microseconds, so its
ratio shows what HETERO costs in a native runtime.

One thread everywhere (BLAS variables; OpenVINO's ``INFERENCE_NUM_THREADS=1``, ``NUM_STREAMS=1``,
f32 precision); every output is checked against the numpy forward pass before timing; variants are
interleaved round by round. The table gives medians and p90s in microseconds, the ratio of each
variant's median to its runtime's ``plain`` median, and the added microseconds per inference.
"""

from __future__ import annotations

import os

from timing import THREAD_VARIABLES

for _variable in THREAD_VARIABLES:
    os.environ[_variable] = "1"  # before numpy loads its BLAS

import functools  # noqa: E402
from collections.abc import Callable  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402
from models import MODELS, BenchModel, set_affinities, stage_devices  # noqa: E402
from timing import bench_arguments, environment, measure, print_table, summary, write_report  # noqa: E402

import hetero_sdk as hs  # noqa: E402
from hetero_sdk.hetero.plugin import HeteroPlugin  # noqa: E402
from template_plugin import TemplatePlugin  # noqa: E402

ONE_THREAD = {"INFERENCE_NUM_THREADS": 1, "NUM_STREAMS": 1, "PERFORMANCE_HINT": "LATENCY"}
"""Latency on one thread, for TEMPLATE and OpenVINO's CPU alike."""
OV_CPU = {**ONE_THREAD, "INFERENCE_PRECISION_HINT": "f32"}


def split_parts(bench_model: BenchModel) -> list[int]:
    """The splits measured: 1 (the HETERO wrapper alone), 2, and one run per stage."""
    return sorted({1, 2, len(bench_model.stages)})


def _request_and_submodels(compiled: Any) -> tuple[Any, int]:
    return compiled.create_infer_request(), compiled.get_property("HETERO_NUMBER_OF_SUBMODELS")


def sdk_variants(bench_model: BenchModel) -> dict[str, tuple[Any, int]]:
    """hetero-sdk's compiled variants: name -> (infer request, number of submodels)."""
    core = hs.Core(plugins={"TEMPLATE": TemplatePlugin(num_devices=2), "HETERO": HeteroPlugin()}, autoload=False)
    core.set_property("TEMPLATE", ONE_THREAD)
    variants = {"plain": (core.compile_model(bench_model.build(), "TEMPLATE.0").create_infer_request(), 1)}
    for parts in split_parts(bench_model):
        model = bench_model.build()
        set_affinities(model, stage_devices(bench_model.stages, ["TEMPLATE.0", "TEMPLATE.1"], parts))
        compiled = core.compile_model(model, "HETERO:TEMPLATE.0,TEMPLATE.1")
        variants[f"hetero/{parts}"] = _request_and_submodels(compiled)
    return variants


def cpu_plugin_library() -> Path:
    """OpenVINO's CPU plugin library inside the installed ``openvino`` package.

    :raises FileNotFoundError: when the package holds none.
    """
    import openvino

    package = Path(openvino.__file__).parent
    found = sorted(package.glob("libs/*openvino_intel_cpu_plugin*")) or sorted(
        package.rglob("*openvino_intel_cpu_plugin*")
    )
    if not found:
        raise FileNotFoundError(f"no openvino_intel_cpu_plugin library under {package}")
    return found[0]


def openvino_variants(bench_model: BenchModel) -> dict[str, tuple[Any, int]] | None:
    """OpenVINO's compiled variants (CPU alone, HETERO:CPU,CPU2), or None without openvino."""
    try:
        import openvino as ov
    except ImportError:
        return None
    core = ov.Core()
    core.register_plugin(str(cpu_plugin_library()), "CPU2")
    for device in ("CPU", "CPU2"):
        core.set_property(device, OV_CPU)
    variants = {"plain": (core.compile_model(bench_model.build_openvino(), "CPU").create_infer_request(), 1)}
    for parts in split_parts(bench_model):
        model = bench_model.build_openvino()
        set_affinities(model, stage_devices(bench_model.stages, ["CPU", "CPU2"], parts))
        per_device = {"DEVICE_PROPERTIES": {"CPU": OV_CPU, "CPU2": OV_CPU}}
        compiled = core.compile_model(model, "HETERO:CPU,CPU2", per_device)
        variants[f"hetero/{parts}"] = _request_and_submodels(compiled)
    return variants


def bench(models: list[str], runs: int, warmup: int, use_openvino: bool) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Times every variant of every model; returns one row per (model, runtime, variant) and a summary."""
    rows: list[dict[str, Any]] = []
    overhead: dict[str, Any] = {}
    for name in models:
        bench_model = MODELS[name]()
        x = bench_model.sample_input()
        expected = bench_model.numpy(x)
        feed = {bench_model.input_name: x}
        runtimes = {"hetero-sdk": sdk_variants(bench_model)}
        ov_variants = openvino_variants(bench_model) if use_openvino else None
        if ov_variants is not None:
            runtimes["OpenVINO"] = ov_variants
        calls: dict[str, Callable[[], Any]] = {}
        for runtime, variants in runtimes.items():
            for variant, (request, _) in variants.items():
                output = np.asarray(request.infer(feed)[0])
                label = f"{runtime} {variant}"
                np.testing.assert_allclose(output, expected, rtol=1e-4, atol=1e-4, err_msg=f"{name} {label}")
                calls[label] = functools.partial(request.infer, feed)
        stats = {key: summary(values) for key, values in measure(calls, runs, warmup).items()}
        overhead[name] = {}
        for runtime, variants in runtimes.items():
            plain = stats[f"{runtime} plain"]["median_us"]
            for variant, (_, submodels) in variants.items():
                s = stats[f"{runtime} {variant}"]
                ratio = s["median_us"] / plain
                row = {"model": name, "runtime": runtime, "variant": variant, "subgraphs": submodels, **s}
                rows.append({**row, "ratio": ratio, "added_us": s["median_us"] - plain})
                if variant != "plain":
                    overhead[name].setdefault(variant, {})[runtime] = ratio
    return rows, overhead


def main(argv: list[str] | None = None) -> None:
    """Command-line entry point."""
    parser = bench_arguments(__doc__.splitlines()[0], MODELS, runs=600)
    parser.add_argument("--no-openvino", action="store_true", help="leave OpenVINO out even when installed")
    args = parser.parse_args(argv)
    rows, overhead = bench(args.models, args.runs, args.warmup, not args.no_openvino)
    columns = [
        ("model", "model"),
        ("runtime", "runtime"),
        ("variant", "variant"),
        ("subgraphs", "subgraphs"),
        ("median_us", "median us"),
        ("p90_us", "p90 us"),
        ("ratio", "x/plain"),
        ("added_us", "added us"),
    ]
    print_table(columns, rows)
    print("HETERO/plain, hetero-sdk vs OpenVINO:")
    for model, by_variant in overhead.items():
        for variant, ratios in by_variant.items():
            print(f"  {model} {variant}: " + ", ".join(f"{runtime} {value:.2f}" for runtime, value in ratios.items()))
    write_report(args.json, args, environment(), rows=rows, overhead=overhead)


if __name__ == "__main__":
    main()
