"""GenerationConfig: OpenVINO GenAI's defaults, and a typed error naming the field for each bad value."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from hetero_sdk.errors import PropertyValueError, UnsupportedPropertyError
from hetero_sdk.genai import GenerationConfig


def test_defaults_are_greedy_with_no_stop_token() -> None:
    config = GenerationConfig()
    config.validate()
    assert (config.do_sample, config.top_k, config.top_p, config.temperature) == (False, 0, 1.0, 1.0)
    assert config.ending_tokens == frozenset()


def test_ending_tokens_are_the_stop_tokens_and_eos() -> None:
    config = GenerationConfig(stop_token_ids=[4, 9], eos_token_id=2)
    assert config.stop_token_ids == {4, 9}
    assert config.ending_tokens == {2, 4, 9}


def test_numpy_integers_are_accepted() -> None:
    GenerationConfig(max_new_tokens=np.int64(3), top_k=np.int32(5)).validate()


@pytest.mark.parametrize(
    ("fields", "named"),
    [
        ({"max_new_tokens": 0}, "max_new_tokens"),
        ({"max_new_tokens": -3}, "max_new_tokens"),
        ({"max_new_tokens": 2.5}, "max_new_tokens"),
        ({"max_new_tokens": True}, "max_new_tokens"),
        ({"do_sample": True, "temperature": 0.0}, "temperature"),
        ({"do_sample": True, "temperature": -1.0}, "temperature"),
        ({"temperature": float("nan")}, "temperature"),
        ({"do_sample": "yes"}, "do_sample"),
        ({"top_k": -1}, "top_k"),
        ({"top_p": 0.0}, "top_p"),
        ({"top_p": 1.5}, "top_p"),
        ({"top_p": float("inf")}, "top_p"),
        ({"rng_seed": -1}, "rng_seed"),
        ({"stop_token_ids": {3, -2}}, "stop_token_ids"),
        ({"eos_token_id": -1}, "eos_token_id"),
    ],
)
def test_a_bad_field_is_a_property_value_error_naming_it(fields: dict[str, Any], named: str) -> None:
    with pytest.raises(PropertyValueError, match=rf"GenerationConfig\.{named} "):
        GenerationConfig(**fields).validate()


def test_greedy_decoding_takes_any_temperature() -> None:
    GenerationConfig(do_sample=False, temperature=0.0).validate()


def test_updated_copies_and_refuses_unknown_fields() -> None:
    config = GenerationConfig(max_new_tokens=4)
    changed = config.updated(max_new_tokens=9, do_sample=True)
    assert (changed.max_new_tokens, changed.do_sample, config.max_new_tokens) == (9, True, 4)
    with pytest.raises(UnsupportedPropertyError, match=r"max_new_token.*max_new_tokens"):
        config.updated(max_new_token=3)
