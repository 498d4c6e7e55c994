"""The OpenVINO habit against the dict: a request's pre-allocated tensors filled through ``.data`` and
``infer()`` without inputs, against ``infer({name: array})``, on TEMPLATE.

Usage::

    python bench/bench_request_tensors.py                         # every model of bench/models.py
    python bench/bench_request_tensors.py --models mlp cnn --runs 5000 --json bench/results/tensors.json

Both candidates give the model the same array and read the same output: ``dict`` is
``request.infer({"x": x})[0]``; ``tensors`` is ``tensor.data[:] = x; request.infer();
request.get_output_tensor(0).data`` on a second request of the same compiled model, as OpenVINO's
benchmark samples write it (the copy into the request's tensor is part of that habit's cost). Both are
checked against numpy first. One thread; candidates are interleaved (medians of blocks), and the
paired difference per round is given too (:func:`timing.paired_overhead`). The figure to read is
``tensors/dict``, the ratio of the medians: within 1.05 is the goal.
"""

from __future__ import annotations

import os

from timing import THREAD_VARIABLES

for _variable in THREAD_VARIABLES:
    os.environ[_variable] = "1"  # before numpy loads its BLAS

from collections.abc import Callable  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402
from models import MODELS  # noqa: E402
from timing import bench_arguments, environment, measure, paired_overhead, print_table, summary, write_report  # noqa: E402

import hetero_sdk as hs  # noqa: E402
from template_plugin import TemplatePlugin  # noqa: E402

ONE_THREAD = {"INFERENCE_NUM_THREADS": 1, "NUM_STREAMS": 1, "PERFORMANCE_HINT": "LATENCY"}


def candidates(name: str, core: hs.Core) -> dict[str, Callable[[], Any]]:
    """The two calls on one model, each checked against numpy first."""
    bench_model = MODELS[name]()
    x = bench_model.sample_input()
    expected = bench_model.numpy(x)
    compiled = core.compile_model(bench_model.build(), "TEMPLATE", ONE_THREAD)
    by_dict, by_tensors = compiled.create_infer_request(), compiled.create_infer_request()
    feed = {bench_model.input_name: x}
    tensor = by_tensors.get_tensor(bench_model.input_name)

    def with_tensors() -> Any:
        tensor.data[:] = x
        by_tensors.infer()
        return by_tensors.get_output_tensor(0).data

    calls: dict[str, Callable[[], Any]] = {"dict": lambda: by_dict.infer(feed)[0], "tensors": with_tensors}
    for runtime, call in calls.items():
        np.testing.assert_allclose(call(), expected, rtol=1e-4, atol=1e-4, err_msg=f"{name} by {runtime}")
    return calls


def main(argv: list[str] | None = None) -> None:
    """Command-line entry point."""
    parser = bench_arguments(__doc__.splitlines()[0], MODELS, runs=3000)
    args = parser.parse_args(argv)
    core = hs.Core(plugins={"TEMPLATE": TemplatePlugin()}, autoload=False)
    rows: list[dict[str, Any]] = []
    for name in args.models:
        calls = candidates(name, core)
        stats = {runtime: summary(values) for runtime, values in measure(calls, args.runs, args.warmup).items()}
        paired = paired_overhead(calls, "dict", args.runs)["tensors"]
        ratio = stats["tensors"]["median_us"] / stats["dict"]["median_us"]
        for runtime, s in stats.items():
            rows.append(
                {"model": name, "runtime": runtime, **s, "over_dict": s["median_us"] / stats["dict"]["median_us"]}
            )
        print(f"{name}: tensors/dict = {ratio:.3f}; paired overhead of tensors = {paired:+.2f} us")
    print_table(
        [
            ("model", "model"),
            ("runtime", "runtime"),
            ("median_us", "median us"),
            ("p90_us", "p90 us"),
            ("over_dict", "x/dict"),
        ],
        rows,
    )
    write_report(args.json, args, environment(), rows=rows)


if __name__ == "__main__":
    main()
