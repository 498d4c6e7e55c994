"""The op cases the conformance kit checks: for each op type, a hypothesis strategy drawing small
models around the op (shapes, attributes, element types and values) with the tolerance to compare
them at. Cases derive from the op definitions (:mod:`~hetero_sdk.conformance.derived_cases`), or come
from a recipe where an op's operands constrain each other (``recipes_*`` modules)."""

from __future__ import annotations

from hypothesis import strategies as st

from hetero_sdk.conformance import (  # noqa: F401  (each recipe module registers its recipes)
    recipes_compute,
    recipes_control_flow,
    recipes_detection,
    recipes_elementwise,
    recipes_image,
    recipes_indexing,
    recipes_recurrent,
    recipes_shape,
    recipes_text,
)
from hetero_sdk.conformance.case_builder import KEY_CASES, RECIPES, Builder, OpCase
from hetero_sdk.conformance.derived_cases import derivable, derived_case, derived_key_cases
from hetero_sdk.extensions import extension_op_types, extension_recipe
from hetero_sdk.graph.op_def import OPS

__all__ = ["Builder", "OpCase", "case_types", "key_cases", "strategy_for"]


def case_types() -> list[str]:
    """Every op type the kit can draw cases of, sorted."""
    recipes = set(RECIPES.names()) | {t for t in extension_op_types() if extension_recipe(t) is not None}
    return sorted(recipes | {t for t, op in OPS.items() if derivable(op)})


def strategy_for(op_type: str) -> st.SearchStrategy[OpCase] | None:
    """The strategy drawing cases of ``op_type``, or None when it has neither a recipe nor a derivable
    definition (the op check reports it as skipped, "no case recipe")."""
    recipe = RECIPES.find(op_type) or extension_recipe(op_type)
    op = OPS.find(op_type)
    if recipe is None and (op is None or not derivable(op)):
        return None

    @st.composite
    def cases(draw: st.DrawFn) -> OpCase:
        builder = Builder(draw)
        return recipe(builder, op_type) if recipe is not None else derived_case(builder, OPS.get(op_type))

    return cases()


def key_cases(op_type: str) -> list[OpCase]:
    """The fixed cases of ``op_type`` that every profile checks before the drawn ones (see
    :data:`~hetero_sdk.conformance.case_builder.KEY_CASES`), built; for an op whose cases derive from its
    definition, also one case per element type (:func:`~hetero_sdk.conformance.derived_cases.derived_key_cases`)."""
    op = OPS.find(op_type)
    derived = derived_key_cases(op) if op is not None and RECIPES.find(op_type) is None and derivable(op) else []
    return [*derived, *(fn() for fn in KEY_CASES.get(op_type, []))]
