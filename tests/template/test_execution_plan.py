"""A kernel that fails while TEMPLATE runs a plan gives an InferenceError naming the node it ran for (type
and friendly name) and the cause, chained, rather than the bare ZeroDivisionError or MemoryError."""

from __future__ import annotations

import numpy as np
import pytest

import hetero_sdk as hs
from hetero_sdk import opset
from hetero_sdk.errors import InferenceError


@pytest.fixture
def ranged(core: hs.Core) -> hs.CompiledModel:
    a, b, c = (opset.parameter([], hs.Type.f32, name=n) for n in "abc")
    return core.compile_model(
        hs.Model([opset.range(a, b, c, hs.Type.f32, name="rng")], [a, b, c], name="g"), "TEMPLATE"
    )


def test_a_range_step_of_zero_at_run_time_names_the_node_and_says_so(ranged: hs.CompiledModel) -> None:
    with pytest.raises(InferenceError, match=r"Range 'rng'.*step is 0") as info:
        ranged({"a": np.float32(0), "b": np.float32(1), "c": np.float32(0)})
    assert info.value.__cause__ is not None


def test_a_range_with_a_non_zero_step_still_counts_like_numpy(ranged: hs.CompiledModel) -> None:
    got = ranged({"a": np.float32(1), "b": np.float32(3), "c": np.float32(0.5)})[0]
    np.testing.assert_array_equal(got, np.arange(1, 3, 0.5, dtype=np.float32))


def test_an_output_too_big_for_memory_names_the_node_and_the_memory_error(core: hs.Core) -> None:
    x = opset.parameter([2], hs.Type.f32, name="x")
    repeats = opset.parameter([1], hs.Type.i64, name="r")
    compiled = core.compile_model(hs.Model([opset.tile(x, repeats, name="tl")], [x, repeats], name="t"), "TEMPLATE")
    with pytest.raises(InferenceError, match=r"Tile 'tl'.*MemoryError.*does not fit in memory") as info:
        compiled({"x": np.ones(2, np.float32), "r": np.array([2**45], np.int64)})
    assert isinstance(info.value.__cause__, MemoryError)
