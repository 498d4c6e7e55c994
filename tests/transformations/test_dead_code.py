"""DeadCodeElimination: the branch a constant Select never takes leaves the model."""

from __future__ import annotations

import numpy as np
import pytest

import hetero_sdk as hs
from hetero_sdk import opset
from hetero_sdk.reference import evaluate
from hetero_sdk.transformations import DeadCodeElimination, PassManager, fused_names

X = np.float32([[-2.0, 0.5, 3.0]])


def _select_model(condition: np.ndarray) -> hs.Model:
    x = opset.parameter([1, 3], name="x")
    then = opset.relu(x, name="then")
    other = opset.exp(opset.negative(x, name="neg"), name="else")
    chosen = opset.select(opset.constant(condition, name="cond"), then, other, name="sel")
    return hs.Model([opset.multiply(chosen, np.float32(2), name="y")], [x])


@pytest.mark.parametrize(
    ("condition", "kept", "gone", "closed_form"),
    [
        (np.bool_([[True, True, True]]), "then", {"neg", "else"}, lambda v: 2 * np.maximum(v, 0)),
        (np.bool_(False), "else", {"then"}, lambda v: 2 * np.exp(-v)),
    ],
)
def test_a_constant_condition_removes_the_select_and_the_untaken_branch(condition, kept, gone, closed_form) -> None:
    model = _select_model(condition)
    original = model.clone()
    manager = PassManager()
    manager.register_pass(DeadCodeElimination())
    assert manager.run_passes(model)
    names = {n.friendly_name for n in model.get_ops()}
    assert "sel" not in names and not (gone & names)
    assert set(manager.records[0].removed) == {"sel", "cond"} | gone
    producer = next(n for n in model.get_ops() if n.friendly_name == kept)
    assert fused_names(producer) == {kept, "sel"}
    np.testing.assert_allclose(evaluate(model, [X])[0], evaluate(original, [X])[0])
    np.testing.assert_allclose(evaluate(model, [X])[0], closed_form(X), rtol=1e-6)
    assert DeadCodeElimination().run(model) is False


def test_a_mixed_condition_keeps_the_select() -> None:
    model = _select_model(np.bool_([[True, False, True]]))
    assert DeadCodeElimination().run(model) is False


def test_a_condition_that_broadcasts_the_branch_keeps_the_select() -> None:
    x = opset.parameter([3], name="x")
    cond = opset.constant(np.ones((2, 3), np.bool_), name="cond")
    model = hs.Model([opset.select(cond, x, opset.negative(x), name="sel")], [x])
    assert DeadCodeElimination().run(model) is False
    np.testing.assert_array_equal(evaluate(model, [np.float32([1, 2, 3])])[0], np.float32([[1, 2, 3]] * 2))


def test_a_computed_condition_keeps_the_select() -> None:
    x = opset.parameter([3], name="x")
    model = hs.Model([opset.select(opset.greater(x, np.float32(0)), x, opset.negative(x))], [x])
    assert DeadCodeElimination().run(model) is False
