"""The native f32 Softmax kernel (``hetero_sdk_softmax_f32``, native/src/softmax_f32.cc) against a softmax
written in numpy here (float64): rows of any length (tails past the 16-lane vectors), large and small values,
NaN, infinities and rows of -inf as the formula gives them; and Softmax on the XLA device running the kernel
only on long f32 rows over the last axis, with native kernels on and off."""

from __future__ import annotations

from typing import Any

import jax
import numpy as np
import pytest
from hetero_sdk import Type, opset
from hypothesis import given
from hypothesis import strategies as st
from xla_helpers import OPS, core, single_op

from hetero_sdk_jax import native
from hetero_sdk_jax.lowering.kernels.softmax import MIN_COLUMNS, TARGET, native_softmax
from hetero_sdk_jax.native import native_scope

pytestmark = pytest.mark.skipif(not native.available(TARGET), reason="the native kernel cannot be built here")


def _softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """exp(x - max) / sum, in float64."""
    x64 = x.astype(np.float64)
    with np.errstate(invalid="ignore"):
        e = np.exp(x64 - x64.max(axis=axis, keepdims=True))
        return e / e.sum(axis=axis, keepdims=True)


def _assert_softmax(got: Any, x: np.ndarray, axis: int = -1) -> None:
    """``got`` is the softmax of ``x`` to f32 rounding: a few ulps, plus the rounding of ``x - max`` in f32 (an
    absolute error of half an ulp of it is a relative one in its exp); values under f32's smallest normal may
    be 0."""
    expected = _softmax(x, axis)
    got = np.asarray(got, np.float64)
    assert got.shape == expected.shape
    assert np.array_equal(np.isnan(got), np.isnan(expected))
    finite = ~np.isnan(expected)
    with np.errstate(invalid="ignore"):
        shifted = np.abs(x.astype(np.float64) - x.max(axis=axis, keepdims=True))
        bound = np.where(expected > 0, expected * (4e-6 + shifted * 2.0**-24), 0) + 2e-38
    error = np.abs(got - expected)
    assert np.all((error <= bound)[finite]), f"error {error[finite].max():.3g}"


def _kernel(x: np.ndarray) -> np.ndarray:
    with native_scope("cpu", True):
        return np.asarray(jax.jit(native_softmax)(x))


@OPS
@given(
    rows=st.integers(1, 5),
    columns=st.integers(1, 300),
    scale=st.sampled_from([0.01, 1.0, 30.0, 300.0]),
    seed=st.integers(0, 2**16),
)
def test_kernel_matches_numpy(rows: int, columns: int, scale: float, seed: int) -> None:
    x = (np.random.default_rng(seed).standard_normal((rows, columns)) * scale).astype(np.float32)
    _assert_softmax(_kernel(x), x)


def test_kernel_on_the_recogniser_output_shape() -> None:
    x = (np.random.default_rng(1).standard_normal((2, 40, 6625)) * 8).astype(np.float32)
    _assert_softmax(_kernel(x), x)


def test_kernel_on_nan_infinities_and_rows_of_minus_infinity() -> None:
    inf, nan = np.inf, np.nan
    x = np.array(
        [
            [0, -inf, 1, 2, 5, -3, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 2],  # -inf gives 0
            [0, nan, 1, 2, 5, -3, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 2],  # NaN: the whole row
            [0, inf, 1, 2, 5, -3, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 2],  # +inf: inf - inf, the whole row NaN
            [-inf] * 17,  # -inf - -inf: NaN
            [1000, -1000, 3, 88, -88, -87, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 89],  # exp under the smallest normal
        ],
        np.float32,
    )
    got = _kernel(x)
    _assert_softmax(got, x)
    assert got[0, 1] == 0 and np.all(np.isnan(got[1:4]))


def _softmax_model(shape: tuple[int, ...], axis: int) -> Any:
    p = opset.parameter(list(shape), Type.f32, name="x")
    return single_op(opset.softmax(p, axis), [p])


@pytest.mark.parametrize(
    ("shape", "axis", "native_kernel"),
    [((1, 40, MIN_COLUMNS + 3), -1, True), ((3, MIN_COLUMNS), 1, True), ((3, MIN_COLUMNS - 1), 1, False),
     ((MIN_COLUMNS + 3, 4), 0, False)],
)  # fmt: skip
def test_softmax_on_xla_runs_the_kernel_on_long_rows_of_the_last_axis(
    shape: tuple[int, ...], axis: int, native_kernel: bool
) -> None:
    x = (np.random.default_rng(2).standard_normal(shape) * 10).astype(np.float32)
    for on in (True, False):
        compiled: Any = core().compile_model(_softmax_model(shape, axis), "XLA", {"XLA_NATIVE_KERNELS": on})
        _assert_softmax(compiled([x])[0], x, axis)
        assert (TARGET in compiled.jax_executable([list(shape)]).as_text()) is (on and native_kernel)
