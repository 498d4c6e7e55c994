"""LSTM, GRU and RNN sequences on XLA give the reference's values (XLA traces their array-API kernel)."""

from __future__ import annotations

import numpy as np
import pytest
from hetero_sdk import Model, opset
from xla_helpers import check_against_reference

F32 = np.float32


@pytest.mark.parametrize("kind", ["lstm", "gru", "rnn"])
@pytest.mark.parametrize("direction", ["forward", "bidirectional"])
def test_recurrent_sequences_match_the_reference(kind: str, direction: str) -> None:
    rng = np.random.default_rng(1)
    size, dirs = 4, 2 if direction == "bidirectional" else 1
    gates = {"lstm": 4, "gru": 3, "rnn": 1}[kind]
    values = [
        rng.normal(size=(2, 5, 3)).astype(F32),
        *[rng.normal(size=(2, dirs, size)).astype(F32) for _ in range(2 if kind == "lstm" else 1)],
        np.array([5, 3], np.int32),
        rng.normal(size=(dirs, gates * size, 3)).astype(F32),
        rng.normal(size=(dirs, gates * size, size)).astype(F32),
        rng.normal(size=(dirs, gates * size)).astype(F32),
    ]
    params = [opset.parameter(list(v.shape), v.dtype, name=f"in{i}") for i, v in enumerate(values)]
    factory = {"lstm": opset.lstm_sequence, "gru": opset.gru_sequence, "rnn": opset.rnn_sequence}[kind]
    node = factory(*params, hidden_size=size, direction=direction)
    check_against_reference(Model(node.outputs(), params, name=kind), values, rtol=1e-5)
