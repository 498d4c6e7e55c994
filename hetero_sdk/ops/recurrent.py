"""Recurrent layers over whole sequences: LSTMSequence, GRUSequence, RNNSequence (OpenVINO's opset5).

Layouts are OpenVINO's: ``X`` is ``[batch, seq_len, input_size]``; initial states are
``[batch, num_directions, hidden_size]``; ``W`` is ``[num_directions, gates * hidden_size, input_size]``,
``R`` ``[num_directions, gates * hidden_size, hidden_size]``, ``B`` ``[num_directions, gates * hidden_size]``
(GRU with ``linear_before_reset``: ``4 * hidden_size``). Gates are stacked in OpenVINO's order: LSTM
``f, i, c, o``; GRU ``z, r, h``. Outputs: ``Y`` ``[batch, num_directions, seq_len, hidden_size]`` and the
last states ``[batch, num_directions, hidden_size]``. Steps at or past a batch entry's sequence length
give zeros in ``Y`` and leave its state unchanged.

The cell math is written once against the array API (:func:`lstm_cell`, :func:`gru_cell`,
:func:`rnn_cell`): the ops' kernel loops over time with it, and a device may drive it with a loop of
its own (XLA's ``lax.scan``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from hetero_sdk.array_api import namespace
from hetero_sdk.graph.node import Node
from hetero_sdk.graph.op_def import (
    BOOL,
    FLOAT,
    FLOATS,
    INT,
    LOWER_STRING,
    STRINGS,
    Attr,
    Input,
    OpDef,
    OutputSpec,
    define,
)
from hetero_sdk.ops.basic import as_output
from hetero_sdk.ops.checks import INDEX_TYPES, REAL_TYPES, expect_rank, expect_same_types, merge_dims
from hetero_sdk.shape import PartialShape

__all__ = [
    "ACTIVATIONS", "DIRECTIONS", "GRU_SEQUENCE", "LSTM_SEQUENCE", "RNN_SEQUENCE", "activation", "gru_cell",
    "gru_sequence", "lstm_cell", "lstm_sequence", "rnn_cell", "rnn_sequence", "run_sequence",
]  # fmt: skip

DIRECTIONS = ("forward", "reverse", "bidirectional")

ACTIVATIONS: dict[str, Callable[[Any, Any, float, float], Any]] = {
    "sigmoid": lambda xp, x, a, b: 1 / (1 + xp.exp(-x)),
    "tanh": lambda xp, x, a, b: xp.tanh(x),
    "relu": lambda xp, x, a, b: xp.maximum(x, 0),
    "affine": lambda xp, x, a, b: a * x + b,
    "leakyrelu": lambda xp, x, a, b: xp.where(x >= 0, x, a * x),
    "thresholdedrelu": lambda xp, x, a, b: xp.where(x > a, x, 0),
    "scaledtanh": lambda xp, x, a, b: a * xp.tanh(b * x),
    "hardsigmoid": lambda xp, x, a, b: xp.clip(a * x + b, 0, 1),
    "elu": lambda xp, x, a, b: xp.where(x >= 0, x, a * (xp.exp(x) - 1)),
    "softsign": lambda xp, x, a, b: x / (1 + xp.abs(x)),
    "softplus": lambda xp, x, a, b: xp.log(1 + xp.exp(x)),
}
"""The activation functions a recurrent op may name, with their ``alpha`` and ``beta`` (ONNX's set)."""

Activation = Callable[[Any], Any]


def activation(node: Node, index: int) -> Activation:
    """The ``index``-th activation of ``node``, bound to its alpha and beta (ONNX's defaults otherwise)."""
    names: list[str] = node.attrs["activations"]
    alphas, betas = node.attrs["activations_alpha"], node.attrs["activations_beta"]
    name = names[index]
    alpha = alphas[index] if index < len(alphas) else _DEFAULT_ALPHA.get(name, 0.0)
    beta = betas[index] if index < len(betas) else _DEFAULT_BETA.get(name, 0.0)
    function = ACTIVATIONS[name]
    return lambda x: function(namespace(x), x, alpha, beta)


_DEFAULT_ALPHA = {
    "leakyrelu": 0.01,
    "thresholdedrelu": 1.0,
    "hardsigmoid": 0.2,
    "elu": 1.0,
    "affine": 1.0,
    "scaledtanh": 1.0,
}
_DEFAULT_BETA = {"hardsigmoid": 0.5, "scaledtanh": 1.0}


def _clipped(x: Any, clip: float) -> Any:
    return namespace(x).clip(x, -clip, clip) if clip > 0 else x


def _gates(x: Any, h: Any, w: Any, r: Any, b: Any) -> Any:
    xp = namespace(x)
    return xp.matmul(x, xp.matrix_transpose(w)) + xp.matmul(h, xp.matrix_transpose(r)) + b


def lstm_cell(node: Node, x: Any, h: Any, c: Any, w: Any, r: Any, b: Any) -> tuple[Any, Any]:
    """One LSTM step for one direction: ``(h, c)`` after ``x`` (``[batch, input]``), gates ``f, i, c, o``."""
    f_act, g_act, h_act = activation(node, 0), activation(node, 1), activation(node, 2)
    clip = node.attrs["clip"]
    size = node.attrs["hidden_size"]
    gates = _clipped(_gates(x, h, w, r, b), clip)
    f, i = f_act(gates[:, :size]), f_act(gates[:, size : 2 * size])
    candidate, o = g_act(gates[:, 2 * size : 3 * size]), f_act(gates[:, 3 * size :])
    c_next = f * c + i * candidate
    return o * h_act(c_next), c_next


def gru_cell(node: Node, x: Any, h: Any, w: Any, r: Any, b: Any) -> Any:
    """One GRU step for one direction: ``h`` after ``x``, gates ``z, r, h``."""
    xp = namespace(x)
    f_act, g_act = activation(node, 0), activation(node, 1)
    size, clip = node.attrs["hidden_size"], node.attrs["clip"]
    x_part = xp.matmul(x, xp.matrix_transpose(w)) + b[: 3 * size]
    h_part = xp.matmul(h, xp.matrix_transpose(r))
    z = f_act(_clipped(x_part[:, :size] + h_part[:, :size], clip))
    reset = f_act(_clipped(x_part[:, size : 2 * size] + h_part[:, size : 2 * size], clip))
    if node.attrs["linear_before_reset"]:
        hidden = x_part[:, 2 * size :] + reset * (h_part[:, 2 * size :] + b[3 * size :])
    else:
        r_h = xp.matmul(reset * h, xp.matrix_transpose(r[2 * size :]))
        hidden = x_part[:, 2 * size :] + r_h
    candidate = g_act(_clipped(hidden, clip))
    return (1 - z) * candidate + z * h


def rnn_cell(node: Node, x: Any, h: Any, w: Any, r: Any, b: Any) -> Any:
    """One plain RNN step for one direction."""
    return activation(node, 0)(_clipped(_gates(x, h, w, r, b), node.attrs["clip"]))


def run_sequence(node: Node, x: Any, states: Sequence[Any], lengths: Any, weights: Sequence[Any]) -> list[Any]:
    """Every direction of a recurrent op over the whole sequence, with a Python loop over time.

    :param states: the initial states ``[batch, num_directions, hidden]`` (LSTM: hidden, then cell).
    :param weights: ``W``, ``R``, ``B``.
    :returns: ``Y`` then the last states, as the op gives them.
    """
    xp = namespace(x)
    w, r, b = weights
    steps = x.shape[1]
    outputs: list[Any] = []
    finals: list[list[Any]] = [[] for _ in states]
    for d in range(w.shape[0]):
        current = [s[:, d, :] for s in states]
        ys = []
        order = range(steps - 1, -1, -1) if _reversed(node, d) else range(steps)
        for t in order:
            valid = xp.reshape(lengths > t, (-1, 1))
            stepped = _cell(node, x[:, t, :], current, w[d], r[d], b[d])
            current = [xp.where(valid, new, old) for new, old in zip(stepped, current)]
            ys.append((t, xp.where(valid, current[0], xp.zeros_like(current[0]))))
        ys.sort(key=lambda item: item[0])
        outputs.append(xp.stack([y for _, y in ys], axis=1))
        for final, value in zip(finals, current):
            final.append(value)
    y = xp.stack(outputs, axis=1)
    return [y, *(xp.stack(f, axis=1) for f in finals)]


def _reversed(node: Node, direction: int) -> bool:
    return node.attrs["direction"] == "reverse" or (node.attrs["direction"] == "bidirectional" and direction == 1)


def _cell(node: Node, x: Any, states: list[Any], w: Any, r: Any, b: Any) -> list[Any]:
    if node.type_name == "LSTMSequence":
        return list(lstm_cell(node, x, states[0], states[1], w, r, b))
    cell = gru_cell if node.type_name == "GRUSequence" else rnn_cell
    return [cell(node, x, states[0], w, r, b)]


def _evaluate(node: Node, x: Any, *rest: Any) -> list[Any]:
    state_count = 2 if node.type_name == "LSTMSequence" else 1
    states, lengths, weights = rest[:state_count], rest[state_count], rest[state_count + 1 :]
    return run_sequence(node, x, states, lengths, weights)


# -- definitions -------------------------------------------------------------------------------------------


def _infer(node: Node, gates: int, state_count: int) -> list[OutputSpec]:
    element_type = expect_same_types(node, 0, *range(1, 1 + state_count), *range(2 + state_count, 5 + state_count))
    x = expect_rank(node, 0, 3, what="X")
    size = node.attrs["hidden_size"]
    directions = 2 if node.attrs["direction"] == "bidirectional" else 1
    if size <= 0:
        raise node.error(f"attribute hidden_size={size} must be positive")
    needed = 3 if node.type_name == "LSTMSequence" else 2 if node.type_name == "GRUSequence" else 1
    if len(node.attrs["activations"]) < needed:
        raise node.error(f"needs {needed} activations, got {node.attrs['activations']}")
    unknown = [a for a in node.attrs["activations"] if a not in ACTIVATIONS]
    if unknown:
        raise node.error(f"unknown activation(s) {unknown}; expected some of: {', '.join(ACTIVATIONS)}")
    batch, steps = x[0], x[1]
    for index in range(1, 1 + state_count):
        state = expect_rank(node, index, 3, what=f"initial state {index}")
        batch = merge_dims(node, batch, state[0], "the batch of X and of the initial states")
        merge_dims(node, state[1], directions, "num_directions of the initial states")
        merge_dims(node, state[2], size, "the hidden size of the initial states")
    lengths = expect_rank(node, 1 + state_count, 1, what="sequence_lengths")
    batch = merge_dims(node, batch, lengths[0], "the batch of X and of sequence_lengths")
    bias_rows = (gates + 1 if node.attrs.get("linear_before_reset") else gates) * size
    for index, rows, what in ((2 + state_count, gates * size, "W"), (3 + state_count, gates * size, "R")):
        weights = expect_rank(node, index, 3, what=what)
        merge_dims(node, weights[0], directions, f"num_directions of {what}")
        merge_dims(node, weights[1], rows, f"the rows of {what} ({gates} gates x hidden_size)")
    merge_dims(node, expect_rank(node, 3 + state_count, 3, what="R")[2], size, "the columns of R (hidden_size)")
    bias = expect_rank(node, 4 + state_count, 2, what="B")
    merge_dims(node, bias[1], bias_rows, "the length of B")
    state = PartialShape([batch, directions, size])
    return [(element_type, PartialShape([batch, directions, steps, size])), *[(element_type, state)] * state_count]


def _recurrent(type_name: str, gates: int, state_names: Sequence[str], activations: list[str], *extra: Attr) -> OpDef:
    states = len(state_names)
    return define(
        OpDef(
            type_name,
            "recurrent",
            lambda node: _infer(node, gates, states),
            inputs=(
                Input("X", REAL_TYPES, doc="[batch, seq_len, input_size]"),
                *(Input(name, REAL_TYPES, doc="[batch, num_directions, hidden_size]") for name in state_names),
                Input("sequence_lengths", INDEX_TYPES, doc="[batch]: the steps of each batch entry"),
                Input("W", REAL_TYPES, doc="[num_directions, gates * hidden_size, input_size]"),
                Input("R", REAL_TYPES, doc="[num_directions, gates * hidden_size, hidden_size]"),
                Input("B", REAL_TYPES, doc="[num_directions, gates * hidden_size]"),
            ),
            attrs=(
                Attr("hidden_size", INT, doc="the size of the hidden state"),
                Attr("direction", LOWER_STRING, "forward", DIRECTIONS, doc="which way the sequence is read"),
                Attr("activations", STRINGS, activations, doc="the gate and state activations"),
                Attr("activations_alpha", FLOATS, [], doc="each activation's alpha, where it takes one"),
                Attr("activations_beta", FLOATS, [], doc="each activation's beta, where it takes one"),
                Attr("clip", FLOAT, 0.0, doc="gate pre-activations are clipped to [-clip, clip] when positive"),
                *extra,
            ),
            version="opset5",
            evaluate=_evaluate,
            doc=f"A {type_name.removesuffix('Sequence')} layer over a whole sequence, in one or both directions.",
        )
    )


LSTM_SEQUENCE = _recurrent(
    "LSTMSequence", 4, ("initial_hidden_state", "initial_cell_state"), ["sigmoid", "tanh", "tanh"]
)
GRU_SEQUENCE = _recurrent(
    "GRUSequence", 3, ("initial_hidden_state",), ["sigmoid", "tanh"],
    Attr("linear_before_reset", BOOL, False, doc="apply the reset gate after the recurrent product"),
)  # fmt: skip
RNN_SEQUENCE = _recurrent("RNNSequence", 1, ("initial_hidden_state",), ["tanh"])


def _sequence(op: OpDef, inputs: Sequence[Any], attrs: dict[str, Any], name: str | None) -> Node:
    first = as_output(inputs[0])
    ports = [first, *(as_output(v, like=first) for v in inputs[1:])]
    return Node(op, ports, {k: v for k, v in attrs.items() if v is not None}, name)


def lstm_sequence(
    X: Any, initial_hidden_state: Any, initial_cell_state: Any, sequence_lengths: Any, W: Any, R: Any, B: Any,
    hidden_size: int, direction: str = "forward", activations: list[str] | None = None,
    activations_alpha: list[float] | None = None, activations_beta: list[float] | None = None, clip: float = 0.0,
    name: str | None = None,
) -> Node:  # fmt: skip
    """An LSTM over a sequence (``LSTMSequence``, opset5); gates stacked ``f, i, c, o``. See the module docs.

    :returns: the node; outputs ``Y``, the last hidden state, the last cell state.
    """
    inputs = [X, initial_hidden_state, initial_cell_state, sequence_lengths, W, R, B]
    attrs = {"hidden_size": hidden_size, "direction": direction, "activations": activations,
             "activations_alpha": activations_alpha, "activations_beta": activations_beta, "clip": clip}  # fmt: skip
    return _sequence(LSTM_SEQUENCE, inputs, attrs, name)


def gru_sequence(
    X: Any, initial_hidden_state: Any, sequence_lengths: Any, W: Any, R: Any, B: Any,
    hidden_size: int, direction: str = "forward", activations: list[str] | None = None,
    activations_alpha: list[float] | None = None, activations_beta: list[float] | None = None, clip: float = 0.0,
    linear_before_reset: bool = False, name: str | None = None,
) -> Node:  # fmt: skip
    """A GRU over a sequence (``GRUSequence``, opset5); gates stacked ``z, r, h``. See the module docs.

    :returns: the node; outputs ``Y`` and the last hidden state.
    """
    inputs = [X, initial_hidden_state, sequence_lengths, W, R, B]
    attrs = {"hidden_size": hidden_size, "direction": direction, "activations": activations,
             "activations_alpha": activations_alpha, "activations_beta": activations_beta, "clip": clip,
             "linear_before_reset": linear_before_reset}  # fmt: skip
    return _sequence(GRU_SEQUENCE, inputs, attrs, name)


def rnn_sequence(
    X: Any, initial_hidden_state: Any, sequence_lengths: Any, W: Any, R: Any, B: Any,
    hidden_size: int, direction: str = "forward", activations: list[str] | None = None,
    activations_alpha: list[float] | None = None, activations_beta: list[float] | None = None, clip: float = 0.0,
    name: str | None = None,
) -> Node:  # fmt: skip
    """A plain RNN over a sequence (``RNNSequence``, opset5). See the module docs.

    :returns: the node; outputs ``Y`` and the last hidden state.
    """
    inputs = [X, initial_hidden_state, sequence_lengths, W, R, B]
    attrs = {"hidden_size": hidden_size, "direction": direction, "activations": activations,
             "activations_alpha": activations_alpha, "activations_beta": activations_beta, "clip": clip}  # fmt: skip
    return _sequence(RNN_SEQUENCE, inputs, attrs, name)
