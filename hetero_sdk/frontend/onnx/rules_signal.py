"""Rules for ONNX's signal ops: DFT, as products with cosine and sine matrices along the signal axis
(MatMul, which every device has), for signal lengths and axes known while translating; STFT and
STFT as OpenVINO's STFT of each real part (ONNX's two-sided and complex transforms built from it), and
MelWeightMatrix, the opset's op of the same name."""

from __future__ import annotations

import numpy as np

from hetero_sdk import opset
from hetero_sdk.element_type import Type
from hetero_sdk.errors import HeteroSDKError
from hetero_sdk.frontend.onnx.node_context import NodeContext
from hetero_sdk.frontend.onnx.rules import Outputs, rule
from hetero_sdk.frontend.onnx.types import element_type
from hetero_sdk.graph.limits import CONSTANT_ELEMENTS
from hetero_sdk.graph.node import Output

__all__: list[str] = []

_I64 = np.int64


def _take(ctx: NodeContext, x: Output, index: int) -> Output:
    """Component ``index`` (0: real, 1: imaginary) of ``x``'s last dimension, which is dropped."""
    part = opset.gather(x, ctx.const(index, _I64), ctx.const(-1, _I64))
    return part.output(0)


def _matrices(inputs: int, length: int, bins: int, inverse: bool, halved: bool) -> tuple[np.ndarray, np.ndarray]:
    """``(cos, sin)`` of ``2 pi k n / length``, ``inputs`` rows (n; rows past ``length`` are zero: the
    signal is cut) by ``bins`` columns (k). An inverse divides by ``length``; ``halved`` (an inverse
    from one side of a Hermitian spectrum) counts each bin but the first and the middle twice."""
    n = np.arange(inputs)[:, None]
    k = np.arange(bins)[None, :]
    angle = 2 * np.pi * ((n * k) % length) / length
    cos, sin = np.cos(angle) * (n < length), np.sin(angle) * (n < length)
    if inverse:
        weight = np.full(bins, 1.0 / length)
        if halved:
            weight[1 : (length + 1) // 2] *= 2
        cos, sin = cos * weight, sin * weight
    return cos, sin


def _dft(ctx: NodeContext, axis: int, length_input: int) -> Outputs:
    x = ctx.input(0)
    rank = x.partial_shape.rank
    axis = ctx.check_axis(axis, rank, "the signal axis")
    if axis == rank - 1:
        raise ctx.error(f"axis {axis} is the real/imaginary dimension", "give the signal's axis")
    size = x.partial_shape[axis]
    inverse, onesided = ctx.flag("inverse", False), ctx.flag("onesided", False)
    if size < 0:
        raise ctx.unsupported("a DFT whose signal length is not known while translating")
    length = 2 * (size - 1) if inverse and onesided else size
    if ctx.optional_input(length_input) is not None:
        length = int(ctx.static_input(length_input, "dft_length").reshape(-1)[0])
    if length < 1:
        raise ctx.error(f"dft_length {length} must be positive")
    rows, columns = (length, size) if inverse and onesided else (size, length // 2 + 1 if onesided else length)
    CONSTANT_ELEMENTS.check(2 * rows * columns, f"the DFT's {rows} x {columns} cosine and sine matrices", ctx.error)
    complex_input = _complex_signal(ctx, x, inverse and onesided, onesided)
    dtype = x.element_type.numpy
    order = [d for d in range(rank - 1) if d != axis] + [axis]
    back = list(np.argsort(order))
    re = opset.transpose(_take(ctx, x, 0), order).output(0)
    im = opset.transpose(_take(ctx, x, 1), order).output(0) if complex_input else None
    if inverse and onesided:  # a real signal of ``length`` from the first length // 2 + 1 bins
        cos, sin = _matrices(length, length, size, True, True)
        real = opset.matmul(re, ctx.const(cos.T.astype(dtype))).output(0)
        if im is not None:
            real = opset.subtract(real, opset.matmul(im, ctx.const(sin.T.astype(dtype)))).output(0)
        parts = [real]
    else:
        bins = length // 2 + 1 if onesided else length
        cos, sin = _matrices(size, length, bins, inverse, False)
        c, s = ctx.const(cos.astype(dtype)), ctx.const(sin.astype(dtype))
        sign = 1 if inverse else -1  # e^(+-i angle): the real part takes -+ im sin, the imaginary +- re sin
        real = opset.matmul(re, c).output(0)
        imag = opset.multiply(opset.matmul(re, s), ctx.const(np.array(sign, dtype))).output(0)
        if im is not None:
            real = opset.add(real, opset.multiply(opset.matmul(im, s), ctx.const(np.array(-sign, dtype)))).output(0)
            imag = opset.add(imag, opset.matmul(im, c)).output(0)
        parts = [real, imag]
    last = ctx.const([-1], _I64)
    stacked = [opset.unsqueeze(opset.transpose(p, back), last).output(0) for p in parts]
    return [stacked[0] if len(stacked) == 1 else opset.concat(stacked, -1).output(0)]


def _complex_signal(ctx: NodeContext, x: Output, half_spectrum: bool, onesided: bool) -> bool:
    """Whether the DFT's input is complex: its last dimension, 1 (real) or 2 (real, imaginary), must be
    known while translating, and fit ``onesided`` as ONNX's shape inference requires (a one-sided
    transform of a real signal; an inverse one of a complex half spectrum)."""
    parts = x.partial_shape[-1]
    if parts < 0:
        raise ctx.unsupported(
            "a DFT whose last dimension (1: real, 2: complex) is unknown while translating (give it with "
            "convert_model's input shapes)"
        )
    if parts not in (1, 2):
        raise ctx.error(f"the input's last dimension is {parts}", "expected 1 (a real signal) or 2 (a complex one)")
    if half_spectrum and parts != 2:
        raise ctx.error(
            "inverse=1, onesided=1 takes a complex half spectrum; this input is real", "expected last dimension 2"
        )
    if onesided and not half_spectrum and parts != 1:
        raise ctx.error(
            "onesided=1 takes a real signal; this input is complex", "expected last dimension 1, or onesided=0"
        )
    return parts == 2


@rule("DFT", since=17)
def dft_17(ctx: NodeContext) -> Outputs:
    return _dft(ctx, ctx.attr("axis", 1), 1)


@rule("DFT", since=20)
def dft_20(ctx: NodeContext) -> Outputs:
    if not ctx.has_input(2):
        return _dft(ctx, -2, 1)
    axis = ctx.constant_input(2)
    if axis is not None:
        return _dft(ctx, int(axis.reshape(-1)[0]), 1)
    return [_dft_any_axis(ctx)]


def _dft_any_axis(ctx: NodeContext) -> Output:
    """A DFT along an axis given at run time: the transform along each possible axis, the one the axis
    names selected (NaN for an axis out of range). Needs every candidate to give the same shape."""
    rank = ctx.input(0).partial_shape.rank
    results: dict[int, Output] = {}
    for k in range(rank - 1):
        try:
            result = _dft(ctx, k, 1)[0]
        except HeteroSDKError:  # no transform along this axis (too short, dynamic): the axis cannot name it
            continue
        if isinstance(result, Output):
            results[k] = result
    shapes = {str(r.partial_shape) for r in results.values()}
    if len(shapes) != 1 or any(r.partial_shape.is_dynamic for r in results.values()):
        raise ctx.unsupported(
            f"a DFT whose axis is given at run time and whose result's shape depends on it ({shapes})"
        )
    axis = opset.floor_mod(opset.convert(ctx.input(2), Type.i64), ctx.const(rank, _I64))
    dtype = ctx.input(0).element_type.numpy
    first = next(iter(results.values()))
    chosen = opset.multiply(first, ctx.const(np.array(np.nan, dtype))).output(0)
    for k, result in sorted(results.items(), reverse=True):
        chosen = opset.select(opset.equal(axis, ctx.const(k, _I64)), result, chosen).output(0)
    return chosen


@rule("STFT", since=17)
def stft(ctx: NodeContext) -> Outputs:
    """OpenVINO's STFT of the signal (a window of ones when none is given). What OpenVINO's op lacks is
    built from it: the two-sided spectrum of a real signal by conjugate symmetry (``X[N - k] =
    conj(X[k])``), and a complex signal's spectrum by linearity (``STFT(a) + i STFT(b)``)."""
    signal, window, size = ctx.input(0), ctx.optional_input(2), ctx.optional_input(3)
    shape = signal.partial_shape
    if shape.rank != 3 or shape[2] not in (1, 2):
        raise ctx.error(f"signal is {shape}; expected [batch, length, 1] (real) or [batch, length, 2] (complex)")
    onesided, parts = ctx.flag("onesided", True), shape[2]
    if parts == 2 and onesided:
        raise ctx.error("onesided=1 takes a real signal ([batch, length, 1]); this one is complex")
    if size is None:
        if window is None:
            raise ctx.error("STFT needs a window (input 2) or a frame_length (input 3)")
        size = _out(opset.gather(opset.shape_of(window, Type.i64), ctx.const(0, _I64), ctx.const(0, _I64)))
    size = _out(opset.convert(size, Type.i64))
    if window is None:
        ones = ctx.const(np.array(1, signal.element_type.numpy))
        window = _out(opset.broadcast(ones, opset.reshape(size, ctx.const([1], _I64), special_zero=False)))
    spectra = []
    for part in range(parts):
        real = opset.squeeze(opset.gather(signal, ctx.const([part], _I64), ctx.const(2, _I64)), ctx.const([2], _I64))
        half = _out(opset.stft(real, window, size, ctx.input(1), transpose_frames=False))
        spectra.append(half if onesided else _two_sided(ctx, half, size))
    if parts == 1:
        return [spectra[0]]
    # (a_re + i a_im) + i (b_re + i b_im): re = a_re - b_im, im = a_im + b_re
    swapped = opset.gather(spectra[1], ctx.const([1, 0], _I64), ctx.const(-1, _I64))
    turned = opset.multiply(swapped, ctx.const(np.array([-1, 1], signal.element_type.numpy)))
    return [_out(opset.add(spectra[0], turned))]


def _two_sided(ctx: NodeContext, half: Output, size: Output) -> Output:
    """The ``size`` bins of a real signal's spectrum from its first ``size // 2 + 1`` (axis 2): the
    bins after them are the conjugates of bins ``(size - 1) // 2`` down to 1."""
    last = opset.divide(opset.subtract(opset.reshape(size, ctx.const([1], _I64), False), ctx.const([1], _I64)),
                        ctx.const([2], _I64))  # fmt: skip
    mirrored = opset.slice(half, last, ctx.const([0], _I64), ctx.const([-1], _I64), ctx.const([2], _I64))
    conjugate = opset.multiply(mirrored, ctx.const(np.array([1, -1], half.element_type.numpy)))
    return _out(opset.concat([half, conjugate], 2))


def _out(node: object) -> Output:
    return node.output(0)  # type: ignore[attr-defined, no-any-return]


@rule("MelWeightMatrix", since=17)
def mel_weight_matrix(ctx: NodeContext) -> Outputs:
    output_type = element_type(ctx.attr("output_datatype", 1), ctx.describe())
    mels, length, rate, low, high = (ctx.input(i) for i in range(5))
    node = opset.mel_weight_matrix(mels, length, rate, low, high, output_type=output_type)
    return [node.output(0)]
