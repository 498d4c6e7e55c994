"""TEMPLATE's ``Interpolate``: a ``nearest`` upscale by whole factors (every input element repeated ``r``
times along each resized axis, FPN upsampling) as one broadcast copy per axis instead of the reference's
gather per axis; every other resize is the reference kernel's."""

from __future__ import annotations

from typing import Any

import numpy as np

from hetero_sdk import Node
from hetero_sdk.plugin import get_kernel, nearest_indices, resize_plan

__all__ = ["interpolate"]


def _repeat_factor(indices: np.ndarray, in_len: int) -> int:
    """``r`` when ``indices`` repeat every source index ``r`` times in order (an integer upscale), else 0."""
    factor = indices.size // in_len
    if factor < 1 or factor * in_len != indices.size:
        return 0
    return factor if np.array_equal(indices, np.repeat(np.arange(in_len), factor)) else 0


def _repeated(x: np.ndarray, factors: dict[int, int]) -> np.ndarray:
    """``x`` with each element repeated ``factors[axis]`` times along each axis named (a nearest upscale
    by whole factors): per axis, one broadcast copy of whole inner blocks, or for the last axis one
    strided copy per repeat (numpy copies a broadcast of a few elements at a time element by element)."""
    result = x
    for axis in sorted(factors, reverse=True):
        factor, shape = factors[axis], result.shape
        out = np.empty((*shape[:axis], shape[axis] * factor, *shape[axis + 1 :]), x.dtype)
        if axis == x.ndim - 1:
            for phase in range(factor):
                out[..., phase::factor] = result
        else:
            split = (*shape[: axis + 1], factor, *shape[axis + 1 :])
            np.copyto(out.reshape(split), result.reshape(*shape[: axis + 1], 1, *shape[axis + 1 :]))
        result = out
    return result


def interpolate(node: Node, image: Any, scales_or_sizes: Any, axes: Any = None) -> Any:
    """``Interpolate``: a numpy ``nearest`` resize whose every resized axis repeats each input position a
    whole number of times in order, by :func:`_repeated` (the reference gathers the same elements); any
    other call goes to the reference kernel."""
    rest = () if axes is None else (axes,)
    attrs = node.attrs
    if attrs["mode"] != "nearest" or type(image) is not np.ndarray:
        return get_kernel("Interpolate")(node, image, scales_or_sizes, *rest)
    plan = resize_plan(attrs, image.shape, scales_or_sizes, axes)
    pads = list(zip(plan.pads_begin, plan.pads_end))
    padded = np.pad(image, pads) if any(b or e for b, e in pads) else image
    factors = {
        axis: _repeat_factor(
            nearest_indices(attrs, scale, plan.output_dims[axis], padded.shape[axis]), padded.shape[axis]
        )
        for axis, scale in plan.resized
    }
    if not factors or not all(factors.values()):
        return get_kernel("Interpolate")(node, image, scales_or_sizes, *rest)
    return _repeated(padded, factors)
