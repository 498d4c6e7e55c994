"""ONNX's STFT (through OpenVINO's STFT: two-sided and complex transforms built from it) and
MelWeightMatrix: against numpy's FFT of frames cut in the test and against ONNX Runtime, against
onnx.reference (an oracle) for the mel filters; on TEMPLATE and XLA, and exported back."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import helper
from onnx.reference import ReferenceEvaluator
from onnx_models import check, graph_model, node_model, value_info

import hetero_sdk as hs
from hetero_sdk import opset
from hetero_sdk.frontend.onnx_export import export_model

F32, I64 = np.float32, np.int64
RNG = np.random.default_rng(12)


def numpy_stft(signal: np.ndarray, step: int, length: int, window: np.ndarray | None, onesided: bool) -> np.ndarray:
    complex_signal = signal[..., 0] + (1j * signal[..., 1] if signal.shape[-1] == 2 else 0)
    frames = (signal.shape[1] - length) // step + 1
    cut = np.stack([complex_signal[:, f * step : f * step + length] for f in range(frames)], axis=1)
    if window is not None:
        cut = cut * window
    spectrum = np.fft.fft(cut, axis=-1)
    if onesided:
        spectrum = spectrum[..., : length // 2 + 1]
    return np.stack([spectrum.real, spectrum.imag], axis=-1).astype(F32)


@pytest.mark.parametrize(("parts", "onesided", "windowed"), [(1, 1, False), (1, 1, True), (1, 0, True), (2, 0, False)])
def test_stft_is_the_fft_of_each_windowed_frame(parts: int, onesided: int, windowed: bool) -> None:
    signal = RNG.standard_normal((2, 40, parts)).astype(F32)
    window = np.hanning(10).astype(F32) if windowed else None
    inputs = {"signal": signal, "step": np.array(3, I64), "window": window}
    if not windowed:
        inputs["length"] = np.array(10, I64)
    model, feeds = node_model("STFT", inputs, 17, constants=["step", "window", "length"], onesided=onesided)
    expected = numpy_stft(signal, 3, 10, window, bool(onesided))
    check(model, feeds, ("TEMPLATE", "XLA"), rtol=1e-4, atol=1e-4, expected=[expected])


@settings(max_examples=12, deadline=None)
@given(data=st.data(), parts=st.integers(1, 2), windowed=st.booleans(), constant=st.booleans())
def test_stft_matches_numpy_and_onnxruntime(data: st.DataObject, parts: int, windowed: bool, constant: bool) -> None:
    """Each frame length (odd and even: the mirrored half differs), one- and two-sided, real and complex,
    frame sizes constant or given at run time; ONNX Runtime checks the real signals' transforms too."""
    length, step = data.draw(st.integers(1, 9)), data.draw(st.integers(1, 4))
    onesided = 0 if parts == 2 else data.draw(st.integers(0, 1))
    signal = RNG.standard_normal((2, data.draw(st.integers(length, 24)), parts)).astype(F32)
    window = RNG.uniform(0, 1, length).astype(F32) if windowed else None
    inputs = {"signal": signal, "step": np.array(step, I64), "window": window}
    if not windowed:
        inputs["length"] = np.array(length, I64)
    if constant:
        model, feeds = node_model("STFT", inputs, 17, constants=["step", "window", "length"], onesided=onesided)
    else:  # ONNX's shape inference leaves the output without a shape: it is declared with symbols
        feeds = {k: np.asarray(v) for k, v in inputs.items() if v is not None}
        names = ["signal", "step", "window" if windowed else "", *([] if windowed else ["length"])]
        node = helper.make_node("STFT", names, ["y"], onesided=onesided)
        values = [value_info(k, v.dtype, v.shape) for k, v in feeds.items()]
        model = graph_model([node], values, [value_info("y", F32, [2, "frames", "bins", 2])], 17)
    expected = numpy_stft(signal, step, length, window, bool(onesided))
    check(model, feeds, ("TEMPLATE", "XLA"), rtol=1e-4, atol=1e-4, expected=[expected])
    if parts == 1:
        check(model, feeds, ("TEMPLATE",), rtol=1e-4, atol=1e-4)


def test_stft_frame_sizes_given_at_run_time_run_on_template() -> None:
    signal = RNG.standard_normal((1, 64, 1)).astype(F32)
    feeds = {"signal": signal, "step": np.array(8, I64), "length": np.array(16, I64)}
    node = helper.make_node("STFT", ["signal", "step", "", "length"], ["y"])
    inputs = [value_info(k, v.dtype, v.shape) for k, v in feeds.items()]
    model = graph_model([node], inputs, [value_info("y", F32, [1, "frames", "bins", 2])], 17)
    check(model, feeds, ("TEMPLATE",), rtol=1e-4, atol=1e-4, expected=[numpy_stft(signal, 8, 16, None, True)])


@pytest.mark.parametrize(
    ("mels", "length", "rate", "low", "high"), [(8, 16, 8192, 0.0, 4096.0), (5, 64, 16000, 100.0, 7000.0)]
)
def test_mel_weight_matrix_matches_onnx_reference(mels: int, length: int, rate: int, low: float, high: float) -> None:
    inputs = {
        "mels": np.array(mels, I64), "length": np.array(length, I64), "rate": np.array(rate, I64),
        "low": np.array(low, F32), "high": np.array(high, F32),
    }  # fmt: skip
    model, feeds = node_model("MelWeightMatrix", inputs, 17, constants=list(inputs))
    expected = ReferenceEvaluator(model).run(None, feeds)
    got = check(model, feeds, ("TEMPLATE", "XLA"), expected=expected)
    assert got[0].shape == (length // 2 + 1, mels) and got[0].max() == 1.0  # every triangle peaks at 1


@pytest.mark.parametrize(
    ("batched", "transpose_frames", "window"), [(True, False, 8), (False, True, 5), (True, True, 6)]
)
def test_stft_and_mel_weight_matrix_export_as_themselves(batched: bool, transpose_frames: bool, window: int) -> None:
    """A 1-D signal, transposed frames and a window shorter than the frame (padded, centred) export too."""
    shape = [2, 32] if batched else [32]
    signal = opset.parameter(shape, F32, name="signal")
    spectrum = opset.stft(signal, np.hanning(window).astype(F32), np.array(8, I64), np.array(4, I64),
                          transpose_frames, name="stft")  # fmt: skip
    bank = opset.mel_weight_matrix(
        np.array(3, I64), np.array(8, I64), np.array(8000, I64), np.array(0, F32), np.array(4000, F32), name="mel"
    )
    model = hs.Model([spectrum, bank], [signal], name="signal")
    proto = export_model(model)
    assert [n.op_type for n in proto.graph.node if n.op_type in ("STFT", "MelWeightMatrix")] == [
        "STFT",
        "MelWeightMatrix",
    ]
    x = RNG.standard_normal(shape).astype(F32)
    want = [np.asarray(v) for v in ReferenceEvaluator(proto).run(None, {"signal": x})]
    got = hs.Core().compile_model(model, "TEMPLATE")([x]).to_tuple()
    for g, w in zip(got, want):
        assert np.asarray(g).shape == w.shape
        np.testing.assert_allclose(np.asarray(g), w, rtol=1e-4, atol=1e-4)
