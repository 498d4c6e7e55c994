"""Weights stored on the device in the layout their consumer's lowering reads.

A lowering may declare, by op type, the layout in which it reads some of its inputs
(:func:`input_layout`): a convolution its filter ``[O, I, kh, kw]`` as ``[kh, kw, I, O]``, the layout
XLA:CPU's convolution reads. A weight feeding such an input (a large Constant, which the executable
takes as an argument: :func:`~hetero_sdk_jax.lowering.weights_of`) is then transformed once, in numpy,
when the model is compiled, and stored on the device in that layout only: the executable receives it
ready, and XLA copies nothing per call (it used to copy YOLOv8n's 29 3x3 filters, 8.8 MB, on every
call). A small Constant is transformed in numpy while tracing (it is baked into the program); a
computed tensor (a dequantized filter, say) is transformed by XLA on each call, as before.

The graph interpreter hands such an input to the lowering as :class:`Prepared` (the array in the
declared layout); the lowering reads it with :meth:`WeightLayout.read`, which also takes the input as
the graph has it (a caller that is not the interpreter) and transforms it then.
"""

from __future__ import annotations

import mmap
import threading
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import jax.numpy as jnp
import numpy as np
from hetero_sdk import Node
from hetero_sdk.errors import CompilationError, UnsupportedOperationError
from hetero_sdk.plugin import Registry

__all__ = [
    "INPUT_LAYOUTS", "Prepared", "PreparedByIdentity", "WeightLayout", "aligned_read_only", "input_layout",
    "input_layouts", "release_pages",
]  # fmt: skip

_ALIGNMENT = 64
"""XLA:CPU uses a host array as a device buffer without copying it when it is read-only and this aligned."""


@dataclass(frozen=True)
class WeightLayout:
    """How a lowering reads one input: the graph's array transposed by ``permutation``, the axes
    ``flip`` (of the transposed array) reversed, then reshaped to ``shape`` (None: kept).

    Equal layouts compare equal (a weight read the same way by two ops is stored once).
    """

    permutation: tuple[int, ...]
    shape: tuple[int, ...] | None = None
    flip: tuple[int, ...] = ()

    def prepare(self, value: np.ndarray) -> np.ndarray:
        """``value`` in this layout: a new C-contiguous, read-only array aligned for XLA:CPU to use as
        its device buffer without a copy (:func:`aligned_read_only`)."""
        moved = np.transpose(value, self.permutation)
        if self.flip:
            moved = np.flip(moved, self.flip)
        prepared = aligned_read_only(moved if self.shape is None else moved.reshape(self.shape))
        release_pages(value)
        return prepared

    def apply(self, value: Any) -> Any:
        """A traced ``value`` in this layout (XLA then transforms it on each call)."""
        moved = jnp.transpose(value, self.permutation)
        if self.flip:
            moved = jnp.flip(moved, self.flip)
        return moved if self.shape is None else moved.reshape(self.shape)

    def read(self, value: Any) -> Any:
        """The input in this layout: the array of a :class:`Prepared` input in it, else ``value`` (the
        input as the graph has it) transformed.

        :raises CompilationError: for an input prepared in another layout (a lowering and its
            declared layouts that disagree).
        """
        if isinstance(value, Prepared):
            if value.layout != self:
                raise CompilationError(f"XLA: an input prepared as {value.layout} was read as {self}")
            return value.array
        return self.apply(value)


@dataclass(frozen=True)
class Prepared:
    """An input already in the layout its lowering declared (see :meth:`WeightLayout.read`).

    :ivar array: the values in ``layout`` (a device argument, or a constant of the program).
    :ivar layout: the layout.
    """

    array: Any
    layout: WeightLayout

    @property
    def dtype(self) -> Any:
        """The element type (the same in every layout)."""
        return self.array.dtype


def aligned_read_only(value: np.ndarray) -> np.ndarray:
    """A read-only C-contiguous copy of ``value`` starting on a 64-byte boundary, so that JAX on the CPU
    makes it the device buffer itself instead of copying it (one copy of the weight in memory)."""
    raw = np.empty(value.nbytes + _ALIGNMENT, np.uint8)
    start = -raw.ctypes.data % _ALIGNMENT
    out = raw[start : start + value.nbytes].view(value.dtype).reshape(value.shape)
    out[...] = value
    out.flags.writeable = False
    return out


def release_pages(value: np.ndarray) -> None:
    """Lets the OS take back the pages of a memory-mapped ``value`` (a weight read from a file) that the
    process has read: after its transformed copy is made, the process holds that copy alone, not both
    (a later read of ``value`` reads the file again). Nothing for an array in ordinary memory."""
    base: object = value
    while isinstance(base, (np.ndarray, memoryview)) and not isinstance(base, mmap.mmap):
        base = base.obj if isinstance(base, memoryview) else base.base
    if not isinstance(base, mmap.mmap) or not hasattr(mmap, "MADV_DONTNEED") or not value.flags.c_contiguous:
        return
    try:
        start = value.ctypes.data - np.frombuffer(base, np.uint8).ctypes.data
    except ValueError:  # a closed map
        return
    first = -(-start // mmap.PAGESIZE) * mmap.PAGESIZE  # whole pages inside the array only
    last = (start + value.nbytes) // mmap.PAGESIZE * mmap.PAGESIZE
    if 0 <= first < last <= len(base):
        base.madvise(mmap.MADV_DONTNEED, first, last - first)


InputLayouts = Callable[[Node], "dict[int, WeightLayout]"]
"""``layouts(node) -> {input index: layout}``: how the lowering of ``node``'s op type reads those inputs;
a pure function of the node (its attributes and static shapes), called before tracing."""

INPUT_LAYOUTS: Registry[InputLayouts] = Registry("XLA input layout", UnsupportedOperationError)
"""The declared input layouts, by op type (beside the op type's lowering)."""

input_layout = INPUT_LAYOUTS
"""Registers the decorated function as the input layouts of each op type named:
``@input_layout("Convolution")``. The op's lowering must read those inputs with
:meth:`WeightLayout.read`."""


def input_layouts(node: Node) -> dict[int, WeightLayout]:
    """The layouts in which the lowering of ``node`` reads some of its inputs (none for most ops)."""
    layouts = INPUT_LAYOUTS.find(node.type_name)
    return {} if layouts is None else layouts(node)


class PreparedByIdentity:
    """``transform(array)`` of read-only constant arrays, by the identity of the array each comes from,
    kept while it lives: a lowering's ``prepare`` hook must give the same array each time it is asked for
    one constant (it is then one weight of the executable)."""

    def __init__(self, transform: Callable[[np.ndarray], np.ndarray]) -> None:
        self._transform = transform
        self._entries: dict[int, tuple[weakref.ref[np.ndarray], np.ndarray]] = {}
        self._lock = threading.Lock()

    def get(self, value: np.ndarray) -> np.ndarray:
        """The transformed ``value``: computed on first use, then the same array while ``value`` lives."""
        with self._lock:
            entry = self._entries.get(id(value))
            if entry is not None and entry[0]() is value:
                return entry[1]
            prepared = self._transform(value)
            self._entries[id(value)] = (weakref.ref(value), prepared)
        weakref.finalize(value, self._forget, id(value), prepared)
        return prepared

    def _forget(self, key: int, prepared: np.ndarray) -> None:
        with self._lock:
            if key in self._entries and self._entries[key][1] is prepared:
                del self._entries[key]
