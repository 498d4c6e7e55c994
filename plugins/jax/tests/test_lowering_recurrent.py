"""LSTM, GRU and RNN sequences on XLA (one ``lax.scan`` over time) give the reference's values."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
from hetero_sdk import Model, Node, opset
from hypothesis import given
from hypothesis import strategies as st
from xla_helpers import OPS, check_against_reference

from hetero_sdk_jax.lowering import get_lowering
from hetero_sdk_jax.lowering.recurrent import recurrent_sequence

F32 = np.float32
GATES = {"lstm": 4, "gru": 3, "rnn": 1}
FACTORIES: dict[str, Callable[..., Node]] = {
    "lstm": opset.lstm_sequence,
    "gru": opset.gru_sequence,
    "rnn": opset.rnn_sequence,
}


def _values(
    rng: np.random.Generator, kind: str, batch: int, steps: int, inputs: int, size: int, dirs: int,
    lengths: list[int], bias_rows: int,
) -> list[np.ndarray]:  # fmt: skip
    return [
        rng.normal(size=(batch, steps, inputs)).astype(F32),
        *[rng.normal(size=(batch, dirs, size)).astype(F32) for _ in range(2 if kind == "lstm" else 1)],
        np.array(lengths, np.int32),
        rng.normal(size=(dirs, GATES[kind] * size, inputs)).astype(F32),
        rng.normal(size=(dirs, GATES[kind] * size, size)).astype(F32),
        rng.normal(size=(dirs, bias_rows)).astype(F32),
    ]


def _model(kind: str, values: list[np.ndarray], **attrs: object) -> Model:
    params = [opset.parameter(list(v.shape), v.dtype, name=f"in{i}") for i, v in enumerate(values)]
    return Model(FACTORIES[kind](*params, **attrs).outputs(), params, name=kind)


def test_xla_lowers_the_recurrent_family_with_its_own_scan() -> None:
    """Not the definition's Python loop over time (which jit unrolls step by step)."""
    for type_name in ("LSTMSequence", "GRUSequence", "RNNSequence"):
        lowered = get_lowering(type_name)
        assert lowered is not None and lowered.fn is recurrent_sequence


@pytest.mark.parametrize("kind", ["lstm", "gru", "rnn"])
@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
def test_recurrent_sequences_match_the_reference(kind: str, direction: str) -> None:
    rng = np.random.default_rng(1)
    size, dirs = 4, 2 if direction == "bidirectional" else 1
    values = _values(rng, kind, 2, 5, 3, size, dirs, [5, 3], GATES[kind] * size)
    check_against_reference(_model(kind, values, hidden_size=size, direction=direction), values, rtol=1e-5)


@OPS
@given(
    kind=st.sampled_from(["lstm", "gru", "rnn"]),
    direction=st.sampled_from(["forward", "reverse", "bidirectional"]),
    batch=st.integers(1, 3),
    steps=st.integers(1, 6),
    inputs=st.integers(1, 4),
    size=st.integers(1, 5),
    clip=st.sampled_from([0.0, 0.5, 3.0]),
    linear_before_reset=st.booleans(),
    data=st.data(),
)
def test_any_shape_direction_length_and_clip_matches_the_reference(
    kind: str, direction: str, batch: int, steps: int, inputs: int, size: int, clip: float,
    linear_before_reset: bool, data: st.DataObject,
) -> None:  # fmt: skip
    """Sequence lengths from 0 to the whole sequence: steps past a length hold the state and give zeros."""
    lengths = data.draw(st.lists(st.integers(0, steps), min_size=batch, max_size=batch), label="lengths")
    seed = data.draw(st.integers(0, 2**16), label="seed")
    dirs = 2 if direction == "bidirectional" else 1
    attrs: dict[str, object] = {"hidden_size": size, "direction": direction, "clip": clip}
    bias_rows = GATES[kind] * size
    if kind == "gru":
        attrs["linear_before_reset"] = linear_before_reset
        bias_rows += size if linear_before_reset else 0
    values = _values(np.random.default_rng(seed), kind, batch, steps, inputs, size, dirs, lengths, bias_rows)
    check_against_reference(_model(kind, values, **attrs), values, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    ("kind", "activations", "alpha", "beta"),
    [
        ("lstm", ["hardsigmoid", "scaledtanh", "affine"], [0.3, 0.7, 1.5], [0.4, 1.2, -0.2]),
        ("gru", ["hardsigmoid", "leakyrelu"], [0.25, 0.1], [0.6]),
        ("rnn", ["elu"], [0.8], []),
    ],
)
def test_activations_with_alpha_and_beta_match_the_reference(
    kind: str, activations: list[str], alpha: list[float], beta: list[float]
) -> None:
    rng = np.random.default_rng(2)
    values = _values(rng, kind, 2, 4, 3, 3, 2, [4, 2], GATES[kind] * 3)
    model = _model(
        kind, values, hidden_size=3, direction="bidirectional", activations=activations,
        activations_alpha=alpha, activations_beta=beta,
    )  # fmt: skip
    check_against_reference(model, values, rtol=1e-5, atol=1e-5)


def test_an_lstm_matches_numpy_written_here() -> None:
    """A forward LSTM with gates f, i, c, o against a plain numpy loop, lengths 4 and 2."""
    rng = np.random.default_rng(3)
    values = _values(rng, "lstm", 2, 4, 3, 2, 1, [4, 2], 8)
    x, h0, c0, lengths, w, r, b = values
    sigmoid = lambda v: 1 / (1 + np.exp(-v))  # noqa: E731
    h, c, ys = h0[:, 0].astype(np.float64), c0[:, 0].astype(np.float64), []
    for t in range(4):
        g = x[:, t] @ w[0].T + h @ r[0].T + b[0]
        f, i, cand, o = sigmoid(g[:, 0:2]), sigmoid(g[:, 2:4]), np.tanh(g[:, 4:6]), sigmoid(g[:, 6:8])
        c_new = f * c + i * cand
        h_new = o * np.tanh(c_new)
        live = (lengths > t)[:, None]
        h, c = np.where(live, h_new, h), np.where(live, c_new, c)
        ys.append(np.where(live, h, 0))
    expected = [np.stack(ys, axis=1)[:, None], h[:, None], c[:, None]]
    got = check_against_reference(_model("lstm", values, hidden_size=2), values)
    for out, want in zip(got, expected):
        np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-6)


def test_an_activation_that_overflows_on_gates_it_does_not_own_changes_nothing() -> None:
    """The lowering applies each LSTM activation to all four gates at once: softplus overflowing to inf
    on the f, i, o gates (which it does not act on) must not reach any output."""
    rng = np.random.default_rng(4)
    size = 3
    values = _values(rng, "lstm", 2, 5, 3, size, 2, [5, 3], 4 * size)
    x, w, r = values[0], values[4], values[5]
    x[...] = np.abs(x) + 1
    w[:, : 2 * size] = np.abs(w[:, : 2 * size]) * 100  # f and i: pre-activations far above 88
    w[:, 3 * size :] = np.abs(w[:, 3 * size :]) * 100  # o
    w[:, 2 * size : 3 * size] *= 0.1  # the candidate, where softplus acts: moderate
    r[:, 2 * size : 3 * size] *= 0.1
    model = _model(
        "lstm", values, hidden_size=size, direction="bidirectional", activations=["sigmoid", "softplus", "tanh"]
    )
    got = check_against_reference(model, values, rtol=1e-5, atol=1e-5)
    assert all(np.isfinite(out).all() for out in got)
