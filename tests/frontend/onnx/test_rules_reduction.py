"""The reduction rules compute what ONNX Runtime computes: axes as an attribute (before opset 13 for
ReduceSum, 18 for the others) or an input, negative axes, ``keepdims`` and ``noop_with_empty_axes``."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from onnx import helper
from onnx.reference import ReferenceEvaluator
from onnx_models import FEW, check, graph_model, node_model, value_info

F32 = np.float32
REDUCTIONS = [
    "ReduceSum",
    "ReduceMean",
    "ReduceMax",
    "ReduceMin",
    "ReduceProd",
    "ReduceL1",
    "ReduceL2",
    "ReduceSumSquare",
    "ReduceLogSum",
    "ReduceLogSumExp",
]
AXES_INPUT_SINCE = {name: 13 if name == "ReduceSum" else 18 for name in REDUCTIONS}
RNG = np.random.default_rng(3)


def _x() -> np.ndarray:
    return RNG.uniform(0.5, 2.0, (2, 3, 4)).astype(F32)  # positive: ReduceLogSum is defined


def _model(op_type: str, opset: int, axes: list[int] | None, constant: bool = True, **attrs: int):  # type: ignore[no-untyped-def]
    if opset < AXES_INPUT_SINCE[op_type]:
        return node_model(op_type, {"x": _x()}, opset, **({} if axes is None else {"axes": axes}), **attrs)
    given = None if axes is None else np.array(axes, np.int64)
    return node_model(op_type, {"x": _x(), "axes": given}, opset, constants=["axes"] if constant else [], **attrs)


@pytest.mark.parametrize("op_type", REDUCTIONS)
@pytest.mark.parametrize("new_rule", [False, True])
@given(axes=st.sampled_from([None, [0], [-1], [0, 2], [-2, -1]]), keepdims=st.sampled_from([0, 1]))
@FEW
def test_reductions_in_both_rules_match_onnxruntime(
    op_type: str, new_rule: bool, axes: list[int] | None, keepdims: int
) -> None:
    opset = AXES_INPUT_SINCE[op_type] if new_rule else 11
    model, feeds = _model(op_type, opset, axes, keepdims=keepdims)
    check(model, feeds, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("op_type", ["ReduceSum", "ReduceMean", "ReduceMax", "ReduceL2"])
def test_reductions_on_xla_match_onnxruntime(op_type: str) -> None:
    model, feeds = _model(op_type, AXES_INPUT_SINCE[op_type], [1, -1], keepdims=0)
    check(model, feeds, ("XLA",))


@pytest.mark.parametrize("op_type", ["ReduceSum", "ReduceMax"])
def test_empty_axes_with_noop_returns_the_input_and_without_reduces_everything(op_type: str) -> None:
    opset = AXES_INPUT_SINCE[op_type]
    model, feeds = _model(op_type, opset, None, noop_with_empty_axes=1)
    check(model, feeds, expected=[feeds["x"]])
    model, feeds = _model(op_type, opset, [], noop_with_empty_axes=1)
    check(model, feeds, expected=[feeds["x"]])
    model, feeds = _model(op_type, opset, None)
    want = check(model, feeds)
    assert want[0].shape == (1, 1, 1)


def test_reduce_sum_with_runtime_axes() -> None:
    node = helper.make_node("ReduceSum", ["x", "axes"], ["y"], keepdims=0)
    model = graph_model(
        [node], [value_info("x", F32, [2, 3, 4]), value_info("axes", np.int64, [2])], [value_info("y", F32, ["d"])], 13
    )
    check(model, {"x": _x(), "axes": np.array([0, -1], np.int64)})


def test_integer_reductions_keep_their_type() -> None:
    x = np.arange(24, dtype=np.int64).reshape(2, 3, 4) - 10
    for op_type in ("ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd"):
        model, feeds = node_model(op_type, {"x": x}, 11, axes=[1])
        check(model, feeds)


@pytest.mark.parametrize("op_type", ["ReduceMax", "ReduceMin"])
@pytest.mark.parametrize("keepdims", [0, 1])
def test_max_and_min_of_booleans_are_any_and_all(op_type: str, keepdims: int) -> None:
    x = np.array([[True, False, True], [False, False, False], [True, True, True]])
    model, feeds = node_model(
        op_type, {"x": x, "axes": np.array([1], np.int64)}, 20, constants=["axes"], keepdims=keepdims
    )
    expected = (x.any if op_type == "ReduceMax" else x.all)(axis=1, keepdims=bool(keepdims))
    check(model, feeds, expected=[expected])


@pytest.mark.parametrize(("exclusive", "reverse"), [(0, 0), (1, 0), (0, 1), (1, 1)])
def test_cum_prod_matches_onnx_reference(exclusive: int, reverse: int) -> None:
    # ONNX Runtime has no CumProd kernel yet: ONNX's reference evaluator is the oracle
    x = np.array([[1.0, 2.0, -3.0], [0.5, 4.0, 2.0]], np.float32)
    inputs = {"x": x, "axis": np.array(1, np.int64)}
    model, feeds = node_model("CumProd", inputs, 26, constants=["axis"], exclusive=exclusive, reverse=reverse)
    want = ReferenceEvaluator(model).run(None, feeds)
    check(model, feeds, ("TEMPLATE", "XLA"), expected=want)


@pytest.mark.parametrize(("op_type", "infinity"), [("ReduceMax", -np.inf), ("ReduceMin", np.inf)])
def test_max_and_min_of_nothing_are_infinite(op_type: str, infinity: float) -> None:
    x = np.zeros((2, 0, 4), np.float32)
    model, feeds = node_model(op_type, {"x": x, "axes": np.array([1], np.int64)}, 18, constants=["axes"])
    check(model, feeds, ("TEMPLATE", "XLA"), expected=[np.full((2, 1, 4), infinity, np.float32)])
    model, feeds = node_model(op_type, {"x": x, "axes": np.array([2], np.int64)}, 18, constants=["axes"])
    check(model, feeds, ("TEMPLATE", "XLA"), expected=[np.zeros((2, 0, 1), np.float32)])  # nothing reduced empty
