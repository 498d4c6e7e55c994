"""The recurrent rules: ONNX's LSTM, GRU (both ``linear_before_reset``) and RNN, forward, reverse and
bidirectional, with and without biases, sequence lengths and initial states, in both layouts, compute
what ONNX Runtime computes."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from onnx_models import FEW, check, node_model, run_ort

F32 = np.float32
GATES = {"LSTM": 4, "GRU": 3, "RNN": 1}
SEQ, BATCH, INPUT, HIDDEN = 4, 3, 5, 6


def _case(
    kind: str,
    direction: str = "forward",
    bias: bool = True,
    lengths: bool = False,
    initial: bool = False,
    layout: int = 0,
    seed: int = 0,
    **attrs: object,
):  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(seed)
    dirs = 2 if direction == "bidirectional" else 1
    gates = GATES[kind]

    def r(*shape: int) -> np.ndarray:
        return (rng.standard_normal(shape) * 0.5).astype(F32)

    x = r(BATCH, SEQ, INPUT) if layout else r(SEQ, BATCH, INPUT)
    state_shape = (BATCH, dirs, HIDDEN) if layout else (dirs, BATCH, HIDDEN)
    inputs: dict[str, np.ndarray | None] = {
        "x": x,
        "w": r(dirs, gates * HIDDEN, INPUT),
        "r": r(dirs, gates * HIDDEN, HIDDEN),
        "b": r(dirs, 2 * gates * HIDDEN) if bias else None,
        "lengths": rng.integers(1, SEQ + 1, BATCH).astype(np.int32) if lengths else None,
        "h0": r(*state_shape) if initial else None,
    }
    outputs = ["y", "y_h"]
    if kind == "LSTM":
        inputs["c0"] = r(*state_shape) if initial else None
        outputs.append("y_c")
    model, feeds = node_model(
        kind,
        inputs,
        14 if layout else 7,
        outputs=outputs,
        constants=["w", "r", "b"],
        hidden_size=HIDDEN,
        direction=direction,
        **({"layout": layout} if layout else {}),
        **attrs,
    )
    return model, feeds


@pytest.mark.parametrize("kind", ["LSTM", "GRU", "RNN"])
@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
@pytest.mark.parametrize("bias", [True, False])
def test_directions_with_and_without_bias_match_onnxruntime(kind: str, direction: str, bias: bool) -> None:
    check(*_case(kind, direction, bias), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("kind", ["LSTM", "GRU", "RNN"])
@pytest.mark.parametrize("layout", [0, 1])
@given(
    direction=st.sampled_from(["forward", "reverse", "bidirectional"]),
    lengths=st.booleans(),
    initial=st.booleans(),
    seed=st.integers(0, 1000),
)
@FEW
def test_sequence_lengths_initial_states_and_layouts(
    kind: str, layout: int, direction: str, lengths: bool, initial: bool, seed: int
) -> None:
    model, feeds = _case(kind, direction, True, lengths, initial, layout, seed)
    expected = None
    if layout:
        # ONNX Runtime runs only layout=0: the reference is the same layer in that layout, transposed
        twin, twin_feeds = _case(kind, direction, True, lengths, initial, 0, seed)
        batch_first = {"x": (1, 0, 2), "h0": (1, 0, 2), "c0": (1, 0, 2)}
        twin_feeds = {
            k: np.ascontiguousarray(feeds[k].transpose(batch_first[k])) if k in batch_first else feeds[k]
            for k in twin_feeds
        }
        outs = run_ort(twin, twin_feeds)
        expected = [outs[0].transpose(2, 0, 1, 3), *(o.transpose(1, 0, 2) for o in outs[1:])]
    check(model, feeds, rtol=1e-4, atol=1e-5, expected=expected)


@pytest.mark.parametrize("linear_before_reset", [0, 1])
@pytest.mark.parametrize("direction", ["forward", "bidirectional"])
def test_gru_linear_before_reset(linear_before_reset: int, direction: str) -> None:
    for bias in (True, False):
        model, feeds = _case("GRU", direction, bias, True, True, linear_before_reset=linear_before_reset)
        check(model, feeds, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("kind", ["LSTM", "GRU", "RNN"])
def test_recurrent_layers_on_xla(kind: str) -> None:
    check(*_case(kind, "bidirectional", True, False, True), ("XLA",), rtol=1e-4, atol=1e-5)


def test_clip_and_custom_activations() -> None:
    model, feeds = _case("RNN", "forward", True, activations=["Relu"], clip=0.5)
    check(model, feeds, rtol=1e-4, atol=1e-5)
    model, feeds = _case("LSTM", "reverse", True, activations=["Sigmoid", "Tanh", "Tanh"], clip=1.0)
    check(model, feeds, rtol=1e-4, atol=1e-5)
