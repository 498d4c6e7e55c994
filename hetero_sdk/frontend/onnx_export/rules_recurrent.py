"""Export rules of LSTMSequence, GRUSequence and RNNSequence: ONNX's LSTM, GRU and RNN, the inverse
of the ONNX frontend's recurrent rule: inputs and outputs transposed between OpenVINO's
``[batch, num_directions, ...]`` layouts and ONNX's ``[seq, num_directions, batch, ...]`` (``layout=0``,
the one ONNX Runtime runs), LSTM's gates reordered from ``f, i, c, o`` to ``i, o, f, c``, and the bias
split into ONNX's input and recurrence halves (the recurrence half zero but for GRU's
``linear_before_reset`` candidate gate)."""

from __future__ import annotations

from hetero_sdk.element_type import Type
from hetero_sdk.frontend.onnx_export.context import ExportContext, exporter

__all__: list[str] = []

_LSTM_ORDER = [1, 3, 0, 2]
"""OpenVINO's LSTM gates ``f, i, c, o`` in ONNX's order ``i, o, f, c``."""

_ACTIVATIONS = {"sigmoid": "Sigmoid", "tanh": "Tanh", "relu": "Relu"}


def _gates_reordered(ctx: ExportContext, name: str, gates: int, order: list[int]) -> str:
    parts = ctx.emit("Split", [name], gates, axis=1, num_outputs=gates)
    return ctx.emit1("Concat", [parts[i] for i in order], axis=1)


def _transposed(ctx: ExportContext, name: str, perm: list[int], output: str | None = None) -> str:
    return ctx.emit1("Transpose", [name], output, perm=perm)


@exporter("LSTMSequence", "GRUSequence", "RNNSequence")
def recurrent(ctx: ExportContext) -> None:
    kind = ctx.current.type_name
    attrs = ctx.attrs
    lstm, gru = kind == "LSTMSequence", kind == "GRUSequence"
    gates = 4 if lstm else 3 if gru else 1
    w_index = 4 if lstm else 3
    directions = 2 if attrs["direction"] == "bidirectional" else 1
    element_type = ctx.element_type(0)
    w, r, b = (ctx.input(w_index + i) for i in range(3))
    if lstm:
        w, r, b = (_gates_reordered(ctx, t, gates, _LSTM_ORDER) for t in (w, r, b))
    size = attrs["hidden_size"]
    linear_before_reset = gru and attrs["linear_before_reset"]
    if linear_before_reset:  # [z+r sums, w_h, r_h] -> [z+r sums, w_h] and [0, 0, r_h]
        input_half, candidate = ctx.emit("Split", [b, ctx.const([3 * size, size], name="split")], 2, axis=1)
        zeros = ctx.emit1("Mul", [ctx.emit1("Slice", [b, ctx.const([0]), ctx.const([2 * size]), ctx.const([1])]),
                                  ctx.const(0, element_type, "zero")])  # fmt: skip
        b = ctx.emit1("Concat", [input_half, zeros, candidate], axis=1)
    else:
        b = ctx.emit1("Concat", [b, ctx.emit1("Mul", [b, ctx.const(0, element_type, "zero")])], axis=1)
    x = _transposed(ctx, ctx.input(0), [1, 0, 2])
    lengths = ctx.cast(ctx.input(3 if lstm else 2), ctx.element_type(3 if lstm else 2), Type.i32)
    h0 = _transposed(ctx, ctx.input(1), [1, 0, 2])
    inputs = [x, w, r, b, lengths, h0]
    if lstm:
        inputs.append(_transposed(ctx, ctx.input(2), [1, 0, 2]))
    names = [_ACTIVATIONS.get(a, a) for a in attrs["activations"]]
    onnx_attrs = {
        "hidden_size": size,
        "direction": attrs["direction"],
        "activations": names * directions,
        "activation_alpha": list(attrs["activations_alpha"]) * directions or None,
        "activation_beta": list(attrs["activations_beta"]) * directions or None,
        "clip": attrs["clip"] or None,
    }
    if gru:
        onnx_attrs["linear_before_reset"] = int(linear_before_reset)
    op_type = {"LSTMSequence": "LSTM", "GRUSequence": "GRU", "RNNSequence": "RNN"}[kind]
    outputs = ctx.emit(op_type, inputs, 3 if lstm else 2, **onnx_attrs)
    _transposed(ctx, outputs[0], [2, 1, 0, 3], ctx.out(0))  # [seq, dirs, batch, h] -> [batch, dirs, seq, h]
    for index in range(1, len(outputs)):
        _transposed(ctx, outputs[index], [1, 0, 2], ctx.out(index))
