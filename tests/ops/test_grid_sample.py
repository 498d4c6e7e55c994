"""GridSample: shape inference, typed errors, and the reference kernel against a per-pixel loop written
here and against ``onnx.reference`` (an oracle, 4-D and 5-D, every mode and padding)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hetero_sdk as hs
from hetero_sdk import opset
from hetero_sdk.errors import ModelValidationError
from hetero_sdk.reference import evaluate

onnx = pytest.importorskip("onnx")

F32 = np.float32
FAST = settings(max_examples=30, deadline=None)


def sample(x: np.ndarray, grid: np.ndarray, **attrs: object) -> np.ndarray:
    """Runs one GridSample node with the reference kernels."""
    data, g = opset.parameter(x.shape, x.dtype, name="x"), opset.parameter(grid.shape, grid.dtype, name="g")
    node = opset.grid_sample(data, g, **attrs)  # type: ignore[arg-type]
    (out,) = evaluate(hs.Model([node], [data, g]), [x, grid])
    assert node.get_output_partial_shape(0).compatible(out.shape)
    return out


def onnx_sample(x: np.ndarray, grid: np.ndarray, mode: str, padding: str, align: bool) -> np.ndarray:
    from onnx import helper
    from onnx.reference import ReferenceEvaluator

    names = {"bilinear": "linear", "bicubic": "cubic", "nearest": "nearest"}
    node = helper.make_node(
        "GridSample", ["x", "g"], ["y"], mode=names[mode], padding_mode=padding, align_corners=int(align)
    )
    (y,) = ReferenceEvaluator(node).run(None, {"x": x, "g": grid})
    return y


def loop_bilinear(x: np.ndarray, grid: np.ndarray, align: bool, border: bool) -> np.ndarray:
    """Bilinear sampling of 4-D ``x``, one output pixel at a time, zeros or border padding."""
    n, c, h, w = x.shape
    out = np.zeros((n, c, *grid.shape[1:3]), np.float64)

    def pixel(b: int, ch: int, yy: int, xx: int) -> float:
        if border:
            yy, xx = min(max(yy, 0), h - 1), min(max(xx, 0), w - 1)
        elif not (0 <= yy < h and 0 <= xx < w):
            return 0.0
        return float(x[b, ch, yy, xx])

    for b in range(n):
        for i in range(grid.shape[1]):
            for j in range(grid.shape[2]):
                gx, gy = (float(v) for v in grid[b, i, j])
                if align:
                    px, py = (gx + 1) / 2 * (w - 1), (gy + 1) / 2 * (h - 1)
                else:
                    px, py = ((gx + 1) * w - 1) / 2, ((gy + 1) * h - 1) / 2
                if border:
                    px, py = min(max(px, 0.0), w - 1.0), min(max(py, 0.0), h - 1.0)
                x0, y0 = math.floor(px), math.floor(py)
                fx, fy = px - x0, py - y0
                for ch in range(c):
                    out[b, ch, i, j] = (
                        pixel(b, ch, y0, x0) * (1 - fx) * (1 - fy)
                        + pixel(b, ch, y0, x0 + 1) * fx * (1 - fy)
                        + pixel(b, ch, y0 + 1, x0) * (1 - fx) * fy
                        + pixel(b, ch, y0 + 1, x0 + 1) * fx * fy
                    )
    return out


def test_output_shape_is_batch_channels_and_the_grid_positions() -> None:
    data = opset.parameter([2, 3, 5, 7], F32)
    volume = opset.parameter([2, 3, 4, 5, 7], F32)
    assert opset.grid_sample(data, opset.parameter([2, 6, 4, 2], F32)).get_output_partial_shape(0) == [2, 3, 6, 4]
    node = opset.grid_sample(volume, opset.parameter([-1, 1, 6, 4, 3], F32), mode="nearest")
    assert node.get_output_partial_shape(0) == [2, 3, 1, 6, 4]


@pytest.mark.parametrize(
    ("data_shape", "grid_shape", "attrs", "message"),
    [
        ([2, 3, 5, 7], [2, 6, 4, 3], {}, "needs 2 coordinates"),
        ([2, 3, 5, 7], [3, 6, 4, 2], {}, "batch sizes"),
        ([2, 3, 5], [2, 6, 2], {}, "rank 4 or 5"),
        ([1, 1, 2, 3, 4], [1, 2, 3, 4, 3], {"mode": "bicubic"}, "bicubic"),
    ],
)
def test_bad_geometry_is_a_typed_error(data_shape: list[int], grid_shape: list[int], attrs: dict, message: str) -> None:
    with pytest.raises(ModelValidationError, match=message):
        opset.grid_sample(opset.parameter(data_shape, F32), opset.parameter(grid_shape, F32), **attrs)


@pytest.mark.parametrize("align", [False, True])
@pytest.mark.parametrize("border", [False, True])
def test_bilinear_matches_a_per_pixel_loop(align: bool, border: bool) -> None:
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 2, 4, 5)).astype(F32)
    grid = rng.uniform(-1.4, 1.4, (2, 3, 6, 2)).astype(F32)
    got = sample(x, grid, padding_mode="border" if border else "zeros", align_corners=align)
    np.testing.assert_allclose(got, loop_bilinear(x, grid, align, border), rtol=1e-5, atol=1e-6)


def test_grid_corners_read_the_corner_pixels() -> None:
    x = np.arange(12, dtype=F32).reshape(1, 1, 3, 4)
    grid = np.array([[[[-1, -1], [1, -1], [-1, 1], [1, 1]]]], F32)
    assert sample(x, grid, align_corners=True).tolist() == [[[[0, 3, 8, 11]]]]
    # without align_corners -1 and 1 are the outer edges: bilinear mixes in the zero padding by half each way
    assert sample(x, grid).tolist() == [[[[0.0, 0.75, 2.0, 2.75]]]]
    assert sample(x, grid, mode="nearest", padding_mode="border").tolist() == [[[[0, 3, 8, 11]]]]


def test_reflection_mirrors_positions_past_the_border() -> None:
    x = np.arange(4, dtype=F32).reshape(1, 1, 1, 4)  # pixel centers at -0.75, -0.25, 0.25, 0.75
    grid = np.array([[[[-1.25, 0.0], [1.25, 0.0], [-0.75, 0.0]]]], F32)
    # -1.25 mirrors at the edge -1 to -0.75 (pixel 0); 1.25 mirrors to 0.75 (pixel 3)
    got = sample(x, grid, mode="nearest", padding_mode="reflection")
    assert got.tolist() == [[[[0, 3, 0]]]]


@FAST
@given(
    mode=st.sampled_from(["bilinear", "bicubic", "nearest"]),
    padding=st.sampled_from(["zeros", "border", "reflection"]),
    align=st.booleans(),
    volume=st.booleans(),
    seed=st.integers(0, 1000),
)
def test_matches_onnx_reference(mode: str, padding: str, align: bool, volume: bool, seed: int) -> None:
    if volume and mode == "bicubic":
        mode = "bilinear"
    if mode == "bicubic" and padding == "border":
        # onnx.reference clamps the position as well as each tap; PyTorch and ONNX Runtime clamp only the
        # taps, and so does the kernel (the ONNX Runtime comparison is in tests/frontend/onnx)
        padding = "reflection"
    rng = np.random.default_rng(seed)
    spatial = (3, 2, 4) if volume else (3, 5)
    x = rng.standard_normal((2, 2, *spatial)).astype(F32)
    grid = rng.uniform(-1.6, 1.6, (2, 2, 3, len(spatial)) if not volume else (2, 2, 2, 3, 3)).astype(F32)
    got = sample(x, grid, mode=mode, padding_mode=padding, align_corners=align)
    np.testing.assert_allclose(got, onnx_sample(x, grid, mode, padding, align), rtol=1e-4, atol=1e-5)


def test_f16_and_f64_keep_their_type() -> None:
    rng = np.random.default_rng(2)
    x = rng.standard_normal((1, 2, 3, 3))
    grid = rng.uniform(-1, 1, (1, 2, 2, 2))
    for dtype in (np.float16, np.float64):
        got = sample(x.astype(dtype), grid.astype(dtype))
        assert got.dtype == dtype
        want = loop_bilinear(x.astype(dtype).astype(F32), grid.astype(dtype).astype(F32), False, False)
        np.testing.assert_allclose(got.astype(np.float64), want, rtol=1e-2 if dtype == np.float16 else 1e-6, atol=2e-3)
