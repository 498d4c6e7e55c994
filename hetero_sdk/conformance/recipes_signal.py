"""Case recipes of the signal family: STFT (a window no longer than the frame) and MelWeightMatrix."""

from __future__ import annotations

import numpy as np

from hetero_sdk import opset
from hetero_sdk.conformance.case_builder import F16, F32, FLOATS, I32, I64, Builder, OpCase, recipe
from hetero_sdk.element_type import Type


@recipe("STFT")
def _stft(b: Builder, op_type: str) -> OpCase:
    dtype = b.pick(FLOATS)
    size = b.integer(1, 10)
    batch = [b.integer(1, 2)] if b.flag() else []
    signal = b.values([*batch, b.integer(size, 24)], dtype, -2, 2)
    window = b.operand(b.values([b.integer(1, size)], dtype, 0, 1), "window")
    transpose = b.flag()
    node = opset.stft(b.input(signal, "x"), window, np.array(size, I64), np.array(b.integer(1, 4), I64), transpose,
                      name="op")  # fmt: skip
    return b.case(op_type, node, "accumulate", size, frame_size=size, transpose_frames=transpose)


@recipe("MelWeightMatrix")
def _mel_weight_matrix(b: Builder, op_type: str) -> OpCase:
    mels, length = b.integer(1, 8), b.pick((8, 16, 20, 32))
    rate = b.pick((8000, 16000, 22050))
    low, high = b.pick((0.0, 60.0, 125.5)), b.pick((rate / 2, 3000.0, 3800.0))
    integer = b.pick((I64, I32))
    real = b.pick((F32, np.float64))
    count, size, per_second, lowest, highest = (
        b.operand(np.array(v, t), n, constant=True)
        for v, t, n in ((mels, integer, "mels"), (length, integer, "length"), (rate, integer, "rate"),
                        (low, real, "low"), (high, real, "high"))
    )  # fmt: skip
    output_type = Type.of(b.pick((F32, F16)))
    node = opset.mel_weight_matrix(count, size, per_second, lowest, highest, output_type=output_type, name="op")
    return b.case(
        op_type, node, "transcendental", 1, mels=mels, dft_length=length, sample_rate=rate, low=low, high=high
    )
