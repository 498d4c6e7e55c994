"""XLA's lowerings of the activations of :mod:`hetero_sdk_contrib.ops_activation` (imported only when
XLA runs one: the package imports without jax)."""

from __future__ import annotations

import math
from typing import Any

from hetero_sdk import Node
from hetero_sdk.plugin import widened
from jax import lax

__all__ = ["bias_gelu"]


def bias_gelu(node: Node, data: Any, bias: Any) -> Any:
    """Gelu (erf form) of ``data + bias``, in f32 for 16-bit floats."""
    x = widened(data) + widened(bias)
    return 0.5 * x * (1 + lax.erf(x * (1 / math.sqrt(2))))
