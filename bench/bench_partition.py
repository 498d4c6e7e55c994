"""Benchmark of ``split_by_affinity``: time, subgraph count and peak memory on NN-like layered DAGs.

Usage::

    python bench/bench_partition.py                       # 1k, 10k, 100k nodes; 2 and 3 devices
    python bench/bench_partition.py --sizes 1000 --runs 5 --json bench/results/partition.json

Each graph has layers of 1-8 nodes; a node takes 1-3 inputs from the previous layer and, one time in ten,
one more from up to eight layers back (a skip connection). Affinities come in blocks of consecutive layers
(about 2% of the nodes each), cycling through the devices, and 1% of the nodes fall back to another
device, as unsupported ops do. Times are medians of ``--runs`` runs; peak memory is measured in one extra
run under ``tracemalloc``. CPU time (``process_time``) is shown beside wall time: on a busy machine it is
the steadier figure. ``documented`` runs only up to ``--documented-max`` nodes: its transitive
closure is quadratic in memory.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
import tracemalloc
from collections.abc import Callable
from typing import Any, Literal

from hetero_sdk.hetero import PARTITIONERS, check_partition, split_by_affinity

Graph = tuple[dict[int, list[int]], dict[int, str]]
Algorithm = Literal["default", "documented"]
ALGORITHMS: tuple[Algorithm, ...] = tuple(PARTITIONERS.names())  # type: ignore[assignment]


def layered_graph(n: int, devices: int, seed: int = 0) -> Graph:
    """A layered DAG of ``n`` nodes with block affinities over ``devices`` devices (see the module doc)."""
    rnd = random.Random(seed)
    names = [chr(ord("A") + k) for k in range(devices)]
    layers: list[range] = []
    start = 0
    while start < n:
        width = min(rnd.randint(1, 8), n - start)
        layers.append(range(start, start + width))
        start += width
    successors: dict[int, list[int]] = {i: [] for i in range(n)}
    for li in range(1, len(layers)):
        for v in layers[li]:
            for u in rnd.sample(layers[li - 1], min(rnd.randint(1, 3), len(layers[li - 1]))):
                successors[u].append(v)
            if li > 1 and rnd.random() < 0.1:
                u = rnd.choice(layers[li - rnd.randint(2, min(8, li))])
                if v not in successors[u]:
                    successors[u].append(v)
    affinity: dict[int, str] = {}
    block = max(1, n // 50)
    device, next_switch = 0, block
    for layer in layers:
        if layer.start >= next_switch:
            device = (device + 1) % devices
            next_switch += block
        for v in layer:
            affinity[v] = names[device] if rnd.random() >= 0.01 else rnd.choice(names)
    return successors, affinity


def _median_time(fn: Callable[[], Any], runs: int) -> tuple[float, float, Any]:
    """Median wall-clock and CPU seconds of ``runs`` calls, and the last result."""
    wall, cpu = [], []
    result = None
    for _ in range(runs):
        w0, c0 = time.perf_counter(), time.process_time()
        result = fn()
        wall.append(time.perf_counter() - w0)
        cpu.append(time.process_time() - c0)
    return statistics.median(wall), statistics.median(cpu), result


def _peak(fn: Callable[[], Any]) -> int:
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def bench(sizes: list[int], device_counts: list[int], runs: int, documented_max: int) -> list[dict[str, Any]]:
    """Runs every configuration and returns one row per (size, devices, algorithm)."""
    rows = []
    for n in sizes:
        for k in device_counts:
            successors, affinity = layered_graph(n, k)
            edges = sum(len(s) for s in successors.values())
            for algorithm in ALGORITHMS:
                row: dict[str, Any] = {"nodes": n, "edges": edges, "devices": k, "algorithm": algorithm}
                if algorithm == "documented" and n > documented_max:
                    row["skipped"] = f"over --documented-max {documented_max}"
                    rows.append(row)
                    continue
                count = runs if algorithm == "default" or n <= 1000 else 1

                def call(s: dict = successors, a: dict = affinity, alg: Algorithm = algorithm) -> Any:
                    return split_by_affinity(s, a, alg)

                seconds, cpu_seconds, parts = _median_time(call, count)
                try:
                    check_partition(successors, affinity, parts)
                    valid = True
                except ValueError:
                    valid = False
                row.update(
                    seconds=seconds,
                    cpu_seconds=cpu_seconds,
                    runs=count,
                    subgraphs=len(parts),
                    valid=valid,
                    peak_bytes=_peak(call),
                )
                rows.append(row)
                print(_format(row), flush=True)
    return rows


def _format(row: dict[str, Any]) -> str:
    head = f"{row['nodes']:>7} {row['edges']:>7} {row['devices']:>3}  {row['algorithm']:<10}"
    if "skipped" in row:
        return f"{head} skipped ({row['skipped']})"
    return (
        f"{head} {row['seconds'] * 1000:>10.1f} {row['cpu_seconds'] * 1000:>8.1f} {row['runs']:>4} "
        f"{row['subgraphs']:>9} {'yes' if row['valid'] else 'NO':>5} {row['peak_bytes'] / 2**20:>9.1f}"
    )


def main(argv: list[str] | None = None) -> None:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10_000, 100_000])
    parser.add_argument("--devices", type=int, nargs="+", default=[2, 3])
    parser.add_argument("--runs", type=int, default=5, help="runs per configuration (median is reported)")
    parser.add_argument("--documented-max", type=int, default=10_000, help="largest graph for documented")
    parser.add_argument("--json", help="also write the rows as JSON to this file")
    args = parser.parse_args(argv)
    print(
        f"{'nodes':>7} {'edges':>7} {'dev':>3}  {'algorithm':<10} {'median ms':>10} {'cpu ms':>8} {'runs':>4} "
        f"{'subgraphs':>9} {'valid':>5} {'peak MiB':>9}"
    )
    rows = bench(args.sizes, args.devices, args.runs, args.documented_max)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"python": sys.version.split()[0], "rows": rows}, f, indent=2)


if __name__ == "__main__":
    main()
