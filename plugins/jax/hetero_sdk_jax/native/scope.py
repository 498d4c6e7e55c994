"""Whether the lowering being traced may call native kernels: set by the compiled model around its
lowering (the device's platform and its ``XLA_NATIVE_KERNELS`` property), read by lowerings."""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from hetero_sdk_jax.native.kernels import available

__all__ = ["native_scope", "scoped", "use_native"]


@dataclass(frozen=True)
class _Scope:
    platform: str
    enabled: bool


_SCOPE: contextvars.ContextVar[_Scope | None] = contextvars.ContextVar("hetero_sdk_jax_native_scope", default=None)


@contextlib.contextmanager
def native_scope(platform: str, enabled: bool) -> Iterator[None]:
    """Lowerings traced inside may call native kernels when ``enabled`` and ``platform`` is ``cpu``."""
    token = _SCOPE.set(_Scope(platform, enabled))
    try:
        yield
    finally:
        _SCOPE.reset(token)


def scoped(function: Callable[..., Any], platform: str, enabled: bool) -> Callable[..., Any]:
    """``function`` run inside :func:`native_scope` (for a source traced again later, as an export does)."""

    def run(*args: Any) -> Any:
        with native_scope(platform, enabled):
            return function(*args)

    return run


def use_native(target: str) -> bool:
    """True when the lowering being traced may call kernel ``target``: inside a :func:`native_scope` for the
    CPU with native kernels on, and the kernel is built and registered (:func:`~.kernels.available`).
    Outside any scope (a graph lowered by other code): False, the pure-XLA path."""
    scope = _SCOPE.get()
    return scope is not None and scope.enabled and scope.platform == "cpu" and available(target)
