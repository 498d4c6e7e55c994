"""The XLA device's latency and throughput against a hand-written ``jax.jit`` and against TEMPLATE.

Usage::

    python bench/bench_xla.py                                    # mlp, cnn and transformer
    python bench/bench_xla.py --models mlp --runs 1000 --json bench/results/xla.json

The same models as the other benchmarks (``bench/models.py``: same weights) run three ways in one
process, each output checked against the numpy forward pass first:

- ``XLA``: the hetero-sdk XLA device through an infer request (numpy in, numpy out);
- ``XLA executable``: the executable the XLA device compiled, called directly
  (``compiled.jax_executable()(x)``): XLA/XLA executable is the cost of the infer request, XLA
  executable/jax.jit the quality of the lowering;
- ``jax.jit``: the model written directly in ``jax.numpy``/``lax`` (the builder in ``models.py`` run
  over :class:`JaxOps`, one jnp call per op, no SDK), jitted, called with numpy and read back with
  ``np.asarray``: what a JAX user writes by hand. XLA/jax.jit is the SDK's overhead;
- ``TEMPLATE``: the reference device, on one thread.

Latency: interleaved rounds, one request at a time; medians and p90s in microseconds, on one CPU
thread (XLA's Eigen pool off, BLAS variables at 1; pin the process with ``taskset -c 0`` for
XLA:CPU's own pool) so that figures taken on shared 2-core machines mean something; on a GPU the
device does the work. ``+us paired``: the median of what each call of ``XLA`` and ``XLA executable``
took over a ``jax.jit`` call of the same round, in ``--runs`` rounds of one call each in shuffled order
(the host's drift cancels in each pair; see ``timing.paired_overhead``). Throughput: ``--requests``
inferences through an ``AsyncInferQueue`` of ``--jobs`` requests, the devices compiled with
``NUM_STREAMS=--jobs`` (each op still single-threaded) and, for jax.jit, the same number of calls
dispatched asynchronously, then read back.
"""

from __future__ import annotations

import os

from timing import THREAD_VARIABLES

for _variable in THREAD_VARIABLES:
    os.environ[_variable] = "1"  # before numpy loads its BLAS
os.environ["XLA_FLAGS"] = " ".join(
    [os.environ.get("XLA_FLAGS", ""), "--xla_cpu_multi_thread_eigen=false"]
).strip()  # before jax starts its backend

import time  # noqa: E402
from collections.abc import Callable, Sequence  # noqa: E402
from typing import Any  # noqa: E402

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from hetero_sdk_jax import XlaPlugin  # noqa: E402
from jax import lax  # noqa: E402
from models import MODELS, BenchModel  # noqa: E402
from timing import (  # noqa: E402
    bench_arguments,
    device_peak_bytes,
    jax_environment,
    measure,
    paired_overhead,
    print_table,
    summary,
    write_report,
)

import hetero_sdk as hs  # noqa: E402
from template_plugin import TemplatePlugin  # noqa: E402

TEMPLATE_CONFIG = {"INFERENCE_NUM_THREADS": 1, "NUM_STREAMS": 1, "PERFORMANCE_HINT": "LATENCY"}


class _Pooled:
    """What ``max_pool`` returns in :class:`JaxOps`: the builders call ``.output(0)`` on it."""

    def __init__(self, value: jax.Array) -> None:
        self.value = value

    def output(self, index: int) -> jax.Array:
        return self.value


class JaxOps:
    """The ops ``bench/models.py`` builds with, as direct ``jax.numpy``/``lax`` calls (the hand-written model).

    :param x: the traced input that ``parameter`` returns.
    """

    def __init__(self, x: jax.Array) -> None:
        self.x = x

    def parameter(self, shape: Sequence[int], dtype: Any, name: str = "") -> jax.Array:
        return self.x

    def constant(self, value: np.ndarray, name: str = "") -> np.ndarray:
        return value

    def matmul(self, a: Any, b: Any, transpose_a: bool, transpose_b: bool, name: str = "") -> jax.Array:
        return jnp.matmul(a, b, precision=lax.Precision.HIGHEST)

    def add(self, a: Any, b: Any, name: str = "") -> jax.Array:
        return a + b

    def multiply(self, a: Any, b: Any, name: str = "") -> jax.Array:
        return a * b

    def relu(self, x: jax.Array, name: str = "") -> jax.Array:
        return jnp.maximum(x, 0)

    def softmax(self, x: jax.Array, axis: int, name: str = "") -> jax.Array:
        return jax.nn.softmax(x, axis=axis)

    def reshape(self, x: jax.Array, shape: np.ndarray, special_zero: bool, name: str = "") -> jax.Array:
        return x.reshape([int(d) for d in shape])

    def transpose(self, x: jax.Array, order: np.ndarray, name: str = "") -> jax.Array:
        return jnp.transpose(x, [int(d) for d in order])

    def gelu(self, x: jax.Array, mode: str, name: str = "") -> jax.Array:
        return jax.nn.gelu(x, approximate=mode.lower() == "tanh")

    def mvn(self, x: jax.Array, axes: np.ndarray, variance: bool, eps: float, mode: str, name: str = "") -> jax.Array:
        centered = x - x.mean(axis=-1, keepdims=True)
        return centered / jnp.sqrt((centered * centered).mean(axis=-1, keepdims=True) + eps)

    def convolution(self, x: jax.Array, w: np.ndarray, strides: Any, pads_begin: Any, pads_end: Any, dilations: Any,
                    auto_pad: str, name: str = "") -> jax.Array:  # fmt: skip
        padding = list(zip(pads_begin, pads_end))
        return lax.conv_general_dilated(
            x, w, strides, padding, rhs_dilation=dilations, precision=lax.Precision.HIGHEST,
            dimension_numbers=("NCHW", "OIHW", "NCHW"),
        )  # fmt: skip

    def max_pool(self, x: jax.Array, strides: Any, dilations: Any, pads_begin: Any, pads_end: Any, kernel: Any,
                 rounding: str, auto_pad: str, name: str = "") -> _Pooled:  # fmt: skip
        window = (1, 1, *kernel)
        return _Pooled(lax.reduce_window(x, -jnp.inf, lax.max, window, (1, 1, *strides), "VALID"))


def hand_written(bench_model: BenchModel) -> Callable[[np.ndarray], jax.Array]:
    """The model as one ``jax.jit`` function of its input."""

    def forward(x: jax.Array) -> jax.Array:
        out, _ = bench_model.graph(JaxOps(x))
        return out

    return jax.jit(forward)


def _seconds(call: Callable[[], Any]) -> tuple[Any, float]:
    start = time.perf_counter()
    value = call()
    return value, time.perf_counter() - start


def prepare(bench_model: BenchModel, core: hs.Core) -> dict[str, Any]:
    """Compiles the three candidates, checks them against numpy and returns their calls and compile times."""
    x = bench_model.sample_input()
    expected = bench_model.numpy(x)
    feed = {bench_model.input_name: x}
    xla, xla_compile = _seconds(lambda: core.compile_model(bench_model.build(), "XLA"))
    jitted = hand_written(bench_model)
    _, jax_compile = _seconds(lambda: jitted.lower(x).compile())
    template = core.compile_model(bench_model.build(), "TEMPLATE", TEMPLATE_CONFIG)
    xla_request, template_request = xla.create_infer_request(), template.create_infer_request()
    outputs = {
        "XLA": xla_request.infer(feed)[0],
        "jax.jit": np.asarray(jitted(x)),
        "TEMPLATE": template_request.infer(feed)[0],
    }
    for name, value in outputs.items():
        np.testing.assert_allclose(value, expected, rtol=1e-4, atol=1e-4, err_msg=f"{bench_model.name} on {name}")
    executable = xla.jax_executable()
    return {
        "calls": {
            "XLA": lambda: xla_request.infer(feed),
            "XLA executable": lambda: np.asarray(executable(x)[0]),
            "jax.jit": lambda: np.asarray(jitted(x)),
            "TEMPLATE": lambda: template_request.infer(feed),
        },
        "jitted": jitted,
        "x": x,
        "feed": feed,
        "compile_s": {"XLA": xla_compile, "jax.jit": jax_compile},
        "peak_bytes": {
            "XLA": device_peak_bytes(xla),
            "XLA executable": device_peak_bytes(xla),
            "jax.jit": _jit_bytes(jitted.lower(x).compile()),
            "TEMPLATE": device_peak_bytes(template),
        },
    }


def _jit_bytes(compiled: Any) -> int | None:
    """A ``jax.stages.Compiled``'s arguments + outputs + temporaries, as for the XLA device."""
    stats = compiled.memory_analysis()
    if stats is None:
        return None
    return int(stats.argument_size_in_bytes + stats.output_size_in_bytes + stats.temp_size_in_bytes)


def throughput(
    bench_model: BenchModel, core: hs.Core, prepared: dict[str, Any], requests: int, jobs: int
) -> dict[str, float]:
    """Inferences per second of each candidate over ``requests`` inferences, the devices compiled with
    ``NUM_STREAMS=jobs`` (one worker thread per request of the queue)."""
    rates = {}
    streams = {"PERFORMANCE_HINT": "THROUGHPUT", "NUM_STREAMS": jobs}
    for name, config in (("XLA", streams), ("TEMPLATE", {**TEMPLATE_CONFIG, **streams})):
        compiled = core.compile_model(bench_model.build(), name, config)
        queue = hs.AsyncInferQueue(compiled, jobs)
        queue.start_async(prepared["feed"])  # warm every code path once
        queue.wait_all()
        start = time.perf_counter()
        for _ in range(requests):
            queue.start_async(prepared["feed"])
        queue.wait_all()
        rates[name] = requests / (time.perf_counter() - start)
    jitted, x = prepared["jitted"], prepared["x"]
    start = time.perf_counter()
    pending = [jitted(x) for _ in range(requests)]
    for value in pending:
        np.asarray(value)
    rates["jax.jit"] = requests / (time.perf_counter() - start)
    return rates


def bench(models: list[str], runs: int, warmup: int, requests: int, jobs: int) -> list[dict[str, Any]]:
    """Measures every model; one row per (model, runtime)."""
    core = hs.Core(plugins={"XLA": XlaPlugin, "TEMPLATE": TemplatePlugin}, autoload=False)
    rows: list[dict[str, Any]] = []
    for name in models:
        bench_model = MODELS[name]()
        prepared = prepare(bench_model, core)
        stats = {runtime: summary(values) for runtime, values in measure(prepared["calls"], runs, warmup).items()}
        ours = {name: prepared["calls"][name] for name in ("XLA", "XLA executable", "jax.jit")}
        over = paired_overhead(ours, "jax.jit", runs)
        rates = throughput(bench_model, core, prepared, requests, jobs)
        xla = stats["XLA"]["median_us"]
        for runtime, s in stats.items():
            rows.append({
                "model": name,
                "runtime": runtime,
                **s,
                "over_jax": s["median_us"] / stats["jax.jit"]["median_us"],
                "paired_over_jax_us": over.get(runtime),
                "xla_speedup": s["median_us"] / xla,
                "throughput_ips": rates.get(runtime),
                "compile_s": prepared["compile_s"].get(runtime),
                "peak_bytes": prepared["peak_bytes"].get(runtime),
            })  # fmt: skip
    return rows


def main(argv: list[str] | None = None) -> None:
    """Command-line entry point."""
    parser = bench_arguments(__doc__.splitlines()[0], MODELS, runs=300)
    parser.add_argument("--requests", type=int, default=200, help="inferences per throughput measurement")
    parser.add_argument("--jobs", type=int, default=4, help="requests in the AsyncInferQueue")
    args = parser.parse_args(argv)
    rows = bench(args.models, args.runs, args.warmup, args.requests, args.jobs)
    columns = [
        ("model", "model"),
        ("runtime", "runtime"),
        ("median_us", "median us"),
        ("p90_us", "p90 us"),
        ("over_jax", "x/jax.jit"),
        ("paired_over_jax_us", "+us paired"),
        ("xla_speedup", "x/XLA"),
        ("throughput_ips", "infer/s"),
        ("compile_s", "compile s"),
        ("peak_bytes", "peak MiB"),
    ]
    print(f"device: {jax.devices()[0].device_kind} ({jax.default_backend()}), jax {jax.__version__}")
    print_table(columns, rows)
    write_report(args.json, args, jax_environment(), rows=rows)


if __name__ == "__main__":
    main()
