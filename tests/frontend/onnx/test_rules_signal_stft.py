"""STFT and MelWeightMatrix: against numpy's FFT of frames cut in the test, and against onnx.reference
(an oracle) for the mel filters; on TEMPLATE and XLA (frame sizes constant), and exported back."""

from __future__ import annotations

import numpy as np
import pytest
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


def test_stft_and_mel_weight_matrix_export_as_themselves() -> None:
    signal = opset.parameter([1, 32, 1], F32, name="signal")
    spectrum = opset.stft(signal, np.array(4, I64), np.array(8, I64), np.hanning(8).astype(F32), name="stft")
    bank = opset.mel_weight_matrix(
        np.array(3, I64), np.array(8, I64), np.array(8000, I64), np.array(0, F32), np.array(4000, F32), name="mel"
    )
    model = hs.Model([spectrum, bank], [signal], name="signal")
    proto = export_model(model)
    assert [n.op_type for n in proto.graph.node if n.op_type in ("STFT", "MelWeightMatrix")] == [
        "STFT",
        "MelWeightMatrix",
    ]
    x = RNG.standard_normal((1, 32, 1)).astype(F32)
    want = [np.asarray(v) for v in ReferenceEvaluator(proto).run(None, {"signal": x})]
    got = hs.Core().compile_model(model, "TEMPLATE")([x]).to_tuple()
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), w, rtol=1e-4, atol=1e-4)
