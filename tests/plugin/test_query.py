"""get_supported_nodes: the seeds' four query_model steps, mapped back through fused names."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hetero_sdk as hs
from hetero_sdk import opset
from hetero_sdk.ops.linear_algebra import matmul
from hetero_sdk.plugin.query import get_supported_nodes
from hetero_sdk.transformations import (
    ConstantFolding,
    FunctionPass,
    NopElimination,
    PassManager,
    fused_names,
    replace_node,
    set_fused_names,
)
from template_plugin.transformations import transform_model


def _no_transform(model: hs.Model) -> None:
    return None


def _rejecting(*types: str) -> Callable[[hs.Node], bool]:
    return lambda node: node.type_name not in types


def _passes(*passes) -> Callable[[hs.Model], None]:
    def transform(model: hs.Model) -> None:
        manager = PassManager()
        for p in passes:
            manager.register_pass(p)
        manager.run_passes(model)

    return transform


def _names(model: hs.Model) -> set[str]:
    return {n.friendly_name for n in model.get_ops()}


def _dense_model(activation: bool = True) -> hs.Model:
    x = opset.parameter([2, 4], name="x")
    w = opset.constant(np.ones((4, 3), np.float32), name="w")
    b = opset.constant(np.float32([1, 2, 3]), name="b")
    y = opset.add(matmul(x, w, name="mm"), b, name="add")
    if activation:
        y = opset.relu(y, name="relu")
    out = opset.result(y, name="out")
    return hs.Model([out], [x], name="dense")


def test_without_transformations_every_supported_op_is_claimed() -> None:
    model = _dense_model()
    assert get_supported_nodes(model, _no_transform, lambda n: True) == _names(model)


def test_a_fused_pattern_is_claimed_when_the_fused_op_is_supported() -> None:
    model = _dense_model()
    claimed = get_supported_nodes(model, transform_model, _rejecting("MatMul", "Add", "Relu"))
    assert claimed == {"x", "w", "b", "mm", "add", "relu", "out"}


def test_no_op_of_a_rejected_fused_op_is_claimed_nor_its_inputs_and_result() -> None:
    model = _dense_model()
    assert get_supported_nodes(model, transform_model, _rejecting("TemplateFullyConnected")) == set()


def test_without_the_fusion_each_original_op_is_judged_alone() -> None:
    model = _dense_model(activation=False)
    claimed = get_supported_nodes(model, _no_transform, _rejecting("Add"))
    assert claimed == {"x", "w", "mm"}


def test_an_op_split_into_several_ops_is_claimed_only_when_all_are_supported() -> None:
    def decompose(model: hs.Model) -> bool:
        for node in model.get_ops():
            if node.type_name == "Subtract":
                a, b = node.input_values()
                replace_node(model, node, opset.add(a, opset.negative(b)))
                for new in model.get_ops():
                    if new.type_name == "Negative":
                        set_fused_names(new, ["sub"])
                return True
        return False

    x = opset.parameter([2], name="x")
    z = opset.parameter([2], name="z")
    model = hs.Model([opset.result(opset.subtract(x, z, name="sub"), name="out")], [x, z])
    transform = _passes(FunctionPass("Decompose", decompose))
    assert get_supported_nodes(model, transform, _rejecting("Subtract")) == {"x", "z", "sub", "out"}
    assert get_supported_nodes(model, transform, _rejecting("Negative")) == set()
    assert get_supported_nodes(model, transform, _rejecting("Add")) == set()


def _shape_model() -> hs.Model:
    x = opset.parameter([2, 3, 4], name="x")
    s = opset.shape_of(x, name="s")
    g = opset.gather(s, opset.constant(np.int64([0]), name="idx"), opset.constant(np.int64(0), name="axis"), name="g")
    target = opset.concat([g, opset.constant(np.int64([-1]), name="minus1")], 0, name="cat")
    flat = opset.reshape(x, target, False, name="flat")
    return hs.Model([opset.result(opset.relu(flat, name="r"), name="out")], [x])


def test_a_folded_shape_subgraph_is_claimed_even_when_its_ops_are_not_supported() -> None:
    model = _shape_model()
    claimed = get_supported_nodes(model, _passes(ConstantFolding()), _rejecting("ShapeOf", "Gather", "Concat"))
    assert claimed == _names(model)


def test_a_folded_constant_feeding_only_rejected_ops_is_not_claimed() -> None:
    model = _shape_model()
    claimed = get_supported_nodes(model, _passes(ConstantFolding()), _rejecting("Reshape"))
    assert claimed == {"r", "out"}
    claimed = get_supported_nodes(model, _passes(ConstantFolding()), _rejecting("Relu"))
    assert claimed == {"s", "idx", "axis", "g", "minus1", "cat", "flat", "x"}


def test_constants_of_unsupported_consumers_are_not_claimed_but_shared_ones_are() -> None:
    x = opset.parameter([3], name="x")
    only_rejected = opset.constant(np.float32([1, 2, 3]), name="c_rejected")
    shared = opset.constant(np.float32([4, 5, 6]), name="c_shared")
    e = opset.exp(opset.add(x, only_rejected, name="add"), name="exp")
    m = opset.multiply(opset.multiply(e, shared, name="mul1"), opset.divide(x, shared, name="div"), name="mul2")
    model = hs.Model([opset.result(m, name="out")], [x])
    claimed = get_supported_nodes(model, _no_transform, _rejecting("Add", "Divide"))
    assert claimed == {"exp", "c_shared", "mul1", "mul2", "out"}  # x feeds only Add and Divide


def test_a_parameter_is_claimed_when_one_consumer_is() -> None:
    x = opset.parameter([3], name="x")
    model = hs.Model(
        [opset.result(opset.exp(x, name="e"), name="o1"), opset.result(opset.sin(x, name="s"), name="o2")], [x]
    )
    assert get_supported_nodes(model, _no_transform, _rejecting("Sin")) == {"x", "e", "o1"}
    assert get_supported_nodes(model, _no_transform, _rejecting("Sin", "Exp")) == set()


def test_an_unused_parameter_is_claimed_when_supported() -> None:
    x = opset.parameter([3], name="x")
    unused = opset.parameter([3], name="unused")
    model = hs.Model([opset.result(opset.exp(x, name="e"), name="o")], [x, unused])
    assert get_supported_nodes(model, _no_transform, lambda n: True) == {"x", "unused", "e", "o"}
    assert "unused" not in get_supported_nodes(model, _no_transform, _rejecting("Parameter"))


def test_a_result_follows_its_producer_whatever_the_device_says_about_results() -> None:
    x = opset.parameter([3], name="x")
    model = hs.Model([opset.result(opset.exp(x, name="e"), name="o")], [x])
    assert get_supported_nodes(model, _no_transform, _rejecting("Result")) == {"x", "e", "o"}
    assert get_supported_nodes(model, _no_transform, _rejecting("Exp")) == set()


def test_an_eliminated_op_follows_the_op_that_absorbed_it() -> None:
    x = opset.parameter([3], name="x")
    r = opset.relu(x, name="r")
    c = opset.convert(r, hs.Type.f32, name="c")
    model = hs.Model([opset.result(opset.exp(c, name="e"), name="o")], [x])
    transform = _passes(NopElimination())
    assert get_supported_nodes(model, transform, _rejecting("Convert")) == _names(model)
    assert get_supported_nodes(model, transform, _rejecting("Relu")) == {"e", "o"}


def test_an_op_removed_without_a_trace_counts_as_supported() -> None:
    def drop_negatives(model: hs.Model) -> bool:
        for node in model.get_ops():
            if node.type_name == "Negative":  # a pass that forgets to record what it removed
                replace_node(model, node, opset.abs(node.input_value(0)))
                next(n for n in model.get_ops() if n.type_name == "Abs").get_rt_info().pop("fused_names")
                return True
        return False

    x = opset.parameter([3], name="x")
    model = hs.Model([opset.result(opset.exp(opset.negative(x, name="neg"), name="e"), name="o")], [x])
    claimed = get_supported_nodes(model, _passes(FunctionPass("Drop", drop_negatives)), _rejecting("Negative"))
    assert claimed == {"x", "neg", "e", "o"}


def test_the_model_is_not_modified() -> None:
    model = _dense_model()
    model.get_ops()[1].get_rt_info()["affinity"] = "TEMPLATE"
    before = [(n.friendly_name, n.type_name, dict(n.get_rt_info()), sorted(n.output(0).names)) for n in model.get_ops()]
    get_supported_nodes(model, transform_model, lambda n: True)
    after = [(n.friendly_name, n.type_name, dict(n.get_rt_info()), sorted(n.output(0).names)) for n in model.get_ops()]
    assert after == before


def test_records_already_on_the_original_model_are_ignored() -> None:
    model = _dense_model()
    for node in model.get_ops():
        set_fused_names(node, ["stale_from_an_earlier_compile"])
    claimed = get_supported_nodes(model, transform_model, lambda n: True)
    assert claimed == _names(model)
    assert all(fused_names(n) == {"stale_from_an_earlier_compile"} for n in model.get_ops())


def test_errors_of_the_transformation_propagate() -> None:
    def broken(model: hs.Model) -> None:
        raise RuntimeError("plugin bug")

    with pytest.raises(RuntimeError, match="plugin bug"):
        get_supported_nodes(_dense_model(), broken, lambda n: True)


def _mixed_model() -> hs.Model:
    x = opset.parameter([2, 4], name="x")
    product = matmul(x, opset.constant(np.ones((4, 4), np.float32), name="w"), name="mm")
    dense = opset.relu(opset.add(product, np.float32(1), name="ad"), name="act")
    same = opset.convert(dense, hs.Type.f32, name="same")
    flat = opset.reshape(same, opset.shape_of(x, name="shp"), False, name="flat")
    chosen = opset.select(opset.constant(np.bool_(True), name="cond"), flat, opset.exp(x, name="ex"), name="sel")
    return hs.Model([opset.result(opset.sin(chosen, name="sin"), name="out"), opset.result(dense, name="out2")], [x])


TYPES = ["MatMul", "Add", "Relu", "Convert", "Reshape", "ShapeOf", "Select", "Exp", "Sin", "TemplateFullyConnected"]


@settings(max_examples=40, deadline=None)
@given(rejected=st.sets(st.sampled_from(TYPES)), more=st.sets(st.sampled_from(TYPES)))
def test_claims_follow_the_rules_and_shrink_when_more_is_rejected(rejected, more) -> None:
    model = _mixed_model()
    claimed = get_supported_nodes(model, transform_model, _rejecting(*rejected))
    users = model.consumers()
    for node in model.get_ops():
        name = node.friendly_name
        if node.type_name == "Result":
            assert (name in claimed) == (node.input_value(0).node.friendly_name in claimed)
        elif node.type_name in ("Parameter", "Constant") and name in claimed:
            assert any(n.friendly_name in claimed for n, _ in users[node.output(0)])
    assert get_supported_nodes(model, transform_model, _rejecting(*(rejected | more))) <= claimed
