"""Plugin and Core, per op: whatever ``query_model`` claims compiles, and its results match TEMPLATE's
reference kernels (hypothesis over shapes, attributes, element types and values)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given

from hetero_sdk.conformance.compare import Repro, assert_results_match
from hetero_sdk.conformance.op_cases import OpCase, strategy_for
from hetero_sdk.conformance.target import Target
from hetero_sdk.ops import OPS, sdk_op_types
from hetero_sdk.reference import evaluate


def compute_op_types() -> list[str]:
    """The op types of the SDK's opset that compute (ops plugins define for themselves are left out)."""
    return [t for t in sdk_op_types() if not OPS.get(t).structural]


def _fail(what: str, exc: BaseException, repro: Repro, case: OpCase, config: dict[str, Any]) -> AssertionError:
    snippet = repro.save(case.model, case.inputs, config)
    return AssertionError(f"{what}: {type(exc).__name__}: {exc}\ncase: {case!r}\nreproduce with:\n{snippet}")


@pytest.mark.mandatory
@pytest.mark.parametrize("op_type", compute_op_types())
def test_claimed_op_matches_template(
    target: Target, op_type: str, hyp: Any, repro: Repro, record_property: Callable[[str, object], None]
) -> None:
    strategy = strategy_for(op_type)
    if strategy is None:
        pytest.skip(f"no case recipe for {op_type}")
    tally = {"claimed": 0, "unclaimed": 0}

    @hyp()
    @given(case=strategy)
    def check(case: OpCase) -> None:
        claimed = target.query(case.model)
        if not all(n.friendly_name in claimed for n in case.model.get_ops() if n.type_name == op_type):
            tally["unclaimed"] += 1
            return
        tally["claimed"] += 1
        want = evaluate(case.model, case.inputs)
        try:
            compiled = target.compile(case.model)
        except Exception as exc:
            raise _fail(
                f"{target.device} claims {op_type} in query_model, but compile_model failed",
                exc,
                repro,
                case,
                target.config,
            ) from exc
        try:
            got = list(compiled(case.inputs).to_tuple())
        except Exception as exc:
            raise _fail(
                f"{target.device} compiled {op_type}, but inference failed", exc, repro, case, target.config
            ) from exc
        assert_results_match(
            got, want, case.rtol, case.atol, what=repr(case), repro=repro, model=case.model, inputs=case.inputs,
            config=target.config,
        )  # fmt: skip

    check()
    record_property("examples", f"{tally['claimed']} claimed, {tally['unclaimed']} not claimed")
    if not tally["claimed"]:
        pytest.skip(f"{target.device} does not claim {op_type} (in {tally['unclaimed']} drawn models)")
