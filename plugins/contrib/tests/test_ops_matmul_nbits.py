"""com.microsoft MatMulNBits against ONNX Runtime at accuracy_level 0 (dequantized weights times f32
activations) and against numpy written here, on TEMPLATE and XLA."""

from __future__ import annotations

import gc
from typing import Any

import jax
import numpy as np
import pytest
from hetero_sdk.errors import HeteroSDKError
from hypothesis import given, settings
from hypothesis import strategies as st
from ms_models import check, core, ms_model, run_ort, run_sdk, typed_model
from onnx import helper

from hetero_sdk_contrib.ops_matmul_nbits import PREPARED

FEW = settings(max_examples=5, deadline=None)


def _quantized(rng: np.random.Generator, n: int, k: int, bits: int, block: int) -> dict[str, np.ndarray]:
    blocks = -(-k // block)
    return {
        "B": rng.integers(0, 256, (n, blocks, block * bits // 8), dtype=np.uint8),
        "scales": (rng.random(n * blocks) + 0.1).astype(np.float32),
    }


def _values(packed: np.ndarray, bits: int, count: int) -> np.ndarray:
    """The ``bits``-bit values of each row of ``packed``, lowest bits of each byte first."""
    values = []
    for byte in packed.reshape(packed.shape[0], -1).T:
        for shift in range(0, 8, bits):
            values.append((byte >> shift) & ((1 << bits) - 1))
    return np.stack(values, axis=1)[:, :count].astype(np.float64)


def _dense(b: np.ndarray, scales: np.ndarray, zero: np.ndarray | None, k: int, bits: int, block: int,
           g_idx: np.ndarray | None = None, float_zero: bool = False) -> np.ndarray:  # fmt: skip
    """The (N, K) weight, dequantized one value at a time."""
    n, blocks = b.shape[0], -(-k // block)
    q = _values(b, bits, k)
    scale = scales.reshape(n, blocks).astype(np.float64)
    if zero is None:
        zp = np.full((n, blocks), 2.0 ** (bits - 1))
    elif float_zero:
        zp = zero.reshape(n, blocks).astype(np.float64)
    else:
        zp = _values(zero, bits, blocks)
    columns = np.arange(k) // block if g_idx is None else g_idx
    return np.array([[(q[i, j] - zp[i, columns[j]]) * scale[i, columns[j]] for j in range(k)] for i in range(n)])


@pytest.mark.parametrize("bits", [2, 4, 8])
@pytest.mark.parametrize("zero_points", ["none", "packed", "float"])
def test_matmul_nbits_matches_onnx_runtime(bits: int, zero_points: str) -> None:
    rng = np.random.default_rng(bits)
    k, n, block = 40, 6, 16  # K not a multiple of the block: the last block is padded
    a = rng.standard_normal((2, 3, k)).astype(np.float32)
    weight = _quantized(rng, n, k, bits, block)
    blocks = 3
    zero = {
        "none": None,
        "packed": rng.integers(0, 256, (n, -(-blocks * bits // 8)), dtype=np.uint8),
        "float": (rng.random(n * blocks) * 2 ** (bits - 1)).astype(np.float32),
    }[zero_points]
    inputs = {"A": a, **weight, "zero_points": zero}
    constants = [name for name in ("B", "scales", "zero_points") if inputs[name] is not None]
    attrs = {"K": k, "N": n, "bits": bits, "block_size": block, "accuracy_level": 0}
    model, feeds = ms_model("MatMulNBits", inputs, constants=constants, **attrs)
    dense = _dense(weight["B"], weight["scales"], zero, k, bits, block, float_zero=zero_points == "float")
    expected = a.astype(np.float64) @ dense.T
    if bits == 8 and zero_points == "float":  # ONNX Runtime's CPU kernel refuses these: numpy alone
        check(model, feeds, expected=[expected.astype(np.float32)], rtol=1e-4, atol=1e-3)
        return
    want = check(model, feeds, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(want[0], expected, rtol=1e-4, atol=1e-3)


def test_matmul_nbits_bias_after_left_out_inputs() -> None:
    rng = np.random.default_rng(10)
    k, n, block = 64, 5, 32
    a = rng.standard_normal((4, k)).astype(np.float32)
    weight = _quantized(rng, n, k, 4, block)
    bias = rng.standard_normal(n).astype(np.float32)
    inputs = {"A": a, **weight, "zero_points": None, "g_idx": None, "bias": bias}
    model, feeds = ms_model("MatMulNBits", inputs, K=k, N=n, bits=4, block_size=block)
    want = check(model, feeds, rtol=1e-4, atol=1e-4)
    dense = _dense(weight["B"], weight["scales"], None, k, 4, block)
    np.testing.assert_allclose(want[0], a @ dense.T + bias, rtol=1e-4, atol=1e-3)


def test_matmul_nbits_g_idx_names_each_columns_block() -> None:
    """g_idx is checked against numpy written here: ONNX Runtime 1.32's CPU kernel gives neither this
    (the documented meaning) nor the in-order result for a shuffled g_idx."""
    rng = np.random.default_rng(11)
    k, n, block = 48, 4, 16
    a = rng.standard_normal((3, k)).astype(np.float32)
    weight = _quantized(rng, n, k, 4, block)
    g_idx = rng.permutation(np.arange(k) // block).astype(np.int32)
    zero = rng.integers(0, 256, (n, 2), dtype=np.uint8)
    inputs = {"A": a, **weight, "zero_points": zero, "g_idx": g_idx}
    model, feeds = ms_model("MatMulNBits", inputs, K=k, N=n, bits=4, block_size=block)
    dense = _dense(weight["B"], weight["scales"], zero, k, 4, block, g_idx=g_idx)
    check(model, feeds, expected=[(a @ dense.T).astype(np.float32)], rtol=1e-4, atol=1e-4)


@FEW
@given(
    rows=st.integers(1, 4), k=st.integers(1, 70), n=st.integers(1, 9), bits=st.sampled_from([4, 8]),
    block=st.sampled_from([16, 32, 64]), seed=st.integers(0, 2**16),
)  # fmt: skip
def test_matmul_nbits_sizes(rows: int, k: int, n: int, bits: int, block: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((rows, k)).astype(np.float32)
    inputs = {"A": a, **_quantized(rng, n, k, bits, block)}
    model, feeds = ms_model("MatMulNBits", inputs, K=k, N=n, bits=bits, block_size=block)
    check(model, feeds, devices=("TEMPLATE", "XLA"), rtol=1e-4, atol=1e-4)  # weights as inputs: per call


def test_matmul_nbits_float16_activations() -> None:
    rng = np.random.default_rng(12)
    k, n, block = 32, 8, 16
    a = rng.standard_normal((2, k)).astype(np.float16)
    weight = _quantized(rng, n, k, 4, block)
    weight["scales"] = weight["scales"].astype(np.float16)
    model, feeds = ms_model("MatMulNBits", {"A": a, **weight}, K=k, N=n, bits=4, block_size=block)
    dense = _dense(weight["B"], weight["scales"], None, k, 4, block)
    check(model, feeds, expected=[(a.astype(np.float64) @ dense.T).astype(np.float16)], rtol=2e-3, atol=2e-2)


def test_matmul_nbits_weight_of_the_wrong_shape_is_named() -> None:
    rng = np.random.default_rng(13)
    inputs = {"A": rng.standard_normal((2, 32)).astype(np.float32), **_quantized(rng, 4, 32, 4, 16)}
    model, feeds = ms_model("MatMulNBits", inputs, K=32, N=5, bits=4, block_size=16)
    model.graph.output[0].CopyFrom(helper.make_tensor_value_info("y", 1, [2, 5]))
    with pytest.raises(HeteroSDKError, match="B has shape"):
        run_sdk(model, feeds, "TEMPLATE")


def _weights(rng: np.random.Generator, n: int, k: int, bits: int, block: int, zero_points: str,
             g_idx: bool) -> dict[str, np.ndarray | None]:  # fmt: skip
    """B and scales, zero points as asked ("none", "packed" or "float") and a shuffled g_idx or None."""
    blocks = -(-k // block)
    zero = {
        "none": None,
        "packed": rng.integers(0, 256, (n, -(-blocks * bits // 8)), dtype=np.uint8),
        "float": (rng.random(n * blocks) * 2 ** (bits - 1)).astype(np.float32),
    }[zero_points]
    order = rng.permutation(np.arange(k) // block).astype(np.int32) if g_idx else None
    return {**_quantized(rng, n, k, bits, block), "zero_points": zero, "g_idx": order}


@FEW
@given(
    batch=st.sampled_from([(), (1,), (3,), (2, 2)]), k=st.integers(1, 70), n=st.integers(1, 9),
    bits=st.sampled_from([4, 8]), block=st.sampled_from([16, 32, 64]),
    zero_points=st.sampled_from(["none", "packed", "float"]), g_idx=st.booleans(), seed=st.integers(0, 2**16),
)  # fmt: skip
def test_matmul_nbits_constant_weights_match_numpy_and_onnx_runtime(
    batch: tuple[int, ...], k: int, n: int, bits: int, block: int, zero_points: str, g_idx: bool, seed: int
) -> None:
    """Constant weights, as the builders write them: TEMPLATE and XLA multiply by the weight dequantized
    once; checked against numpy here and, without g_idx (see above), ONNX Runtime at accuracy_level 0."""
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((*batch, k)).astype(np.float32)
    weights = _weights(rng, n, k, bits, block, zero_points, g_idx)
    constants = [name for name, value in weights.items() if value is not None]
    attrs = {"K": k, "N": n, "bits": bits, "block_size": block, "accuracy_level": 0}
    model, feeds = ms_model("MatMulNBits", {"A": a, **weights}, constants=constants, **attrs)
    float_zero = zero_points == "float"
    dense = _dense(
        weights["B"], weights["scales"], weights["zero_points"], k, bits, block, weights["g_idx"], float_zero
    )
    expected = (a.astype(np.float64) @ dense.T).astype(np.float32)
    check(model, feeds, expected=[expected], rtol=1e-4, atol=1e-4)
    if not g_idx and not (bits == 8 and float_zero):  # ONNX Runtime refuses 8-bit float zero points
        np.testing.assert_allclose(run_ort(model, feeds)[0], expected, rtol=1e-4, atol=1e-4)


def _step_model(rng: np.random.Generator, k: int, n: int) -> tuple[Any, dict[str, np.ndarray], np.ndarray]:
    """A 4-bit MatMulNBits of Constant weights with packed zero points, its feeds, and numpy's result."""
    weights = _weights(rng, n, k, 4, 32, "packed", False)
    a = rng.standard_normal((1, k)).astype(np.float32)
    model, feeds = ms_model("MatMulNBits", {"A": a, **weights}, constants=["B", "scales", "zero_points"],
                            K=k, N=n, bits=4, block_size=32)  # fmt: skip
    dense = _dense(weights["B"], weights["scales"], weights["zero_points"], k, 4, 32)
    return typed_model(model, [np.zeros((1, n), np.float32)]), feeds, a.astype(np.float64) @ dense.T


@pytest.mark.parametrize("device", ["TEMPLATE", "XLA"])
def test_matmul_nbits_dequantizes_a_constant_weight_once_per_model(device: str) -> None:
    rng = np.random.default_rng(20)
    model, feeds, expected = _step_model(rng, 256, 64)
    gc.collect()  # earlier tests' models
    before, kept = PREPARED.computed, len(PREPARED)
    config = {"XLA_NATIVE_KERNELS": False} if device == "XLA" else {}  # XLA's own lowering: the f32 weight
    compiled = core().compile_model(model, device, config)
    request = compiled.create_infer_request()
    for _ in range(3):
        np.testing.assert_allclose(request.infer(dict(feeds))[0], expected, rtol=1e-5, atol=1e-5)
    assert PREPARED.computed == before + 1
    assert len(PREPARED) == kept + 1
    del compiled, request
    gc.collect()
    assert len(PREPARED) == kept  # freed with the compiled model's constant


def test_matmul_nbits_weight_fed_as_input_is_not_kept() -> None:
    """A weight that is a model input may change between calls: dequantized each call, never cached."""
    rng = np.random.default_rng(21)
    k, n = 64, 3
    a = rng.standard_normal((2, k)).astype(np.float32)
    weights = _quantized(rng, n, k, 4, 32)
    model, feeds = ms_model("MatMulNBits", {"A": a, **weights}, K=k, N=n, bits=4, block_size=32)
    model = typed_model(model, [np.zeros((2, n), np.float32)])
    for device in ("TEMPLATE", "XLA"):
        gc.collect()  # earlier tests' models
        kept = len(PREPARED)
        request = core().compile_model(model, device).create_infer_request()
        for _ in range(2):
            feeds["B"] = rng.integers(0, 256, feeds["B"].shape, dtype=np.uint8)
            dense = _dense(feeds["B"], feeds["scales"], None, k, 4, 32)
            np.testing.assert_allclose(request.infer(dict(feeds))[0], a @ dense.T, rtol=1e-4, atol=1e-4, err_msg=device)
        assert len(PREPARED) == kept, device


def test_matmul_nbits_xla_holds_the_f32_weight_not_the_packed_one() -> None:
    """XLA's executable takes the weight dequantized at compile time as an f32 argument: the packed bytes
    are not passed, and no u8 weight or f32 temporary of the weight's size is computed per call."""
    from hetero_sdk_jax.lowering import lower, weights_of

    rng = np.random.default_rng(22)
    k, n = 512, 256
    model, feeds, expected = _step_model(rng, k, n)
    graph = core().read_model(model)
    held = weights_of(graph)
    assert [(w.dtype, w.shape) for w in held] == [(np.dtype(np.float32), (n, k))]
    arrays = [weight.prepare() for weight in held]
    text = jax.jit(lower(graph, weights=held)).lower(feeds["A"], *arrays).as_text()
    assert "ui8" not in text and "shift_right" not in text  # nothing unpacked
    assert "stablehlo.dot_general" in text
    assert f"-> tensor<{n}x{k}xf32>" not in text and "= stablehlo.convert" not in text  # no weight computed
    got = jax.jit(lower(graph, weights=held))(feeds["A"], *arrays)[0]
    np.testing.assert_allclose(np.asarray(got), expected, rtol=1e-5, atol=1e-5)


def test_matmul_nbits_packed_weight_read_elsewhere_too_stays_an_xla_weight() -> None:
    """A Constant that another op also reads is still passed to XLA's executable (only Constants every
    consumer replaces are left out), beside the f32 weight; both results are right."""
    from hetero_sdk import Model, Node, Type
    from hetero_sdk import opset as ops
    from hetero_sdk_jax.lowering import weights_of

    from hetero_sdk_contrib.ops_matmul_nbits import MATMUL_NBITS

    rng = np.random.default_rng(23)
    k, n = 512, 256  # the packed weight is 64 KiB: a weight for XLA
    weights = _quantized(rng, n, k, 4, 16)
    a = ops.parameter([2, k], Type.f32, "A")
    packed = ops.constant(weights["B"])
    attrs = {"K": k, "N": n, "bits": 4, "block_size": 16}
    y = Node(MATMUL_NBITS, [a.output(0), packed.output(0), ops.constant(weights["scales"]).output(0)], attrs)
    z = ops.convert(packed, Type.f32)
    model = Model([ops.result(y), ops.result(z)], [a])
    core()  # the extension's ops, registered
    held = weights_of(model)
    assert sorted((w.dtype.str, w.shape) for w in held) == sorted(
        [(np.dtype(np.uint8).str, weights["B"].shape), (np.dtype(np.float32).str, (n, k))]
    )
    x = rng.standard_normal((2, k)).astype(np.float32)
    got = core().compile_model(model, "XLA")([x])
    dense = _dense(weights["B"], weights["scales"], None, k, 4, 16)
    np.testing.assert_allclose(np.asarray(got[0]), x @ dense.T, rtol=1e-5, atol=1e-4)
    np.testing.assert_array_equal(np.asarray(got[1]), weights["B"].astype(np.float32))


def test_matmul_nbits_beyond_the_budget_of_f32_weights_dequantizes_per_call(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Weights whose f32 form would pass the budget (a quarter of the memory by default) are not kept:
    TEMPLATE and XLA dequantize them each call, with the same results, and say so once."""
    from hetero_sdk_jax.lowering import weights_of

    rng = np.random.default_rng(24)
    k, n = 512, 256
    model, feeds, expected = _step_model(rng, k, n)
    gc.collect()
    monkeypatch.setattr(PREPARED, "budget_bytes", PREPARED.held_bytes + 4 * n * k - 1)
    monkeypatch.setattr(PREPARED, "_said_over", False)
    kept = len(PREPARED)
    with caplog.at_level("INFO", logger="hetero_sdk_contrib.ops_matmul_nbits"):
        for device in ("TEMPLATE", "XLA"):
            np.testing.assert_allclose(run_sdk(model, feeds, device)[0], expected, rtol=1e-5, atol=1e-5, err_msg=device)
    assert len(PREPARED) == kept
    assert caplog.text.count("dequantized each call") == 1
    held = weights_of(core().read_model(model))
    assert [(w.dtype, w.shape) for w in held] == [(np.dtype(np.uint8), (n, k // 32, 16))]  # the packed bytes
