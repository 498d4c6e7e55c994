"""How many executables a compiled model compiled while a generation ran, where its device tells.

A device that compiles one executable per input shape (XLA) says so through public attributes of its
compiled model, read here by duck typing (the SDK never imports a device): ``compile_count``, the
number of executables compiled so far, or ``cached_shapes``, the input shapes of the executables it
keeps (a shape that appears after a run was compiled by that run). The compiled models inside a
wrapper's ``compiled`` (HETERO's submodels, a stateful model's explicit form) are searched too. A
device that tells neither is not counted.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from hetero_sdk.runtime import CompiledModel

__all__ = ["CompileCounter", "compiled_so_far"]


def _reporting(compiled: Any) -> list[Any]:
    """``compiled`` and the compiled models inside it that report their executables."""
    found = [compiled] if _snapshot(compiled) is not None else []
    inner = getattr(compiled, "compiled", None)
    for part in [inner] if isinstance(inner, CompiledModel) else inner if isinstance(inner, (list, tuple)) else ():
        if isinstance(part, CompiledModel):
            found += _reporting(part)
    return found


def _snapshot(compiled: Any) -> int | frozenset[Any] | None:
    count = getattr(compiled, "compile_count", None)
    if isinstance(count, int) and not isinstance(count, bool):
        return count
    shapes = getattr(compiled, "cached_shapes", None)
    if isinstance(shapes, (list, tuple)):
        return frozenset(shapes)
    return None


def _compiled_between(before: int | frozenset[Any] | None, after: int | frozenset[Any] | None) -> int:
    if isinstance(before, int) and isinstance(after, int):
        return after - before
    if isinstance(before, frozenset) and isinstance(after, frozenset):
        return len(after - before)
    return 0


def compiled_so_far(compiled: CompiledModel) -> int | None:
    """The executables ``compiled`` (and the compiled models inside it) have compiled so far; None when
    its device does not tell."""
    snapshots = [_snapshot(c) for c in _reporting(compiled)]
    if not snapshots:
        return None
    return sum(s if isinstance(s, int) else len(s) for s in snapshots if s is not None)


class CompileCounter:
    """Counts the executables a compiled model compiles during the runs made inside :meth:`counting`.

    :param compiled: the compiled model the runs use.
    """

    def __init__(self, compiled: CompiledModel) -> None:
        self._reporting = _reporting(compiled)
        self.total: int | None = 0 if self._reporting else None
        """The executables compiled so far in counted runs; None when the device does not tell."""

    @contextmanager
    def counting(self) -> Iterator[None]:
        """Adds the executables compiled while the block runs to :attr:`total`."""
        if self.total is None:
            yield
            return
        before = [_snapshot(c) for c in self._reporting]
        try:
            yield
        finally:
            after = [_snapshot(c) for c in self._reporting]
            self.total += sum(_compiled_between(b, a) for b, a in zip(before, after))
