"""Stateful models on every device: requests keep their variables between inferences (each its own),
reset and set them, refuse a wrong state, and a stateful decoder gives, step by step, what the
explicit-cache decoder gives in numpy."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from stateful_models import HEAD_DIM, HEADS, LAYERS, accumulator, decoder, decoder_step, empty_cache

import hetero_sdk as hs
from hetero_sdk.auto import AutoPlugin
from hetero_sdk.errors import InferenceError, RequestBusyError, UnsupportedOperationError
from hetero_sdk.hetero.plugin import HeteroPlugin
from hetero_sdk.reference import evaluate
from hetero_sdk.runtime import RemoteTensor
from hetero_sdk.runtime.stateful import StatefulCompiledModel
from hetero_sdk.runtime.variable_state import VariableBuffer
from template_plugin import TemplatePlugin

hetero_sdk_jax = pytest.importorskip("hetero_sdk_jax", reason="the XLA plugin (plugins/jax) is not installed")

DEVICES = ["TEMPLATE", "XLA", "HETERO:XLA,TEMPLATE", "AUTO:XLA,TEMPLATE"]
X = np.arange(6, dtype=np.float32).reshape(2, 3)


@pytest.fixture(scope="module")
def core() -> hs.Core:
    plugins = {"TEMPLATE": TemplatePlugin, "XLA": hetero_sdk_jax.XlaPlugin, "HETERO": HeteroPlugin, "AUTO": AutoPlugin}
    return hs.Core(plugins=plugins, autoload=False)


@pytest.mark.parametrize("device", DEVICES)
def test_a_request_keeps_the_running_sum_and_resets_it(core: hs.Core, device: str) -> None:
    compiled = core.compile_model(accumulator(), device)
    assert isinstance(compiled, StatefulCompiledModel)
    assert [p.any_name for p in compiled.inputs] == ["x"] and [p.any_name for p in compiled.outputs] == ["sum"]
    request = compiled.create_infer_request()
    for step in range(1, 4):
        np.testing.assert_array_equal(request.infer({"x": X})["sum"], step * X)
    request.reset_state()
    np.testing.assert_array_equal(request.infer([X])[0], X)


@pytest.mark.parametrize("device", DEVICES)
def test_two_requests_keep_two_states(core: hs.Core, device: str) -> None:
    compiled = core.compile_model(accumulator(), device)
    one, two = compiled.create_infer_request(), compiled.create_infer_request()
    one.infer([X])
    two.infer([10 * X])
    one.infer([X])
    np.testing.assert_array_equal(one.query_state()[0].state.data, 2 * X)
    np.testing.assert_array_equal(two.infer([X])[0], 11 * X)


@pytest.mark.parametrize("device", DEVICES)
def test_a_state_is_read_and_set(core: hs.Core, device: str) -> None:
    request = core.compile_model(accumulator(), device).create_infer_request()
    (state,) = request.query_state()
    assert state.name == "acc"
    before = state.state
    assert isinstance(before, hs.Tensor) and before.shape == (2, 3) and not before.data.any()
    state.state = hs.Tensor(np.full((2, 3), 100, np.float32))
    np.testing.assert_array_equal(request.infer([X])[0], 100 + X)
    state.state = np.ones((2, 3), np.float32)  # an ndarray as well
    np.testing.assert_array_equal(request.infer([X])[0], 1 + X)
    state.reset()
    np.testing.assert_array_equal(request.infer([X])[0], X)


_VALUES = hnp.arrays(np.float32, (2, 3), elements=st.floats(-100, 100, width=32))
_STEPS = st.lists(
    st.one_of(st.tuples(st.just("infer"), _VALUES), st.tuples(st.just("set"), _VALUES), st.just(("reset", None))),
    max_size=8,
)


@settings(max_examples=25, deadline=None)
@given(steps=_STEPS)
def test_any_sequence_of_inferences_sets_and_resets_keeps_the_running_sum(core: hs.Core, steps: list[Any]) -> None:
    request = core.compile_model(accumulator(), "TEMPLATE").create_infer_request()
    total = np.zeros((2, 3), np.float32)
    for action, value in steps:
        if action == "infer":
            total = total + value
            np.testing.assert_array_equal(request.infer([value])[0], total)
        elif action == "set":
            request.query_state()[0].state = value
            total = value.copy()
        else:
            request.reset_state()
            total = np.zeros((2, 3), np.float32)
        np.testing.assert_array_equal(request.query_state()[0].state.data, total)


@pytest.mark.parametrize(
    ("value", "match"),
    [
        (np.zeros((2, 4), np.float32), r"variable 'acc' is f32\[2,3\]; the state given is float32\[2, 4\]"),
        (np.zeros((2, 3), np.float64), r"variable 'acc' is f32\[2,3\]; the state given is float64\[2, 3\]"),
    ],
)
def test_a_wrong_state_is_refused_and_the_request_stays_usable(core: hs.Core, value: np.ndarray, match: str) -> None:
    request = core.compile_model(accumulator(), "TEMPLATE").create_infer_request()
    request.infer([X])
    with pytest.raises(InferenceError, match=match):
        request.query_state()[0].state = value
    np.testing.assert_array_equal(request.infer([X])[0], 2 * X)


def test_a_running_request_refuses_state_changes(core: hs.Core) -> None:
    request = core.compile_model(accumulator(), "TEMPLATE").create_infer_request()
    request._context = object()  # type: ignore[assignment]  # (as while an inference runs)
    with pytest.raises(RequestBusyError):
        request.reset_state()
    with pytest.raises(RequestBusyError):
        request.query_state()[0].state = X
    request._context = None


class _Recording(VariableBuffer):
    kept: ClassVar[list[Any]] = []

    def set(self, value: Any) -> None:
        _Recording.kept.append(value)
        super().set(value)


def test_xla_keeps_the_state_on_the_device(core: hs.Core) -> None:
    compiled = core.compile_model(accumulator(), "XLA")
    assert isinstance(compiled, StatefulCompiledModel)
    compiled.buffer = _Recording
    request = compiled.create_infer_request()
    _Recording.kept.clear()
    outputs = [request.infer([X])[0] for _ in range(2)]
    assert all(isinstance(v, RemoteTensor) for v in _Recording.kept) and len(_Recording.kept) == 2
    assert all(type(o) is np.ndarray for o in outputs)  # the user's outputs come to the host


@pytest.mark.parametrize("device", ["TEMPLATE", "XLA"])
def test_a_stateful_decoder_gives_the_explicit_cache_decoder_s_outputs(core: hs.Core, device: str) -> None:
    stateful = core.compile_model(hs.make_stateful(decoder()), device).create_infer_request()
    rng = np.random.default_rng(5)
    prompt = rng.integers(0, 11, (2, 4))
    cache = empty_cache(2)
    steps = [prompt, *(rng.integers(0, 11, (2, 1)) for _ in range(3 if device == "TEMPLATE" else 2))]
    for ids in steps:
        want, cache = decoder_step(ids, cache)
        np.testing.assert_allclose(stateful.infer({"input_ids": ids})["logits"], want, rtol=1e-5, atol=1e-5)
    states = {s.name: s.state.data for s in stateful.query_state()}
    assert states["past_key_values.1.value"].shape == (2, HEADS, len(steps) + 3, HEAD_DIM)
    np.testing.assert_allclose(states["past_key_values.1.value"], cache[3], rtol=1e-6)


def test_beam_idx_reorders_the_cache_rows(core: hs.Core) -> None:
    request = core.compile_model(hs.make_stateful(decoder(), beam_idx=True), "TEMPLATE").create_infer_request()
    prompt = np.array([[1, 2], [3, 4], [5, 6]])
    keep = np.arange(3, dtype=np.int32)
    _, cache = decoder_step(prompt, empty_cache(3))
    request.infer({"input_ids": prompt, "beam_idx": keep})
    order = np.array([2, 2, 0], np.int32)
    ids = np.array([[7], [8], [9]])
    want, _ = decoder_step(ids, [c[order] for c in cache])
    np.testing.assert_allclose(request.infer({"input_ids": ids, "beam_idx": order})["logits"], want, rtol=1e-5)


def test_hetero_puts_each_variable_s_read_and_write_on_one_device(core: hs.Core) -> None:
    model = hs.make_stateful(decoder())
    answer = core.query_model(model, "HETERO:XLA,TEMPLATE")
    names = {n.friendly_name for n in model.get_ops()}
    assert names <= set(answer)  # every op, the state ops and their initial values included
    for sink in model.get_sinks():
        reader = next(n for n in model.get_ops() if n.attrs.get("variable_id") == sink.attrs["variable_id"]
                      and n.get_type_name() == "ReadValue")  # fmt: skip
        assert answer[reader.friendly_name] == answer[sink.friendly_name]


def test_the_cache_starts_empty_with_the_prompt_s_batch(core: hs.Core) -> None:
    request = core.compile_model(hs.make_stateful(decoder()), "TEMPLATE").create_infer_request()
    assert all(s.state.shape == (0, HEADS, 0, HEAD_DIM) for s in request.query_state())  # no value yet
    request.infer({"input_ids": np.zeros((3, 2), np.int64)})
    assert [s.state.shape for s in request.query_state()] == [(3, HEADS, 2, HEAD_DIM)] * (2 * LAYERS)


def test_the_reference_evaluator_refuses_a_stateful_model() -> None:
    with pytest.raises(UnsupportedOperationError, match=r"'accumulator' is stateful.*make_stateless"):
        evaluate(accumulator(), [X])
