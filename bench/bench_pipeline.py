"""PIPELINE_PARALLEL's throughput: one model over four devices, four requests in flight against one at a
time.

Usage::

    python bench/bench_pipeline.py                       # four TEMPLATE devices
    python bench/bench_pipeline.py --xla                 # four XLA CPU devices (forced host devices)
    python bench/bench_pipeline.py --requests 64 --width 768

An MLP of eight MatMul + Relu layers is split by ``MODEL_DISTRIBUTION_POLICY=PIPELINE_PARALLEL`` into four
stages (equal shares: the devices report no memory); one thread per device (BLAS variables, XLA's
single-threaded Eigen). ``sequential`` runs the requests one after the other with ``infer``; ``pipelined``
keeps N = 4 requests in flight with an ``AsyncInferQueue``; ``one device`` runs the whole model on device 0.
Outputs are checked against numpy first. The table gives inferences per second and the speed-up over
``sequential``.
"""

from __future__ import annotations

import os
import sys

from timing import THREAD_VARIABLES

for _variable in THREAD_VARIABLES:
    os.environ[_variable] = "1"  # before numpy loads its BLAS
if "--xla" in sys.argv:  # before jax initialises
    os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=4 --xla_cpu_multi_thread_eigen=false"
    os.environ.setdefault("JAX_PLATFORMS", "cpu")

import argparse  # noqa: E402
import time  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402
from timing import environment, print_table  # noqa: E402

import hetero_sdk as hs  # noqa: E402
from hetero_sdk import opset  # noqa: E402
from hetero_sdk.hetero.plugin import HeteroPlugin  # noqa: E402
from template_plugin import TemplatePlugin  # noqa: E402

STAGES = 4


def mlp(width: int, batch: int, layers: int = 8) -> tuple[hs.Model, list[np.ndarray]]:
    """The model and its weights (for the numpy check)."""
    rng = np.random.default_rng(0)
    weights = [(rng.standard_normal((width, width)) / np.sqrt(width)).astype(np.float32) for _ in range(layers)]
    h = x = opset.parameter([batch, width], hs.Type.f32, name="x")
    for i, w in enumerate(weights):
        h = opset.relu(opset.matmul(h, opset.constant(w, name=f"w{i}"), name=f"mm{i}"), name=f"relu{i}")
    return hs.Model([h], [x], name="mlp"), weights


def throughput(compiled: Any, inputs: list[np.ndarray], in_flight: int) -> float:
    """Inferences per second over ``inputs``, with ``in_flight`` async requests (0: sync, one at a time)."""
    started = time.perf_counter()
    if in_flight == 0:
        request = compiled.create_infer_request()
        for x in inputs:
            request.infer([x])
    else:
        queue = hs.AsyncInferQueue(compiled, in_flight)
        for x in inputs:
            queue.start_async([x])
        queue.wait_all()
    return len(inputs) / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--xla", action="store_true", help="four XLA CPU devices instead of four TEMPLATE devices")
    parser.add_argument("--requests", type=int, default=48)
    parser.add_argument("--width", type=int, default=512)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=3, help="best of this many passes")
    args = parser.parse_args()
    plugins: dict[str, Any] = {"HETERO": HeteroPlugin()}
    if args.xla:
        from hetero_sdk_jax import XlaPlugin

        plugins["XLA"], kind = XlaPlugin(), "XLA"
    else:
        plugins["TEMPLATE"], kind = TemplatePlugin(num_devices=STAGES), "TEMPLATE"
    core = hs.Core(plugins=plugins, autoload=False)
    model, weights = mlp(args.width, args.batch)
    devices = ",".join(f"{kind}.{i}" for i in range(STAGES))
    one_thread = {"INFERENCE_NUM_THREADS": 1} if kind == "TEMPLATE" else {}
    config = {"MODEL_DISTRIBUTION_POLICY": {"PIPELINE_PARALLEL"}, "DEVICE_PROPERTIES": {kind: one_thread}}
    split = core.compile_model(model, f"HETERO:{devices}", config)
    alone = core.compile_model(model, f"{kind}.0", one_thread)
    rng = np.random.default_rng(1)
    inputs = [rng.standard_normal((args.batch, args.width)).astype(np.float32) for _ in range(args.requests)]
    expected = inputs[0]
    for w in weights:
        expected = np.maximum(expected @ w, 0)
    np.testing.assert_allclose(split(inputs[0])[0], expected, rtol=1e-3, atol=1e-4)
    print(split.placement_report().to_text())
    variants = {"one device": (alone, 0), "sequential": (split, 0), f"pipelined ({STAGES} in flight)": (split, STAGES)}
    figures = {name: max(throughput(c, inputs, n) for _ in range(args.repeats)) for name, (c, n) in variants.items()}
    base = figures["sequential"]
    rows = [{"variant": name, "per_s": value, "speedup": value / base} for name, value in figures.items()]
    print(f"\n{kind} x {STAGES}, MLP 8 x [{args.batch}, {args.width}] MatMul + Relu, {args.requests} requests")
    print_table([("variant", "variant"), ("per_s", "inferences/s"), ("speedup", "vs sequential")], rows)
    print(environment())


if __name__ == "__main__":
    main()
