"""Rules for ONNX's recurrent layers: LSTM, GRU and RNN become the opset's LSTMSequence, GRUSequence
and RNNSequence (OpenVINO's layouts): inputs and outputs are transposed between ONNX's
``[seq, batch, ...]`` (or ``layout=1``'s ``[batch, seq, ...]``) and ``[batch, ..., seq, ...]``, LSTM's
gates reordered from ``i, o, f, c`` to ``f, i, c, o``, and the two bias halves summed."""

from __future__ import annotations

import numpy as np

from hetero_sdk import opset
from hetero_sdk.frontend.onnx.node_context import NodeContext
from hetero_sdk.frontend.onnx.rules import Outputs, rule
from hetero_sdk.graph.limits import CONSTANT_ELEMENTS
from hetero_sdk.graph.node import Output

__all__: list[str] = []

_I64 = np.int64
_GATES = {"LSTM": 4, "GRU": 3, "RNN": 1}
_DEFAULT_ACTIVATIONS = {"LSTM": ["sigmoid", "tanh", "tanh"], "GRU": ["sigmoid", "tanh"], "RNN": ["tanh"]}
_LSTM_ORDER = [2, 0, 3, 1]
"""ONNX's LSTM gates ``i, o, f, c`` in OpenVINO's order ``f, i, c, o``."""


def _out(node: object, index: int = 0) -> Output:
    return node.output(index)  # type: ignore[attr-defined, no-any-return]


def _transposed(ctx: NodeContext, x: Output, order: list[int]) -> Output:
    return _out(opset.transpose(x, ctx.const(order, _I64)))


def _gates_reordered(ctx: NodeContext, x: Output, axis: int, order: list[int]) -> Output:
    parts = opset.split(x, ctx.const(axis, _I64), num_splits=len(order))
    return _out(opset.concat([_out(parts, i) for i in order], axis=axis))


def _activations(ctx: NodeContext, directions: int) -> tuple[list[str], list[float], list[float]]:
    default = _DEFAULT_ACTIVATIONS[ctx.op_type]
    names = [a.lower() for a in ctx.attr("activations", default * directions)]
    alpha, beta = ctx.attr("activation_alpha", []), ctx.attr("activation_beta", [])
    per_direction = len(default)
    if directions == 2:
        if names[:per_direction] != names[per_direction:]:
            raise ctx.unsupported("different activations for the two directions")
        names, alpha, beta = names[:per_direction], alpha[: len(alpha) // 2], beta[: len(beta) // 2]
    return names, alpha, beta


@rule("LSTM", "GRU", "RNN", since=7)
def recurrent(ctx: NodeContext) -> Outputs:
    kind = ctx.op_type
    gates = _GATES[kind]
    size = ctx.attr("hidden_size")
    direction = ctx.attr("direction", "forward")
    directions = 2 if direction == "bidirectional" else 1
    batch_first = ctx.flag("layout", False)
    if kind == "LSTM":
        if ctx.flag("input_forget", False):
            raise ctx.unsupported("input_forget=1 (coupled input and forget gates)")
        peepholes = ctx.constant_input(7)
        if ctx.has_input(7) and (peepholes is None or np.any(peepholes)):
            raise ctx.unsupported("peephole connections (input P)")
    x = ctx.input(0)
    if not batch_first:
        x = _transposed(ctx, x, [1, 0, 2])
    shape = opset.shape_of(x)
    batch = _out(opset.gather(shape, ctx.const([0], _I64), ctx.const(0, _I64)))
    w, r = ctx.input(1), ctx.input(2)
    b = ctx.optional_input(3)
    linear_before_reset = kind == "GRU" and ctx.flag("linear_before_reset", False)
    if b is None:
        rows = (gates + 1 if linear_before_reset else gates) * size
        CONSTANT_ELEMENTS.check(directions * rows, f"a zero bias for hidden_size {size}", ctx.error)
        b = ctx.const(np.zeros((directions, rows), x.element_type.numpy))
    else:
        halves = opset.split(b, ctx.const(1, _I64), num_splits=2)
        wb, rb = _out(halves, 0), _out(halves, 1)
        if linear_before_reset:
            parts = opset.split(wb, ctx.const(1, _I64), num_splits=3), opset.split(rb, ctx.const(1, _I64), num_splits=3)
            zr = opset.add(
                opset.concat([_out(parts[0], 0), _out(parts[0], 1)], 1),
                opset.concat([_out(parts[1], 0), _out(parts[1], 1)], 1),
            )
            b = _out(opset.concat([zr, _out(parts[0], 2), _out(parts[1], 2)], axis=1))
        else:
            b = _out(opset.add(wb, rb))
    if kind == "LSTM":
        w, r, b = (_gates_reordered(ctx, t, 1, _LSTM_ORDER) for t in (w, r, b))
    lengths = ctx.optional_input(4)
    if lengths is None:
        steps = opset.gather(shape, ctx.const([1], _I64), ctx.const(0, _I64))
        lengths = _out(opset.broadcast(steps, batch))
    state_shape = opset.concat([batch, ctx.const([directions, size], _I64)], axis=0)

    def initial(index: int) -> Output:
        given = ctx.optional_input(index)
        if given is None:
            return _out(opset.broadcast(ctx.const(0, x.element_type), state_shape))
        return given if batch_first else _transposed(ctx, given, [1, 0, 2])

    names, alpha, beta = _activations(ctx, directions)
    common = {
        "hidden_size": size, "direction": direction, "activations": names, "activations_alpha": alpha,
        "activations_beta": beta, "clip": ctx.attr("clip", 0.0),
    }  # fmt: skip
    if kind == "LSTM":
        node = opset.lstm_sequence(x, initial(5), initial(6), lengths, w, r, b, **common)
    elif kind == "GRU":
        node = opset.gru_sequence(x, initial(5), lengths, w, r, b, linear_before_reset=linear_before_reset, **common)
    else:
        node = opset.rnn_sequence(x, initial(5), lengths, w, r, b, **common)
    y = _transposed(ctx, _out(node, 0), [0, 2, 1, 3] if batch_first else [2, 1, 0, 3])
    states = [_out(node, i) for i in range(1, node.get_output_size())]
    if not batch_first:
        states = [_transposed(ctx, s, [1, 0, 2]) for s in states]
    return [y, *states]
