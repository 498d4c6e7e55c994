"""What one remote hop costs: a HETERO boundary between two RAY actors against one between two local
TEMPLATE devices.

Usage::

    python bench/bench_ray.py                          # cut tensors of 1 KiB and 1 MiB, 200 runs each
    python bench/bench_ray.py --models 1MiB --runs 500 --json bench/results/ray.json

The model is ``y = (x * 2) + 1`` on an f32 vector: two elementwise ops whose compute is negligible, so
what the figures show is the cost of crossing devices. Four ways to run it, timed in interleaved rounds
(:func:`timing.measure`):

- ``TEMPLATE``: unsplit, on the local TEMPLATE device;
- ``HETERO local``: ``HETERO:TEMPLATE.0,TEMPLATE.1`` split between the two ops (one local boundary);
- ``RAY``: unsplit, on one actor (``RAY.0``): one round trip from the driver to an actor and back;
- ``HETERO remote``: ``HETERO:RAY.0,RAY.1`` split between the two ops (a boundary between actors: the
  cut tensor goes from RAY.0 through the driver to RAY.1, through Ray's object store).

The per-boundary overheads are the medians' differences: ``HETERO local - TEMPLATE`` (a local
boundary) and ``HETERO remote - RAY`` (a remote hop). Every result is checked against numpy. One
thread: BLAS variables at 1, TEMPLATE with ``INFERENCE_NUM_THREADS=1``, and a local Ray instance with
one CPU per actor's worth of scheduling (``num_cpus=2``).
"""

from __future__ import annotations

import os

from timing import THREAD_VARIABLES

for _variable in THREAD_VARIABLES:
    os.environ[_variable] = "1"  # before numpy loads its BLAS (the actors inherit the environment)

import logging  # noqa: E402
import statistics  # noqa: E402
from collections.abc import Callable  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402
import ray  # noqa: E402
from hetero_sdk_ray import RayPlugin  # noqa: E402
from timing import bench_arguments, environment, measure, print_table, summary, write_report  # noqa: E402

import hetero_sdk as hs  # noqa: E402
from hetero_sdk import opset  # noqa: E402
from hetero_sdk.hetero.plugin import HeteroPlugin  # noqa: E402
from template_plugin import TemplatePlugin  # noqa: E402

SIZES = {"1KiB": 256, "1MiB": 262_144}
"""Cut tensor name -> f32 elements."""

LOCAL = {"INFERENCE_NUM_THREADS": 1, "NUM_STREAMS": 1, "PERFORMANCE_HINT": "LATENCY"}
REMOTE = {"TARGET_DEVICE": "TEMPLATE", "NUM_STREAMS": 1, "PERFORMANCE_HINT": "LATENCY"}


def chain(elements: int) -> hs.Model:
    """``(x * 2) + 1``; the ops are ``double`` and ``shift``."""
    x = opset.parameter([elements], hs.Type.f32, name="x")
    y = opset.add(opset.multiply(x, np.float32(2.0), name="double"), np.float32(1.0), name="shift")
    return hs.Model([y], [x], name=f"chain{elements}")


def split(elements: int, first: str, second: str) -> hs.Model:
    """:func:`chain` with ``double`` on ``first`` and ``shift`` on ``second``: one boundary between them."""
    model = chain(elements)
    for op in model.get_ops():
        if op.friendly_name in ("double", "shift"):
            op.get_rt_info()["affinity"] = first if op.friendly_name == "double" else second
    return model


def candidates(core: hs.Core, elements: int, x: np.ndarray) -> dict[str, Callable[[], Any]]:
    """The four ways to run the chain, each checked once against numpy."""
    compiled = {
        "TEMPLATE": core.compile_model(chain(elements), "TEMPLATE.0", LOCAL),
        "HETERO local": core.compile_model(
            split(elements, "TEMPLATE.0", "TEMPLATE.1"),
            "HETERO:TEMPLATE.0,TEMPLATE.1",
            {"DEVICE_PROPERTIES": {"TEMPLATE": LOCAL}},
        ),
        "RAY": core.compile_model(chain(elements), "RAY.0", REMOTE),
        "HETERO remote": core.compile_model(
            split(elements, "RAY.0", "RAY.1"), "HETERO:RAY.0,RAY.1", {"DEVICE_PROPERTIES": {"RAY": REMOTE}}
        ),
    }
    expected = x * 2 + 1
    calls = {}
    for name, model in compiled.items():
        request = model.create_infer_request()
        np.testing.assert_allclose(request.infer({"x": x})[0], expected, rtol=1e-6)
        calls[name] = lambda request=request: request.infer({"x": x})
    return calls


def main() -> None:
    parser = bench_arguments("HETERO boundary overhead: remote (RAY actors) against local", list(SIZES), runs=200)
    args = parser.parse_args()
    ray.init(num_cpus=2, include_dashboard=False, logging_level=logging.ERROR, log_to_driver=False)
    core = hs.Core(
        plugins={"TEMPLATE": TemplatePlugin(num_devices=2), "HETERO": HeteroPlugin(), "RAY": RayPlugin()},
        autoload=False,
    )
    rows = []
    for name in args.models:
        elements = SIZES[name]
        x = np.random.default_rng(0).standard_normal(elements).astype(np.float32)
        times = measure(candidates(core, elements, x), args.runs, args.warmup)
        median = {mode: statistics.median(t) * 1e6 for mode, t in times.items()}
        rows.append(
            {
                "cut": name,
                **{f"{mode}_us": median[mode] for mode in times},
                "local_boundary_us": median["HETERO local"] - median["TEMPLATE"],
                "remote_hop_us": median["HETERO remote"] - median["RAY"],
                "detail": {mode: summary(t) for mode, t in times.items()},
            }
        )
    columns = [
        ("cut", "cut tensor"),
        ("TEMPLATE_us", "TEMPLATE us"),
        ("HETERO local_us", "HETERO local us"),
        ("RAY_us", "RAY us"),
        ("HETERO remote_us", "HETERO remote us"),
        ("local_boundary_us", "local boundary us"),
        ("remote_hop_us", "remote hop us"),
    ]
    print(f"medians over {args.runs} runs, one thread; ray {ray.__version__}")
    print_table(columns, rows)
    write_report(args.json, args, {**environment(), "ray": ray.__version__}, rows=rows)
    ray.shutdown()


if __name__ == "__main__":
    main()
