"""An If whose branches give different ranks: its output has a dynamic rank (``PartialShape.dynamic()``),
TEMPLATE runs it, the ops after it that can take any rank do, those that need one say so, XLA declines it
with the reason, and the native format keeps it."""

from __future__ import annotations

import numpy as np
import pytest
from hetero_sdk_jax import XlaPlugin
from hypothesis import given, settings
from hypothesis import strategies as st

import hetero_sdk as hs
from hetero_sdk import opset
from hetero_sdk.errors import DynamicRankError, UnsupportedOperationError
from hetero_sdk.hetero.plugin import HeteroPlugin
from hetero_sdk.serialization import model_from_bytes, model_to_bytes
from hetero_sdk.shape import broadcast_shapes
from template_plugin import TemplatePlugin

F32, I64 = np.float32, np.int64


def _flat_or_kept(cond: hs.Node | hs.Output) -> hs.Node:
    """``If(cond)``: the then body flattens ``x`` (rank 1), the else body keeps it (rank 2)."""
    a, b = opset.parameter([-1, 3], F32, name="a"), opset.parameter([-1, 3], F32, name="b")
    flat = hs.Model([opset.reshape(a, opset.constant(np.array([-1], I64)), special_zero=False)], [a], name="flat")
    kept = hs.Model([opset.relu(b, name="kept")], [b], name="kept")
    x = opset.parameter([-1, 3], F32, name="x")
    return opset.if_op(cond, flat, kept, [x], name="choose")


def _model() -> hs.Model:
    """``y = If(flag)``, then its shape, and ``z = unsqueeze(y, 0) + 1``."""
    flag = opset.parameter([], np.bool_, name="flag")
    choose = _flat_or_kept(flag)
    x = choose.input_value(1).node
    y = choose.output(0)
    shape = opset.shape_of(y, name="shape")
    z = opset.add(opset.unsqueeze(y, opset.constant(np.array([0], I64)), name="lifted"), np.float32(1), name="z")
    return hs.Model([y, shape.output(0), z.output(0)], [flag, x], name="dynamic_rank")


def _core() -> hs.Core:
    return hs.Core(plugins={"TEMPLATE": TemplatePlugin, "XLA": XlaPlugin, "HETERO": HeteroPlugin}, autoload=False)


def test_the_output_of_an_if_whose_branches_differ_in_rank_has_a_dynamic_rank() -> None:
    model = _model()
    y, shape, z = (port.partial_shape for port in model.outputs)
    assert not y.rank_is_static and str(y) == "[...]" and y.is_dynamic and not y.is_static
    assert shape == hs.PartialShape([-1])  # ShapeOf: a vector of unknown length
    assert not z.rank_is_static
    with pytest.raises(DynamicRankError, match="dynamic rank"):
        _ = y.dims
    with pytest.raises(DynamicRankError, match="dynamic rank"):
        _ = y.rank


def test_a_dynamic_rank_is_compatible_with_every_shape_and_merges_to_the_other() -> None:
    dynamic = hs.PartialShape.dynamic()
    assert dynamic.compatible([2, 3]) and dynamic.compatible([]) and hs.PartialShape([2]).compatible(dynamic)
    assert dynamic.merge(hs.PartialShape([2, -1])) == hs.PartialShape([2, -1])
    assert hs.PartialShape([4]).merge(dynamic) == hs.PartialShape([4])
    assert dynamic == hs.PartialShape.dynamic() and dynamic != hs.PartialShape([]) and dynamic != []
    assert hash(dynamic) == hash(hs.PartialShape.dynamic())
    assert not broadcast_shapes(dynamic, hs.PartialShape([3])).rank_is_static  # type: ignore[union-attr]


@given(rows=st.integers(1, 4), flag=st.booleans())
@settings(max_examples=8, deadline=None)
def test_template_runs_either_branch_and_the_ops_after_it(rows: int, flag: bool) -> None:
    x = np.arange(rows * 3, dtype=F32).reshape(rows, 3) - 4
    y = x.reshape(-1) if flag else np.maximum(x, 0)
    compiled = _core().compile_model(_model(), "TEMPLATE")
    got_y, got_shape, got_z = (np.asarray(v) for v in compiled({"flag": np.array(flag), "x": x}).values())
    np.testing.assert_array_equal(got_y, y)
    np.testing.assert_array_equal(got_shape, y.shape)
    np.testing.assert_array_equal(got_z, y[np.newaxis] + 1)


def test_an_op_that_needs_the_rank_says_so_naming_itself() -> None:
    y = _flat_or_kept(opset.parameter([], np.bool_, name="flag")).output(0)
    with pytest.raises(DynamicRankError, match=r"ReduceSum 'needs_rank': an input has a dynamic rank"):
        opset.reduce_sum(y, opset.constant(np.array([-1], I64)), keep_dims=False, name="needs_rank")


def test_xla_declines_it_with_the_reason_and_hetero_runs_it_on_template() -> None:
    core, model = _core(), _model()
    claimed = core.query_model(model, "XLA")
    assert "choose" not in claimed
    with pytest.raises(UnsupportedOperationError, match=r"'choose'.*dynamic rank.*XLA traces static ranks"):
        core.compile_model(model, "XLA")
    x = np.ones((2, 3), F32)
    results = core.compile_model(model, "HETERO:XLA,TEMPLATE")({"flag": np.array(True), "x": x})
    np.testing.assert_array_equal(np.asarray(results[0]), np.ones(6, F32))


def test_a_known_condition_gives_the_rank_of_the_body_it_takes() -> None:
    node = _flat_or_kept(opset.constant(np.array(True)))
    assert node.get_output_partial_shape(0) == hs.PartialShape([-1])


def test_the_native_format_keeps_a_dynamic_rank() -> None:
    again = model_from_bytes(model_to_bytes(_model()))
    assert str(again.outputs[0].partial_shape) == "[...]"
    x = np.ones((2, 3), F32)
    results = _core().compile_model(again, "TEMPLATE")({"flag": np.array(False), "x": x})
    np.testing.assert_array_equal(np.asarray(results[0]), x)
