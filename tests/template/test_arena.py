"""TEMPLATE's per-request arena: buffers reused across inferences never change a result, a result the
caller holds, or another request's result; a buffer is reused only once no live value views it."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import hetero_sdk as hs
from hetero_sdk import opset
from template_plugin.arena import Arena, root_of
from template_plugin.compiled_model import PEAK_MEMORY

ONE_THREAD = {"INFERENCE_NUM_THREADS": 1}


def _hswish(y: np.ndarray) -> np.ndarray:
    return y * np.clip(y + 3, 0, 6) / 6


def _convnet(seed: int) -> tuple[hs.Model, dict[str, np.ndarray]]:
    """A depthwise 3x3 (wide rows), a strided depthwise 5x5, a dense 3x3 and a pointwise conv, each
    with a bias and an activation, as a MobileNet block chains them; returns the weights too."""
    rng = np.random.default_rng(seed)
    weights = {
        "dw": rng.standard_normal((4, 1, 1, 3, 3)).astype(np.float32),
        "dw_b": rng.standard_normal((1, 4, 1, 1)).astype(np.float32),
        "dw2": rng.standard_normal((4, 1, 1, 5, 5)).astype(np.float32),
        "dw2_b": rng.standard_normal((1, 4, 1, 1)).astype(np.float32),
        "dense": rng.standard_normal((6, 4, 3, 3)).astype(np.float32),
        "dense_b": rng.standard_normal((1, 6, 1, 1)).astype(np.float32),
        "pw": rng.standard_normal((5, 6, 1, 1)).astype(np.float32),
        "pw_b": rng.standard_normal((1, 5, 1, 1)).astype(np.float32),
    }
    x = opset.parameter([-1, 4, -1, -1], name="x")
    y = opset.hswish(
        opset.add(opset.group_convolution(x, weights["dw"], [1, 1], [1, 1], [1, 1], [1, 1]), weights["dw_b"])
    )
    y = opset.add(opset.group_convolution(y, weights["dw2"], [2, 1], [2, 2], [2, 2], [1, 1]), weights["dw2_b"])
    y = opset.relu(
        opset.add(opset.convolution(y, weights["dense"], [1, 1], [1, 1], [1, 1], [1, 1]), weights["dense_b"])
    )
    y = opset.hswish(opset.add(opset.convolution(y, weights["pw"], [1, 1], [0, 0], [0, 0], [1, 1]), weights["pw_b"]))
    return hs.Model([opset.result(y, name="y")], [x]), weights


def _direct(x: np.ndarray, w: np.ndarray, stride: tuple[int, int], pad: int, groups: int) -> np.ndarray:
    """A convolution written here: a sum over taps of per-group channel products, in float64."""
    x = np.pad(x.astype(np.float64), [(0, 0), (0, 0), (pad, pad), (pad, pad)])
    kh, kw = w.shape[2:]
    rows = (x.shape[2] - kh) // stride[0] + 1
    cols = (x.shape[3] - kw) // stride[1] + 1
    per_in, per_out = x.shape[1] // groups, w.shape[0] // groups
    result = np.zeros((x.shape[0], w.shape[0], rows, cols))
    for i in range(kh):
        for j in range(kw):
            window = x[
                :, :, i : i + (rows - 1) * stride[0] + 1 : stride[0], j : j + (cols - 1) * stride[1] + 1 : stride[1]
            ]
            for g in range(groups):
                part = window[:, g * per_in : (g + 1) * per_in]
                taps = w[g * per_out : (g + 1) * per_out, :, i, j]
                result[:, g * per_out : (g + 1) * per_out] += np.einsum("nchw,oc->nohw", part, taps)
    return result


def _expected(x: np.ndarray, weights: dict[str, np.ndarray]) -> np.ndarray:
    y = _hswish(_direct(x, weights["dw"].reshape(4, 1, 3, 3), (1, 1), 1, 4) + weights["dw_b"])
    y = _direct(y, weights["dw2"].reshape(4, 1, 5, 5), (2, 1), 2, 4) + weights["dw2_b"]
    y = np.maximum(_direct(y, weights["dense"], (1, 1), 1, 1) + weights["dense_b"], 0)
    return _hswish(_direct(y, weights["pw"], (1, 1), 0, 1) + weights["pw_b"])


_SIZES = st.tuples(st.integers(1, 2), st.integers(3, 9), st.integers(3, 9))


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 2**16), sizes=st.lists(_SIZES, min_size=3, max_size=4))
def test_one_request_reusing_its_buffers_computes_every_inference_right(seed, sizes) -> None:
    """Inferences on one request, the same shape twice and others between: each result equals the
    convolutions written here, and results already returned do not change afterwards."""
    model, weights = _convnet(seed)
    compiled = hs.Core().compile_model(model, "TEMPLATE", ONE_THREAD)
    request = compiled.create_infer_request()
    rng = np.random.default_rng(seed)
    kept = []
    for batch, height, width in [*sizes, sizes[0]]:
        x = rng.standard_normal((batch, 4, height, width)).astype(np.float32)
        result = request.infer({"x": x})[0]
        expected = _expected(x, weights)
        np.testing.assert_allclose(result, expected, rtol=1e-4, atol=1e-4)
        kept.append((result, result.copy()))
    for result, copy in kept:
        np.testing.assert_array_equal(result, copy)
    assert not any(np.shares_memory(a[0], b[0]) for i, a in enumerate(kept) for b in kept[i + 1 :])


def test_two_requests_running_at_once_do_not_share_buffers() -> None:
    model, weights = _convnet(7)
    compiled = hs.Core().compile_model(model, "TEMPLATE", ONE_THREAD)
    requests = [compiled.create_infer_request() for _ in range(2)]
    rng = np.random.default_rng(1)
    for _ in range(3):
        inputs = [rng.standard_normal((1, 4, 8, 7)).astype(np.float32) for _ in requests]
        for request, x in zip(requests, inputs):
            request.start_async({"x": x})
        for request, x in zip(requests, inputs):
            request.wait()
            np.testing.assert_allclose(np.asarray(request.results[0]), _expected(x, weights), rtol=1e-4, atol=1e-4)


def test_a_buffer_still_viewed_by_a_live_value_is_not_reused() -> None:
    """conv1's result dies at once, but a Reshape's view of it lives past conv2, whose result has
    conv1's shape: conv2 must not be written into conv1's buffer."""
    w1 = np.arange(1, 7, dtype=np.float32).reshape(2, 3, 1, 1)
    w2 = -np.arange(1, 7, dtype=np.float32).reshape(2, 3, 1, 1)
    bias = np.ones((1, 2, 1, 1), np.float32)
    x = opset.parameter([1, 3, 4, 4], name="x")
    conv1 = opset.add(opset.convolution(x, w1, [1, 1], [0, 0], [0, 0], [1, 1]), bias)
    flat = opset.reshape(conv1, np.array([1, 32], np.int64), False)
    conv2 = opset.add(opset.convolution(x, w2, [1, 1], [0, 0], [0, 0], [1, 1]), bias)
    back = opset.reshape(flat, np.array([1, 2, 4, 4], np.int64), False)
    model = hs.Model([opset.result(opset.subtract(back, conv2), name="y")], [x])
    compiled = hs.Core().compile_model(model, "TEMPLATE", ONE_THREAD)
    assert [n.type_name for n in compiled.get_runtime_model().get_ops()].count("TemplateConvolution") == 2
    request = compiled.create_infer_request()
    data = np.random.default_rng(0).standard_normal((1, 3, 4, 4)).astype(np.float32)
    expected = np.einsum("nchw,oc->nohw", data, w1[:, :, 0, 0] - w2[:, :, 0, 0])
    for _ in range(3):
        np.testing.assert_allclose(request.infer({"x": data})[0], expected, rtol=1e-5, atol=1e-5)


def test_peak_memory_counts_the_arena_and_stays_put_once_the_buffers_exist() -> None:
    model, _ = _convnet(3)
    compiled = hs.Core().compile_model(model, "TEMPLATE", ONE_THREAD)
    request = compiled.create_infer_request()
    x = np.ones((1, 4, 9, 8), np.float32)
    peaks = []
    for _ in range(3):
        request.infer({"x": x})
        peaks.append(compiled.get_property(PEAK_MEMORY))
    # the first inference makes the buffers, the next ones reuse them (but for the output, handed over)
    assert peaks[1] == peaks[2] >= peaks[0] >= x.nbytes + 5 * 9 * 8 * 4 // 2


def test_the_arena_lends_reuses_and_hands_over() -> None:
    arena = Arena()
    a = arena.output((2, 3), np.float32)
    flat = arena.owner(a)
    assert flat is not None and arena.owner(a.reshape(6)[1:]) is flat and arena.owner(np.ones(2)) is None
    assert arena.lent(a) and not arena.lent(np.ones(2))
    arena.give_back(flat)
    assert not arena.lent(a)
    b = arena.output((3, 2), np.float32)  # the same size: the same memory, another shape
    assert b.shape == (3, 2) and arena.owner(b) is flat and arena.nbytes == 24
    assert arena.owner(arena.output((6,), np.float32)) is not flat  # lent: a new one
    arena.hand_over(flat)
    assert arena.nbytes == 24 and not arena.lent(b)
    arena.reclaim()
    assert arena.owner(arena.output((1, 6), np.float32)) is not flat
    t = arena.temporary("t", (4,), np.float32)
    assert arena.temporary("t", (2, 2), np.float32).base is t.base  # the same memory
    assert arena.temporary("t", (3, 3), np.float32).size == 9  # grown
    strided = np.lib.stride_tricks.as_strided(t, (2,), (4,))
    assert root_of(strided) is root_of(t)


def test_unfused_convolutions_write_into_the_arena_and_stay_right() -> None:
    """With the transformations off, the plain Convolution and GroupConvolution kernels use the arena
    (a wide depthwise result copied out of its temporary): every inference equals the convolutions
    written here."""
    model, weights = _convnet(11)
    compiled = hs.Core().compile_model(model, "TEMPLATE", {**ONE_THREAD, "TEMPLATE_DISABLE_TRANSFORMATIONS": True})
    assert "TemplateConvolution" not in [n.type_name for n in compiled.get_runtime_model().get_ops()]
    request = compiled.create_infer_request()
    rng = np.random.default_rng(2)
    kept = []
    for shape in [(1, 4, 7, 9), (2, 4, 5, 6), (1, 4, 7, 9)]:
        x = rng.standard_normal(shape).astype(np.float32)
        result = request.infer({"x": x})[0]
        np.testing.assert_allclose(result, _expected(x, weights), rtol=1e-4, atol=1e-4)
        kept.append((result, result.copy()))
    for result, copy in kept:
        np.testing.assert_array_equal(result, copy)


def test_wide_layers_summing_tap_products_reuse_their_buffers_right() -> None:
    """Stride-1 layers with at least 16 inputs and fewer outputs sum per-tap products (their products,
    sums and padded input are arena temporaries): a fused one and a plain one (no bias), varying shapes
    on one request, against the convolutions written here."""
    rng = np.random.default_rng(5)
    w1 = rng.standard_normal((8, 16, 3, 3)).astype(np.float32)
    b1 = rng.standard_normal((1, 8, 1, 1)).astype(np.float32)
    w2 = rng.standard_normal((16, 8, 3, 3)).astype(np.float32)
    w3 = rng.standard_normal((4, 16, 3, 3)).astype(np.float32)
    x = opset.parameter([1, 16, -1, -1], name="x")
    y = opset.relu(opset.add(opset.convolution(x, w1, [1, 1], [1, 1], [1, 1], [1, 1]), b1))
    y = opset.convolution(y, w2, [1, 1], [1, 1], [1, 1], [1, 1])
    y = opset.convolution(y, w3, [1, 1], [0, 0], [0, 0], [1, 1])
    compiled = hs.Core().compile_model(hs.Model([y], [x]), "TEMPLATE", ONE_THREAD)
    request = compiled.create_infer_request()
    for size in [(9, 7), (5, 11), (9, 7)]:
        data = rng.standard_normal((1, 16, *size)).astype(np.float32)
        expected = np.maximum(_direct(data, w1, (1, 1), 1, 1) + b1, 0)
        expected = _direct(_direct(expected, w2, (1, 1), 1, 1), w3, (1, 1), 0, 1)
        np.testing.assert_allclose(request.infer({"x": data})[0], expected, rtol=1e-4, atol=1e-3)
