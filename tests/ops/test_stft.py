"""STFT (OpenVINO opset 15) computes what OpenVINO computes: shapes and values of 1-D and batched signals,
windows as long as the frame or shorter (centred), each frame size and step, transpose_frames both ways,
on the reference evaluator and on TEMPLATE and XLA; and its typed errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ov_reference import run_openvino, run_ours

from hetero_sdk import opset
from hetero_sdk.errors import ModelValidationError

F32, I64 = np.float32, np.int64


@st.composite
def cases(draw: st.DrawFn) -> dict[str, Any]:
    size = draw(st.integers(1, 12))
    length = draw(st.integers(size, 40))
    rng = np.random.default_rng(draw(st.integers(0, 999)))
    batch = [draw(st.integers(1, 3))] if draw(st.booleans()) else []
    return {
        "signal": rng.standard_normal((*batch, length)).astype(F32),
        "window": rng.uniform(0, 1, draw(st.integers(1, size))).astype(F32),
        "size": np.array(size, I64),
        "step": np.array(draw(st.integers(1, 6)), I64),
        "transpose_frames": draw(st.booleans()),
    }


def ours(case: dict[str, Any], device: str = "") -> np.ndarray:
    arrays, constants = [case["signal"], case["window"]], [case["size"], case["step"]]
    return run_ours(lambda x, w, n, s: opset.stft(x, w, n, s, case["transpose_frames"]), arrays, constants, device)


def theirs(case: dict[str, Any]) -> np.ndarray:
    ops = pytest.importorskip("openvino.opset15")
    arrays, constants = [case["signal"], case["window"]], [case["size"], case["step"]]
    return run_openvino(lambda x, w, n, s: ops.stft(x, w, n, s, case["transpose_frames"]), arrays, constants)


@settings(max_examples=80, deadline=None)
@given(case=cases())
def test_matches_openvino(case: dict[str, Any]) -> None:
    want = theirs(case)
    got = ours(case)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("device", ["TEMPLATE", "XLA"])
@settings(max_examples=5, deadline=None)
@given(case=cases())
def test_matches_openvino_on_devices(device: str, case: dict[str, Any]) -> None:
    if device == "XLA":
        pytest.importorskip("hetero_sdk_jax")
    np.testing.assert_allclose(ours(case, device), theirs(case), rtol=1e-4, atol=1e-4)


def test_a_full_window_is_numpy_s_rfft_of_each_windowed_frame() -> None:
    signal, window = np.arange(20, dtype=F32) % 7, np.hanning(8).astype(F32)
    got = run_ours(lambda x: opset.stft(x, window, np.array(8, I64), np.array(4, I64), False), [signal])
    frames = np.stack([signal[f * 4 : f * 4 + 8] * window for f in range(4)])
    spectrum = np.fft.rfft(frames, axis=-1)
    np.testing.assert_allclose(got, np.stack([spectrum.real, spectrum.imag], -1), rtol=1e-4, atol=1e-4)


def test_transpose_frames_puts_the_bins_before_the_frames() -> None:
    signal, window = opset.parameter([2, 40], F32), opset.parameter([10], F32)
    size, step = np.array(10, I64), np.array(3, I64)
    assert opset.stft(signal, window, size, step, False).get_output_partial_shape(0) == [2, 11, 6, 2]
    assert opset.stft(signal, window, size, step, True).get_output_partial_shape(0) == [2, 6, 11, 2]
    assert opset.stft(opset.parameter([40], F32), window, size, step, True).get_output_partial_shape(0) == [6, 11, 2]


@pytest.mark.parametrize(
    ("signal", "window", "size", "step", "match"),
    [([2, 40], [12], 10, 3, "more than frame_size"), ([2, 8], [8], 10, 3, "frame_size 10"),
     ([2, 40], [10], 10, 0, "frame_step 0"), ([3, 2, 40], [10], 10, 3, "rank")],
)  # fmt: skip
def test_what_openvino_rejects_is_a_typed_error(
    signal: list[int], window: list[int], size: int, step: int, match: str
) -> None:
    with pytest.raises(ModelValidationError, match=match):
        opset.stft(opset.parameter(signal, F32), opset.parameter(window, F32), np.array(size, I64),
                   np.array(step, I64), False)  # fmt: skip
