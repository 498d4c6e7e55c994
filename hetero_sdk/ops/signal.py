"""Signal ops: STFT (OpenVINO opset 15: short-time Fourier transforms of windowed frames of a real
signal) and MelWeightMatrix (ONNX's, outside OpenVINO's opsets: triangular mel-scale filter banks).

Both have one array-API kernel. Their shapes follow values (the frame size and step; the bin counts),
which XLA, whose shapes are static, needs known while compiling: it gets them as static inputs.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hetero_sdk.array_api import namespace, widened
from hetero_sdk.element_type import Type
from hetero_sdk.graph.node import Node
from hetero_sdk.graph.op_def import BOOL, ELEMENT_TYPE, Attr, Input, OpDef, OutputSpec, define
from hetero_sdk.ops.basic import as_output
from hetero_sdk.ops.checks import INDEX_TYPES, NUMERIC_TYPES, REAL_TYPES, expect_rank, expect_same_types
from hetero_sdk.ops.folding import constant_value
from hetero_sdk.shape import DYNAMIC, PartialShape

__all__ = ["mel_weight_matrix", "stft"]


def stft(
    signal: Any, window: Any, frame_size: Any, frame_step: Any, transpose_frames: bool, name: str | None = None
) -> Node:
    """The short-time Fourier transform of a real signal (``STFT``, OpenVINO opset 15): the one-sided DFT
    of each frame of ``frame_size`` samples, ``frame_step`` apart, multiplied by the window.

    :param signal: ``[batch, length]`` or ``[length]``, real.
    :param window: ``[window_length]``, ``window_length <= frame_size``: centred in the frame (zeros on
        either side, the odd one after), it multiplies each frame.
    :param frame_size: scalar: the samples per frame (and the DFT length).
    :param frame_step: scalar: the samples between the starts of two frames.
    :param transpose_frames: False: ``[batch, frames, bins, 2]``; True: ``[batch, bins, frames, 2]``
        (real, imaginary last; no batch axis for a 1-D signal), ``frames = (length - frame_size) //
        frame_step + 1``, ``bins = frame_size // 2 + 1``.
    :param name: the node's friendly name.
    :returns: the node.
    """
    inputs = [as_output(signal)]
    inputs += [as_output(window, like=inputs[0]), as_output(frame_size), as_output(frame_step)]
    return Node(STFT, inputs, {"transpose_frames": bool(transpose_frames)}, name)


def _scalar(node: Node, index: int) -> int | None:
    value = constant_value(node.input_value(index))
    return None if value is None else int(np.asarray(value).reshape(-1)[0])


def _stft(node: Node) -> list[OutputSpec]:
    element_type = expect_same_types(node, 0, 1)
    signal = expect_rank(node, 0, 1, 2, what="signal")
    window = expect_rank(node, 1, 1, what="window")[0]
    for index, what in ((2, "frame_size"), (3, "frame_step")):
        expect_rank(node, index, 0, what=what)
    size, step = _scalar(node, 2), _scalar(node, 3)
    length = signal[-1]
    if step is not None and step < 1:
        raise node.error(f"frame_step {step} must be positive")
    if size is not None and (size < 1 or (length != DYNAMIC and size > length)):
        raise node.error(f"frame_size {size} must be in [1, {length}] (the signal's length)")
    if size is not None and window != DYNAMIC and window > size:
        raise node.error(f"window has {window} values, more than frame_size {size}")
    frames = DYNAMIC if length == DYNAMIC or step is None or size is None else (length - size) // step + 1
    bins = DYNAMIC if size is None else size // 2 + 1
    dims = [bins, frames] if node.attrs["transpose_frames"] else [frames, bins]
    return [(element_type, PartialShape([*signal.dims[:-1], *dims, 2]))]


def _stft_kernel(node: Node, signal: Any, window: Any, frame_size: Any, frame_step: Any) -> Any:
    xp = namespace(signal, window)
    x = widened(signal)
    size, step = int(np.asarray(frame_size).reshape(-1)[0]), int(np.asarray(frame_step).reshape(-1)[0])
    frames = (signal.shape[-1] - size) // step + 1
    starts = np.arange(frames)[:, None] * step + np.arange(size)[None, :]
    framed = xp.take(x, xp.asarray(starts.reshape(-1).astype(np.int32)), axis=-1)
    framed = xp.reshape(framed, (*signal.shape[:-1], frames, size))
    before = (size - window.shape[0]) // 2
    pieces = [xp.zeros((before,), dtype=x.dtype), xp.astype(widened(window), x.dtype),
              xp.zeros((size - window.shape[0] - before,), dtype=x.dtype)]  # fmt: skip
    framed = framed * xp.concat(pieces)
    bins = size // 2 + 1
    angle = 2 * np.pi * ((np.arange(size)[:, None] * np.arange(bins)[None, :]) % size) / size
    cos, sin = xp.asarray(np.cos(angle), dtype=x.dtype), xp.asarray(np.sin(angle), dtype=x.dtype)
    out = xp.stack([xp.matmul(framed, cos), -xp.matmul(framed, sin)], axis=-1)  # [..., frames, bins, 2]
    if node.attrs["transpose_frames"]:
        out = xp.permute_dims(out, (*range(out.ndim - 3), out.ndim - 2, out.ndim - 3, out.ndim - 1))
    return xp.astype(out, signal.dtype)


def mel_weight_matrix(
    num_mel_bins: Any,
    dft_length: Any,
    sample_rate: Any,
    lower_edge_hertz: Any,
    upper_edge_hertz: Any,
    output_type: Type = Type.f32,
    name: str | None = None,
) -> Node:
    """Triangular filters, equally spaced on the mel scale ``2595 log10(1 + f / 700)``, that map the
    ``dft_length // 2 + 1`` bins of a one-sided spectrum to ``num_mel_bins`` (``MelWeightMatrix``, ONNX 17).

    Each filter rises from 0 at its left edge to 1 at its center and falls to 0 at its right edge; the
    ``num_mel_bins + 2`` edges are spread evenly in mel between ``lower_edge_hertz`` and
    ``upper_edge_hertz`` (the span divided into ``num_mel_bins + 2`` steps, as ONNX does) and put on
    the spectrum bin ``floor((dft_length + 1) * f / sample_rate)``.

    :returns: ``[dft_length // 2 + 1, num_mel_bins]`` of ``output_type``.
    """
    inputs = [as_output(v) for v in (num_mel_bins, dft_length, sample_rate, lower_edge_hertz, upper_edge_hertz)]
    return Node(MEL_WEIGHT_MATRIX, inputs, {"output_type": Type.of(output_type)}, name)


def _mel(node: Node) -> list[OutputSpec]:
    for index in range(5):
        expect_rank(node, index, 0, 1, what=f"input {index}")
    mels, length = _scalar(node, 0), _scalar(node, 1)
    if mels is not None and mels < 1:
        raise node.error(f"num_mel_bins {mels} must be positive")
    rows = DYNAMIC if length is None else length // 2 + 1
    return [(node.attrs["output_type"], PartialShape([rows, DYNAMIC if mels is None else mels]))]


def mel_filter_bank(mels: int, length: int, rate: float, low: float, high: float) -> np.ndarray:
    """The ``[length // 2 + 1, mels]`` filter bank of :func:`mel_weight_matrix`, in float64."""
    low_mel, high_mel = (2595 * np.log10(1 + f / 700) for f in (low, high))
    points = low_mel + np.arange(mels + 2) * (high_mel - low_mel) / (mels + 2)
    edges = np.floor((length + 1) * (700 * (10 ** (points / 2595) - 1)) / rate).astype(np.int64)
    bins = np.arange(length // 2 + 1)[:, None]
    left, center, right = edges[None, :-2], edges[None, 1:-1], edges[None, 2:]
    rising = np.where(center > left, (bins - left) / np.maximum(center - left, 1), (bins == center) * 1.0)
    falling = (right - bins) / np.maximum(right - center, 1)
    up = (bins >= left) & (bins <= center)
    down = (bins >= center) & (bins < right) & (right > center)
    return np.where(down, falling, np.where(up, rising, 0.0))


def _mel_kernel(node: Node, *values: Any) -> Any:
    xp = namespace(*values)
    mels, length = (int(np.asarray(v).reshape(-1)[0]) for v in values[:2])
    rate, low, high = (float(np.asarray(v).reshape(-1)[0]) for v in values[2:])
    bank = mel_filter_bank(mels, length, rate, low, high)
    return xp.asarray(bank.astype(node.attrs["output_type"].numpy))


STFT = define(
    OpDef(
        "STFT",
        "signal",
        _stft,
        inputs=(
            Input("signal", REAL_TYPES, doc="[batch, length] or [length], real"),
            Input("window", REAL_TYPES, doc="[window_length <= frame_size]: centred in each frame"),
            Input("frame_size", INDEX_TYPES, decides_shape=True, doc="scalar: samples per frame, the DFT length"),
            Input("frame_step", INDEX_TYPES, decides_shape=True, doc="scalar: samples between frame starts"),
        ),
        attrs=(Attr("transpose_frames", BOOL, doc="bins before frames in the output"),),
        version="opset15",
        evaluate=_stft_kernel,
        doc="Short-time Fourier transform: the one-sided DFT of each windowed frame, as [batch, frames, bins, 2].",
    )
)
MEL_WEIGHT_MATRIX = define(
    OpDef(
        "MelWeightMatrix",
        "signal",
        _mel,
        inputs=tuple(
            Input(name, NUMERIC_TYPES, decides_shape=True, doc=doc)
            for name, doc in (
                ("num_mel_bins", "scalar: filters"),
                ("dft_length", "scalar: the DFT length; the matrix has dft_length // 2 + 1 rows"),
                ("sample_rate", "scalar: samples per second"),
                ("lower_edge_hertz", "scalar: the lowest frequency covered"),
                ("upper_edge_hertz", "scalar: the highest frequency covered"),
            )
        ),
        attrs=(Attr("output_type", ELEMENT_TYPE, Type.f32, doc="the element type of the matrix"),),
        version="onnx17",
        evaluate=_mel_kernel,
        doc="Triangular mel-scale filters mapping a one-sided spectrum's bins to mel bins.",
    )
)
