"""What the base CompiledModel carries for every device: profiled times on the runtime model
(``execTimeMcs``) and a typed per-request state that each request keeps for its life."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from typing import Any

import numpy as np
import pytest

import hetero_sdk as hs
from hetero_sdk import opset
from hetero_sdk.plugin import CompiledModel, ProfilingInfo, RunContext, Status, rt_info


def _model() -> hs.Model:
    x = opset.parameter([2], hs.Type.f32, name="x")
    y = opset.relu(opset.add(x, opset.constant(np.float32(1), name="one"), name="add"), name="relu")
    return hs.Model([y], [x], name="small")


def _row(name: str, microseconds: float, kind: str = "Op") -> ProfilingInfo:
    took = timedelta(microseconds=microseconds)
    return ProfilingInfo(name, kind, "test", Status.EXECUTED, took, took)


class Recorded(CompiledModel):
    """Reports the rows a test gives it, as a device's run would."""

    rows: Sequence[ProfilingInfo] | None = None
    whole_model = False

    def run(self, inputs: Sequence[Any], context: RunContext) -> list[Any]:
        if context.profile is not None and self.rows is not None:
            context.profile.extend(self.rows)
        self.keep_profile(context.profile, whole_model=self.whole_model)
        return [np.maximum(np.asarray(inputs[0]) + 1, 0)]


def _times(compiled: CompiledModel) -> dict[str, float]:
    ops = compiled.get_runtime_model().get_ops()
    return {
        op.friendly_name: op.get_rt_info()[rt_info.PERF_COUNTER]
        for op in ops
        if rt_info.PERF_COUNTER in op.get_rt_info()
    }


def test_each_row_time_goes_to_the_op_it_names() -> None:
    compiled = Recorded(_model(), "DEV", {"PERF_COUNT": True})
    assert _times(compiled) == {}  # before any profiled run
    compiled.rows = [_row("add", 12.0), _row("relu", 3.0)]
    compiled.create_infer_request().infer([np.zeros(2, np.float32)])
    assert _times(compiled) == {"add": 12.0, "relu": 3.0}
    compiled.rows = [_row("relu", 7.0)]
    compiled.create_infer_request().infer([np.zeros(2, np.float32)])
    assert _times(compiled) == {"relu": 7.0}  # the last profiled run's, not merged with the one before


def test_a_whole_model_row_times_every_compute_op_and_no_structural_one() -> None:
    compiled = Recorded(_model(), "DEV", {"PERF_COUNT": True})
    compiled.whole_model = True
    compiled.rows = [_row("small/host_to_device", 1.0, "Transfer"), _row("small", 40.0, "Executable")]
    compiled.create_infer_request().infer([np.zeros(2, np.float32)])
    assert _times(compiled) == {"add": 40.0, "relu": 40.0}


def test_a_run_without_profiling_keeps_the_previous_times() -> None:
    compiled = Recorded(_model(), "DEV", {"PERF_COUNT": True})
    compiled.rows = [_row("add", 5.0)]
    compiled.create_infer_request().infer([np.zeros(2, np.float32)])
    compiled.run([np.zeros(2, np.float32)], RunContext(False))  # PERF_COUNT off for this caller
    assert _times(compiled) == {"add": 5.0}


class Counting(CompiledModel):
    """Keeps a typed per-request state: how many times the request ran, and the last input."""

    class State:
        def __init__(self) -> None:
            self.runs = 0
            self.last: np.ndarray | None = None

    def create_request_state(self) -> Counting.State:
        return Counting.State()

    def run(self, inputs: Sequence[Any], context: RunContext) -> list[Any]:
        state = context.state if context.state is not None else self.create_request_state()
        assert isinstance(state, Counting.State)
        state.runs += 1
        state.last = np.asarray(inputs[0])
        return [np.full(2, state.runs, np.float32)]


def test_each_request_keeps_its_own_state_object_for_its_life() -> None:
    compiled = Counting(_model(), "DEV")
    first, second = compiled.create_infer_request(), compiled.create_infer_request()
    x = np.zeros(2, np.float32)
    assert first.infer([x])[0].tolist() == [1, 1]
    assert first.infer([x])[0].tolist() == [2, 2]  # the same state, run after run
    assert second.infer([x])[0].tolist() == [1, 1]  # another request's own
    assert compiled.run([x], RunContext(False))[0].tolist() == [1, 1]  # a caller keeping none: a fresh one


def test_the_default_state_is_none() -> None:
    seen: list[Any] = []

    class Stateless(Recorded):
        def run(self, inputs: Sequence[Any], context: RunContext) -> list[Any]:
            seen.append(context.state)
            return super().run(inputs, context)

    Stateless(_model(), "DEV").create_infer_request().infer([np.zeros(2, np.float32)])
    assert seen == [None]


@pytest.mark.parametrize("profiled", [False, True])
def test_the_outputs_do_not_depend_on_profiling(profiled: bool) -> None:
    compiled = Recorded(_model(), "DEV", {"PERF_COUNT": profiled})
    x = np.array([-3.0, 2.0], np.float32)
    np.testing.assert_array_equal(compiled.create_infer_request().infer([x])[0], [0.0, 3.0])
