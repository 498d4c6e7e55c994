"""The registry of lowerings: op type -> a function computing the op with ``jax.numpy`` and ``jax.lax``.

An op whose definition carries an array-API kernel (:attr:`hetero_sdk.ops.OpDef.evaluate`) needs no
lowering of its own: XLA traces that kernel with ``jax.numpy``. This registry holds the rest, and the
ops XLA computes better its own way.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from hetero_sdk.errors import UnsupportedOperationError
from hetero_sdk.plugin import OPS, OpDef, Registry, device_kernel, widened
from jax import lax

__all__ = [
    "LOWERINGS",
    "LOWERING_CHECKS",
    "Lowering",
    "lowering_check",
    "get_lowering",
    "lowering",
    "lowering_types",
    "precision_of",
    "widened",
]

LoweringFn = Callable[..., Any]
"""``fn(node, *inputs) -> array | tuple of arrays``: inputs whose values decide output shapes are
numpy arrays (their values are known while tracing), the others ``jax.Array`` tracers."""


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


LOWERINGS: Registry[LoweringFn] = Registry("XLA lowering", UnsupportedOperationError)
"""XLA's own lowerings, by op type."""

lowering = LOWERINGS
"""Registers the decorated function as the lowering of each op type named: ``@lowering("MatMul")``."""

LoweringCheck = Callable[[Any], "str | None"]
"""``check(node) -> reason or None``: why XLA cannot run a node its lowering handles in general."""

LOWERING_CHECKS: Registry[LoweringCheck] = Registry("XLA lowering check", UnsupportedOperationError)
"""Checks of the ops XLA runs only in some configurations (control flow with shapes that stay static)."""

lowering_check = LOWERING_CHECKS
"""Registers the decorated function as the check of each op type named: ``@lowering_check("Loop")``."""


def get_lowering(op: OpDef | str) -> Lowering | None:
    """How XLA computes an op: its own lowering, else its definition's array-API kernel; None when
    XLA cannot run it (no kernel, or output shapes that depend on input values)."""
    definition = op if isinstance(op, OpDef) else OPS.get(op)
    fn = LOWERINGS.find(definition.type_name) or device_kernel(
        definition.type_name, "XLA", evaluate=not definition.data_dependent
    )
    if fn is None and not definition.data_dependent:
        fn = definition.evaluate
    return None if fn is None else Lowering(definition.type_name, fn, definition.shape_inputs())


def lowering_types() -> list[str]:
    """Every op type XLA can lower, sorted."""
    return sorted(t for t, op in OPS.items() if get_lowering(op) is not None)


def precision_of(dtype: Any) -> lax.Precision:
    """Full precision for f32 and f64 matrix products (no TF32 on GPUs); the default for 16-bit types."""
    return lax.Precision.HIGHEST if np.dtype(dtype).itemsize >= 4 else lax.Precision.DEFAULT
