"""The native kernels' SiLU epilogue (``avx512_math.h`` ``Silu``) against ``x / (1 + e^-x)`` in float64 on a dense
float32 grid: every 128th float32 from the smallest denormal to 100, both signs (17 M values, through one GEMM
call with an identity ``B``), and at the edges (infinities, NaN, zeros, denormals, the clamps at +-88, the largest
floats). The bound the header states: within 2.1e-7 relative (3.5 ulps) wherever ``|SiLU(x)| > 1e-30``,
within 1.1e-36 absolute below it (XLA's threads flush denormals: results under 1.2e-38, from x below -87.3, are
zeros); the sign of every result is the sign of ``x``, zeros included (through the GEMM)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import jax
import numpy as np
import pytest

from hetero_sdk_jax import native
from hetero_sdk_jax.lowering.kernels.conv2d import FUSED_TARGET as CONV_FUSED_TARGET
from hetero_sdk_jax.lowering.kernels.conv2d import native_conv2d
from hetero_sdk_jax.lowering.kernels.gemm import FUSED_TARGET, native_fused_matmul, packed_b

pytestmark = pytest.mark.skipif(
    not (native.available(FUSED_TARGET) and native.available(CONV_FUSED_TARGET)),
    reason="no C++ compiler with AVX-512 here",
)

RELATIVE = 2.1e-7
"""The largest relative error where ``|SiLU(x)| > TINY``."""
TINY = 1e-30
ABSOLUTE = 1.1e-36
"""The largest absolute error where ``|SiLU(x)| <= TINY`` (SiLU(-87.3), a result flushed to -0)."""
LANES = 16


def _grid(stride: int = 128, top: float = 100.0) -> np.ndarray:
    """Every ``stride``-th float32 from the smallest denormal up to ``top`` (the low bits of the patterns varied
    by an odd offset), with their negations."""
    top_bits = int(np.array(top, np.float32).view(np.uint32))
    positive = np.arange(37, top_bits, stride, dtype=np.uint32).view(np.float32)
    return np.concatenate([positive, -positive])


def _silu_by_gemm(values: np.ndarray, width: int = LANES) -> Any:
    """SiLU of ``values`` (a multiple of ``width`` of them) as the GEMM's fused epilogue computes it: rows of
    ``width`` values by a ``width`` x ``width`` identity (each sum one product by 1 and zeros: exact for finite
    values; width 1 for infinities and NaN) plus a bias of -0 (which keeps every value)."""
    bias = np.full(width, -0.0, np.float32)
    run = jax.jit(lambda a, p, c: native_fused_matmul(a, p, width, c, "silu"))
    return np.asarray(run(values.reshape(-1, width), packed_b(np.eye(width, dtype=np.float32)), bias)).reshape(-1)


def _assert_within_bound(x: np.ndarray, got: np.ndarray, signed_zeros: bool = True) -> None:
    """``got`` within the bound of SiLU(``x``), each result's sign ``x``'s (of the non-zero results only
    without ``signed_zeros``: a kernel whose sums start from +0 turns -0 and a negative denormal into +0)."""
    wide = x.astype(np.float64)
    with np.errstate(over="ignore"):
        expected = wide / (1 + np.exp(-wide))
    error = np.abs(got.astype(np.float64) - expected)
    large = np.abs(expected) > TINY
    relative = error[large] / np.abs(expected[large])
    worst = int(np.argmax(relative))
    assert relative[worst] <= RELATIVE, f"{relative[worst]:.3g} relative at x = {x[large][worst]!r}"
    assert np.all(error[~large] <= ABSOLUTE), f"{error[~large].max():.3g} absolute below |SiLU| = {TINY}"
    signed = slice(None) if signed_zeros else got != 0
    assert np.array_equal(np.signbit(got[signed]), np.signbit(x[signed]))


def test_silu_on_a_dense_float32_grid_within_its_stated_bound() -> None:
    x = _grid()
    x = np.concatenate([x, np.zeros(-len(x) % LANES, np.float32)])
    _assert_within_bound(x, _silu_by_gemm(x))


def test_silu_at_its_edges() -> None:
    """NaN stays NaN, +inf stays +inf, -inf (and anything below -88) gives -0 (the limit from below, where
    numpy's ``-inf / inf`` is NaN), a zero or a denormal (read as a zero) keeps its sign."""
    big = float(np.finfo(np.float32).max)
    finite = np.array(
        [-0.0, 0.0, 1e-45, -1e-45, 1e-40, -1e-40, 1.1754944e-38, -1.1754944e-38, 88, -88, 88.0001, -88.0001,
         87.99, -87.99, 104, -104, 1e30, -1e30, big, -big, 20, -20],
        np.float32,
    )  # fmt: skip
    values = np.concatenate([finite, np.array([np.nan, np.inf, -np.inf], np.float32)])
    got = _silu_by_gemm(values, width=1)
    _assert_within_bound(finite, got[: len(finite)])
    nan, plus, minus = got[len(finite) :]
    assert np.isnan(nan) and plus == np.inf and minus == 0 and np.signbit(minus)
    assert got[8] == 88 and got[10] == np.float32(88.0001) and got[18] == big  # e^-x below f32's step at 1


def test_the_convolution_s_epilogue_is_the_same_silu() -> None:
    """A 1x1 identity convolution with a bias of -0 through the conv2d kernel's fused epilogue: the same bound
    on a sparser grid (every 2048th float32 to 100)."""
    x = _grid(stride=2048)
    x = np.concatenate([x, np.zeros(-len(x) % LANES, np.float32)])
    w = np.eye(LANES, dtype=np.float32).reshape(1, 1, LANES, LANES)
    bias = np.full(LANES, -0.0, np.float32)
    run = jax.jit(lambda x, w, c: native_conv2d(x, w, (1, 1), [(0, 0), (0, 0)], None, c, "silu"))
    got = np.asarray(run(x.reshape(1, 1, -1, LANES), w, bias)).reshape(-1)
    _assert_within_bound(x, got, signed_zeros=False)


def test_the_header_s_polynomial_is_within_5e_9_of_e_to_the_minus_s() -> None:
    """``Silu``'s Horner coefficients (highest first, as the header writes them) read from ``avx512_math.h``:
    the polynomial within 5e-9 relative of e^-s on the reduced range |s| <= ln2 / 2 (in float64; the fit of
    ``bench/silu_coefficients.py`` gives 3.1e-9 with float32 coefficients)."""
    header = Path(native.__file__).parent / "src" / "avx512_math.h"
    body = header.read_text().split("inline __m512 Silu(")[1].split("\n}\n")[0]
    coefficients = [float(c) for c in re.findall(r"q(?: = |, s, )_mm512_set1_ps\(([-+.\deE]+)f\)", body)]
    assert len(coefficients) == 7
    s = np.linspace(-np.log(2) / 2, np.log(2) / 2, 100001)
    assert np.max(np.abs(np.polyval(coefficients, s) * np.exp(s) - 1)) <= 5e-9
