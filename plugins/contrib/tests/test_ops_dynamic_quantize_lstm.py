"""com.microsoft DynamicQuantizeLSTM: exactly ONNX's LSTM over the dequantized weights (its meaning; ONNX
Runtime's float LSTM is the reference), and close to ONNX Runtime's DynamicQuantizeLSTM, which also
quantizes the activations at each step; on TEMPLATE, XLA and HETERO."""

from __future__ import annotations

import numpy as np
import pytest
from ms_models import check, ms_model, run_ort

HIDDEN, INPUTS, STEPS, BATCH = 3, 4, 5, 2


def _weights(rng: np.random.Generator, directions: int, rows: int, per_column: bool,
             dtype: type) -> dict[str, np.ndarray]:  # fmt: skip
    """Quantized weights: int8 ones symmetric (ONNX Runtime requires zero points of 0), uint8 ones with one
    zero point of 129 (it requires them all equal)."""
    columns = 4 * HIDDEN
    scale_shape = (directions, columns) if per_column else (directions,)
    unsigned = dtype == np.uint8
    return {
        "q": rng.integers(0 if unsigned else -127, 256 if unsigned else 128, (directions, rows, columns)).astype(dtype),
        "scale": (rng.random(scale_shape) * 0.01 + 0.002).astype(np.float32),
        "zero": np.full(scale_shape, 129 if unsigned else 0, dtype),
    }


def _dequantized(w: dict[str, np.ndarray]) -> np.ndarray:
    """(directions, rows, 4 hidden) quantized -> ONNX LSTM's (directions, 4 hidden, rows) floats."""
    scale, zero = w["scale"], w["zero"]
    if scale.ndim == 1:
        scale, zero = scale[:, None, None], zero[:, None, None]
    else:
        scale, zero = scale[:, None, :], zero[:, None, :]
    return ((w["q"].astype(np.float32) - zero) * scale).transpose(0, 2, 1)


@pytest.mark.parametrize(
    "direction, per_column, dtype",
    [("forward", False, np.int8), ("bidirectional", True, np.int8), ("reverse", True, np.uint8),
     ("forward", False, np.uint8)],
)  # fmt: skip
def test_dynamic_quantize_lstm(direction: str, per_column: bool, dtype: type) -> None:
    rng = np.random.default_rng(len(direction))
    directions = 2 if direction == "bidirectional" else 1
    x = rng.standard_normal((STEPS, BATCH, INPUTS)).astype(np.float32)
    w, r = _weights(rng, directions, INPUTS, per_column, dtype), _weights(rng, directions, HIDDEN, per_column, dtype)
    b = (rng.standard_normal((directions, 8 * HIDDEN)) * 0.1).astype(np.float32)
    h0 = (rng.standard_normal((directions, BATCH, HIDDEN)) * 0.5).astype(np.float32)
    c0 = (rng.standard_normal((directions, BATCH, HIDDEN)) * 0.5).astype(np.float32)
    inputs = {"X": x, "W": w["q"], "R": r["q"], "B": b, "seq": None, "h0": h0, "c0": c0, "P": None,
              "w_scale": w["scale"], "w_zero": w["zero"], "r_scale": r["scale"], "r_zero": r["zero"]}  # fmt: skip
    outputs = ["Y", "Y_h", "Y_c"]
    constants = ["W", "R", "B", "w_scale", "w_zero", "r_scale", "r_zero"]
    model, feeds = ms_model("DynamicQuantizeLSTM", inputs, outputs, constants=constants, hidden_size=HIDDEN,
                            direction=direction)  # fmt: skip
    float_inputs = {"X": x, "W": _dequantized(w), "R": _dequantized(r), "B": b, "seq": None, "h0": h0, "c0": c0}
    float_model, float_feeds = ms_model("LSTM", float_inputs, outputs, domain="", constants=["W", "R", "B"],
                                        hidden_size=HIDDEN, direction=direction)  # fmt: skip
    expected = check(model, feeds, expected=run_ort(float_model, float_feeds), rtol=1e-4, atol=1e-5)
    quantized_reference = run_ort(model, feeds)  # activations quantized per step: within that rounding
    for got, want in zip(expected, quantized_reference):
        np.testing.assert_allclose(got, want, atol=0.03)
