"""The model side of generation: a :class:`DecoderSession` takes token ids and gives the last
position's logits, and keeps everything about the cache to itself, so the pipeline drives an
explicit-cache decoder and a stateful one alike (and a fixed-capacity cache can be plugged in as one
more session).

- :class:`ExplicitCacheSession`: the cache goes in and out of the model (``past_key_values.N.key|value``
  inputs, ``present.N.key|value`` outputs, as torch and optimum export decoders): the first call gets
  an empty past ``[batch, kv_heads, 0, head_dim]``, every later one the previous call's present.
- :class:`StatefulSession`: the cache stays in the request (``ReadValue``/``Assign`` variables, see
  ``hetero_sdk.make_stateful``): a new sequence resets the request's state; optimum-intel's
  ``beam_idx`` input gets ``arange(batch)`` (no beam reordering).

Both fill ``attention_mask`` with ones over the whole sequence (the cached tokens and the new ones)
and ``position_ids``, when the model has it, with the new tokens' positions.
"""

from __future__ import annotations

import abc
import re
from collections.abc import Callable
from typing import Any

import numpy as np

from hetero_sdk.errors import InferenceError, ModelValidationError
from hetero_sdk.genai.compiles import CompileCounter
from hetero_sdk.graph import Model, Output
from hetero_sdk.runtime import CompiledModel, InferRequest

__all__ = ["DecoderSession", "ExplicitCacheSession", "StatefulSession", "open_session"]

PAST_INPUT = re.compile(r"^past_key_values\.(\d+)\.(key|value)$")
"""The cache inputs of torch, optimum and onnxruntime-genai exports; ``present.N.key|value`` feed them."""


class DecoderSession(abc.ABC):
    """One request of a decoder, fed token ids, returning the logits of each sequence's last position.

    :param compiled: the compiled decoder; it needs an ``input_ids`` input and a ``logits`` output
        (or a first output) shaped ``[batch, tokens, vocab]``.
    :param capacity: the most tokens a sequence may hold (a fixed-capacity cache); None: no limit.
    :raises ModelValidationError: naming what the model lacks.
    """

    def __init__(self, compiled: CompiledModel, capacity: int | None = None) -> None:
        self.compiled = compiled
        self.capacity = capacity
        self.request: InferRequest = compiled.create_infer_request()
        self.inputs: dict[str, Output] = {port.any_name: port for port in compiled.inputs}
        _require_input_ids(compiled)
        outputs = {port.any_name: port for port in compiled.outputs}
        self.logits: Output = outputs.get("logits", compiled.outputs[0])
        self.vocab_size: int | None = _vocab_size(compiled.model, self.logits)
        """The number of token ids (the logits' last dimension, else the embedding table's rows)."""
        self.length = 0
        """The tokens each sequence holds in the cache."""
        self.batch = 0
        self.compiles = CompileCounter(compiled)
        """The executables compiled by this session's runs (``compiles.total``; None: not told)."""

    def prefill(self, ids: np.ndarray, rows: int | None = None) -> np.ndarray:
        """Starts new sequences with the prompts ``ids`` (``[batch, tokens]``, one length) and returns
        the logits of their last position, ``[batch, vocab]``.

        :param rows: how long the sequences may grow (prompt and new tokens), so that a cache kept in
            fixed-capacity buffers is made that large at once.
        """
        self.reset()
        self.batch = int(ids.shape[0])
        if rows is not None:
            self._reserve(rows)
        return self._feed(ids)

    def _reserve(self, rows: int) -> None:
        """Prepares the cache for sequences of ``rows`` tokens (nothing to do by default)."""
        return None

    def step(self, ids: np.ndarray) -> np.ndarray:
        """Appends one token to each sequence (``ids``: ``[batch]``) and returns the next logits."""
        return self._feed(np.asarray(ids).reshape(self.batch, 1))

    def reset(self) -> None:
        """Forgets the sequences (the cache); the session can start new ones."""
        self.length = 0
        self.batch = 0

    def _feed(self, ids: np.ndarray) -> np.ndarray:
        count = int(ids.shape[1])
        if self.capacity is not None and self.length + count > self.capacity:
            raise InferenceError(
                f"a sequence of {self.length + count} tokens does not fit the cache's capacity of "
                f"{self.capacity} tokens; shorten the prompt or lower max_new_tokens"
            )
        total = self.length + count
        inputs: dict[str, np.ndarray] = {"input_ids": self._typed("input_ids", ids)}
        if "attention_mask" in self.inputs:
            inputs["attention_mask"] = self._typed("attention_mask", np.ones((self.batch, total)))
        if "position_ids" in self.inputs:
            positions = np.broadcast_to(np.arange(self.length, total), (self.batch, count))
            inputs["position_ids"] = self._typed("position_ids", positions)
        inputs.update(self._cache_inputs())
        with self.compiles.counting():
            results = self.request.infer(inputs)
        self._keep(results)
        self.length = total
        logits = np.asarray(results[self.logits])
        last = logits[:, -1, :] if logits.ndim == 3 else logits
        if np.issubdtype(last.dtype, np.floating) and np.isnan(last).any():
            raise InferenceError(
                f"model '{self.compiled.model.friendly_name}' gave NaN logits after {total} tokens: the sequence "
                "may be longer than the model supports (its positions, its rotary tables); shorten the prompt or "
                "lower max_new_tokens"
            )
        return last

    def _typed(self, name: str, values: Any) -> np.ndarray:
        return np.ascontiguousarray(values, dtype=self.inputs[name].element_type.numpy)

    @abc.abstractmethod
    def _cache_inputs(self) -> dict[str, np.ndarray]:
        """The inputs that carry or steer the cache on the next call."""

    @abc.abstractmethod
    def _keep(self, results: Any) -> None:
        """Keeps what the next call needs from ``results``."""


class ExplicitCacheSession(DecoderSession):
    """A decoder whose cache is its own inputs and outputs: ``past_key_values.N.key|value`` in,
    ``present.N.key|value`` out, ``[batch, kv_heads, length, head_dim]``. ``kv_heads`` and ``head_dim``
    are read from the input's shape, else from the output's (onnxruntime-genai's builder leaves the
    inputs' head size unnamed, and its GroupQueryAttention's outputs know it)."""

    def __init__(self, compiled: CompiledModel, capacity: int | None = None) -> None:
        super().__init__(compiled, capacity)
        outputs = {port.any_name: port for port in compiled.outputs}
        self.pairs: dict[str, str] = {}
        """Each past input's name with the present output's name that feeds it."""
        self._empty: dict[str, tuple[int, int]] = {}
        for name, port in self.inputs.items():
            if PAST_INPUT.match(name):
                present = "present" + name[len("past_key_values") :]
                if present not in outputs:
                    raise ModelValidationError(
                        f"model '{compiled.model.friendly_name}': the cache input '{name}' has no output "
                        f"'{present}' to feed it on the next call"
                    )
                shape = port.partial_shape.merge(outputs[present].partial_shape) or port.partial_shape
                dims = shape.dims if shape.rank_is_static else ()
                if len(dims) != 4 or dims[1] < 0 or dims[3] < 0:
                    raise ModelValidationError(
                        f"model '{compiled.model.friendly_name}': the cache input '{name}' has shape "
                        f"{port.partial_shape} and the output '{present}' {outputs[present].partial_shape}; "
                        "expected [batch, kv_heads, length, head_dim] with kv_heads and head_dim static in one of them"
                    )
                self.pairs[name] = present
                self._empty[name] = (dims[1], dims[3])
        self._past: dict[str, np.ndarray] = {}

    def reset(self) -> None:
        super().reset()
        self._past = {}

    def _cache_inputs(self) -> dict[str, np.ndarray]:
        if self._past:
            return self._past
        empty = {}
        for name in self.pairs:
            heads, width = self._empty[name]
            empty[name] = np.zeros((self.batch, heads, 0, width), self.inputs[name].element_type.numpy)
        return empty

    def _keep(self, results: Any) -> None:
        self._past = {name: np.asarray(results[present]) for name, present in self.pairs.items()}


class StatefulSession(DecoderSession):
    """A decoder whose cache lives in the request's variables (``InferRequest.query_state()``): a new
    sequence resets them; a ``beam_idx`` input gets ``arange(batch)``."""

    def __init__(self, compiled: CompiledModel, capacity: int | None = None) -> None:
        super().__init__(compiled, capacity)
        reset_state = getattr(self.request, "reset_state", None)
        if not callable(reset_state):
            raise ModelValidationError(
                f"model '{compiled.model.friendly_name}': its requests keep no state (no reset_state()); "
                "a stateful decoder needs a runtime with ReadValue/Assign variables"
            )
        self._reset_state: Callable[[], None] = reset_state

    def reset(self) -> None:
        super().reset()
        self._reset_state()

    def _reserve(self, rows: int) -> None:
        reserve = getattr(self.request, "reserve_state", None)
        if callable(reserve):
            reserve(rows)

    def _cache_inputs(self) -> dict[str, np.ndarray]:
        if "beam_idx" in self.inputs:
            return {"beam_idx": self._typed("beam_idx", np.arange(self.batch))}
        return {}

    def _keep(self, results: Any) -> None:
        return None


def open_session(compiled: CompiledModel, capacity: int | None = None) -> DecoderSession:
    """The session that drives ``compiled``: explicit-cache when it has ``past_key_values.N.key|value``
    inputs, stateful when its requests hold variables.

    :raises ModelValidationError: when it is neither, naming its inputs.
    """
    _require_input_ids(compiled)
    names = [port.any_name for port in compiled.inputs]
    if any(PAST_INPUT.match(name) for name in names):
        return ExplicitCacheSession(compiled, capacity)
    request = compiled.create_infer_request()
    query = getattr(request, "query_state", None)
    if callable(query) and query():
        return StatefulSession(compiled, capacity)
    raise ModelValidationError(
        f"model '{compiled.model.friendly_name}' keeps no cache: it has neither past_key_values.N.key|value "
        f"inputs nor state variables (inputs: {', '.join(names)}); export it with its cache "
        "(use_cache=True) or make it stateful with hetero_sdk.make_stateful"
    )


def _require_input_ids(compiled: CompiledModel) -> None:
    names = [port.any_name for port in compiled.inputs]
    if "input_ids" not in names:
        raise ModelValidationError(
            f"model '{compiled.model.friendly_name}' has no 'input_ids' input, so it is not a decoder the "
            f"pipeline can drive (inputs: {', '.join(names)})"
        )


def _vocab_size(model: Model, logits: Output) -> int | None:
    """The logits' static last dimension, else the rows of the constant table that ``input_ids``
    indexes (through Converts); None when neither is known."""
    dims = logits.partial_shape.dims
    if dims and dims[-1] >= 0:
        return int(dims[-1])
    consumers = model.consumers()
    frontier = [p.output(0) for p in model.get_parameters() if p.friendly_name == "input_ids"]
    while frontier:
        port = frontier.pop()
        for node, index in consumers.get(port, []):
            if node.type_name == "Convert":
                frontier.append(node.output(0))
            elif node.type_name == "Gather" and index == 1:
                rows = node.input_value(0).partial_shape.dims
                if node.input_value(0).node.type_name == "Constant" and rows and rows[0] >= 0:
                    return int(rows[0])
    return None
