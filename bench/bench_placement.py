"""HETERO_PLACEMENT_POLICY: PRIORITY against LATENCY on a model where PRIORITY ping-pongs.

Usage::

    python bench/bench_placement.py --blocks 8 --runs 300
    python bench/bench_placement.py --model ppocr-cls --runs 100   # a real convnet (bench/real_models.py)

The model repeats MatMul -> Relu -> Softmax; TUTORIAL (the plugin tutorial's device, numpy kernels with
little overhead per op) lacks Softmax, so PRIORITY (``HETERO:TUTORIAL,TEMPLATE``) switches devices in
every block, two cuts per block. LATENCY calibrates both devices and places by min-cut. The table gives
each plan's subgraphs, its estimated latency (LATENCY's cost model) and its measured median and p90
(interleaved rounds, one thread), with TEMPLATE alone for reference.
"""

from __future__ import annotations

import os

from timing import THREAD_VARIABLES

for _variable in THREAD_VARIABLES:
    os.environ[_variable] = "1"  # before numpy loads its BLAS

import argparse  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
from timing import environment, measure, print_table, summary  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "plugins" / "tutorial"))

from hetero_sdk_tutorial import TutorialPlugin  # noqa: E402
from real_models import MODELS, fetch  # noqa: E402

import hetero_sdk as hs  # noqa: E402
from hetero_sdk import opset  # noqa: E402
from hetero_sdk.hetero.plugin import HeteroPlugin  # noqa: E402
from template_plugin import TemplatePlugin  # noqa: E402


def ping_pong(blocks: int, width: int, batch: int) -> hs.Model:
    """MatMul -> Relu -> Softmax, ``blocks`` times."""
    rng = np.random.default_rng(0)
    h = x = opset.parameter([batch, width], hs.Type.f32, name="x")
    for i in range(blocks):
        w = opset.constant((rng.standard_normal((width, width)) / np.sqrt(width)).astype(np.float32), name=f"w{i}")
        h = opset.softmax(opset.relu(opset.matmul(h, w, name=f"mm{i}"), name=f"relu{i}"), 1, name=f"softmax{i}")
    return hs.Model([h], [x], name="ping_pong")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--blocks", type=int, default=8)
    parser.add_argument("--width", type=int, default=64)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--runs", type=int, default=300)
    parser.add_argument(
        "--model",
        choices=sorted(MODELS),
        help="a real ONNX model instead: TUTORIAL runs its activations and elementwise ops, not its "
        "convolutions, so PRIORITY switches devices around every convolution",
    )
    args = parser.parse_args()
    core = hs.Core(
        plugins={"TEMPLATE": TemplatePlugin(), "TUTORIAL": TutorialPlugin(), "HETERO": HeteroPlugin()}, autoload=False
    )
    core.set_property("TEMPLATE", {"INFERENCE_NUM_THREADS": 1})
    if args.model:
        real = MODELS[args.model]
        shapes = {name: list(value.shape) for name, value in real.feeds.items()}
        model = hs.convert_model(fetch(real), input=shapes)
        x: dict[str, np.ndarray] | list[np.ndarray] = real.feeds
        title = f"{args.model} {shapes}"
    else:
        model = ping_pong(args.blocks, args.width, args.batch)
        x = [np.random.default_rng(1).standard_normal((args.batch, args.width)).astype(np.float32)]
        title = f"ping-pong x {args.blocks} blocks, [{args.batch}, {args.width}]"
    priority = core.compile_model(model, "HETERO:TUTORIAL,TEMPLATE")
    started = time.perf_counter()
    latency = core.compile_model(model, "HETERO:TUTORIAL,TEMPLATE", {"HETERO_PLACEMENT_POLICY": "LATENCY"})
    compile_s = time.perf_counter() - started
    alone = core.compile_model(model, "TEMPLATE")
    np.testing.assert_allclose(latency(x)[0], priority(x)[0], rtol=1e-4, atol=1e-5)
    report = latency.placement_report()
    assert report.latency is not None
    print(report.to_text())
    requests = {name: c.create_infer_request() for name, c in [("PRIORITY", priority), ("LATENCY", latency),
                                                                  ("TEMPLATE alone", alone)]}  # fmt: skip
    times = measure({name: (lambda r=r: r.infer(x)) for name, r in requests.items()}, args.runs, warmup=20)
    estimated = {"PRIORITY": report.latency.estimated["PRIORITY"], "LATENCY": report.latency.estimated["chosen"],
                 "TEMPLATE alone": report.latency.estimated.get("TEMPLATE")}  # fmt: skip
    submodels = {"PRIORITY": priority, "LATENCY": latency}
    rows = [
        {
            "plan": name,
            "subgraphs": submodels[name].get_property("HETERO_NUMBER_OF_SUBMODELS") if name in submodels else 1,
            "estimated_us": estimated[name] * 1e6 if estimated[name] is not None else None,
            **summary(times[name]),
        }
        for name in requests
    ]
    print(f"\n{title}; LATENCY compile {compile_s * 1e3:.0f} ms")
    columns = [("plan", "plan"), ("subgraphs", "subgraphs"), ("estimated_us", "estimated us"),
               ("median_us", "median us"), ("p90_us", "p90 us")]  # fmt: skip
    print_table(columns, rows)
    print(environment())


if __name__ == "__main__":
    main()
