"""``LLMPipeline``: generation with a decoder on any device, as OpenVINO GenAI's ``LLMPipeline``.

The pipeline owns the loop (prompt, next token, stop) and the choice of tokens; a
:class:`~hetero_sdk.genai.session.DecoderSession` owns the model's side (the cache).

A batch runs its prompts of one length together, in one request, and each length as a request of
its own: a decoder exported from ``transformers`` computes positions and the causal mask from the
cache's length, so padding shorter prompts (OpenVINO GenAI pads on the left) would change what the
model computes for them, and their tokens would no longer be the ones they get alone.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from hetero_sdk.core import Core
from hetero_sdk.errors import InferenceError, ModelValidationError
from hetero_sdk.genai.config import GenerationConfig
from hetero_sdk.genai.logits import next_tokens
from hetero_sdk.genai.session import DecoderSession, open_session
from hetero_sdk.genai.tokenizer import TextStream, Tokenizer
from hetero_sdk.graph import Model
from hetero_sdk.transformations import find_kv_cache_pairs, make_stateful

__all__ = ["DecodedResults", "EncodedResults", "LLMPipeline", "PerfMetrics", "Streamer", "StreamerBase"]

Streamer = Callable[[Any], Any]
"""Called with each generated token (its id, or its text with a tokenizer); returning True stops
the generation, as OpenVINO GenAI's streamer. An object with ``write(token)`` and optionally
``end()`` (OpenVINO GenAI's ``StreamerBase``) works too: ``write`` returning True, or a status
named ``STOP`` or ``CANCEL``, stops; ``end()`` is called when the generation ends."""


class StreamerBase:
    """A streamer object, as OpenVINO GenAI's ``StreamerBase``: subclass it (or write any object with
    these methods) and pass it as ``streamer``."""

    def write(self, token: Any) -> Any:
        """Takes one token (its id, or its text with a tokenizer); True stops the generation."""
        raise NotImplementedError

    def end(self) -> None:
        """Called once the generation ends."""


def _stops(answer: Any) -> bool:
    """Whether a streamer's answer asks to stop: True, or OpenVINO GenAI's ``StreamingStatus.STOP``/``CANCEL``."""
    if isinstance(answer, (bool, np.bool_)):
        return bool(answer)
    return getattr(answer, "name", None) in ("STOP", "CANCEL")


@dataclass(frozen=True)
class PerfMetrics:
    """What one ``generate`` call measured (OpenVINO GenAI's ``PerfMetrics``)."""

    num_input_tokens: int
    """The prompts' tokens, all sequences."""
    num_generated_tokens: int
    """The tokens returned, all sequences (an ending token is not one)."""
    ttft_ms: float
    """Time to first token: from the call to the first token chosen (the prompt's processing included)."""
    generate_duration_ms: float
    """The whole call."""
    compile_count: int | None
    """The executables the device compiled during the call; None when the device does not tell
    (a device compiling per input shape, XLA, tells; see :mod:`hetero_sdk.genai.compiles`)."""
    num_sequences: int = 1
    """The sequences generated together."""

    @property
    def tpot_ms(self) -> float:
        """Time per output token after the first (OpenVINO GenAI's TPOT): the call less the time to the
        first token, over the tokens after it (per step: a batch's sequences share each step)."""
        steps = self.num_generated_tokens // max(self.num_sequences, 1) - 1
        return (self.generate_duration_ms - self.ttft_ms) / steps if steps > 0 else 0.0

    @property
    def throughput(self) -> float:
        """Tokens per second once the first is out, every sequence counted: ``1000 / TPOT`` times the
        sequences (OpenVINO GenAI's throughput; the prompt and any compile are in :attr:`ttft_ms`)."""
        tpot = self.tpot_ms
        return 1e3 / tpot * max(self.num_sequences, 1) if tpot > 0 else 0.0


@dataclass(frozen=True)
class EncodedResults:
    """``generate(..., return_results=True)`` on ids: the tokens of each sequence and the metrics."""

    tokens: list[list[int]]
    perf_metrics: PerfMetrics


@dataclass(frozen=True)
class DecodedResults:
    """``generate(..., return_results=True)`` with a tokenizer: each sequence's text and the metrics."""

    texts: list[str]
    tokens: list[list[int]]
    perf_metrics: PerfMetrics


class LLMPipeline:
    """Generates tokens with a decoder compiled on a device (OpenVINO GenAI's ``LLMPipeline``).

    The decoder keeps its cache either as inputs and outputs (``past_key_values.N.key|value`` in,
    ``present.N.key|value`` out: torch and optimum exports) or as state (``hetero_sdk.make_stateful``).
    A decoder of the first kind is made stateful (a copy: ``model`` is not changed), as OpenVINO GenAI
    runs optimum-intel's stateful exports: the cache then stays in the request, on the device, and on a
    device that compiles per input shape (XLA) in fixed-capacity buffers, so a generation compiles a
    bounded number of executables instead of one per token.

    :param model: a model file (ONNX, native) or a :class:`~hetero_sdk.Model`.
    :param device: the device to compile it on (``TEMPLATE``, ``XLA``, ``HETERO:XLA,TEMPLATE``...).
    :param tokenizer: a ``tokenizer.json`` (or a :class:`~hetero_sdk.genai.Tokenizer`): prompts and
        results are then text. Needs ``hetero-sdk[genai]``.
    :param config: compile properties for the device.
    :param core: the :class:`~hetero_sdk.Core` to compile with (default: a new one).
    :raises ModelValidationError: when the model is not a decoder with a cache.
    """

    def __init__(
        self,
        model: str | os.PathLike[str] | Model,
        device: str,
        tokenizer: str | os.PathLike[str] | Tokenizer | None = None,
        config: dict[str, Any] | None = None,
        *,
        core: Core | None = None,
    ) -> None:
        self.tokenizer = tokenizer if tokenizer is None or isinstance(tokenizer, Tokenizer) else Tokenizer(tokenizer)
        core = core or Core()
        graph = model if isinstance(model, Model) else core.read_model(model)
        compiled = core.compile_model(_stateful(graph), device, dict(config or {}))
        self.session: DecoderSession = open_session(compiled)
        self.generation_config = GenerationConfig()
        """The configuration ``generate`` uses when given none."""

    def get_generation_config(self) -> GenerationConfig:
        """The default :class:`GenerationConfig` (OpenVINO GenAI's getter)."""
        return self.generation_config

    def set_generation_config(self, config: GenerationConfig) -> None:
        """Sets the default :class:`GenerationConfig`, checked first.

        :raises PropertyValueError: naming a wrong field.
        """
        config.validate()
        self.generation_config = config

    def generate(
        self,
        inputs: str | Sequence[str] | Sequence[int] | Sequence[Sequence[int]] | np.ndarray,
        generation_config: GenerationConfig | None = None,
        streamer: Streamer | StreamerBase | None = None,
        *,
        return_results: bool = False,
        **changes: Any,
    ) -> Any:
        """Generates the continuation of one prompt or of a batch.

        :param inputs: one prompt (a list or 1-D array of token ids, or a text with a tokenizer) or a
            batch (a list of them, or a 2-D array).
        :param generation_config: how to choose tokens (default: :attr:`generation_config`);
            ``changes`` (``max_new_tokens=8``...) update a copy of it.
        :param streamer: called with each token of a single prompt as it is chosen (see :data:`Streamer`).
        :param return_results: return :class:`EncodedResults` (:class:`DecodedResults` with a
            tokenizer), which carry the :class:`PerfMetrics`, instead of the tokens alone.
        :returns: the generated ids of a single prompt (its text with a tokenizer), or a list of them
            for a batch.
        :raises PropertyValueError: naming a wrong field of the configuration.
        :raises InferenceError: for an empty prompt, an id outside the vocabulary, a text without a
            tokenizer, a streamer with a batch, or sequences longer than the cache's capacity. The
            pipeline stays usable after any of these.
        """
        config = (generation_config or self.generation_config).updated(**changes)
        config.validate()
        prompts, single = self._prompts(inputs)
        if streamer is not None and len(prompts) != 1:
            raise InferenceError(
                f"a streamer follows one sequence, and {len(prompts)} prompts were given; stream them one by one"
            )
        self._check(prompts, config)
        started = time.perf_counter()
        compiled_before = self.session.compiles.total
        rng = np.random.default_rng(config.rng_seed)
        sink = _TokenSink(streamer, self.tokenizer)
        results: list[list[int]] = [[] for _ in prompts]
        for length in sorted({len(p) for p in prompts}):
            rows = [i for i, p in enumerate(prompts) if len(p) == length]
            tokens = self._generate_batch(np.array([prompts[i] for i in rows], np.int64), config, rng, sink.push)
            for row, generated in zip(rows, tokens):
                results[row] = generated
        sink.finish()
        ended = time.perf_counter()
        compiled_after = self.session.compiles.total
        metrics = PerfMetrics(
            num_input_tokens=sum(len(p) for p in prompts),
            num_generated_tokens=sum(len(r) for r in results),
            ttft_ms=((sink.first_token or ended) - started) * 1e3,
            generate_duration_ms=(ended - started) * 1e3,
            compile_count=None if compiled_after is None else compiled_after - (compiled_before or 0),
            num_sequences=len(prompts),
        )
        return self._answer(results, single, return_results, metrics)

    def _prompts(self, inputs: Any) -> tuple[list[list[int]], bool]:
        """The prompts as lists of ids, and whether a single prompt was given."""
        if isinstance(inputs, str) or (isinstance(inputs, Sequence) and inputs and isinstance(inputs[0], str)):
            if self.tokenizer is None:
                raise InferenceError(
                    "a text prompt needs a tokenizer: LLMPipeline(model, device, tokenizer='tokenizer.json'); "
                    "or give token ids"
                )
            texts = [inputs] if isinstance(inputs, str) else list(inputs)
            return [self.tokenizer.encode(text) for text in texts], isinstance(inputs, str)
        if isinstance(inputs, np.ndarray):
            if inputs.ndim == 1:
                return [_ids(inputs.tolist(), 0)], True
            if inputs.ndim == 2:
                return [_ids(row, i) for i, row in enumerate(inputs.tolist())], False
            raise InferenceError(f"prompts are a 1-D array of token ids or a 2-D batch, not shape {inputs.shape}")
        if not isinstance(inputs, Sequence):
            raise InferenceError(f"prompts are token ids (a list or array) or text, not {type(inputs).__name__}")
        if inputs and all(isinstance(p, (Sequence, np.ndarray)) for p in inputs):
            return [_ids(list(p), i) for i, p in enumerate(inputs)], False
        return [_ids(list(inputs), 0)], True

    def _check(self, prompts: list[list[int]], config: GenerationConfig) -> None:
        vocab = self.session.vocab_size
        for index, prompt in enumerate(prompts):
            if not prompt:
                raise InferenceError(f"prompt {index} is empty; give at least one token")
            if vocab is not None:
                for position, token in enumerate(prompt):
                    if not 0 <= token < vocab:
                        raise InferenceError(
                            f"prompt {index} holds token id {token} at position {position}, outside the "
                            f"model's vocabulary [0, {vocab})"
                        )
            capacity = self.session.capacity
            if capacity is not None and len(prompt) + config.max_new_tokens > capacity:
                raise InferenceError(
                    f"prompt {index} ({len(prompt)} tokens) and max_new_tokens={config.max_new_tokens} need "
                    f"{len(prompt) + config.max_new_tokens} tokens, more than the cache's capacity of {capacity}"
                )

    def _generate_batch(
        self, prompts: np.ndarray, config: GenerationConfig, rng: np.random.Generator, on_token: Callable[[int], bool]
    ) -> list[list[int]]:
        """Generates for prompts of one length in one request."""
        ending = config.ending_tokens
        generated: list[list[int]] = [[] for _ in prompts]
        finished = [False] * len(prompts)
        logits = self.session.prefill(prompts, rows=prompts.shape[1] + config.max_new_tokens)
        for count in range(config.max_new_tokens):
            tokens = next_tokens(logits, config, rng)
            stop = False
            for row, token in enumerate(tokens.tolist()):
                if finished[row]:
                    continue
                if token in ending:
                    finished[row] = True
                    continue
                generated[row].append(token)
                stop = on_token(token) or stop
            if stop or all(finished) or count + 1 == config.max_new_tokens:
                break
            logits = self.session.step(tokens)
        return generated

    def _answer(self, results: list[list[int]], single: bool, return_results: bool, metrics: PerfMetrics) -> Any:
        if self.tokenizer is None:
            if return_results:
                return EncodedResults(results, metrics)
            return results[0] if single else results
        texts = [self.tokenizer.decode(r) for r in results]
        if return_results:
            return DecodedResults(texts, results, metrics)
        return texts[0] if single else texts


class _TokenSink:
    """Where each chosen token goes: the first one's time is noted, and the streamer gets it (its
    text piece with a tokenizer; what a piece held back at the end, when the generation ends)."""

    def __init__(self, streamer: Any, tokenizer: Tokenizer | None) -> None:
        write = getattr(streamer, "write", None)
        self.streamer: Streamer | None = write if callable(write) else streamer
        self.end = getattr(streamer, "end", None) if callable(write) else None
        self.text = TextStream(tokenizer) if streamer is not None and tokenizer is not None else None
        self.first_token: float | None = None

    def push(self, token: int) -> bool:
        """Takes one token; True when the streamer asks to stop."""
        if self.first_token is None:
            self.first_token = time.perf_counter()
        if self.streamer is None:
            return False
        if self.text is None:
            return _stops(self.streamer(token))
        piece = self.text.push(token)
        return _stops(self.streamer(piece)) if piece else False

    def finish(self) -> None:
        """Gives the streamer the text held back, if any, and calls its ``end()`` if it has one."""
        rest = self.text.flush() if self.text is not None else ""
        if rest and self.streamer is not None:
            self.streamer(rest)
        if callable(self.end):
            self.end()


def _ids(values: Sequence[Any], index: int) -> list[int]:
    """A prompt's ids as Python ints; anything else is an error naming the prompt."""
    ids = []
    for position, value in enumerate(values):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise InferenceError(f"prompt {index} holds {value!r} at position {position}; token ids are integers")
        ids.append(int(value))
    return ids


def _stateful(model: Model) -> Model:
    """``model`` itself when it is stateful or has no ``past_key_values``/``present`` pairs; else a
    stateful copy."""
    if model.is_stateful() or not find_kv_cache_pairs(model):
        return model
    try:
        return make_stateful(model.clone())
    except ModelValidationError:  # pairs that cannot be variables: the pipeline feeds the cache itself
        return model
