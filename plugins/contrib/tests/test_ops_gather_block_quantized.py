"""com.microsoft GatherBlockQuantized (u8 tables of 4- or 8-bit values) against ONNX Runtime and numpy
written here, on TEMPLATE, XLA and HETERO."""

from __future__ import annotations

import numpy as np
import pytest
from ms_models import check, ms_model

ROWS, HIDDEN, BLOCK = 6, 32, 16


def _values(packed: np.ndarray, bits: int) -> np.ndarray:
    """Each row's values, lowest bits of each byte first."""
    rows = []
    for row in packed.reshape(-1, packed.shape[-1]):
        rows.append([(byte >> shift) & ((1 << bits) - 1) for byte in row for shift in range(0, 8, bits)])
    return np.array(rows, np.float64).reshape(*packed.shape[:-1], -1)


@pytest.mark.parametrize("bits", [4, 8])
@pytest.mark.parametrize("zero_points", [True, False])
def test_gather_block_quantized_matches_onnx_runtime(bits: int, zero_points: bool) -> None:
    rng = np.random.default_rng(bits)
    per_byte = 8 // bits
    data = rng.integers(0, 256, (ROWS, HIDDEN // per_byte)).astype(np.uint8)
    scales = (rng.random((ROWS, HIDDEN // BLOCK)) * 0.1).astype(np.float32)
    zero = rng.integers(0, 256, (ROWS, max(1, (HIDDEN // BLOCK) // per_byte))).astype(np.uint8) if zero_points else None
    indices = np.array([[1, 4, -1], [0, 5, 2]], np.int64)
    inputs = {"data": data, "indices": indices, "scales": scales, "zero": zero}
    constants = ["data", "scales"] + (["zero"] if zero_points else [])
    model, feeds = ms_model("GatherBlockQuantized", inputs, constants=constants, block_size=BLOCK, bits=bits,
                            gather_axis=0, quantize_axis=1)  # fmt: skip
    want = check(model, feeds)
    q = _values(data, bits)
    zeros = _values(zero, bits)[:, : HIDDEN // BLOCK] if zero is not None else np.full(scales.shape, 2.0 ** (bits - 1))
    columns = np.arange(HIDDEN) // BLOCK
    table = (q - zeros[:, columns]) * scales[:, columns]
    np.testing.assert_allclose(want[0], table[indices % ROWS], rtol=1e-6, atol=1e-7)


def test_gather_block_quantized_along_a_middle_axis() -> None:
    rng = np.random.default_rng(3)
    data = rng.integers(0, 256, (2, 5, HIDDEN // 2)).astype(np.uint8)
    scales = (rng.random((2, 5, HIDDEN // BLOCK)) * 0.1).astype(np.float32)
    indices = np.array([4, 0], np.int32)
    inputs = {"data": data, "indices": indices, "scales": scales}
    model, feeds = ms_model("GatherBlockQuantized", inputs, constants=["data", "scales"], block_size=BLOCK, bits=4,
                            gather_axis=1, quantize_axis=2)  # fmt: skip
    table = (_values(data, 4) - 8) * scales[..., np.arange(HIDDEN) // BLOCK]
    check(model, feeds, expected=[table[:, indices].astype(np.float32)], rtol=1e-6, atol=1e-7)
