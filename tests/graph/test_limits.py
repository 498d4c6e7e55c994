"""A limit refuses a count above it with a ModelValidationError naming the count, the reason and the
limit's name (so a user knows which setting to raise), and lets any count up to it through."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hetero_sdk.errors import ModelValidationError, UnsupportedOperationError
from hetero_sdk.graph import limits
from hetero_sdk.graph.limits import LIMITS, Limit


@pytest.mark.parametrize("limit", LIMITS, ids=[limit.name for limit in LIMITS])
@given(extra=st.integers(1, 2**62))
def test_a_count_above_a_limit_is_refused_naming_the_limit(limit: Limit, extra: int) -> None:
    with pytest.raises(ModelValidationError, match=rf"unrolling X: {limit.value + extra:,} .*{limit.name}"):
        limit.check(limit.value + extra, "unrolling X")


@pytest.mark.parametrize("limit", LIMITS, ids=[limit.name for limit in LIMITS])
def test_counts_up_to_a_limit_pass(limit: Limit) -> None:
    for count in (0, 1, limit.value):
        limit.check(count, "anything")


def test_every_limit_is_a_module_constant_of_its_own_name() -> None:
    assert all(getattr(limits, limit.name) is limit for limit in LIMITS)


def test_the_error_comes_from_the_callers_factory_so_it_names_the_node() -> None:
    def named(message: str) -> Exception:
        return UnsupportedOperationError(f"node 'n': {message}")

    with pytest.raises(
        UnsupportedOperationError, match=r"node 'n': w: 3 copies, more than the limit of 2 .*UNROLLED_COPIES"
    ):
        Limit("UNROLLED_COPIES", 2, "copies").check(3, "w", named)


def test_a_raised_limit_lets_larger_counts_through(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(limits.UNROLLED_COPIES, "value", 10**6)
    limits.UNROLLED_COPIES.check(10**5, "a large model's unrolling")
