"""Ways XLA:CPU can compute one int4 MatMulNBits decode step, in plain JAX: what chose the lowering of
``hetero_sdk_contrib.xla_matmul_nbits`` (the weight dequantized once, one f32 product per call).

Usage::

    python bench/bench_xla_nbits_options.py                  # K = N = 2048, block 32, one row
    python bench/bench_xla_nbits_options.py --rows 16 --cpu-time

Each way is a jitted function of the activations and of the weight in the form it would be kept in
(``per call`` ways take the packed bytes, the others a form prepared once); every result is checked
against numpy in f64 before timing. One thread (the process pinned to one CPU), interleaved rounds
(``timing.measure``), medians; the ratio is to ``f32 (N, K)``, the way the lowering takes.
"""

from __future__ import annotations

import os

from timing import THREAD_VARIABLES

for _variable in THREAD_VARIABLES:
    os.environ[_variable] = "1"

import argparse  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402
from timing import environment, measure, print_table, write_report  # noqa: E402

BASE = "f32 (N, K)"


def ways(k: int, n: int, block: int) -> dict[str, tuple[Callable[..., Any], tuple[str, ...], str]]:
    """name -> (function of the activations and the weight forms named, those forms, what it keeps)."""
    import jax.numpy as jnp
    from jax import lax

    blocks, high = k // block, lax.Precision.HIGHEST

    def per_call_dequantize(a: Any, packed: Any, scales: Any, zero: Any) -> Any:
        q = jnp.stack([packed & 0xF, packed >> 4], -1).reshape(n, blocks, block).astype(jnp.float32)
        dense = ((q - zero[..., None]) * scales[..., None]).reshape(n, k)
        return lax.dot_general(a, dense, (((1,), (1,)), ((), ())), precision=high)

    def per_call_nibble_sums(a: Any, packed: Any, scales: Any, zero: Any) -> Any:
        ab = a.reshape(-1, blocks, block)
        low, high_ = (packed & 0xF).astype(jnp.float32), (packed >> 4).astype(jnp.float32)
        sums = jnp.einsum("mbj,nbj->mnb", ab[..., 0::2], low) + jnp.einsum("mbj,nbj->mnb", ab[..., 1::2], high_)
        return jnp.sum((sums - zero * jnp.sum(ab, -1)[:, None, :]) * scales, -1)

    def f32(a: Any, dense: Any) -> Any:
        return lax.dot_general(a, dense, (((1,), (1,)), ((), ())), precision=high)

    def f32_kn(a: Any, dense_t: Any) -> Any:
        return lax.dot_general(a, dense_t, (((1,), (0,)), ((), ())), precision=high)

    def int8_block_dot(a: Any, q8_t: Any, scales_t: Any) -> Any:  # q8_t (blocks, block, N), scales_t (blocks, N)
        ab = a.reshape(-1, blocks, block).transpose(1, 0, 2)
        part = lax.dot_general(ab, q8_t, (((2,), (1,)), ((0,), (0,))), preferred_element_type=jnp.float32)
        return jnp.sum(part * scales_t[:, None, :], 0)

    def int8_column_sums(a: Any, q8_t: Any, scales_t: Any) -> Any:
        ab = a.reshape(-1, blocks, block)
        return jnp.einsum("mbj,bjn,bn->mn", ab, q8_t.astype(jnp.float32), scales_t, precision=high)

    def uint4(a: Any, q4: Any, scales: Any, zero: Any) -> Any:
        dense = ((q4.astype(jnp.float32) - zero[..., None]) * scales[..., None]).reshape(n, k)
        return lax.dot_general(a, dense, (((1,), (1,)), ((), ())), precision=high)

    return {
        BASE: (f32, ("dense",), "4 N K bytes"),
        "f32 (K, N)": (f32_kn, ("dense_t",), "4 N K bytes"),
        "int8 q - zero, block dots, scales after": (int8_block_dot, ("q8_t", "scales_t"), "N K bytes"),
        "int8 q - zero, one fused sum": (int8_column_sums, ("q8_t", "scales_t"), "N K bytes"),
        "uint4 (jnp.uint4), dequantized per call": (uint4, ("q4", "scales", "zero"), "N K / 2 bytes"),
        "per call: unpack, dequantize, dot": (per_call_dequantize, ("packed", "scales", "zero"), "N K / 2 bytes"),
        "per call: nibble sums per block": (per_call_nibble_sums, ("packed", "scales", "zero"), "N K / 2 bytes"),
    }


def main() -> None:
    """Checks every way against numpy, then times them and prints the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=2048, help="K = N")
    parser.add_argument("--block", type=int, default=32)
    parser.add_argument("--rows", type=int, default=1)
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--cpu-time", action="store_true", help="time the process's CPU time, not wall time")
    parser.add_argument("--json", help="also write the rows as JSON to this file")
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})  # before JAX sizes its pool
    import jax
    import jax.numpy as jnp

    k = n = args.size
    blocks = k // args.block
    rng = np.random.default_rng(0)
    q = rng.integers(0, 16, (n, blocks, args.block), dtype=np.uint8)
    zero = rng.integers(0, 16, (n, blocks)).astype(np.float32)
    scales = rng.uniform(0.01, 0.1, (n, blocks)).astype(np.float32)
    dense = ((q - zero[..., None]) * scales[..., None]).reshape(n, k).astype(np.float32)
    q8 = (q.astype(np.int16) - zero.astype(np.int16)[..., None]).astype(np.int8)
    forms = {
        "dense": dense,
        "dense_t": np.ascontiguousarray(dense.T),
        "q8_t": np.ascontiguousarray(q8.transpose(1, 2, 0)),
        "scales_t": np.ascontiguousarray(scales.T),
        "q4": jnp.asarray(q).astype(jnp.uint4),
        "packed": q[..., 0::2] | (q[..., 1::2] << 4),
        "scales": scales,
        "zero": zero,
    }
    a = rng.standard_normal((args.rows, k)).astype(np.float32)
    expected = a.astype(np.float64) @ ((q - zero[..., None]) * scales[..., None].astype(np.float64)).reshape(n, k).T
    calls, kept = {}, {}
    for name, (fn, names, holds) in ways(k, n, args.block).items():
        compiled = jax.jit(fn)
        operands = [jax.device_put(a), *(jax.device_put(forms[f]) for f in names)]
        got = np.asarray(compiled(*operands), np.float64)
        error = float(np.max(np.abs(got - expected)) / np.max(np.abs(expected)))
        if error > 1e-5:
            raise SystemExit(f"{name}: differs from numpy by {error:.1e} of the range")
        calls[name] = lambda c=compiled, o=operands: c(*o).block_until_ready()
        kept[name] = holds
    clock = time.process_time if args.cpu_time else time.perf_counter
    times = measure(calls, args.runs, warmup=3, clock=clock)
    base = statistics.median(times[BASE])
    rows = [
        {
            "way": name,
            "median_us": statistics.median(t) * 1e6,
            "ratio": statistics.median(t) / base,
            "keeps": kept[name],
        }
        for name, t in times.items()
    ]
    print(f"XLA:CPU, int4 MatMulNBits, K = N = {k}, block {args.block}, {args.rows} row(s), one thread, "
          f"{'CPU' if args.cpu_time else 'wall'} time, load {os.getloadavg()[0]:.1f}")  # fmt: skip
    print_table([("way", "way"), ("median_us", "median us"), ("ratio", f"x {BASE}"), ("keeps", "weight kept")], rows)
    write_report(args.json, args, {**environment(), "jax": jax.__version__}, rows=rows)


if __name__ == "__main__":
    main()
