"""Infer requests: tensors by name, index and port, wrong inputs, untouched inputs, output buffers,
async execution and callbacks, timeouts, cancellation, busy requests, threads, profiling, dynamic shapes."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from datetime import timedelta
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from hetero_sdk.conformance.compare import Repro, assert_results_match, tolerance
from hetero_sdk.conformance.models import DynamicCase, ModelCase, chain_model, dynamic_cases, dynamic_model
from hetero_sdk.conformance.target import Target
from hetero_sdk.errors import InferenceError, RequestBusyError, RequestCancelledError
from hetero_sdk.reference import evaluate

mandatory = pytest.mark.mandatory
_TOL = tolerance("f32", "simple", 4)


@contextmanager
def held(compiled: Any) -> Iterator[None]:
    """Occupies every worker of the compiled model's executor, so that a request started inside stays pending."""
    executor = compiled.executor
    gate = threading.Event()
    futures = [executor.submit(gate.wait, 60) for _ in range(int(getattr(executor, "_max_workers", 32)))]
    time.sleep(0.05)
    try:
        yield
    finally:
        gate.set()
        for future in futures:
            future.result(timeout=60)


def _expect(problems: list[str], what: str, error: type[BaseException], action: Callable[[], Any]) -> None:
    try:
        action()
        problems.append(f"{what} did not raise {error.__name__}")
    except error:
        pass
    except Exception as exc:
        problems.append(f"{what} raised {type(exc).__name__}, not {error.__name__}: {exc}")


@mandatory
def test_set_and_get_tensors_by_name_index_and_port(target: Target, base: Callable[[], ModelCase]) -> None:
    case = base()
    inputs = case.inputs()
    want = evaluate(case.model, inputs)
    compiled = target.compile(case.model)
    names = [p.any_name for p in compiled.inputs]
    setters: dict[str, Callable[[Any, int, str], None]] = {
        "name": lambda r, i, n: r.set_tensor(n, inputs[n]),
        "index": lambda r, i, n: r.set_input_tensor(i, inputs[n]),
        "port": lambda r, i, n: r.set_tensor(compiled.inputs[i], inputs[n]),
    }
    for how, setter in setters.items():
        request = compiled.create_infer_request()
        for i, name in enumerate(names):
            setter(request, i, name)
        results = request.infer()
        for i, name in enumerate(names):
            assert np.array_equal(request.get_tensor(name), inputs[name]), f"get_tensor({name!r}) after set by {how}"
            assert np.array_equal(request.get_input_tensor(i), inputs[name]), (
                f"get_input_tensor({i}) after set by {how}"
            )
        for i, port in enumerate(compiled.outputs):
            for key, got in (
                (f"results[{i}]", results[i]),
                (f"results[{port.any_name!r}]", results[port.any_name]),
                ("results[port]", results[port]),
                (f"get_output_tensor({i})", request.get_output_tensor(i)),
                (f"get_tensor({port.any_name!r})", request.get_tensor(port.any_name)),
                ("get_tensor(port)", request.get_tensor(port)),
            ):
                assert_results_match([got], [want[i]], *_TOL, what=f"inputs set by {how}, output read as {key}")


@mandatory
def test_wrong_names_shapes_and_element_types_raise_inference_error(
    target: Target, base: Callable[[], ModelCase]
) -> None:
    case = base()
    inputs = case.inputs()
    compiled = target.compile(case.model)
    request = compiled.create_infer_request()
    name = compiled.inputs[0].any_name
    array = inputs[name]
    problems: list[str] = []
    _expect(problems, "infer() with no inputs set", InferenceError, request.infer)
    _expect(
        problems,
        "set_tensor('conformance_no_such_input')",
        InferenceError,
        lambda: request.set_tensor("conformance_no_such_input", array),
    )
    _expect(
        problems,
        "infer({'conformance_no_such_input': ...})",
        InferenceError,
        lambda: request.infer({**inputs, "conformance_no_such_input": array}),
    )
    _expect(
        problems,
        "a wrong shape",
        InferenceError,
        lambda: request.set_tensor(name, np.zeros((*array.shape, 2), array.dtype)),
    )
    _expect(
        problems,
        "a wrong element type",
        InferenceError,
        lambda: request.set_tensor(name, array.astype(np.float64 if array.dtype != np.float64 else np.int32)),
    )
    _expect(problems, "input index 99", InferenceError, lambda: request.set_input_tensor(99, array))
    _expect(
        problems,
        "too few inputs in a list",
        InferenceError,
        lambda: request.infer([array] * (len(compiled.inputs) - 1)),
    )
    assert not problems, "\n".join(problems)
    assert_results_match(
        list(request.infer(inputs).to_tuple()), evaluate(case.model, inputs), *_TOL, what="after the errors"
    )


@mandatory
def test_inputs_are_not_modified_by_inference(target: Target, base: Callable[[], ModelCase]) -> None:
    case = base()
    inputs = case.inputs()
    copies = {k: v.copy() for k, v in inputs.items()}
    compiled = target.compile(case.model)
    request = compiled.create_infer_request()
    request.infer(inputs)
    request.start_async(inputs)
    request.wait()
    compiled(inputs)
    for key, value in inputs.items():
        assert np.array_equal(value, copies[key]), f"inference modified input {key!r}"


@mandatory
def test_repeated_infers_without_output_buffers_give_fresh_results(
    target: Target, base: Callable[[], ModelCase]
) -> None:
    case = base()
    compiled = target.compile(case.model)
    request = compiled.create_infer_request()
    for seed in range(4):
        inputs = case.inputs(seed)
        want = evaluate(case.model, inputs)
        results = request.infer(inputs)
        assert_results_match(list(results.to_tuple()), want, *_TOL, what=f"inference {seed} on one request")
        current = [request.get_output_tensor(i) for i in range(len(compiled.outputs))]
        assert_results_match(current, want, *_TOL, what=f"get_output_tensor after inference {seed}")


@mandatory
def test_user_output_buffers_receive_the_results(target: Target, base: Callable[[], ModelCase]) -> None:
    case = base()
    compiled = target.compile(case.model)
    request = compiled.create_infer_request()
    buffers = [np.full(p.partial_shape.to_shape(), -7, p.element_type.numpy) for p in compiled.outputs]
    for i, buffer in enumerate(buffers):
        if i % 2:
            request.set_tensor(compiled.outputs[i].any_name, buffer)
        else:
            request.set_output_tensor(i, buffer)
    for seed, asynchronous in ((0, False), (1, True)):
        inputs = case.inputs(seed)
        if asynchronous:
            request.start_async(inputs)
            request.wait()
        else:
            request.infer(inputs)
        assert_results_match(
            buffers, evaluate(case.model, inputs), *_TOL, what=f"user output buffers (async={asynchronous})"
        )
        for i, buffer in enumerate(buffers):
            assert np.shares_memory(request.get_output_tensor(i), buffer), (
                f"get_output_tensor({i}) is not the user's buffer"
            )


@mandatory
def test_async_start_wait_and_completion_callbacks(target: Target, base: Callable[[], ModelCase]) -> None:
    case = base()
    inputs = case.inputs()
    want = evaluate(case.model, inputs)
    request = target.compile(case.model).create_infer_request()
    calls: list[Any] = []
    request.set_callback(calls.append, "userdata")
    request.infer(inputs)
    assert calls == [], "the completion callback was called for a sync infer()"
    request.start_async(inputs)
    request.wait()
    assert calls == ["userdata"], f"the callback was called with {calls}, expected once with 'userdata'"
    assert_results_match([request.get_output_tensor(i) for i in range(len(want))], want, *_TOL, what="async results")
    request.start_async(inputs, userdata="per-call")
    request.wait()
    assert calls[-1] == "per-call", f"start_async(userdata=...) reached the callback as {calls[-1]!r}"

    def fails(_: Any) -> None:
        raise ZeroDivisionError("raised in the completion callback")

    request.set_callback(fails)
    request.start_async(inputs)
    with pytest.raises(ZeroDivisionError, match="completion callback"):
        request.wait()
    request.set_callback(calls.append, "again")
    assert_results_match(list(request.infer(inputs).to_tuple()), want, *_TOL, what="infer after a failing callback")


@mandatory
def test_wait_for_with_a_timeout(target: Target, base: Callable[[], ModelCase]) -> None:
    case = base()
    inputs = case.inputs()
    compiled = target.compile(case.model)
    request = compiled.create_infer_request()
    assert request.wait_for(0.0) is True, "wait_for on an idle request must return True"
    with held(compiled):
        request.start_async(inputs)
        assert request.wait_for(0.05) is False, "wait_for(0.05) returned True while the request could not have run"
    assert request.wait_for(60.0) is True, "wait_for(60) did not see the request end"
    want = evaluate(case.model, inputs)
    assert_results_match([request.get_output_tensor(i) for i in range(len(want))], want, *_TOL, what="after wait_for")


@mandatory
def test_cancel_before_and_during_a_request(target: Target, base: Callable[[], ModelCase]) -> None:
    case = base()
    inputs = case.inputs()
    want = evaluate(case.model, inputs)
    compiled = target.compile(case.model)
    request = compiled.create_infer_request()
    request.cancel()
    assert_results_match(
        list(request.infer(inputs).to_tuple()), want, *_TOL, what="infer after cancelling an idle request"
    )
    with held(compiled):
        request.start_async(inputs)
        request.cancel()
    with pytest.raises(RequestCancelledError):
        request.wait()
    assert_results_match(list(request.infer(inputs).to_tuple()), want, *_TOL, what="infer after a cancelled request")
    chain = chain_model()
    if target.claims_all(chain.model):
        long_request = target.compile(chain.model).create_infer_request()
        chain_inputs = chain.inputs()
        long_request.start_async(chain_inputs)
        time.sleep(0.01)
        long_request.cancel()
        with suppress(RequestCancelledError):
            long_request.wait()
        got = list(long_request.infer(chain_inputs).to_tuple())
        assert_results_match(
            got, evaluate(chain.model, chain_inputs), *_TOL, what="infer after cancelling a running request"
        )


@mandatory
def test_touching_a_running_request_raises_request_busy_error(target: Target, base: Callable[[], ModelCase]) -> None:
    case = base()
    inputs = case.inputs()
    compiled = target.compile(case.model)
    request = compiled.create_infer_request()
    name = compiled.inputs[0].any_name
    problems: list[str] = []
    with held(compiled):
        request.start_async(inputs)
        if not request.is_busy:
            pytest.skip("the request finished before it could be touched (the device's executor does not queue)")
        _expect(problems, "infer()", RequestBusyError, lambda: request.infer(inputs))
        _expect(problems, "start_async()", RequestBusyError, lambda: request.start_async(inputs))
        _expect(problems, "set_tensor()", RequestBusyError, lambda: request.set_tensor(name, inputs[name]))
        _expect(problems, "set_input_tensor()", RequestBusyError, lambda: request.set_input_tensor(0, inputs[name]))
    request.wait()
    assert not problems, "touching a running request:\n" + "\n".join(problems)
    want = evaluate(case.model, inputs)
    assert_results_match([request.get_output_tensor(i) for i in range(len(want))], want, *_TOL, what="the busy request")


@mandatory
def test_three_threads_sync_and_async_match_sequential_runs(target: Target, base: Callable[[], ModelCase]) -> None:
    case = base()
    compiled = target.compile(case.model)
    jobs = [case.inputs(seed) for seed in range(12)]
    sequential = [list(compiled.create_infer_request().infer(j).to_tuple()) for j in jobs]
    got: dict[int, list[Any]] = {}
    errors: list[BaseException] = []

    def worker(start: int) -> None:
        request = compiled.create_infer_request()
        try:
            for k in range(start, len(jobs), 3):
                if k % 2:
                    request.start_async(jobs[k])
                    request.wait()
                    got[k] = [np.array(request.get_output_tensor(i)) for i in range(len(compiled.outputs))]
                else:
                    got[k] = [np.array(v) for v in request.infer(jobs[k]).to_tuple()]
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors, f"a thread failed: {type(errors[0]).__name__}: {errors[0]}"
    for k, want in enumerate(sequential):
        assert_results_match(got[k], want, *_TOL, what=f"job {k} from a thread")


@mandatory
def test_profiling_info_is_not_empty_with_perf_count(target: Target, base: Callable[[], ModelCase]) -> None:
    case = base()
    inputs = case.inputs()
    request = target.compile(case.model, {"PERF_COUNT": True}).create_infer_request()
    request.infer(inputs)
    rows = request.get_profiling_info()
    assert rows, "get_profiling_info() is empty after a sync infer with PERF_COUNT=True"
    for row in rows:
        assert isinstance(row.node_name, str) and row.node_name, f"profiling row without a node name: {row!r}"
        assert isinstance(row.real_time, timedelta) and isinstance(row.cpu_time, timedelta), f"row times: {row!r}"
    request.start_async(inputs)
    request.wait()
    assert request.get_profiling_info(), "get_profiling_info() is empty after an async infer with PERF_COUNT=True"


def test_dynamic_shapes_change_between_inferences_and_chain(target: Target) -> None:
    case = dynamic_model()
    if not target.claims_all(case.model):
        pytest.skip(f"{target.device} does not claim a model with a dynamic batch dimension")
    compiled = target.compile(case.model)
    request, follower = compiled.create_infer_request(), compiled.create_infer_request()
    for batch in (1, 3, 2, 5):
        x = np.random.default_rng(batch).uniform(-1, 1, (batch, 3)).astype(np.float32)
        first = request.infer({"x": x})
        assert_results_match([first[0]], evaluate(case.model, {"x": x}), *_TOL, what=f"batch {batch}")
        second = follower.infer({"x": request.get_output_tensor(0)})
        assert_results_match([second[0]], evaluate(case.model, {"x": np.asarray(first[0])}), *_TOL, what="chained")


@mandatory
def test_dynamic_models_match_the_oracle_at_drawn_shapes(target: Target, hyp: Any, repro: Repro) -> None:
    """Each dynamic model the device claims is compiled once and run at several drawn input shapes with
    one request; a clone reshaped to the first shape (``Model.reshape``) must compute the same."""
    cases = [case for case in dynamic_cases() if target.claims_all(case.model)]
    if not cases:
        names = ", ".join(case.name for case in dynamic_cases())
        pytest.skip(f"{target.device} does not claim any of the kit's dynamic-shape models ({names})")
    requests = {case.name: target.compile(case.model).create_infer_request() for case in cases}
    sizes = st.lists(st.tuples(st.integers(1, 4), st.integers(1, 4)), min_size=2, max_size=3)

    def run(case: DynamicCase, model: Any, inputs: dict[str, np.ndarray], what: str, fresh: bool) -> None:
        try:
            if fresh:
                got = list(target.compile(model)(inputs).to_tuple())
            else:
                got = list(requests[case.name].infer(inputs).to_tuple())
        except Exception as exc:
            snippet = repro.save(model, inputs, target.config)
            raise AssertionError(f"{what}: {type(exc).__name__}: {exc}\nreproduce with:\n{snippet}") from exc
        want = evaluate(model, inputs)
        assert_results_match(got, want, *_TOL, what=what, repro=repro, model=model, inputs=inputs, config=target.config)

    @hyp()
    @given(index=st.integers(0, len(cases) - 1), shapes=sizes, seed=st.integers(0, 99))
    def check(index: int, shapes: list[tuple[int, int]], seed: int) -> None:
        case = cases[index]
        for n, m in shapes:
            inputs = case.inputs(n, m, seed)
            shown = {k: list(v.shape) for k, v in inputs.items()}
            run(case, case.model, inputs, f"{case.name} at {shown}", fresh=False)
        n, m = shapes[0]
        run(case, case.static(n, m), case.inputs(n, m, seed), f"{case.name} reshaped to static [{n}, {m}]", fresh=True)

    check()
