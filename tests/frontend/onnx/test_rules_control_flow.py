"""The control-flow rules: an If folded while translating or run at inference, Loop with a trip count,
a condition, scan outputs and tensors captured from the enclosing graph, and Scan, compute what ONNX
Runtime computes."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from onnx import TensorProto, helper
from onnx_models import FEW, check, graph_model, value_info

F32, I64 = np.float32, np.int64


def _branch(name: str, op_type: str, operand: str) -> object:
    """A branch computing ``op_type(x, operand)`` from the enclosing graph's ``x``."""
    node = helper.make_node(op_type, ["x", operand], [f"{name}_out"])
    return helper.make_graph(
        [node], name, [], [helper.make_tensor_value_info(f"{name}_out", TensorProto.FLOAT, [2, 3])]
    )


def _if_model(condition_from_input: bool) -> object:
    nodes = []
    if condition_from_input:
        nodes.append(helper.make_node("ReduceSum", ["x"], ["total"], keepdims=0))
        nodes.append(helper.make_node("Greater", ["total", "zero"], ["cond"]))
    nodes.append(
        helper.make_node(
            "If", ["cond"], ["y"], then_branch=_branch("then", "Add", "one"), else_branch=_branch("else", "Mul", "two")
        )
    )
    initializers = {"one": np.ones((2, 3), F32), "two": np.full((2, 3), 2, F32), "zero": np.array(0, F32)}
    if not condition_from_input:
        initializers["cond"] = np.array(True)
    return graph_model(nodes, [value_info("x", F32, [2, 3])], [value_info("y", F32, [2, 3])], 13, initializers)


@given(x=st.lists(st.floats(-5, 5, width=32), min_size=6, max_size=6))
@FEW
def test_if_with_a_runtime_condition_takes_either_branch(x: list[float]) -> None:
    check(_if_model(True), {"x": np.array(x, F32).reshape(2, 3)})


def test_if_on_xla_and_with_a_known_condition_folded() -> None:
    x = np.arange(6, dtype=F32).reshape(2, 3) - 3
    check(_if_model(True), {"x": x}, ("TEMPLATE", "XLA"))
    check(_if_model(True), {"x": -x}, ("TEMPLATE", "XLA"))
    check(_if_model(False), {"x": x}, ("TEMPLATE", "XLA"), expected=[x + 1])


def _loop_model(trip_count: bool, condition: bool, opset: int = 13) -> object:
    """``acc = acc + i * x`` while ``acc.sum() < limit`` (when ``condition``) for up to ``n`` iterations
    (when ``trip_count``), scanning ``acc`` out each iteration; ``x`` is captured from the outer graph."""
    body_nodes = [
        helper.make_node("Cast", ["i"], ["i_f"], to=TensorProto.FLOAT),
        helper.make_node("Mul", ["i_f", "x"], ["step"]),
        helper.make_node("Add", ["acc_in", "step"], ["acc_out"]),
        helper.make_node("ReduceSum", ["acc_out"], ["total"], keepdims=0),
        helper.make_node("Less", ["total", "limit"], ["cond_out"]),
        helper.make_node("Identity", ["acc_out"], ["scan_out"]),
    ]
    body = helper.make_graph(
        body_nodes,
        "body",
        [
            helper.make_tensor_value_info("i", TensorProto.INT64, []),
            helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
            helper.make_tensor_value_info("acc_in", TensorProto.FLOAT, [3]),
        ],
        [
            helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
            helper.make_tensor_value_info("acc_out", TensorProto.FLOAT, [3]),
            helper.make_tensor_value_info("scan_out", TensorProto.FLOAT, [3]),
        ],
    )
    node = helper.make_node(
        "Loop", ["n" if trip_count else "", "cond" if condition else "", "acc0"], ["acc", "scanned"], body=body
    )
    inputs = [value_info("x", F32, [3]), value_info("acc0", F32, [3]), value_info("limit", F32, [])]
    if trip_count:
        inputs.append(value_info("n", I64, []))
    if condition:
        inputs.append(value_info("cond", np.bool_, []))
    outputs = [value_info("acc", F32, [3]), value_info("scanned", F32, ["steps", 3])]
    return graph_model([node], inputs, outputs, opset)


def _loop_feeds(trip_count: int | None, condition: bool | None, limit: float) -> dict[str, np.ndarray]:
    feeds = {"x": np.array([1, 2, 0.5], F32), "acc0": np.zeros(3, F32), "limit": np.array(limit, F32)}
    if trip_count is not None:
        feeds["n"] = np.array(trip_count, I64)
    if condition is not None:
        feeds["cond"] = np.array(condition)
    return feeds


@pytest.mark.parametrize("opset", [11, 13, 16])
@given(trip=st.integers(0, 6), condition=st.booleans(), limit=st.floats(1, 40, width=32))
@FEW
def test_loop_with_trip_count_and_condition(opset: int, trip: int, condition: bool, limit: float) -> None:
    check(_loop_model(True, True, opset), _loop_feeds(trip, condition, limit))


def test_loop_with_only_a_trip_count_or_only_a_condition() -> None:
    check(_loop_model(True, False), _loop_feeds(4, None, 0.0))
    want = check(_loop_model(False, True), _loop_feeds(None, True, 20.0))
    # acc after k steps is (0+1+...+(k-1)) * x; sum(x) = 3.5: stops at the first k with 3.5 k(k-1)/2 >= 20
    assert want[1].shape == (4, 3)


def test_loop_on_xla_with_a_trip_count() -> None:
    check(_loop_model(True, True), _loop_feeds(5, True, 1000.0), ("TEMPLATE", "HETERO:XLA,TEMPLATE"))


def _zero_trip_loop(carried: list[int | str]) -> object:
    """A Loop carrying ``x`` (declared ``carried``; ``[1]`` in the body) and scanning it each iteration."""
    body = helper.make_graph(
        [helper.make_node("Identity", ["c_in"], ["c_out"]), helper.make_node("Add", ["x_in", "x_in"], ["x_out"]),
         helper.make_node("Identity", ["x_in"], ["scanned"])],
        "body",
        [value_info("i", I64, []), value_info("c_in", np.bool_, []), value_info("x_in", F32, [1])],
        [value_info("c_out", np.bool_, []), value_info("x_out", F32, [1]), value_info("scanned", F32, [1])],
    )  # fmt: skip
    node = helper.make_node("Loop", ["m", "c", "x"], ["last", "stacked"], body=body)
    inputs = [value_info("m", I64, []), value_info("c", np.bool_, []), value_info("x", F32, carried)]
    return graph_model([node], inputs, [value_info("last", F32, [None]), value_info("stacked", F32, [None, None])], 17)


@pytest.mark.parametrize("carried", [[1], ["n"]])
def test_a_loop_that_runs_zero_times_gives_scan_outputs_of_the_bodys_slice_shape(carried: list[int | str]) -> None:
    feeds = {"m": np.array(0, I64), "c": np.array(True), "x": np.ones(1, F32)}
    expected = check(_zero_trip_loop(carried), feeds)  # XLA declines a trip count known only at run time
    assert expected[1].shape == (0, 1)


def _scan_model(reverse: int, axis: int) -> object:
    """A running sum over the scanned axis of ``xs`` ([2, 4] or [4, 2]), scanned out too."""
    body = helper.make_graph(
        [helper.make_node("Add", ["sum_in", "x_t"], ["sum_out"]), helper.make_node("Identity", ["sum_out"], ["out_t"])],
        "body",
        [
            helper.make_tensor_value_info("sum_in", TensorProto.FLOAT, [2]),
            helper.make_tensor_value_info("x_t", TensorProto.FLOAT, [2]),
        ],
        [
            helper.make_tensor_value_info("sum_out", TensorProto.FLOAT, [2]),
            helper.make_tensor_value_info("out_t", TensorProto.FLOAT, [2]),
        ],
    )
    node = helper.make_node(
        "Scan",
        ["s0", "xs"],
        ["s", "ys"],
        body=body,
        num_scan_inputs=1,
        scan_input_axes=[axis],
        scan_input_directions=[reverse],
        scan_output_axes=[axis],
        scan_output_directions=[reverse],
    )
    shape = [4, 2] if axis == 0 else [2, 4]
    return graph_model(
        [node],
        [value_info("s0", F32, [2]), value_info("xs", F32, shape)],
        [value_info("s", F32, [2]), value_info("ys", F32, shape)],
        11,
    )


@pytest.mark.parametrize("reverse", [0, 1])
@pytest.mark.parametrize("axis", [0, 1])
def test_scan_running_sum_on_each_axis_and_direction(reverse: int, axis: int) -> None:
    xs = np.arange(8, dtype=F32).reshape((4, 2) if axis == 0 else (2, 4))
    want = check(_scan_model(reverse, axis), {"s0": np.array([10, 20], F32), "xs": xs})
    along = xs if axis == 0 else xs.T
    running = np.cumsum(along[::-1] if reverse else along, axis=0) + np.array([10, 20], F32)
    np.testing.assert_allclose(want[0], running[-1])


def test_scan_on_xla() -> None:
    xs = np.arange(8, dtype=F32).reshape(4, 2)
    check(_scan_model(0, 0), {"s0": np.zeros(2, F32), "xs": xs}, ("XLA",))


@pytest.mark.parametrize("direction", [0, 1])
def test_scan_8_runs_each_batch_entry_and_stacks_the_results(direction: int) -> None:
    body = helper.make_graph(
        [
            helper.make_node("Add", ["total_in", "row"], ["total_out"]),
            helper.make_node("Identity", ["total_out"], ["seen"]),
        ],
        "body",
        [helper.make_tensor_value_info("total_in", 1, [2]), helper.make_tensor_value_info("row", 1, [2])],
        [helper.make_tensor_value_info("total_out", 1, [2]), helper.make_tensor_value_info("seen", 1, [2])],
    )
    node = helper.make_node("Scan", ["", "init", "xs"], ["total", "partial"], body=body, num_scan_inputs=1,
                            directions=[direction])  # fmt: skip
    init = np.array([[1, 2], [3, 4]], np.float32)
    xs = np.arange(2 * 3 * 2, dtype=np.float32).reshape(2, 3, 2)
    inputs = [helper.make_tensor_value_info("init", 1, [2, 2]), helper.make_tensor_value_info("xs", 1, [2, 3, 2])]
    outputs = [
        helper.make_tensor_value_info("total", 1, [2, 2]),
        helper.make_tensor_value_info("partial", 1, [2, 3, 2]),
    ]
    model = helper.make_model(
        helper.make_graph([node], "g", inputs, outputs), opset_imports=[helper.make_opsetid("", 8)]
    )
    model.ir_version = 8
    ordered = xs[:, ::-1] if direction else xs
    partial = init[:, None] + np.cumsum(ordered, axis=1)
    want = check(model, {"init": init, "xs": xs}, ("TEMPLATE", "XLA"))  # against ONNX Runtime
    np.testing.assert_allclose(want[1], partial)
    np.testing.assert_allclose(want[0], partial[:, -1])
