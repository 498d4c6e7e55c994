"""``TemplateConvolution`` kernels bound at compile time to the node's constant filters.

A pointwise convolution (every kernel size 1, stride 1, no padding, one group) is one matrix product
per image, ``filters [C_OUT, C_IN] @ x [C_IN, pixels]``, written into the request's arena: its kernel
keeps the filters as that contiguous matrix and skips the general convolution's per-call geometry
(pads, output sizes, live taps, im2col choice), which on small planes (squeeze-and-excitation blocks
on ``[N, C, 1, 1]``) costs more than the product itself. Wide depthwise convolutions have a kernel of
their own (:mod:`template_plugin.bound_depthwise`). Every other convolution with constant float filters
keeps the general convolution's plan (:func:`~template_plugin.convolution.plan_convolution`) for the
last input shapes it met, so that each call only runs it (1-D convolutions on a few frames spend most of
their time working the plan out and rearranging their filters). Any other call
(other filters, element types or ranks) takes :func:`~template_plugin.fused_conv.convolution_into`.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from hetero_sdk import Node
from template_plugin.bound_depthwise import GEOMETRIES_KEPT, bind_depthwise
from template_plugin.convolution import ConvolutionPlan, plan_convolution
from template_plugin.fused_conv import convolution_into, finish
from template_plugin.workspace import Workspace

__all__ = ["bind_convolution", "is_pointwise", "kept_plans"]

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def is_pointwise(node: Node, filters: np.ndarray) -> bool:
    """True when ``node`` (a ``TemplateConvolution``) with ``filters`` is a pointwise convolution: one
    group, every kernel size and stride 1, no padding (explicit pads of 0, or any ``auto_pad``: a
    1-tap window at stride 1 needs none)."""
    attrs = node.attrs
    kernel = filters.shape[3:] if attrs["grouped"] else filters.shape[2:]
    return (
        (not attrs["grouped"] or filters.shape[0] == 1)
        and len(kernel) >= 1
        and all(k == 1 for k in kernel)
        and all(s == 1 for s in attrs["strides"])
        and (attrs["auto_pad"] != "explicit" or (not any(attrs["pads_begin"]) and not any(attrs["pads_end"])))
    )


def bind_convolution(node: Node, filters: Any) -> Any:
    """``node``'s kernel (``kernel(node, workspace, x, w, bias[, scale[, shift]])``): bound to its
    constant ``filters`` when it is pointwise on f32 or f64 (:func:`is_pointwise`) or a wide depthwise
    convolution (:func:`~template_plugin.bound_depthwise.bind_depthwise`), else
    :func:`~template_plugin.fused_conv.convolution_into`.

    :param filters: the value of the node's filters when they are a Constant, else None.
    """
    depthwise = bind_depthwise(node, filters)
    if depthwise is not None:
        return depthwise
    if not isinstance(filters, np.ndarray) or filters.dtype not in _FLOATS:
        return convolution_into
    if not is_pointwise(node, filters):
        return _planned(filters, kept_plans(filters if node.attrs["grouped"] else filters[np.newaxis]))
    rank = filters.ndim - (3 if node.attrs["grouped"] else 2)
    matrix = np.ascontiguousarray(filters.reshape(filters.shape[-rank - 2], -1))  # [C_OUT, C_IN]
    return _pointwise(node, filters, matrix)


def kept_plans(w: np.ndarray) -> Callable[[Node, tuple[int, ...]], ConvolutionPlan]:
    """``plan_convolution(node, shape, w)`` for the constant filters ``w`` [G, Og, Cg, k...], kept for the
    last :data:`~template_plugin.bound_depthwise.GEOMETRIES_KEPT` (node, input shape) pairs met (its
    ``cache_info()`` says how many). Plans whose filters come out equal share one array of them, so that
    a model fed many input shapes keeps one rearranged copy of each layer's filters, not one per shape."""
    forms: list[np.ndarray] = []

    def plan(node: Node, shape: tuple[int, ...]) -> ConvolutionPlan:
        made = plan_convolution(node, shape, w)
        for form in forms:
            if form.shape == made.weights.shape and np.array_equal(form, made.weights):
                return dataclasses.replace(made, weights=form)
        forms.append(made.weights)
        return made

    return functools.lru_cache(maxsize=GEOMETRIES_KEPT)(plan)


def _planned(filters: np.ndarray, plans: Callable[[Node, tuple[int, ...]], ConvolutionPlan]) -> Any:
    """The kernel of a convolution with the constant ``filters``, running the ``plans`` it keeps
    (``kernel.plans``)."""

    def planned(
        node: Node,
        workspace: Workspace | None,
        x: np.ndarray,
        w: np.ndarray,
        bias: np.ndarray,
        scale: np.ndarray | None = None,
        shift: np.ndarray | None = None,
    ) -> np.ndarray:
        plan = plans(node, x.shape) if w is filters else None
        return convolution_into(node, workspace, x, w, bias, scale, shift, plan)

    planned.plans = plans  # type: ignore[attr-defined]
    return planned


def _pointwise(node: Node, filters: np.ndarray, matrix: np.ndarray) -> Any:
    activation, rank, dtype = node.attrs["activation"], filters.ndim - (3 if node.attrs["grouped"] else 2), matrix.dtype
    outs, ins = matrix.shape

    def pointwise(
        node: Node,
        workspace: Workspace | None,
        x: np.ndarray,
        w: np.ndarray,
        bias: np.ndarray,
        scale: np.ndarray | None = None,
        shift: np.ndarray | None = None,
    ) -> np.ndarray:
        if w is not filters or x.dtype != dtype or x.ndim != rank + 2 or x.shape[1] != ins or bias.dtype != dtype:
            return convolution_into(node, workspace, x, w, bias, scale, shift)
        shape = (x.shape[0], outs, *x.shape[2:])
        y = np.empty(shape, dtype) if workspace is None else workspace.output(shape, dtype)
        np.matmul(matrix, x.reshape(x.shape[0], x.shape[1], -1), out=y.reshape(x.shape[0], outs, -1))
        return finish(activation, workspace, np.add(y, bias, out=y), scale, shift)

    return pointwise
