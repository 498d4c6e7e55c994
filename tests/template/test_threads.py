"""TEMPLATE under concurrency: many requests from many threads give the sequential results."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

import hetero_sdk as hs

THREADS = 8
REQUESTS = 200


def run_threads(worker: Callable[[int], Any], count: int = THREADS) -> list[Any]:
    """Runs ``worker(i)`` on ``count`` threads released together; returns results, re-raising failures."""
    barrier = threading.Barrier(count)

    def start(i: int) -> Any:
        barrier.wait()
        return worker(i)

    with ThreadPoolExecutor(count) as pool:
        return list(pool.map(start, range(count)))


def test_8_threads_x_200_requests_match_sequential_runs(core: hs.Core, mlp_factory, rng) -> None:
    case = mlp_factory(batch=1)
    compiled = core.compile_model(case.model, "TEMPLATE")
    inputs = [[rng.standard_normal((1, 16)).astype(np.float32) for _ in range(REQUESTS)] for _ in range(THREADS)]
    request = compiled.create_infer_request()
    sequential = [[request.infer({"x": x})[0].copy() for x in batch] for batch in inputs]

    def worker(t: int) -> list[np.ndarray]:
        own = compiled.create_infer_request()
        return [own.infer({"x": x})[0].copy() for x in inputs[t]]

    parallel = run_threads(worker)
    for t in range(THREADS):
        for i in range(REQUESTS):
            np.testing.assert_array_equal(parallel[t][i], sequential[t][i])
    x = inputs[3][17]
    np.testing.assert_allclose(parallel[3][17], case.expected([x])[0], rtol=1e-4, atol=1e-4)


def test_async_requests_from_threads_match_sequential_runs(core: hs.Core, mlp_factory, rng) -> None:
    case = mlp_factory(batch=2)
    compiled = core.compile_model(case.model, "TEMPLATE", {"NUM_STREAMS": 4})
    inputs = [[rng.standard_normal((2, 16)).astype(np.float32) for _ in range(50)] for _ in range(THREADS)]
    sequential = [[compiled({"x": x})[0].copy() for x in batch] for batch in inputs]

    def worker(t: int) -> list[np.ndarray]:
        own = compiled.create_infer_request()
        out = []
        for x in inputs[t]:
            own.start_async({"x": x})
            own.wait()
            out.append(own.results[0].copy())
        return out

    assert all(
        np.array_equal(got, want)
        for got_batch, want_batch in zip(run_threads(worker), sequential)
        for got, want in zip(got_batch, want_batch)
    )


def test_calling_the_compiled_model_from_threads_is_serialised_and_correct(core: hs.Core, mlp, rng) -> None:
    compiled = core.compile_model(mlp.model, "TEMPLATE")
    inputs = [mlp.make_inputs(rng)[0] for _ in range(THREADS)]

    def worker(t: int) -> bool:
        return all(
            np.allclose(compiled({"x": inputs[t]})[0], mlp.expected([inputs[t]])[0], atol=1e-4) for _ in range(20)
        )

    assert all(run_threads(worker))


def test_parallel_get_property_query_and_compile_are_stable(core: hs.Core, mlp, rng) -> None:
    (x,) = mlp.make_inputs(rng)
    expected = mlp.expected([x])[0]
    names = {n.friendly_name for n in mlp.model.get_ops()}

    def worker(t: int) -> bool:
        device = f"TEMPLATE.{t % 2}"
        for _ in range(5):
            assert core.get_property(device, "FULL_DEVICE_NAME").endswith("(numpy)")
            assert set(core.query_model(mlp.model, device)) == names
            compiled = core.compile_model(mlp.model, device)
            np.testing.assert_allclose(compiled({"x": x})[0], expected, rtol=1e-4, atol=1e-4)
        return True

    assert all(run_threads(worker))


def test_parallel_set_property_on_different_ids_keeps_each_value(core: hs.Core) -> None:
    def worker(t: int) -> bool:
        device = f"TEMPLATE.{t % 2}"
        for streams in range(1, 30):
            core.set_property(device, {"NUM_STREAMS": streams + t % 2})
        return True

    assert all(run_threads(worker))
    assert (core.get_property("TEMPLATE.0", "NUM_STREAMS"), core.get_property("TEMPLATE.1", "NUM_STREAMS")) == (29, 30)
