"""LSTMSequence, GRUSequence and RNNSequence against the cell equations written out in numpy here,
over both directions, with sequence lengths shorter than the sequence."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hetero_sdk as hs
from hetero_sdk import opset
from hetero_sdk.errors import ModelValidationError
from hetero_sdk.reference import evaluate

F32 = np.float32


def sigmoid(x: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-x))


def lstm_step(x, h, c, w, r, b):
    """OpenVINO's LSTM cell, gates f, i, c, o."""
    g = x @ w.T + h @ r.T + b
    f, i, cand, o = np.split(g, 4, axis=1)
    c = sigmoid(f) * c + sigmoid(i) * np.tanh(cand)
    return sigmoid(o) * np.tanh(c), c


def gru_step(x, h, w, r, b, linear_before_reset):
    """OpenVINO's GRU cell, gates z, r, h."""
    size = h.shape[1]
    wz, wr, wh = np.split(w, 3)
    rz, rr, rh = np.split(r, 3)
    bz, br, bh = b[:size], b[size : 2 * size], b[2 * size : 3 * size]
    z = sigmoid(x @ wz.T + h @ rz.T + bz)
    reset = sigmoid(x @ wr.T + h @ rr.T + br)
    if linear_before_reset:
        candidate = np.tanh(x @ wh.T + bh + reset * (h @ rh.T + b[3 * size :]))
    else:
        candidate = np.tanh(x @ wh.T + (reset * h) @ rh.T + bh)
    return (1 - z) * candidate + z * h


def run(kind, x, states, lengths, w, r, b, direction, linear_before_reset=False):
    """The whole layer in plain loops: per direction, per batch entry, per step."""
    batch, steps, _ = x.shape
    dirs = w.shape[0]
    size = states[0].shape[2]
    y = np.zeros((batch, dirs, steps, size), F32)
    finals = [s.copy() for s in states]
    for d in range(dirs):
        backwards = direction == "reverse" or (direction == "bidirectional" and d == 1)
        for n in range(batch):
            current = [s[n : n + 1, d] for s in states]
            order = range(lengths[n] - 1, -1, -1) if backwards else range(lengths[n])
            for t in order:
                xt = x[n : n + 1, t]
                if kind == "lstm":
                    current = list(lstm_step(xt, *current, w[d], r[d], b[d]))
                elif kind == "gru":
                    current = [gru_step(xt, current[0], w[d], r[d], b[d], linear_before_reset)]
                else:
                    current = [np.tanh(xt @ w[d].T + current[0] @ r[d].T + b[d])]
                y[n, d, t] = current[0][0]
            for final, value in zip(finals, current):
                final[n, d] = value[0]
    return [y, *finals]


@settings(max_examples=12, deadline=None)
@given(
    kind=st.sampled_from(["lstm", "gru", "rnn"]),
    direction=st.sampled_from(["forward", "reverse", "bidirectional"]),
    batch=st.integers(1, 3),
    steps=st.integers(1, 5),
    linear_before_reset=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_sequences_match_the_cell_equations(kind, direction, batch, steps, linear_before_reset, seed) -> None:
    rng = np.random.default_rng(seed)
    size, inputs = 3, 2
    gates = {"lstm": 4, "gru": 3, "rnn": 1}[kind]
    dirs = 2 if direction == "bidirectional" else 1
    x = rng.normal(size=(batch, steps, inputs)).astype(F32)
    states = [rng.normal(size=(batch, dirs, size)).astype(F32) for _ in range(2 if kind == "lstm" else 1)]
    lengths = rng.integers(1, steps + 1, batch).astype(np.int32)
    w = rng.normal(size=(dirs, gates * size, inputs)).astype(F32) * 0.5
    r = rng.normal(size=(dirs, gates * size, size)).astype(F32) * 0.5
    bias_rows = (gates + 1 if kind == "gru" and linear_before_reset else gates) * size
    b = rng.normal(size=(dirs, bias_rows)).astype(F32)
    params = [opset.parameter(list(v.shape), v.dtype) for v in (x, *states, lengths, w, r, b)]
    if kind == "lstm":
        node = opset.lstm_sequence(*params, hidden_size=size, direction=direction)
    elif kind == "gru":
        node = opset.gru_sequence(
            *params, hidden_size=size, direction=direction, linear_before_reset=linear_before_reset
        )
    else:
        node = opset.rnn_sequence(*params, hidden_size=size, direction=direction)
    got = evaluate(hs.Model(node.outputs(), params, name=kind), [x, *states, lengths, w, r, b])
    want = run(kind, x, states, lengths, w, r, b, direction, linear_before_reset)
    for g, e in zip(got, want):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)
    assert [tuple(o.get_partial_shape().dims) for o in node.outputs()] == [tuple(v.shape) for v in want]


def test_activations_and_clip_are_honoured() -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(1, 2, 2)).astype(F32) * 4
    h0 = np.zeros((1, 1, 2), F32)
    w, r, b = rng.normal(size=(1, 2, 2)).astype(F32), np.zeros((1, 2, 2), F32), np.zeros((1, 2), F32)
    node = opset.rnn_sequence(x, h0, np.array([2], np.int32), w, r, b, 2, activations=["Relu"], clip=0.5)
    y = evaluate(hs.Model([node.output(0)], [], name="m"), [])[0]
    first = np.maximum(np.clip(x[0, 0] @ w[0].T, -0.5, 0.5), 0)
    np.testing.assert_allclose(y[0, 0, 0], first, rtol=1e-6)
    assert node.attrs["activations"] == ["relu"]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"W": np.zeros((1, 8, 2), F32)}, "the rows of W \\(4 gates x hidden_size\\): 8 != 12"),
        ({"h0": np.zeros((2, 1, 3), F32)}, "the batch of X and of the initial states: 1 != 2"),
        ({"direction": "sideways"}, "attribute direction='sideways' is invalid"),
        ({"activations": ["sigmoid", "tanh", "swirl"]}, "unknown activation\\(s\\) \\['swirl'\\]"),
    ],
)
def test_lstm_rejects_what_does_not_fit(change, message) -> None:
    values = {
        "X": np.zeros((1, 2, 2), F32), "h0": np.zeros((1, 1, 3), F32), "c0": np.zeros((1, 1, 3), F32),
        "lengths": np.array([2], np.int32), "W": np.zeros((1, 12, 2), F32), "R": np.zeros((1, 12, 3), F32),
        "B": np.zeros((1, 12), F32),
    }  # fmt: skip
    attrs = {k: change.pop(k) for k in ("direction", "activations") if k in change}
    values.update(change)
    with pytest.raises(ModelValidationError, match=message):
        opset.lstm_sequence(*values.values(), hidden_size=3, **attrs, name="lstm")
