"""SkipLayerNormalization, SkipSimplifiedLayerNormalization and SimplifiedLayerNormalization against ONNX
Runtime (and numpy written here where ONNX Runtime has no kernel), on TEMPLATE and XLA."""

from __future__ import annotations

import numpy as np
import pytest
from hetero_sdk.errors import HeteroSDKError, UnsupportedOperationError
from hypothesis import given, settings
from hypothesis import strategies as st
from ms_models import check, ms_model, run_sdk
from onnx import helper

FEW = settings(max_examples=6, deadline=None)


def _normal(rng: np.random.Generator, *shape: int, dtype: type = np.float32) -> np.ndarray:
    return rng.standard_normal(shape).astype(dtype)


def _layer_norm(x: np.ndarray, eps: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    x = x.astype(np.float64)
    mean = x.mean(-1, keepdims=True)
    inv_std = 1 / np.sqrt(((x - mean) ** 2).mean(-1, keepdims=True) + eps)
    return (x - mean) * inv_std, mean, inv_std


@pytest.mark.parametrize("beta, bias", [(True, True), (False, True), (True, False), (False, False)])
def test_skip_layer_norm_all_outputs_match_onnx_runtime(beta: bool, bias: bool) -> None:
    rng = np.random.default_rng(1)
    x, skip = _normal(rng, 2, 3, 8), _normal(rng, 2, 3, 8)
    inputs = {"x": x, "skip": skip, "gamma": _normal(rng, 8), "beta": _normal(rng, 8) if beta else None,
              "bias": _normal(rng, 8) if bias else None}  # fmt: skip
    model, feeds = ms_model("SkipLayerNormalization", inputs, ["y", "mean", "inv_std", "sum"], epsilon=1e-5)
    want = check(model, feeds)
    total = x + skip + (inputs["bias"] if bias else 0)
    normalized, mean, inv_std = _layer_norm(total, 1e-5)  # an independent check of the reference itself
    expected = normalized * inputs["gamma"] + (inputs["beta"] if beta else 0)
    np.testing.assert_allclose(want[0], expected, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(want[1], mean, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(want[2], inv_std, rtol=1e-5)
    np.testing.assert_allclose(want[3], total, rtol=1e-6)


@FEW
@given(
    batch=st.integers(1, 3), sequence=st.integers(1, 4), hidden=st.sampled_from([4, 16, 33]),
    broadcast_skip=st.booleans(), tokens=st.booleans(), seed=st.integers(0, 2**16),
)  # fmt: skip
def test_skip_layer_norm_shapes(batch: int, sequence: int, hidden: int, broadcast_skip: bool, tokens: bool,
                                seed: int) -> None:  # fmt: skip
    rng = np.random.default_rng(seed)
    shape = (batch * sequence, hidden) if tokens else (batch, sequence, hidden)
    skip_shape = shape[1:] if broadcast_skip and not tokens else shape
    inputs = {"x": _normal(rng, *shape), "skip": _normal(rng, *skip_shape), "gamma": _normal(rng, hidden)}
    check(*ms_model("SkipLayerNormalization", inputs, ["y", "", "", "sum"]), devices=("TEMPLATE",))


def test_skip_layer_norm_float16_computes_in_float32() -> None:
    rng = np.random.default_rng(2)
    inputs = {k: _normal(rng, *s, dtype=np.float16) for k, s in
              {"x": (2, 3, 16), "skip": (2, 3, 16), "gamma": (16,), "beta": (16,)}.items()}  # fmt: skip
    model, feeds = ms_model("SkipLayerNormalization", inputs, ["y"], epsilon=1e-5)
    total = inputs["x"].astype(np.float32) + inputs["skip"].astype(np.float32)
    normalized = _layer_norm(total, 1e-5)[0]
    expected = (normalized * inputs["gamma"].astype(np.float32) + inputs["beta"]).astype(np.float16)
    check(model, feeds, expected=[expected], rtol=2e-3, atol=2e-3)


@pytest.mark.parametrize("bias", [True, False])
def test_skip_simplified_layer_norm_matches_onnx_runtime(bias: bool) -> None:
    rng = np.random.default_rng(3)
    x, skip, gamma = _normal(rng, 2, 5, 12), _normal(rng, 2, 5, 12), _normal(rng, 12)
    inputs = {"x": x, "skip": skip, "gamma": gamma, "bias": _normal(rng, 12) if bias else None}
    model, feeds = ms_model("SkipSimplifiedLayerNormalization", inputs, ["y", "mean", "inv_std", "sum"])
    want = check(model, feeds)
    total = (x + skip + (inputs["bias"] if bias else 0)).astype(np.float64)
    inv_std = 1 / np.sqrt((total**2).mean(-1, keepdims=True) + 1e-12)
    np.testing.assert_allclose(want[0], total * inv_std * gamma, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(want[2], inv_std, rtol=1e-5)


@pytest.mark.parametrize("axis", [-1, -2, 1])
def test_simplified_layer_norm_com_microsoft(axis: int) -> None:
    rng = np.random.default_rng(4)
    x = _normal(rng, 2, 3, 6)
    scale = _normal(rng, *x.shape[axis % 3 :])
    model, feeds = ms_model("SimplifiedLayerNormalization", {"x": x, "scale": scale}, ["y", "inv_std"],
                            axis=axis, epsilon=1e-6)  # fmt: skip
    axes = tuple(range(axis % 3, 3))
    inv_std = 1 / np.sqrt((x.astype(np.float64) ** 2).mean(axes, keepdims=True) + 1e-6)
    check(model, feeds, expected=[(x * inv_std * scale).astype(np.float32), inv_std.astype(np.float32)])


def test_simplified_layer_norm_default_domain_matches_onnx_runtime() -> None:
    """onnxruntime-genai writes SimplifiedLayerNormalization in the default domain, where ONNX Runtime
    registers it (ONNX itself has no such op)."""
    rng = np.random.default_rng(5)
    inputs = {"x": _normal(rng, 2, 3, 8), "scale": _normal(rng, 8)}
    check(*ms_model("SimplifiedLayerNormalization", inputs, ["y"], domain="", epsilon=1e-6))


def test_simplified_layer_norm_refuses_other_stash_types() -> None:
    rng = np.random.default_rng(6)
    model, feeds = ms_model("SimplifiedLayerNormalization", {"x": _normal(rng, 2, 4), "scale": _normal(rng, 4)},
                            stash_type=0)  # fmt: skip
    model.graph.output[0].type.tensor_type.shape.dim.add().dim_value = 2
    model.graph.output[0].type.tensor_type.shape.dim.add().dim_value = 4
    with pytest.raises(UnsupportedOperationError, match="stash_type=0"):
        run_sdk(model, feeds, "TEMPLATE")


def test_skip_layer_norm_gamma_of_the_wrong_size_is_named() -> None:
    rng = np.random.default_rng(7)
    inputs = {"x": _normal(rng, 2, 3, 8), "skip": _normal(rng, 2, 3, 8), "gamma": _normal(rng, 5)}
    model, feeds = ms_model("SkipLayerNormalization", inputs)
    model.graph.output[0].CopyFrom(helper.make_tensor_value_info("y", 1, [2, 3, 8]))
    with pytest.raises(HeteroSDKError, match="gamma"):
        run_sdk(model, feeds, "TEMPLATE")


def _embedding_inputs(rng: np.random.Generator, batch: int, sequence: int, hidden: int) -> dict[str, np.ndarray]:
    vocabulary, positions, segments = 11, sequence + 2, 2
    return {
        "ids": rng.integers(0, vocabulary, (batch, sequence)).astype(np.int32),
        "segments": rng.integers(0, segments, (batch, sequence)).astype(np.int32),
        "words": _normal(rng, vocabulary, hidden),
        "positions": _normal(rng, positions, hidden),
        "segment_table": _normal(rng, segments, hidden),
        "gamma": _normal(rng, hidden),
        "beta": _normal(rng, hidden),
    }


@pytest.mark.parametrize("segments, mask, position_ids", [
    (True, True, False), (False, False, False), (True, False, True), (True, True, True), (False, True, True),
])  # fmt: skip
def test_embed_layer_norm_matches_onnx_runtime(segments: bool, mask: bool, position_ids: bool) -> None:
    rng = np.random.default_rng(8)
    batch, sequence, hidden = 2, 5, 8
    inputs: dict[str, np.ndarray | None] = dict(_embedding_inputs(rng, batch, sequence, hidden))
    if not segments:
        inputs["segments"] = inputs["segment_table"] = None
    inputs["mask"] = np.array([[1, 1, 1, 0, 0], [1, 0, 1, 1, 1]], np.int32) if mask else None
    inputs["position_ids"] = rng.permutation(sequence + 2)[:sequence][None].astype(np.int32) if position_ids else None
    constants = [k for k in ("words", "positions", "segment_table", "gamma", "beta") if inputs[k] is not None]
    model, feeds = ms_model(
        "EmbedLayerNormalization", inputs, ["y", "mask_index", "sum"], constants=constants,
        output_types={"mask_index": np.int32},
    )  # fmt: skip
    want = check(model, feeds)
    ids = inputs["ids"]
    where = np.arange(sequence)[None] if inputs["position_ids"] is None else inputs["position_ids"]
    total = inputs["words"][ids] + inputs["positions"][where]
    if segments:
        total = total + inputs["segment_table"][inputs["segments"]]
    normalized = _layer_norm(total, 1e-12)[0]
    np.testing.assert_allclose(want[0], normalized * inputs["gamma"] + inputs["beta"], rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(want[1], [3, 4] if mask else [0, 0])
    np.testing.assert_allclose(want[2], total, rtol=1e-6)
