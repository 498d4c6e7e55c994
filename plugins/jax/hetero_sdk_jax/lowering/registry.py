"""The registry of lowerings: op type -> a function computing the op with ``jax.numpy`` and ``jax.lax``."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import jax.numpy as jnp
import numpy as np
from jax import lax

__all__ = ["Lowering", "get_lowering", "lowering", "lowering_types", "precision_of", "widened"]

LoweringFn = Callable[..., Any]
"""``fn(node, *inputs) -> array | tuple of arrays``: inputs listed as static are numpy arrays (their
values are known while tracing), the others ``jax.Array`` tracers."""


@dataclass(frozen=True)
class Lowering:
    """How one op type is computed by XLA.

    :ivar type_name: the op type.
    :ivar fn: the function tracing the op.
    :ivar static: input indices whose values must be known at compile time (axes, target shapes,
        pads...): with static shapes only, XLA needs them to know the output's shape.
    """

    type_name: str
    fn: LoweringFn
    static: frozenset[int]


_LOWERINGS: dict[str, Lowering] = {}


def lowering(*type_names: str, static: tuple[int, ...] = ()) -> Callable[[LoweringFn], LoweringFn]:
    """Registers the decorated function as the lowering of each of ``type_names`` (see :class:`Lowering`)."""

    def decorate(fn: LoweringFn) -> LoweringFn:
        for type_name in type_names:
            if type_name in _LOWERINGS:
                raise ValueError(f"a lowering for '{type_name}' is registered already")
            _LOWERINGS[type_name] = Lowering(type_name, fn, frozenset(static))
        return fn

    return decorate


def get_lowering(type_name: str) -> Lowering | None:
    """The lowering of ``type_name``, or None when XLA cannot run it."""
    _load_families()
    return _LOWERINGS.get(type_name)


def lowering_types() -> list[str]:
    """Every op type with a lowering, sorted."""
    _load_families()
    return sorted(_LOWERINGS)


def widened(x: jnp.ndarray) -> jnp.ndarray:
    """f16 and bf16 computed in f32 (as the reference kernels do); other types unchanged."""
    return x.astype(jnp.float32) if jnp.issubdtype(x.dtype, jnp.floating) and x.dtype.itemsize < 4 else x


def precision_of(dtype: Any) -> lax.Precision:
    """Full precision for f32 and f64 matrix products (no TF32 on GPUs); the default for 16-bit types."""
    return lax.Precision.HIGHEST if np.dtype(dtype).itemsize >= 4 else lax.Precision.DEFAULT


def _load_families() -> None:
    import hetero_sdk_jax.lowering.families  # noqa: F401  (registers every family on import)
