"""XLA_SHAPE_BUCKETS: a dynamic dimension that no op mixes is padded to the next power of two (one
executable per bucket, results of the unpadded input); any other dimension compiles per value."""

from __future__ import annotations

import hetero_sdk as hs
import numpy as np
import pytest
from hetero_sdk import Model, Type, opset
from hetero_sdk.errors import PropertyValueError
from hetero_sdk.reference import evaluate
from hypothesis import given, settings
from hypothesis import strategies as st

from hetero_sdk_jax import XlaPlugin
from hetero_sdk_jax.compiled_model import XlaCompiledModel
from hetero_sdk_jax.shape_buckets import independent_groups, next_bucket

_RNG = np.random.default_rng(7)
_W1 = _RNG.standard_normal((6, 5)).astype(np.float32)
_W2 = _RNG.standard_normal((5, 3)).astype(np.float32)
_FILTERS = _RNG.standard_normal((4, 2, 3, 3)).astype(np.float32)


def _core() -> hs.Core:
    return hs.Core(plugins={"XLA": XlaPlugin}, autoload=False)


def _compile(model: Model, config: dict[str, object] | None = None) -> XlaCompiledModel:
    compiled = _core().compile_model(model, "XLA", config)
    assert isinstance(compiled, XlaCompiledModel)
    return compiled


def _mlp() -> Model:
    x = opset.parameter([-1, 6], Type.f32, name="x")
    hidden = opset.relu(opset.matmul(x, _W1))
    logits = opset.matmul(hidden, _W2)
    return Model([opset.result(opset.softmax(logits, axis=1), name="probs")], [x], name="mlp")


def _mlp_expected(x: np.ndarray) -> np.ndarray:
    logits = np.maximum(x @ _W1, 0) @ _W2
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def _rows(n: int) -> np.ndarray:
    return np.linspace(-3, 3, n * 6, dtype=np.float32).reshape(n, 6) * np.arange(1, n + 1, dtype=np.float32)[:, None]


def test_next_bucket_is_the_next_power_of_two() -> None:
    assert [next_bucket(n) for n in (0, 1, 2, 3, 4, 5, 8, 9, 1000)] == [0, 1, 2, 4, 4, 8, 8, 16, 1024]


def test_a_batch_of_any_size_runs_in_the_executable_of_its_bucket() -> None:
    compiled = _compile(_mlp())
    for n in range(1, 10):
        np.testing.assert_allclose(compiled({"x": _rows(n)})[0], _mlp_expected(_rows(n)), rtol=1e-5, atol=1e-6)
    assert compiled.compile_count == 5  # buckets 1, 2, 4, 8, 16 for batches 1..9
    assert sorted(s[0][0] for s in compiled.cached_shapes) == [1, 2, 4, 8, 16]


def test_exact_compiles_one_executable_per_value() -> None:
    compiled = _compile(_mlp(), {"XLA_SHAPE_BUCKETS": "exact", "XLA_SHAPE_CACHE_SIZE": 16})
    assert compiled.get_property("XLA_SHAPE_BUCKETS") == "EXACT"
    for n in range(1, 10):
        np.testing.assert_allclose(compiled({"x": _rows(n)})[0], _mlp_expected(_rows(n)), rtol=1e-5, atol=1e-6)
    assert compiled.compile_count == 9


@settings(max_examples=15, deadline=None)
@given(st.lists(st.integers(1, 40), min_size=1, max_size=6))
def test_results_are_those_of_the_unpadded_batch_whatever_the_order(sizes: list[int]) -> None:
    compiled = _compile(_mlp())
    for n in sizes:
        np.testing.assert_allclose(compiled({"x": _rows(n)})[0], _mlp_expected(_rows(n)), rtol=1e-5, atol=1e-6)
    assert compiled.compile_count == len({next_bucket(n) for n in sizes})


def _conv_net() -> Model:
    """A convolution over a dynamic batch and width, flattened through its own ShapeOf."""
    x = opset.parameter([-1, 2, 5, -1], Type.f32, name="x")
    conv = opset.relu(opset.convolution(x, _FILTERS, [1, 1], [1, 1], [1, 1], [1, 1]))
    pooled = opset.reduce_mean(conv, np.array([3], np.int64), keep_dims=False)  # [n, 4, 5]
    batch = opset.gather(opset.shape_of(pooled), np.array([0], np.int64), np.array(0, np.int64))
    flat = opset.reshape(pooled, opset.concat([batch, np.array([-1], np.int64)], 0), False)  # [n, 20]
    return Model([opset.result(flat, name="features")], [x], name="conv")


def test_a_convolution_pads_its_batch_but_compiles_its_width_per_value() -> None:
    model = _conv_net()
    assert independent_groups(model) == [(((0, 0),), (0,))]  # the width is mixed by the 3x3 window
    compiled = _compile(model)
    for n, width in [(3, 7), (4, 7), (2, 7), (3, 9)]:
        x = np.random.default_rng(n * width).standard_normal((n, 2, 5, width)).astype(np.float32)
        (expected,) = evaluate(model, [x])
        np.testing.assert_allclose(compiled({"x": x})[0], expected, rtol=1e-4, atol=1e-5)
    assert sorted(s[0] for s in compiled.cached_shapes) == [(2, 2, 5, 7), (4, 2, 5, 7), (4, 2, 5, 9)]


@pytest.mark.parametrize(
    "mixing",
    [
        lambda x: opset.reduce_sum(x, np.array([0], np.int64), keep_dims=True),  # over the batch
        lambda x: opset.softmax(x, axis=0),
        lambda x: opset.matmul(x, x, transpose_a=True),  # x^T x contracts the batch
        lambda x: opset.convert(opset.shape_of(x), Type.f32),  # the size as a value
        lambda x: opset.cum_sum(x, np.array(0, np.int64)),  # an op the rule does not know
    ],
)
def test_a_dimension_an_op_mixes_is_not_padded(mixing) -> None:
    x = opset.parameter([-1, 6], Type.f32, name="x")
    model = Model([opset.result(mixing(x), name="out")], [x], name="mixing")
    assert independent_groups(model) == []
    compiled = _compile(model)
    assert compiled.buckets is None
    value = _rows(3)
    (expected,) = evaluate(model, [value])
    np.testing.assert_allclose(compiled({"x": value})[0], expected, rtol=1e-5, atol=1e-5)
    assert compiled.cached_shapes == [((3, 6),)]


def test_inputs_sharing_a_batch_are_padded_together_and_an_unpadded_one_is_not() -> None:
    a = opset.parameter([-1, 4], Type.f32, name="a")
    b = opset.parameter([-1, 4], Type.f32, name="b")
    bias = opset.parameter([-1], Type.f32, name="bias")
    out = opset.add(opset.multiply(a, b), opset.reduce_sum(bias, np.array([0], np.int64), keep_dims=True))
    model = Model([opset.result(out, name="out")], [a, b, bias], name="shared")
    assert independent_groups(model) == []  # bias's only axis is summed: the batch group fails with it
    joined = Model([opset.result(opset.multiply(a, b), name="out")], [a, b], name="joined")
    assert independent_groups(joined) == [(((0, 0), (1, 0)), (0,))]
    compiled = _compile(joined)
    x, y = _RNG.standard_normal((5, 4)).astype(np.float32), _RNG.standard_normal((5, 4)).astype(np.float32)
    np.testing.assert_allclose(compiled({"a": x, "b": y})[0], x * y, rtol=1e-6)
    assert compiled.cached_shapes == [((8, 4), (8, 4))]


def test_the_bucket_policy_is_checked() -> None:
    with pytest.raises(PropertyValueError, match="XLA_SHAPE_BUCKETS"):
        _core().compile_model(_mlp(), "XLA", {"XLA_SHAPE_BUCKETS": "SOMETIMES"})


_TABLE = np.random.default_rng(11).standard_normal((10, 4)).astype(np.float32)


def test_moves_the_rule_follows_keep_the_rows_of_each_id() -> None:
    """Embedding lookup, transposes, unsqueeze/squeeze, split, concat and a reduction over other axes:
    the padded axis moves, the outputs are sliced along where it ends up."""
    ids = opset.parameter([-1, 3], Type.i64, name="ids")
    embedded = opset.gather(_TABLE, ids, np.array(0, np.int64))  # [n, 3, 4]
    moved = opset.transpose(embedded, np.array([2, 1, 0], np.int64))  # [4, 3, n]
    halves = opset.split(opset.unsqueeze(moved, np.array([0], np.int64)), np.array(1, np.int64), 2)
    joined = opset.concat([halves.output(1), halves.output(0)], 1)  # [1, 4, 3, n]
    summed = opset.reduce_sum(opset.squeeze(joined, np.array([0], np.int64)), np.array([1], np.int64))  # [4, n]
    model = Model([opset.result(summed, name="sums"), opset.result(embedded, name="rows")], [ids], name="moves")
    assert independent_groups(model) == [(((0, 0),), (1, 0))]
    compiled = _compile(model)
    for n in (3, 5):
        chosen = np.arange(n * 3, dtype=np.int64).reshape(n, 3) % 10
        rows = _TABLE[chosen]
        halves_np = np.split(rows.transpose(2, 1, 0)[None], 2, axis=1)
        expected = np.concatenate([halves_np[1], halves_np[0]], 1)[0].sum(1)
        sums, got_rows = compiled({"ids": chosen}).to_tuple()
        np.testing.assert_allclose(sums, expected, rtol=1e-5)
        np.testing.assert_array_equal(got_rows, rows)
    assert sorted(s[0][0] for s in compiled.cached_shapes) == [4, 8]


_STEPS = {
    "relu": lambda x: opset.relu(x),
    "add_row": lambda x: opset.add(x, np.linspace(-1, 1, 6, dtype=np.float32)),
    "matmul": lambda x: opset.matmul(x, np.random.default_rng(5).standard_normal((6, 6)).astype(np.float32)),
    "softmax": lambda x: opset.softmax(x, axis=2),
    "mean_keep": lambda x: opset.multiply(x, opset.reduce_mean(x, np.array([1, 2], np.int64), keep_dims=True)),
    "transpose": lambda x: opset.transpose(opset.transpose(x, np.array([0, 2, 1], np.int64)), [0, 2, 1]),
    "flatten_back": lambda x: opset.reshape(opset.reshape(x, np.array([0, -1], np.int64), True), [-1, 4, 6], False),
    "concat_split": lambda x: opset.split(opset.concat([x, opset.negative(x)], 1), np.array(1, np.int64), 2).output(1),
}


@settings(max_examples=12, deadline=None)
@given(st.lists(st.sampled_from(sorted(_STEPS)), min_size=1, max_size=5), st.integers(1, 9))
def test_random_chains_of_row_wise_ops_pad_the_batch_and_keep_its_results(steps: list[str], n: int) -> None:
    x = opset.parameter([-1, 4, 6], Type.f32, name="x")
    value: object = x
    for step in steps:
        value = _STEPS[step](value)
    model = Model([opset.result(value, name="out")], [x], name="chain")
    assert independent_groups(model) == [(((0, 0),), (0,))]
    compiled = _compile(model)
    batch = np.random.default_rng(n).standard_normal((n, 4, 6)).astype(np.float32)
    (expected,) = evaluate(model, [batch])
    np.testing.assert_allclose(compiled({"x": batch})[0], expected, rtol=1e-4, atol=1e-5)
    assert compiled.cached_shapes == [((next_bucket(n), 4, 6),)]
