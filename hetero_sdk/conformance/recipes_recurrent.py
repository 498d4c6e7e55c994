"""Case recipes of the recurrent family: LSTM, GRU and RNN sequences, whose weights must fit the hidden
size, the gate count and the directions."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from hetero_sdk import opset
from hetero_sdk.conformance.case_builder import F32, I32, Builder, OpCase, recipe
from hetero_sdk.graph import Node

_GATES = {"LSTMSequence": 4, "GRUSequence": 3, "RNNSequence": 1}
_FACTORIES: dict[str, Callable[..., Node]] = {
    "LSTMSequence": opset.lstm_sequence,
    "GRUSequence": opset.gru_sequence,
    "RNNSequence": opset.rnn_sequence,
}


@recipe(*_GATES)
def _sequence(b: Builder, op_type: str) -> OpCase:
    batch, steps, inputs, size = b.integer(1, 3), b.integer(1, 4), b.integer(1, 3), b.integer(1, 3)
    direction = b.pick(("forward", "reverse", "bidirectional"))
    directions = 2 if direction == "bidirectional" else 1
    gates = _GATES[op_type]
    linear_before_reset = op_type == "GRUSequence" and b.flag()
    states = 2 if op_type == "LSTMSequence" else 1
    x = b.input(b.values([batch, steps, inputs], F32, -1, 1), "X")
    initial = [b.operand(b.values([batch, directions, size], F32, -1, 1), f"state{i}") for i in range(states)]
    lengths = b.operand(np.asarray(b.values([batch], I32, 1, steps)), "lengths")
    weights = [
        b.operand(b.values([directions, gates * size, columns], F32, -0.8, 0.8), name)
        for name, columns in (("W", inputs), ("R", size))
    ]
    bias_rows = (gates + 1 if linear_before_reset else gates) * size
    bias = b.operand(b.values([directions, bias_rows], F32, -0.5, 0.5), "B")
    extra = {"linear_before_reset": linear_before_reset} if op_type == "GRUSequence" else {}
    node = _FACTORIES[op_type](
        x, *initial, lengths, *weights, bias, hidden_size=size, direction=direction, name="op", **extra
    )
    return b.case(op_type, node.outputs(), "transcendental", steps * (inputs + size), direction=direction, **extra)
