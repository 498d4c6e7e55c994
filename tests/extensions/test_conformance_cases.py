"""The conformance kit draws cases of extension ops: derived from an activation's definition as for the
SDK's ops, or from the extension's recipe."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from hetero_sdk import Node
from hetero_sdk.conformance.op_cases import case_types, strategy_for
from hetero_sdk.extensions import REFERENCE, Extension
from hetero_sdk.ops import REAL_TYPES, Input, OpDef
from hetero_sdk.reference import evaluate

from .conftest import same_as_input, softsign

Register = Callable[..., Extension]

DERIVED = OpDef("KitSoftsign", "activation", same_as_input, (Input("data", REAL_TYPES),), version="kit1",
                evaluate=lambda node, x: softsign(x))  # fmt: skip
RECIPED = OpDef("KitScaled", "vendor", same_as_input, (Input("data", REAL_TYPES),), version="kit1")


def _recipe(b: Any, op_type: str) -> Any:
    data = b.input(b.values([2, 3], np.float32), "data")
    return b.case(op_type, Node(RECIPED, [data.output(0)], {}, "op"))


def test_the_kit_draws_cases_of_extension_ops(register: Register) -> None:
    kernels = {REFERENCE: {"KitScaled": lambda node, x: 2 * x}}
    register(Extension("kit_ext", ops=[DERIVED, RECIPED], kernels=kernels, recipes={"KitScaled": _recipe}))
    assert {"KitSoftsign", "KitScaled"} <= set(case_types())

    @settings(max_examples=5, deadline=None)
    @given(data=st.data())
    def draw_cases(data: st.DataObject) -> None:
        derived = data.draw(strategy_for("KitSoftsign"))
        assert [n.get_type_name() for n in derived.model.get_ops()].count("KitSoftsign") == 1
        drawn = data.draw(strategy_for("KitScaled"))
        np.testing.assert_array_equal(evaluate(drawn.model, drawn.inputs)[0], 2 * drawn.inputs["data"])

    draw_cases()
