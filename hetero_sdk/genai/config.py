"""``GenerationConfig``: how many tokens to generate, and how to choose each one (OpenVINO GenAI's
``ov::genai::GenerationConfig``, the fields the SDK's pipeline implements)."""

from __future__ import annotations

import dataclasses
import math
import numbers
from dataclasses import dataclass, field
from typing import Any

from hetero_sdk.errors import PropertyValueError, UnsupportedPropertyError, did_you_mean

__all__ = ["GenerationConfig"]


@dataclass
class GenerationConfig:
    """The decoding parameters of :meth:`LLMPipeline.generate <hetero_sdk.genai.LLMPipeline.generate>`.

    Greedy decoding (``do_sample=False``, the default) takes the most likely token at each step, the
    lowest id among equal logits. Sampling scales the logits by ``1 / temperature``, keeps the
    ``top_k`` most likely tokens (0: all), then the smallest set of them whose probability reaches
    ``top_p``, and draws from what is left with a numpy ``Generator`` seeded with ``rng_seed`` (the
    same seed gives the same tokens).

    A sequence ends after ``max_new_tokens`` tokens, or at a token of ``stop_token_ids`` or
    ``eos_token_id``; that token ends it and is not part of the result (as OpenVINO GenAI leaves it out).
    """

    max_new_tokens: int = 20
    """How many tokens to generate at most, per sequence (>= 1)."""
    do_sample: bool = False
    """Draw each token from the processed distribution instead of taking the most likely one."""
    temperature: float = 1.0
    """Divides the logits before sampling (> 0 when sampling): below 1 sharpens, above 1 flattens."""
    top_k: int = 0
    """Sample among the ``top_k`` most likely tokens only (0: no limit)."""
    top_p: float = 1.0
    """Sample among the smallest set of most likely tokens whose probability is at least ``top_p``
    (in (0, 1]; 1: no limit)."""
    rng_seed: int = 0
    """The seed of the sampler's random generator (>= 0)."""
    stop_token_ids: set[int] = field(default_factory=set)
    """Tokens that end a sequence, besides ``eos_token_id``."""
    eos_token_id: int | None = None
    """The end-of-sequence token (None: none)."""

    def __post_init__(self) -> None:
        self.stop_token_ids = set(self.stop_token_ids)

    def validate(self) -> None:
        """Checks every field (as OpenVINO GenAI's ``validate()``).

        :raises PropertyValueError: naming the field, its value and the values allowed.
        """
        _check_int("max_new_tokens", self.max_new_tokens, minimum=1)
        if not isinstance(self.do_sample, bool):
            raise PropertyValueError(f"GenerationConfig.do_sample must be True or False, not {self.do_sample!r}")
        _check_real("temperature", self.temperature)
        if self.do_sample and not self.temperature > 0:
            raise PropertyValueError(
                f"GenerationConfig.temperature is {self.temperature!r}; sampling needs a temperature > 0 "
                "(for the most likely token every time, set do_sample=False)"
            )
        _check_int("top_k", self.top_k, minimum=0)
        _check_real("top_p", self.top_p)
        if not 0 < self.top_p <= 1:
            raise PropertyValueError(f"GenerationConfig.top_p is {self.top_p!r}; it must be in (0, 1] (1: no limit)")
        _check_int("rng_seed", self.rng_seed, minimum=0)
        for token in self.stop_token_ids:
            _check_int("stop_token_ids", token, minimum=0)
        if self.eos_token_id is not None:
            _check_int("eos_token_id", self.eos_token_id, minimum=0)

    @property
    def ending_tokens(self) -> frozenset[int]:
        """The tokens that end a sequence: ``stop_token_ids`` and ``eos_token_id``."""
        extra = () if self.eos_token_id is None else (self.eos_token_id,)
        return frozenset((*self.stop_token_ids, *extra))

    def updated(self, **changes: Any) -> GenerationConfig:
        """A copy with ``changes`` (field names), as OpenVINO GenAI's ``update_generation_config``.

        :raises UnsupportedPropertyError: for a name that is not a field, with the fields.
        """
        names = [f.name for f in dataclasses.fields(self)]
        for name in changes:
            if name not in names:
                raise UnsupportedPropertyError(
                    f"GenerationConfig has no field {name!r}; " + did_you_mean(name, names, listing="fields")
                )
        return dataclasses.replace(self, **changes)


def _check_int(name: str, value: object, minimum: int) -> None:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise PropertyValueError(f"GenerationConfig.{name} is {value!r}; it must be an integer >= {minimum}")


def _check_real(name: str, value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value):
        raise PropertyValueError(f"GenerationConfig.{name} is {value!r}; it must be a finite number")
