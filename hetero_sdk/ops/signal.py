"""Signal ops of ONNX outside OpenVINO's opsets: STFT (short-time Fourier transforms of windowed frames)
and MelWeightMatrix (triangular mel-scale filter banks).

Both have one array-API kernel. Their shapes follow values (the frame step and length; the bin counts),
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
from hetero_sdk.ops.checks import INDEX_TYPES, NUMERIC_TYPES, REAL_TYPES, expect_rank
from hetero_sdk.ops.folding import constant_value
from hetero_sdk.shape import DYNAMIC, PartialShape

__all__ = ["mel_weight_matrix", "stft"]


def stft(
    signal: Any, frame_step: Any, frame_length: Any, window: Any = None, onesided: bool = True, name: str | None = None
) -> Node:
    """The short-time Fourier transform of ``signal`` (``STFT``, ONNX opset 17).

    :param signal: ``[batch, length, 1]`` (real) or ``[batch, length, 2]`` (complex: real, imaginary).
    :param frame_step: scalar: the samples between the starts of two frames.
    :param frame_length: scalar: the samples per frame (and the DFT length).
    :param window: ``[frame_length]``: multiplies each frame (default: ones).
    :param onesided: keep only the ``frame_length // 2 + 1`` non-redundant bins (real signals).
    :returns: ``[batch, frames, bins, 2]``, ``frames = (length - frame_length) // frame_step + 1``.
    """
    inputs = [as_output(signal), as_output(frame_step), as_output(frame_length)]
    if window is not None:
        inputs.append(as_output(window))
    return Node(STFT, inputs, {"onesided": bool(onesided)}, name)


def _scalar(node: Node, index: int) -> int | None:
    value = constant_value(node.input_value(index))
    return None if value is None else int(np.asarray(value).reshape(-1)[0])


def _stft(node: Node) -> list[OutputSpec]:
    signal = expect_rank(node, 0, 3, what="signal")
    if signal[2] not in (1, 2, DYNAMIC):
        raise node.error(f"signal is {signal}; its last dimension holds 1 (real) or 2 (complex) components")
    if signal[2] == 2 and node.attrs["onesided"]:
        raise node.error("a one-sided transform takes a real signal ([batch, length, 1]); set onesided=False")
    step, length = _scalar(node, 1), _scalar(node, 2)
    if node.get_input_size() > 3:
        window = expect_rank(node, 3, 1, what="window")[0]
        if length is not None and window not in (length, DYNAMIC):
            raise node.error(f"window has {window} values; frame_length is {length}")
    if step is not None and step < 1:
        raise node.error(f"frame_step {step} must be positive")
    if length is not None and (length < 1 or (signal[1] != DYNAMIC and length > signal[1])):
        raise node.error(f"frame_length {length} must be in [1, {signal[1]}] (the signal's length)")
    frames = DYNAMIC if DYNAMIC in (signal[1],) or step is None or length is None else (signal[1] - length) // step + 1
    bins = DYNAMIC if length is None else (length // 2 + 1 if node.attrs["onesided"] else length)
    return [(node.input_value(0).element_type, PartialShape([signal[0], frames, bins, 2]))]


def _stft_kernel(node: Node, signal: Any, frame_step: Any, frame_length: Any, window: Any = None) -> Any:
    xp = namespace(signal)
    x = widened(signal)
    step, length = int(np.asarray(frame_step).reshape(-1)[0]), int(np.asarray(frame_length).reshape(-1)[0])
    frames = (signal.shape[1] - length) // step + 1
    starts = np.arange(frames)[:, None] * step + np.arange(length)[None, :]
    framed = xp.take(x, xp.asarray(starts.reshape(-1).astype(np.int32)), axis=1)
    framed = xp.reshape(framed, (signal.shape[0], frames, length, signal.shape[2]))  # [B, F, N, parts]
    if window is not None:
        framed = framed * xp.reshape(xp.astype(widened(window), x.dtype), (1, 1, length, 1))
    bins = length // 2 + 1 if node.attrs["onesided"] else length
    angle = 2 * np.pi * ((np.arange(length)[:, None] * np.arange(bins)[None, :]) % length) / length
    cos, sin = xp.asarray(np.cos(angle), dtype=x.dtype), xp.asarray(np.sin(angle), dtype=x.dtype)
    real = framed[..., 0]
    imag = framed[..., 1] if signal.shape[2] == 2 else None
    # (re + i im)(cos - i sin): re cos + im sin, im cos - re sin
    out_re, out_im = xp.matmul(real, cos), -xp.matmul(real, sin)
    if imag is not None:
        out_re, out_im = out_re + xp.matmul(imag, sin), out_im + xp.matmul(imag, cos)
    return xp.astype(xp.stack([out_re, out_im], axis=-1), signal.dtype)


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
            Input("signal", REAL_TYPES, doc="[batch, length, 1 or 2]"),
            Input("frame_step", INDEX_TYPES, decides_shape=True, doc="scalar: samples between frame starts"),
            Input("frame_length", INDEX_TYPES, decides_shape=True, doc="scalar: samples per frame"),
            Input("window", REAL_TYPES, optional=True, doc="[frame_length]; ones by default"),
        ),
        attrs=(Attr("onesided", BOOL, True, doc="only the frame_length // 2 + 1 non-redundant bins"),),
        version="onnx17",
        evaluate=_stft_kernel,
        doc="Short-time Fourier transform: the DFT of each windowed frame, as [batch, frames, bins, 2].",
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
