"""TEMPLATE's causal-mask fusion: transformers' exported causal-and-padding mask (Range, Unsqueeze, LessEqual,
GatherND over index grids, Broadcast, Select: ~22 ops) becomes one ``TemplateCausalMask`` whose values equal
numpy's mask written here and TEMPLATE's unfused kernels, bit for bit; a padding mask too short for the step
fails naming the node; blocks off the pattern stay."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hetero_sdk as hs
from hetero_sdk import opset
from hetero_sdk.errors import InferenceError, ModelValidationError
from template_plugin.causal_mask import causal_mask
from template_plugin.transformations import transform_model

LOWEST = np.float32(-3.4028234663852886e38)


def _kinds(model: hs.Model) -> list[str]:
    return [n.type_name for n in model.get_ops() if n.type_name not in ("Parameter", "Constant", "Result")]


def _template(model: hs.Model, *, fuse: bool) -> tuple[hs.CompiledModel, hs.Model]:
    transformed = model.clone()
    transform_model(transformed, disabled=() if fuse else ("TemplateCausalMaskFusion",))
    compiled = hs.Core().compile_model(transformed, "TEMPLATE", {"TEMPLATE_DISABLE_TRANSFORMATIONS": True})
    return compiled, transformed


def _ints(*values: int) -> np.ndarray:
    return np.array(values, np.int64)


def _mask_block(
    *, constant_and: bool | None = True, maximum_swapped: bool = False, other_grid: bool = False
) -> hs.Model:
    """The mask as torch exports transformers' sdpa mask: the past length read from a cache's shape, the
    query length from the ids', the padding mask read at (b, j) by a GatherND of index grids."""
    ids = opset.parameter([-1, -1], np.int64, name="input_ids")
    mask = opset.parameter([-1, -1], np.int64, name="attention_mask")
    cache = opset.parameter([-1, 2, -1, 4], np.float32, name="past")

    def dim(x, i):
        return opset.slice(opset.shape_of(x), _ints(i), _ints(i + 1), _ints(1))

    seq_v, past_v, batch_v = dim(ids, 1), dim(cache, 2), dim(cache, 0)
    seq, past, batch = (opset.squeeze(v) for v in (seq_v, past_v, batch_v))
    zero, one = np.array(0, np.int64), np.array(1, np.int64)
    positions = opset.add(opset.range(zero, seq, one, np.int64), past, name="positions")
    total = opset.add(past, seq)
    j = opset.unsqueeze(opset.unsqueeze(opset.range(zero, total, one, np.int64), _ints(0, 1)), _ints(2))
    i = opset.unsqueeze(opset.unsqueeze(positions, _ints(0, 1)), _ints(3))
    causal = opset.less_equal(j, i)
    if constant_and is not None:
        causal = opset.logical_and(np.array(constant_and), causal)
    b = opset.unsqueeze(opset.unsqueeze(opset.range(zero, batch, one, np.int64), _ints(1, 2)), _ints(3))
    grid = opset.shape_of(opset.maximum(j, b) if maximum_swapped else opset.maximum(b, j))
    rows = opset.unsqueeze(opset.broadcast(b, grid, mode="bidirectional"), _ints(-1))
    columns = opset.unsqueeze(opset.broadcast(j, grid, mode="bidirectional"), _ints(-1))
    indices = opset.concat([columns, rows] if other_grid else [rows, columns], -1)
    padding = opset.gather_nd(opset.convert(mask, "boolean"), indices, 0)
    both = opset.logical_and(causal, padding)
    shape = opset.concat([batch_v, _ints(1), seq_v, opset.reshape(total, _ints(-1), True)], 0)
    expanded = opset.broadcast(both, shape, mode="bidirectional")
    bias = opset.select(expanded, np.array(0.0, np.float32), np.array(LOWEST), name="bias")
    bias.output(0).set_names({"bias"})
    return hs.Model([bias, opset.multiply(opset.convert(positions, "f32"), np.float32(2))], [ids, mask, cache])


@functools.cache
def _compiled(maximum_swapped: bool) -> tuple[hs.CompiledModel, hs.Model, hs.CompiledModel]:
    model = _mask_block(maximum_swapped=maximum_swapped)
    fused, transformed = _template(model, fuse=True)
    return fused, transformed, _template(model, fuse=False)[0]


def _expected(padding: np.ndarray, batch: int, seq: int, past: int) -> np.ndarray:
    total = past + seq
    causal = np.arange(total)[None, :] <= np.arange(past, total)[:, None]
    held = causal[None, None] & (padding[:batch, :total] != 0)[:, None, None, :]
    return np.where(held, np.float32(0), LOWEST)


@settings(max_examples=30, deadline=None)
@given(
    batch=st.integers(1, 3),
    seq=st.integers(1, 4),
    past=st.integers(0, 6),
    extra=st.integers(0, 3),
    maximum_swapped=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_a_causal_mask_fuses_and_computes_as_numpy(batch, seq, past, extra, maximum_swapped, seed) -> None:
    fused, transformed, unfused = _compiled(maximum_swapped)
    kinds = _kinds(transformed)
    assert kinds.count("TemplateCausalMask") == 1
    assert not {"GatherND", "LessEqual", "Select", "Maximum", "LogicalAnd"} & set(kinds)
    rng = np.random.default_rng(seed)
    padding = rng.integers(0, 3, (batch, past + seq + extra)).astype(np.int64)  # 2 counts as attended
    inputs = [np.zeros((batch, seq), np.int64), padding, np.zeros((batch, 2, past, 4), np.float32)]
    result = fused(inputs)
    bias, scaled = result[0], result[1]
    np.testing.assert_array_equal(bias, _expected(padding, batch, seq, past))
    np.testing.assert_array_equal(bias, unfused(inputs)[0])
    np.testing.assert_array_equal(scaled, np.arange(past, past + seq, dtype=np.float32) * 2)


@pytest.mark.parametrize("constant_and", [None, False])
def test_without_or_with_a_false_conjunct(constant_and) -> None:
    model = _mask_block(constant_and=constant_and)
    fused, transformed = _template(model, fuse=True)
    assert "TemplateCausalMask" in _kinds(transformed)
    padding = np.ones((1, 5), np.int64)
    inputs = [np.zeros((1, 2), np.int64), padding, np.zeros((1, 2, 3, 4), np.float32)]
    expected = _expected(padding, 1, 2, 3) if constant_and is None else np.full((1, 1, 2, 5), LOWEST)
    np.testing.assert_array_equal(fused(inputs)[0], expected)


def test_a_padding_mask_shorter_than_the_step_fails_naming_the_node() -> None:
    fused, _ = _template(_mask_block(), fuse=True)
    with pytest.raises(InferenceError, match=r"'bias'.*attention mask"):
        fused([np.zeros((1, 1), np.int64), np.ones((1, 3), np.int64), np.zeros((1, 2, 3, 4), np.float32)])


def test_index_grids_in_another_order_stay_unfused() -> None:
    _, transformed = _template(_mask_block(other_grid=True), fuse=True)
    assert "GatherND" in _kinds(transformed) and "TemplateCausalMask" not in _kinds(transformed)


def test_a_bad_causal_mask_node_raises_naming_it() -> None:
    mask = opset.parameter([-1], np.int64, name="mask")
    one = np.array(1, np.int64)
    with pytest.raises(ModelValidationError, match=r"'m': mask"):
        causal_mask(mask, np.arange(2), one, one, _ints(1, 1, 2, 2), np.float32(0), LOWEST, name="m")
