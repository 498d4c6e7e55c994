"""Channels-last lowering: convolution chains computed ``[N, ..., C]`` end to end.

XLA:CPU runs convolutions channels-last whatever the dimension numbers say, but keeps the
element-wise ops, reductions and depthwise loops of an ``NC...`` graph channels-first, so every
convolution gets a layout change on each side (10-20 % of the PP-OCR direction classifier). So the
graph interpreter lowers every floating-point convolution channels-last and tags its result
(:class:`ChannelsLast`); an op that computes the same on either layout (element-wise ops,
activations, reductions keeping their axes, Concat, MaxPool, AvgPool, convolutions, transposed
convolutions (the fused depthwise one too), Interpolate, BatchNormInference; Split, VariadicSplit and
Slice through :mod:`.movement`) takes tagged
inputs as they are and gives a tagged result, and any other op gets its inputs moved back to
``NC...`` first (:meth:`ChannelsLast.channels_first`): Transpose, MatMul, the outputs...

The chain also runs on through the ops that keep the batch and channel axes where they are: a
Reshape, Squeeze or Unsqueeze regrouping only the spatial axes (``[N, C, 1, W] -> [N, C, W]``: the
held ``[N, ..., C]`` array is reshaped the same way, its spatial elements being in the same order)
and a reduction over spatial axes that drops them. PP-OCRv4 rec's neck reshapes ``[N, C, 1, W] ->
[N, C, W]`` before a Transpose to ``[N, W, C]``, which is the held array itself: XLA drops the
Transpose with the move back before it (it merges the two into one transpose, none when they cancel,
so a Transpose is not carried); moved back before the Reshape, the value was copied twice.

Split, VariadicSplit and Slice are carried along any axes (:mod:`.movement`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import jax.numpy as jnp
import numpy as np
from hetero_sdk import Node
from hetero_sdk.plugin import OPS, batch_normalized, reduced_axes

from hetero_sdk_jax.convolution_fusion import CONVOLUTION
from hetero_sdk_jax.depthwise_fusion import DEPTHWISE_CONVOLUTION
from hetero_sdk_jax.lowering.convolution import (
    convolution,
    convolution_backprop_data,
    convolution_from_channels_first,
    few_channels,
    fused_convolution,
    fused_convolution_from_channels_first,
    fused_depthwise,
)
from hetero_sdk_jax.lowering.image import interpolate
from hetero_sdk_jax.lowering.kernels import concat_pointwise
from hetero_sdk_jax.lowering.movement import held_axis, movement_channels_last
from hetero_sdk_jax.lowering.pooling import avg_pool, max_pool
from hetero_sdk_jax.lowering.quantization import quantized_convolution
from hetero_sdk_jax.lowering.registry import LoweringFn, get_lowering
from hetero_sdk_jax.quantized_convolution import QUANTIZED_CONVOLUTION

__all__ = ["ChannelsLast", "channels_last_lowering"]

_CONVOLUTIONS = frozenset({"Convolution", "GroupConvolution"})
_POOLS = {"MaxPool": max_pool, "AvgPool": avg_pool}
_FIRST_INPUT_HELD = frozenset({"Interpolate", "ConvolutionBackpropData", "BatchNormInference"})
"""Ops computed channels-last when their data (input 0) is held so, their other inputs as they are."""
_REDUCTIONS = frozenset({"ReduceSum", "ReduceMean", "ReduceProd", "ReduceMax", "ReduceMin"})
_REGROUPINGS = frozenset({"Reshape", "Squeeze", "Unsqueeze"})
"""Ops whose result is their input's elements in the same order, in another shape."""
_LAYOUT_FREE_FAMILIES = frozenset({"elementwise", "activation"})
"""Op families whose every input broadcasts numpy-style to the output, value by value."""


@dataclass(frozen=True)
class ChannelsLast:
    """A traced ``[N, C, ...]`` tensor held as ``[N, ..., C]``."""

    array: Any

    def channels_first(self) -> Any:
        """The tensor in its graph layout, ``[N, C, ...]``."""
        return jnp.moveaxis(self.array, -1, 1)


def _moved(value: Any, rank: int) -> Any | None:
    """``value``, which broadcasts against a rank-``rank`` ``[N, C, ...]`` tensor, laid out to broadcast
    against that tensor held channels-last; None when its rank is larger."""
    if isinstance(value, ChannelsLast):
        return value.array if value.array.ndim == rank else None
    if value.ndim > rank:
        return None
    xp = np if isinstance(value, np.ndarray) else jnp
    return xp.moveaxis(value.reshape((1,) * (rank - value.ndim) + tuple(value.shape)), 1, -1)


def channels_last_lowering(node: Node, inputs: Sequence[Any]) -> tuple[LoweringFn, list[Any]] | None:
    """How to compute ``node`` channels-last: ``(fn, args)`` such that ``fn(node, *args)`` gives its
    outputs as ``[N, ..., C]`` arrays; None when the node needs its inputs ``[N, C, ...]``.

    Floating-point convolutions always run channels-last (a ``[N, C, ...]`` input is moved first,
    as XLA would); the other ops do only when an input is already :class:`ChannelsLast`.
    """
    kind = node.type_name
    rank = node.get_output_partial_shape(0).rank
    if kind in _CONVOLUTIONS:
        x = inputs[0]
        if isinstance(x, np.ndarray) or not 3 <= rank <= 5 or not jnp.issubdtype(_dtype(x), jnp.floating):
            return None
        if not isinstance(x, ChannelsLast) and few_channels(node, x):
            return convolution_from_channels_first, [x, inputs[1]]
        return _convolution, [_moved(x, rank), inputs[1]]
    if kind == CONVOLUTION and rank == 4 and not isinstance(inputs[0], np.ndarray):
        if not isinstance(inputs[0], ChannelsLast) and few_channels(node, inputs[0]):
            return fused_convolution_from_channels_first, list(inputs)
        return _fused_convolution, [_moved(inputs[0], rank), *inputs[1:]]
    if kind == DEPTHWISE_CONVOLUTION and rank == 4 and not isinstance(inputs[0], np.ndarray):
        return _fused_depthwise, [_moved(inputs[0], rank), *inputs[1:]]
    if kind == QUANTIZED_CONVOLUTION and 3 <= rank <= 5 and not isinstance(inputs[0], np.ndarray):
        return _quantized_convolution, [_moved(inputs[0], rank), *inputs[1:]]
    if not any(isinstance(v, ChannelsLast) for v in inputs):
        return None
    lowered = get_lowering(kind)
    if lowered is None:
        return None
    if OPS.get(kind).family in _LAYOUT_FREE_FAMILIES or kind == "Convert":
        args = [_moved(v, rank) for v in inputs]
        if any(a is None for a in args) or node.get_output_size() != 1:
            return None
        return lowered.fn, args
    if kind in _POOLS and isinstance(inputs[0], ChannelsLast):
        return _pool, [inputs[0].array]
    if kind in _FIRST_INPUT_HELD and isinstance(inputs[0], ChannelsLast):
        if any(isinstance(v, ChannelsLast) for v in inputs[1:]):
            return None
        return _FIRST_INPUT_FNS[kind], [inputs[0].array, *inputs[1:]]
    if kind == "Concat":
        parts = [_moved(v, rank) for v in inputs]
        return None if any(p is None for p in parts) else (_concatenate, parts)
    x = inputs[0]
    if not isinstance(x, ChannelsLast) or not all(isinstance(v, np.ndarray) for v in inputs[1:]):
        return None
    if kind in _REDUCTIONS and len(inputs) == 2:
        reduced = reduced_axes(x.array.ndim, inputs[1])
        if not node.attrs["keep_dims"] and {0, 1} & set(reduced):
            return None  # the batch or channel axis dropped: the result has no channel axis to hold last
        return lowered.fn, [x.array, np.array([held_axis(a, x.array.ndim) for a in reduced], np.int64)]
    if kind in _REGROUPINGS and _keeps_batch_and_channels(node, x):
        return _regrouped, [x.array]
    if (moving := movement_channels_last(node, inputs[1:])) is not None:
        fn, rest = moving
        return fn, [x.array, *rest]
    return None


def _keeps_batch_and_channels(node: Node, x: ChannelsLast) -> bool:
    """Whether ``node``'s result, of ``x``'s elements in their order, has ``x``'s batch and channel
    sizes as its first two axes: then the batch and channel indices of every element stay the same
    (a row-major index splits into them alone), and only the spatial axes are regrouped."""
    shape = node.get_output_partial_shape(0).to_shape()
    batch, channels = x.array.shape[0], x.array.shape[-1]
    return len(shape) >= 2 and int(shape[0]) == batch and int(shape[1]) == channels


def _regrouped(node: Node, x: Any) -> Any:
    """A Reshape, Squeeze or Unsqueeze of the ``[N, ..., C]`` held ``x`` (see :func:`_keeps_batch_and_channels`)."""
    batch, channels, *spatial = (int(d) for d in node.get_output_partial_shape(0).to_shape())
    return x.reshape(batch, *spatial, channels)


def _pool(node: Node, x: Any) -> Any:
    return _POOLS[node.type_name](node, x, channels_last=True)


def _concatenate(node: Node, *parts: Any) -> Any:
    axis = held_axis(node.attrs["axis"], parts[0].ndim)
    result = jnp.concatenate(parts, axis=axis)
    concat_pointwise.record_concat(result, parts, axis)  # a 1x1 convolution after it may read the parts in place
    return result


def _dtype(value: Any) -> Any:
    return value.array.dtype if isinstance(value, ChannelsLast) else value.dtype


def _convolution(node: Node, x: Any, w: Any) -> Any:
    return convolution(node, x, w, channels_last=True)


def _fused_convolution(node: Node, x: Any, w: Any, bias: Any) -> Any:
    return fused_convolution(node, x, w, bias, channels_last=True)


def _fused_depthwise(node: Node, x: Any, w: Any, bias: Any) -> Any:
    return fused_depthwise(node, x, w, bias, channels_last=True)


def _quantized_convolution(node: Node, x: Any, *rest: Any) -> Any:
    return quantized_convolution(node, x, *rest, channels_last=True)


def _batch_norm(node: Node, x: Any, gamma: Any, beta: Any, mean: Any, variance: Any) -> Any:
    """BatchNormInference, its ``[C]`` parameters along the last axis."""
    return batch_normalized(x, gamma, beta, mean, variance, node.attrs["epsilon"])


_FIRST_INPUT_FNS: dict[str, LoweringFn] = {
    "Interpolate": lambda node, x, *static: interpolate(node, x, *static, channels_last=True),
    "ConvolutionBackpropData": lambda node, x, *rest: convolution_backprop_data(node, x, *rest, channels_last=True),
    "BatchNormInference": _batch_norm,
}
