"""Op cases come from the op definitions: declared element types and attribute choices decide what is
drawn, and every op of the opset has cases (derived, or from a recipe) unless the kit says why not."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from hetero_sdk.conformance.case_builder import RECIPES, Builder, OpCase
from hetero_sdk.conformance.derived_cases import derivable, derived_case
from hetero_sdk.conformance.op_cases import case_types, strategy_for
from hetero_sdk.element_type import Type
from hetero_sdk.graph.op_def import LOWER_STRING, Attr, Input, OpDef
from hetero_sdk.ops import OPS, sdk_op_types
from hetero_sdk.ops.elementwise import BINARY_OPS

DELIBERATE_EXCLUSIONS: dict[str, str] = {
    "Parameter": "structural: every case feeds its inputs through Parameters",
    "Constant": "structural: every case holds some operands as Constants",
    "Result": "structural: every case's outputs are Results",
    "ReadValue": "structural (state): a single op check cannot carry state across inferences; the stateful "
    "tests (tests/runtime/test_stateful*.py) check it",
    "Assign": "structural (state): as ReadValue",
}
"""The ops of the opset without kit cases, each with the reason: the structural ops (the op checks are
parametrized over the compute ops only)."""


def test_every_op_of_the_opset_has_kit_cases_or_a_reason_not_to() -> None:
    """A new op without cases fails here: give it a recipe (``recipes_*.py``) or a derivable definition,
    or list it above with the reason."""
    every = set(sdk_op_types())
    missing = every - set(case_types()) - set(DELIBERATE_EXCLUSIONS)
    assert not missing, f"ops of the opset without kit cases: {sorted(missing)}"
    assert set(DELIBERATE_EXCLUSIONS) <= every, "an exclusion names an op the opset no longer has"
    assert not set(DELIBERATE_EXCLUSIONS) & set(case_types()), "an excluded op has cases now: remove it"
    assert {t for t in every if OPS.get(t).structural} == set(DELIBERATE_EXCLUSIONS)


def test_recipes_exist_only_where_cases_cannot_be_derived() -> None:
    assert not [t for t in RECIPES.names() if t in OPS and derivable(OPS.get(t))]


@settings(max_examples=30, deadline=None)
@given(case=strategy_for("Mod"))
def test_derived_cases_draw_only_declared_types_and_declared_attribute_values(case) -> None:
    declared = BINARY_OPS["Mod"].inputs[0].types
    assert declared is not None
    assert all(Type.of(v.dtype) in declared for v in case.inputs.values())
    assert case.attrs["auto_broadcast"] in ("numpy", "none")
    divisor = next(n for n in case.model.get_ops() if n.type_name == "Mod").input_value(1)
    if divisor.node.type_name == "Constant":
        assert np.all(divisor.node.attrs["value"] != 0)


def test_a_new_definition_gets_cases_without_any_table() -> None:
    op = OpDef(
        "Twice",  # defined here only: never registered, so the opset is unchanged
        "elementwise",
        lambda node: [(node.input_value(0).element_type, node.input_value(0).partial_shape)],
        inputs=(Input(types=frozenset({Type.f16})),),
        attrs=(Attr("mode", LOWER_STRING, "a", ("a", "b")),),
        evaluate=lambda node, x: x * 2,
    )
    assert derivable(op)

    @st.composite
    def cases(draw: st.DrawFn) -> OpCase:
        return derived_case(Builder(draw), op)

    @settings(max_examples=15, deadline=None)
    @given(cases())
    def check(case: OpCase) -> None:
        assert [v.dtype for v in case.inputs.values()] == [np.float16]
        assert case.attrs["mode"] in ("a", "b")

    check()
