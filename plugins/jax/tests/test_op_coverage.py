"""Every op the SDK defines has an XLA lowering in the module of its family, or a documented reason not to."""

from __future__ import annotations

from pathlib import Path

from hetero_sdk import Type, opset
from hetero_sdk.extensions import extension_of
from hetero_sdk.ops import OPS, sdk_op_types

from hetero_sdk_jax import lowering
from hetero_sdk_jax.lowering import get_lowering, lowering_types

GRAPH_HANDLED = {"Parameter", "Constant", "Result", "ShapeOf"}
"""Ops the graph interpreter handles itself (inputs, constants, outputs, static shapes)."""

SDK_HANDLED = {"ReadValue", "Assign"}
"""State ops: the SDK gives devices the stateless form of a stateful model (Parameters and Results)."""


def _sdk_ops() -> list[str]:
    return sdk_op_types()


def _strings_only(op_type: str) -> bool:
    """Every input takes strings only: XLA arrays hold numbers, so ``query_model`` declines the op."""
    inputs = OPS.get(op_type).inputs
    return bool(inputs) and all(i.types == frozenset({Type.string}) for i in inputs)


TEXT_ONLY = {t for t in sdk_op_types() if _strings_only(t)}


def test_every_sdk_op_is_lowered_handled_by_the_graph_or_data_dependent() -> None:
    missing = [
        t
        for t in _sdk_ops()
        if t not in GRAPH_HANDLED | SDK_HANDLED | TEXT_ONLY
        and not OPS.get(t).data_dependent
        and get_lowering(t) is None
    ]
    assert not missing, f"ops without an XLA lowering: {missing}"


def test_data_dependent_ops_have_no_lowering() -> None:
    dependent = [t for t in _sdk_ops() if OPS.get(t).data_dependent]
    assert set(dependent) >= {"NonZero", "NonMaxSuppression"}
    assert not [t for t in dependent if get_lowering(t) is not None]


def test_the_ops_left_unlowered_for_strings_are_the_text_ops() -> None:
    assert {"StringNormalizer", "StringSplit", "StringConcat", "RegexFullMatch"} == TEXT_ONLY


def test_lowerings_live_in_the_module_of_their_op_family() -> None:
    """XLA's own lowerings mirror the op families; the others are the definitions' array-API kernels
    (extensions' ops, lowered by the extensions, are left out)."""
    for type_name in (t for t in lowering_types() if extension_of(t) is None):
        family = OPS.get(type_name).family
        module = get_lowering(type_name).fn.__module__  # type: ignore[union-attr]
        own, shared = f"hetero_sdk_jax.lowering.{family}", f"hetero_sdk.ops.{family}"
        assert module in (own, shared), f"{type_name} ({family}) is lowered in {module}"


def test_every_lowering_module_is_named_after_an_op_family() -> None:
    """Besides the interpreter's own modules, lowering/ holds one module per family, as hetero_sdk.ops does."""
    families = {OPS.get(t).family for t in sdk_op_types()}
    infrastructure = {"__init__", "graph", "layout", "registry", "weight_layout"}
    modules = {p.stem for p in Path(lowering.__file__).parent.glob("*.py")} - infrastructure
    assert modules <= families, f"lowering modules not named after an op family: {sorted(modules - families)}"


def test_every_public_opset_factory_builds_a_covered_op() -> None:
    covered = set(lowering_types()) | GRAPH_HANDLED | SDK_HANDLED | TEXT_ONLY
    covered |= {t for t in _sdk_ops() if OPS.get(t).data_dependent}
    sdk = set(_sdk_ops())
    assert sdk <= covered
    assert len(opset.__all__) > 50
