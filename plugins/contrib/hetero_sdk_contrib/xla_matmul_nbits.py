"""XLA's lowering of :mod:`hetero_sdk_contrib.ops_matmul_nbits`'s MatMulNBits (imported only when XLA runs
one: the package imports without jax).

Where the packed weight, scales, zero points and ``g_idx`` are Constants:

- on the CPU, where the device's native kernels are on and built (:mod:`hetero_sdk_jax.native`) and the
  kernel takes the form (2, 4 or 8 bits, u8 or no zero points, ``g_idx`` absent or in order, a weight row
  a whole number of 16 bytes), :func:`prepare` hands the executable the packed bytes as they are, the
  scales as f32 and one u8 zero point per block, and each call runs the native kernel
  (:mod:`.xla_matmul_nbits_native`), reading the packed bytes: 4.6 bits a weight at 4 bits, block 32;
- otherwise the weight is dequantized once when the model compiles (shared with TEMPLATE through
  :func:`~hetero_sdk_contrib.ops_matmul_nbits.prepared_weight`) and handed to the executable as an f32
  weight argument, moved to the device once; each call is then one f32 matrix product.

Either way the result is the op's contract: the dequantized weight times the f32 activations, summed in
f32. A weight fed as a model input is dequantized inside the computation each call. Bias is added in XLA.

Measured on XLA:CPU, one thread, int4, block 32, K = N = 2048 (``bench/bench_matmul_nbits.py``,
``bench/README.md``, docs/xla.md "Native kernels"): the native kernel takes 0.86x ONNX Runtime's time at
``accuracy_level=0`` for one row, where the f32 weight takes 1.82x; the f32 product catches up around 64
rows and is faster at 256 (1.30x against 1.67x), which the kernel keeps anyway rather than hold the f32
weight beside the packed one. Weights of fewer than ``MIN_WEIGHTS`` values keep the f32 path (XLA fuses
their small products). Of what XLA compiles itself
(``bench/bench_xla_nbits_options.py``), the f32 weight is the fastest: the 8-bit ``q - zero point`` weight
takes 2-5x as long, native ``uint4`` weights 3-6x, unpacking the packed bytes every call 4-9x; its price
is memory, ``4 N K`` bytes per weight, 8 times the packed 4-bit weight, read in full by every decode step.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import jax.numpy as jnp
import numpy as np
from hetero_sdk import Node
from jax import lax

from hetero_sdk_contrib.ops_matmul_nbits import dequantized_weight, prepared_weight
from hetero_sdk_contrib.xla_matmul_nbits_native import native_matmul, native_operands, runs_natively

__all__ = ["matmul_nbits", "prepare"]

_WEIGHT_INPUTS = (1, 2, 3, 4)
"""B, scales, zero_points and g_idx: what the prepared f32 weight stands for."""


def prepare(node: Node, values: Sequence[np.ndarray | None]) -> dict[int, np.ndarray | None]:
    """Replacements for ``node``'s weight inputs, computed once when the model compiles: B becomes the
    f32 ``(N, K)`` weight, scales, zero points and ``g_idx`` None, when they are all known (``values[i]``
    is input ``i``'s value when it is a Constant, else None); ``{}`` when one is computed at run time or
    the f32 weight is not kept (:class:`~hetero_sdk_contrib.ops_matmul_nbits.PreparedWeights`)."""
    present = [i for i in _WEIGHT_INPUTS if i < len(values)]
    if any(values[i] is None for i in present):
        return {}
    native = native_operands(node, [values[i] if i < len(values) else None for i in _WEIGHT_INPUTS])
    if native is not None:  # the packed bytes stay packed: the native kernel reads them
        return {i: native[i - 1] if i < 4 else None for i in present}
    weight, scales, *rest = (values[i] for i in present)
    dense = prepared_weight(node, weight, scales, *rest)
    if dense is None:  # not kept (beyond the budget of f32 weights): dequantized in the computation
        return {}
    return {i: dense if i == 1 else None for i in present}


def matmul_nbits(
    node: Node,
    a: Any,
    weight: Any,
    scales: Any | None,
    zero_points: Any | None = None,
    g_idx: Any | None = None,
    bias: Any | None = None,
) -> Any:
    """``A @ dequantize(B)^T + bias`` as one f32 dot: ``weight`` is the f32 ``(N, K)`` weight where
    :func:`prepare` replaced it (floats: the packed weight is u8), else it is dequantized here first."""
    if runs_natively(node, weight, scales, zero_points, g_idx):
        y = native_matmul(node, a, weight, scales, zero_points)
        return y if bias is None else y + bias.astype(jnp.float32)
    if jnp.issubdtype(weight.dtype, jnp.floating):
        dense = weight
    else:
        dense = dequantized_weight(node, weight, scales, zero_points, g_idx)
    a32 = a.astype(jnp.float32)
    dimensions = (((a32.ndim - 1,), (1,)), ((), ()))
    y = lax.dot_general(
        a32, dense.astype(jnp.float32), dimensions, precision=lax.Precision.HIGHEST, preferred_element_type=jnp.float32
    )
    return y if bias is None else y + bias.astype(jnp.float32)


matmul_nbits.prepare = prepare  # type: ignore[attr-defined]
