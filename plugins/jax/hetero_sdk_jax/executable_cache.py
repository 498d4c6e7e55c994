"""The bounded, thread-safe cache of executables that both compile paths of the XLA compiled model keep
(by input shapes; by input shapes and specialised values), and the ahead-of-time compile they share."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

import jax
import jax.export
import numpy as np
from hetero_sdk.errors import CompilationError, HeteroSDKError

from hetero_sdk_jax.context import x64_scope

__all__ = ["Executable", "ExecutableCache", "compile_ahead"]

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


@dataclass
class Executable:
    """One XLA executable, the weights it takes after the model's inputs, and how to export it
    (traced again on demand, or kept from an import).

    :ivar weights: the device buffers of the weights (:func:`~hetero_sdk_jax.lowering.weights_of`),
        passed after the inputs on every call.
    :ivar host_weights: the same weights on the host (the graph's own arrays, not copies; None for one
        stored in another layout, read back from its device buffer when exported): an export bakes
        them into the program, so that a blob holds everything it runs.
    """

    compiled: Any
    source: Callable[..., Any] | None = None
    exported: jax.export.Exported | None = None
    weights: tuple[Any, ...] = ()
    host_weights: tuple[Any, ...] = ()
    lock: threading.Lock = field(default_factory=threading.Lock)

    def call(self, *arguments: Any) -> Any:
        """Runs the executable on the model's inputs (its weights added). The first call swaps this
        method for the C++ dispatch function that ``jax.stages.Compiled`` creates on its first call and
        then forwards to (skipping one Python frame a call); ``compiled`` itself where JAX keeps none."""
        weights = self.weights
        outputs = self.compiled(*arguments, *weights)
        fast = getattr(self.compiled, "_call", None) or self.compiled
        self.call = (lambda *inputs: fast(*inputs, *weights)) if weights else fast  # type: ignore[method-assign]
        return outputs

    def exportable_source(self) -> Callable[..., Any]:
        """The traced function of the model's inputs alone: the weights closed over as constants (in the
        layouts the executable receives them in)."""
        assert self.source is not None
        source = self.source
        weights = tuple(np.asarray(d) if h is None else h for h, d in zip(self.host_weights, self.weights))
        return (lambda *inputs: source(*inputs, *weights)) if weights else source


class ExecutableCache(Generic[K, V]):
    """Executables by key, the last ``size`` used kept (least recently used first out).

    :param size: how many to keep (``XLA_SHAPE_CACHE_SIZE``).
    """

    def __init__(self, size: int) -> None:
        self.size = size
        self._items: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.RLock()  # a make() may read the keys (an error listing them)

    def get_or_make(self, key: K, make: Callable[[], V]) -> V:
        """The executable for ``key``, made by ``make()`` (under the lock, so once) when not kept."""
        with self._lock:
            found = self._items.get(key)
            if found is not None:
                self._items.move_to_end(key)
                return found
            made = make()
            self._items[key] = made
            while len(self._items) > self.size:
                self._items.popitem(last=False)
            return made

    def preload(self, key: K, value: V) -> None:
        """Keeps ``value`` for ``key`` without dropping any (an imported model's executables, all of
        them, before the cache is shared)."""
        self._items[key] = value

    def kept_keys(self) -> list[K]:
        """The keys kept, least recently used first."""
        with self._lock:
            return list(self._items)

    def items(self) -> list[tuple[K, V]]:
        """The entries kept, least recently used first."""
        with self._lock:
            return list(self._items.items())

    def __bool__(self) -> bool:
        return bool(self._items)


def compile_ahead(source: Callable[..., Any], specs: Sequence[jax.ShapeDtypeStruct], sharding: Any, x64: bool,
                  describe: Callable[[], str], options: Mapping[str, Any],
                  donated: tuple[int, ...] = ()) -> Any:  # fmt: skip
    """``jax.jit(source).lower(*specs).compile(options)`` in the model's 64-bit mode.

    :param describe: what failed, for the message (``device X: XLA failed to compile 'm' for ...``).
    :param options: XLA's compile options (:attr:`hetero_sdk_jax.backend.Backend.compiler_options`).
    :param donated: the arguments whose buffers XLA may reuse for outputs (``donate_argnums``).
    :raises CompilationError: when XLA fails (SDK errors raised while tracing pass through as they are).
    """
    try:
        with x64_scope(x64):
            jitted = jax.jit(source, out_shardings=sharding, donate_argnums=donated)
            return jitted.lower(*specs).compile(dict(options))
    except HeteroSDKError:
        raise
    except Exception as exc:
        raise CompilationError(f"{describe()}: {type(exc).__name__}: {exc}") from exc
