"""The fused-names record: what a transformed op stands for."""

from __future__ import annotations

from hetero_sdk import opset
from hetero_sdk.transformations import (
    FUSED_NAMES,
    clear_fused_names,
    fused_names,
    merge_fused_names,
    set_fused_names,
)


def test_a_node_without_a_record_stands_for_its_own_friendly_name() -> None:
    node = opset.relu(opset.parameter([2], name="x"), name="r")
    assert fused_names(node) == {"r"}
    assert FUSED_NAMES not in node.get_rt_info()


def test_the_record_is_stored_as_a_sorted_deduplicated_list_of_strings() -> None:
    node = opset.relu(opset.parameter([2], name="x"), name="r")
    set_fused_names(node, ["b", "a", "b"])
    assert node.get_rt_info()[FUSED_NAMES] == ["a", "b"]
    assert fused_names(node) == {"a", "b"}


def test_fused_names_returns_a_copy() -> None:
    node = opset.relu(opset.parameter([2], name="x"), name="r")
    set_fused_names(node, ["a"])
    fused_names(node).add("z")
    assert node.get_rt_info()[FUSED_NAMES] == ["a"]


def test_merge_unions_the_targets_record_with_the_sources_records_or_names() -> None:
    x = opset.parameter([2], name="x")
    first = opset.relu(x, name="first")
    second = opset.relu(first, name="second")
    set_fused_names(second, ["m", "n"])
    target = opset.relu(second, name="target")
    assert merge_fused_names(target, [first, second]) == {"target", "first", "m", "n"}
    assert target.get_rt_info()[FUSED_NAMES] == ["first", "m", "n", "target"]


def test_clear_removes_the_record() -> None:
    node = opset.relu(opset.parameter([2], name="x"), name="r")
    set_fused_names(node, ["a"])
    clear_fused_names(node)
    assert fused_names(node) == {"r"}
    clear_fused_names(node)  # no record: nothing to do
