"""A per-channel bias and an activation applied in place to a channels-last f32 result through the XLA device's
native kernel (``hetero_sdk_bias_activation``, :mod:`hetero_sdk_jax.native`, source
``native/src/bias_activation.cc``): the epilogue of a convolution that stays on XLA's own convolution.

XLA fuses nothing into its convolution's library call, so the bias and the activation run as a loop of their
own after it. :func:`native_bias_activation` runs that loop as one AVX-512 pass over the result, written back
into the same buffer (the call's result aliases its operand). :func:`runs_natively` says where it is used.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from hetero_sdk_jax.native import use_native

__all__ = ["ACTIVATIONS", "TARGET", "native_bias_activation", "runs_natively"]

TARGET = "hetero_sdk_bias_activation"
"""The native kernel's FFI target."""

ACTIVATIONS = {"none": 0, "relu": 1, "silu": 2}
"""The kernel's activations, by name, and the codes it takes (silu: ``v * sigmoid(v)``)."""


def runs_natively(y: Any, activation: str) -> bool:
    """Whether ``activation(y + bias)`` of channels-last ``y`` ``[..., C]`` runs the kernel: f32, an activation
    of :data:`ACTIVATIONS`, and the lowering being traced may call the kernel."""
    return y.dtype == jnp.float32 and y.ndim >= 1 and activation in ACTIVATIONS and use_native(TARGET)


def native_bias_activation(y: Any, bias: Any, activation: str, in_place: bool = True) -> Any:
    """``activation(y + bias)`` of f32 ``y`` ``[..., C]``, ``bias`` one value per channel in any shape holding
    ``C`` values, written over ``y``'s buffer."""
    per_channel = jnp.asarray(bias, jnp.float32).reshape(-1)
    result = jax.ShapeDtypeStruct(y.shape, jnp.float32)
    call = jax.ffi.ffi_call(TARGET, result, input_output_aliases={0: 0} if in_place else None)
    return call(y, per_channel, activation=np.int64(ACTIVATIONS[activation]))
