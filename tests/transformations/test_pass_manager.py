"""PassManager: order, configuration, fixed-point groups, records and per-pass validation."""

from __future__ import annotations

import numpy as np
import pytest

import hetero_sdk as hs
from hetero_sdk import opset
from hetero_sdk.errors import ModelValidationError
from hetero_sdk.reference import evaluate
from hetero_sdk.transformations import (
    ConstantFolding,
    FunctionPass,
    ModelPass,
    NopElimination,
    PassManager,
    eliminate_node,
)


def _chain_model() -> hs.Model:
    x = opset.parameter([2], name="x")
    folded = opset.add(opset.constant(np.float32([1, 2]), name="c1"), opset.constant(np.float32([3, 4]), name="c2"))
    folded.friendly_name = "sum"
    return hs.Model([opset.multiply(x, folded, name="y")], [x], name="chain")


class _Counting:
    """Changes the model a fixed number of times, then reports no change."""

    def __init__(self, name: str, changes: int, log: list[str]) -> None:
        self.name = name
        self.changes = changes
        self.log = log

    def run(self, model: hs.Model) -> bool:
        self.log.append(self.name)
        if self.changes:
            self.changes -= 1
            return True
        return False


def test_passes_run_in_registration_order() -> None:
    log: list[str] = []
    manager = PassManager(validate=False)
    for name in ("a", "b", "c"):
        manager.register_pass(_Counting(name, 0, log))
    assert manager.run_passes(_chain_model()) is False
    assert log == ["a", "b", "c"]
    assert [r.name for r in manager.records] == ["a", "b", "c"]


def test_a_pass_object_satisfies_the_protocol() -> None:
    assert isinstance(ConstantFolding(), ModelPass)
    assert isinstance(FunctionPass("f", lambda m: False), ModelPass)


def test_disabled_passes_are_skipped_by_name_or_class_and_can_be_enabled_again() -> None:
    log: list[str] = []
    manager = PassManager(validate=False)
    manager.register_pass(_Counting("a", 0, log))
    manager.register_pass(ConstantFolding())
    config = manager.get_pass_config()
    config.disable("a", ConstantFolding)
    model = _chain_model()
    assert manager.run_passes(model) is False
    assert log == []
    assert [(r.name, r.skipped) for r in manager.records] == [("a", True), ("ConstantFolding", True)]
    assert "sum" in {n.friendly_name for n in model.get_ops() if n.type_name == "Add"}
    config.enable(ConstantFolding)
    assert config.disabled == frozenset({"a"})
    assert manager.run_passes(model) is True


def test_disabling_a_group_skips_all_its_members() -> None:
    log: list[str] = []
    manager = PassManager(validate=False)
    manager.register_group([_Counting("a", 1, log), _Counting("b", 0, log)], "G")
    manager.pass_config.disable("G")
    manager.run_passes(_chain_model())
    assert log == []
    assert manager.records[0].skipped and manager.records[0].name == "G"


def test_a_fixed_point_group_repeats_until_no_member_changes() -> None:
    log: list[str] = []
    manager = PassManager(validate=False)
    manager.register_group([_Counting("a", 2, log), _Counting("b", 1, log)], "G")
    assert manager.run_passes(_chain_model()) is True
    assert log == ["a", "b", "a", "b", "a", "b"]
    assert [(r.name, r.iteration, r.changed) for r in manager.records] == [
        ("a", 0, True), ("b", 0, True), ("a", 1, True), ("b", 1, False), ("a", 2, False), ("b", 2, False),
    ]  # fmt: skip
    assert all(r.group == "G" for r in manager.records)


def test_a_fixed_point_group_stops_at_max_iterations() -> None:
    log: list[str] = []
    manager = PassManager(validate=False)
    manager.register_group([_Counting("forever", 100, log)], "G", max_iterations=3)
    manager.run_passes(_chain_model())
    assert log == ["forever"] * 3


def test_a_group_without_fixed_point_runs_once() -> None:
    log: list[str] = []
    manager = PassManager(validate=False)
    manager.register_group([_Counting("a", 5, log)], "G", until_fixed_point=False)
    manager.run_passes(_chain_model())
    assert log == ["a"]


def test_records_list_the_ops_each_pass_removed_and_added() -> None:
    manager = PassManager()
    manager.register_pass(ConstantFolding())
    manager.register_pass(NopElimination())
    model = _chain_model()
    manager.run_passes(model)
    folding, nop = manager.records
    assert folding.changed and folding.removed == ("c1", "c2", "sum") and folding.added == ("sum",)
    assert not nop.changed and nop.removed == () and nop.added == ()
    first, second = manager.summary().splitlines()
    assert first.startswith("ConstantFolding: changed (-3 +1 ops, ")
    assert second.startswith("NopElimination: unchanged (-0 +0 ops, ")
    np.testing.assert_allclose(evaluate(model, [np.float32([1, 1])])[0], np.float32([4, 6]))


def test_a_pass_that_leaves_an_invalid_model_is_named() -> None:
    def duplicate_names(model: hs.Model) -> bool:
        for node in model.get_ops():
            if node.type_name == "Multiply":
                node.friendly_name = "x"
        return True

    manager = PassManager()
    manager.register_pass(FunctionPass("Renamer", duplicate_names))
    with pytest.raises(ModelValidationError, match=r"pass 'Renamer' left an invalid model: .*two nodes are named 'x'"):
        manager.run_passes(_chain_model())


def test_register_rejects_objects_that_are_not_passes() -> None:
    manager = PassManager()
    with pytest.raises(TypeError, match="not a pass"):
        manager.register_pass(object())  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="not a pass"):
        manager.register_group([object()], "G")  # type: ignore[list-item]
    with pytest.raises(ValueError, match="max_iterations"):
        manager.register_group([], "G", max_iterations=0)
    with pytest.raises(TypeError, match="name"):
        manager.get_pass_config().disable(42)  # type: ignore[arg-type]


def test_passes_lists_the_pipeline() -> None:
    manager = PassManager()
    folding = manager.register_pass(ConstantFolding())
    group = manager.register_group([NopElimination()], "G")
    assert manager.passes == [folding, group]


def test_a_function_pass_can_use_the_rewrite_helpers() -> None:
    def drop_converts(model: hs.Model) -> bool:
        changed = False
        for node in model.get_ops():
            if node.type_name == "Convert":
                changed |= eliminate_node(model, node, node.input_value(0))
        return changed

    x = opset.parameter([2], name="x")
    model = hs.Model([opset.negative(opset.convert(opset.relu(x, name="r"), hs.Type.f32), name="n")], [x])
    manager = PassManager()
    manager.register_pass(FunctionPass("DropConverts", drop_converts))
    assert manager.run_passes(model)
    assert [n.type_name for n in model.get_ops()] == ["Parameter", "Relu", "Negative", "Result"]
