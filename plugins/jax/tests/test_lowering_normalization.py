"""BatchNormInference, MVN, Softmax and LogSoftmax on XLA match the reference."""

from __future__ import annotations

import numpy as np
from hetero_sdk import opset
from hypothesis import given
from hypothesis import strategies as st
from xla_helpers import OPS, check_against_reference, floats, many_ops, param, run_xla, shapes, single_op


@OPS
@given(
    data=st.data(), shape=shapes(min_dims=2, max_dims=4, max_side=5), dtype=st.sampled_from([np.float32, np.float16])
)
def test_batch_norm_softmax_log_softmax(data: st.DataObject, shape: tuple[int, ...], dtype: type) -> None:
    x = data.draw(floats(shape, dtype, -6, 6))
    channels = shape[1]
    gamma, beta, mean = (data.draw(floats((channels,), dtype, -2, 2)) for _ in range(3))
    variance = data.draw(floats((channels,), dtype, 0.1, 3))
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    px = param(x)
    nodes = [
        opset.batch_norm_inference(px, gamma, beta, mean, variance, 1e-3, name="bn"),
        opset.softmax(px, axis, name="softmax"),
        opset.log_softmax(px, axis, name="log_softmax"),
    ]
    rtol, atol = (3e-3, 3e-3) if dtype == np.float16 else (2e-6, 2e-6)
    check_against_reference(many_ops(nodes, [px]), [x], rtol=rtol, atol=atol)


@OPS
@given(data=st.data(), shape=shapes(min_dims=1, max_dims=4, max_side=5), variance=st.booleans())
def test_mvn(data: st.DataObject, shape: tuple[int, ...], variance: bool) -> None:
    x = data.draw(floats(shape, np.float32, -6, 6))
    axes = data.draw(st.lists(st.integers(-len(shape), len(shape) - 1), min_size=1, max_size=len(shape), unique=True))
    px = param(x)
    nodes = [opset.mvn(px, axes, variance, 1e-2, mode, name=mode) for mode in ("inside_sqrt", "outside_sqrt")]
    # A (nearly) constant slice divides the f32 rounding error of its mean (an ulp of |x| <= 6, which
    # XLA's summation order and numpy's may round differently) by eps: up to 5e-7 / 1e-2.
    check_against_reference(many_ops(nodes, [px]), [x], rtol=1e-4, atol=1e-4)


def test_softmax_closed_form() -> None:
    x = np.array([[0.0, np.log(3.0)]], np.float32)
    px = param(x)
    np.testing.assert_allclose(run_xla(single_op(opset.softmax(px, 1), [px]), [x])[0], [[0.25, 0.75]], rtol=1e-6)


@OPS
@given(data=st.data(), shape=shapes(min_dims=2, max_dims=4, max_side=5), size=st.integers(1, 5))
def test_lrn_matches_a_numpy_window_sum(data: st.DataObject, shape: tuple[int, ...], size: int) -> None:
    x = data.draw(floats(shape, np.float32, -3, 3))
    axis = data.draw(st.integers(0, len(shape) - 1))
    px = param(x)
    (got,) = run_xla(single_op(opset.lrn(px, [axis], 0.5, 0.75, 2.0, size), [px]), [x])
    before = (size - 1) // 2
    padding = [(0, 0)] * x.ndim
    padding[axis] = (before, size - 1 - before)
    squares = np.pad(x.astype(np.float64) ** 2, padding)
    windows = np.lib.stride_tricks.sliding_window_view(squares, size, axis=axis).sum(-1)
    want = x / (2.0 + 0.5 / size * windows) ** 0.75
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=1e-6)
