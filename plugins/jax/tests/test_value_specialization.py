"""Value specialisation: inputs that decide shapes are compiled in, one executable per value; what
XLA cannot run at all (data-dependent output shapes) is declined at compile time."""

from __future__ import annotations

import hetero_sdk as hs
import numpy as np
import pytest
from hetero_sdk import Model, Type, opset
from hetero_sdk.errors import InferenceError, UnsupportedOperationError
from hetero_sdk.hetero.plugin import HeteroPlugin
from hypothesis import given
from hypothesis import strategies as st
from template_plugin import TemplatePlugin
from xla_helpers import OPS, core

from hetero_sdk_jax import XlaPlugin
from hetero_sdk_jax.specialization import MAX_VALUE_ELEMENTS


def _reshape_sum_model() -> Model:
    x = opset.parameter([2, 3, 4], Type.f32, name="x")
    shape = opset.parameter([2], Type.i64, name="shape")
    axes = opset.parameter([1], Type.i64, name="axes")
    flat = opset.reshape(x, shape, special_zero=False, name="flat")
    summed = opset.reduce_sum(flat, axes, keep_dims=True, name="summed")
    return Model([summed], [x, shape, axes], name="reshape_sum")


def test_inputs_that_decide_shapes_are_compiled_per_value_and_reused() -> None:
    compiled = core().compile_model(_reshape_sum_model(), "XLA")
    assert compiled.by_value is not None and compiled.by_value.input_names == ["shape", "axes"]
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)

    def run(shape: list[int], axis: int) -> np.ndarray:
        return compiled([x, np.array(shape, np.int64), np.array([axis], np.int64)]).to_tuple()[0]

    np.testing.assert_array_equal(run([6, 4], 1), np.sum(x.reshape(6, 4), axis=1, keepdims=True))
    assert compiled.by_value.compile_count == 1
    np.testing.assert_array_equal(run([6, 4], 1), np.sum(x.reshape(6, 4), axis=1, keepdims=True))
    assert compiled.by_value.compile_count == 1  # the same values reuse their executable
    np.testing.assert_array_equal(run([4, 6], 0), np.sum(x.reshape(4, 6), axis=0, keepdims=True))
    assert compiled.by_value.compile_count == 2  # new values compile a new one
    kept = compiled.by_value.cached_values
    assert [[v.tolist() for v in values] for values in kept] == [[[6, 4], [1]], [[4, 6], [0]]]


def test_the_cache_keeps_the_last_shape_cache_size_executables() -> None:
    compiled = core().compile_model(_reshape_sum_model(), "XLA", {"XLA_SHAPE_CACHE_SIZE": 2})
    x = np.ones((2, 3, 4), np.float32)
    for shape in ([6, 4], [4, 6], [3, 8]):
        compiled([x, np.array(shape, np.int64), np.array([0], np.int64)])
    assert [values[0].tolist() for values in compiled.by_value.cached_values] == [[4, 6], [3, 8]]
    compiled([x, np.array([6, 4], np.int64), np.array([0], np.int64)])  # evicted: compiled again
    assert compiled.by_value.compile_count == 4


@OPS
@given(
    data=st.lists(st.integers(-50, 50), min_size=1, max_size=12),
    k=st.integers(0, 12),
    start=st.integers(-5, 5),
    step=st.integers(1, 3),
)
def test_topk_and_range_take_k_and_bounds_as_inputs(data: list[int], k: int, start: int, step: int) -> None:
    k = min(k, len(data))
    values = opset.parameter([len(data)], Type.i32, name="values")
    count = opset.parameter([], Type.i64, name="k")
    first = opset.parameter([], Type.i32, name="start")
    stride = opset.parameter([], Type.i32, name="step")
    top = opset.topk(values, count, 0, "max", "value", name="top")
    steps = opset.range(first, opset.add(first, np.int32(7), name="stop"), stride, Type.i32, name="steps")
    model = Model([top.output(0), steps], [values, count, first, stride], name="topk_range")
    got = core().compile_model(model, "XLA")(
        [np.array(data, np.int32), np.array(k, np.int64), np.array(start, np.int32), np.array(step, np.int32)]
    )
    np.testing.assert_array_equal(got.to_tuple()[0], np.sort(np.array(data, np.int32))[::-1][:k])
    np.testing.assert_array_equal(got.to_tuple()[1], np.arange(start, start + 7, step, dtype=np.int32))


def test_values_the_model_rejects_give_a_typed_error_naming_the_input() -> None:
    compiled = core().compile_model(_reshape_sum_model(), "XLA")
    x = np.ones((2, 3, 4), np.float32)
    with pytest.raises(InferenceError, match=r"'shape' = \[5, 5\].*Reshape 'flat'"):
        compiled([x, np.array([5, 5], np.int64), np.array([0], np.int64)])


def test_models_without_such_inputs_keep_one_executable() -> None:
    x = opset.parameter([2, 3], Type.f32, name="x")
    model = Model([opset.reduce_sum(x, [1], keep_dims=False, name="s")], [x], name="plain")
    compiled = core().compile_model(model, "XLA")
    assert compiled.by_value is None
    np.testing.assert_array_equal(compiled([np.ones((2, 3), np.float32)]).to_tuple()[0], [3.0, 3.0])


def test_large_inputs_are_not_specialised_on() -> None:
    x = opset.parameter([MAX_VALUE_ELEMENTS + 1], Type.i64, name="x")
    model = Model(
        [
            opset.reshape(
                opset.constant(np.zeros(6, np.float32)),
                opset.slice(x, [0], [2], [1], name="head"),
                special_zero=False,
                name="r",
            )
        ],
        [x],
        name="large",
    )
    with pytest.raises(UnsupportedOperationError, match=r"Reshape 'r' \(input\(s\) \[1\] must be known"):
        core().compile_model(model, "XLA")


def test_query_claims_shape_operands_given_as_inputs() -> None:
    model = _reshape_sum_model()
    assert set(core().query_model(model, "XLA")) == {n.friendly_name for n in model.get_ops()}


def test_an_exported_model_specialises_again_after_import() -> None:
    compiled = core().compile_model(_reshape_sum_model(), "XLA")
    imported = core().import_model(compiled.export_model(), "XLA")
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    got = imported([x, np.array([3, 8], np.int64), np.array([1], np.int64)]).to_tuple()[0]
    np.testing.assert_array_equal(got, np.sum(x.reshape(3, 8), axis=1, keepdims=True))


def _nonzero_model() -> Model:
    x = opset.parameter([3, 4], Type.f32, name="x")
    doubled = opset.multiply(x, np.float32(2), name="doubled")
    found = opset.non_zero(doubled, Type.i64, name="found")
    return Model([opset.add(found, np.int64(1), name="shifted"), doubled], [x], name="nonzero")


def test_query_declines_data_dependent_shapes_and_what_follows() -> None:
    claimed = core().query_model(_nonzero_model(), "XLA")
    assert {"x", "doubled"} <= set(claimed)
    assert not {"found", "shifted"} & set(claimed)


def test_compile_on_xla_alone_names_the_node_and_the_way_out() -> None:
    with pytest.raises(
        UnsupportedOperationError,
        match=r"NonZero 'found' \(its output shape depends on input values\)"
        r".*HETERO:XLA,TEMPLATE",
    ):
        core().compile_model(_nonzero_model(), "XLA")


def test_hetero_runs_what_xla_declines() -> None:
    x = np.array([[0, 1, 0, 2], [3, 0, 0, 0], [0, 0, 4, 5]], np.float32)
    the_core = hs.Core(plugins={"XLA": XlaPlugin, "TEMPLATE": TemplatePlugin, "HETERO": HeteroPlugin}, autoload=False)
    model = _nonzero_model()
    placement = the_core.query_model(model, "HETERO:XLA,TEMPLATE")
    assert placement["doubled"] == "XLA" and placement["found"] == "TEMPLATE"
    shifted, doubled = the_core.compile_model(model, "HETERO:XLA,TEMPLATE")([x]).to_tuple()
    np.testing.assert_array_equal(shifted, np.stack(np.nonzero(x)).astype(np.int64) + 1)
    np.testing.assert_array_equal(doubled, 2 * x)
