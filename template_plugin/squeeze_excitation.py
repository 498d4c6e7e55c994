"""TEMPLATE's ``TemplateSqueezeExcitation``: a squeeze-and-excitation block (MobileNetV3, PP-LCNet) in one
kernel.

``x * clamp(expand(activation(reduce(mean(x)))))``, where ``mean`` averages each channel over the spatial
axes and ``reduce`` / ``expand`` are pointwise convolutions with a bias. Unfused, the block is five steps
on tensors of ``[N, C, 1, 1]`` whose per-step costs (a kernel call, arena bookkeeping) outweigh their
arithmetic; fused, it is one. Produced by :class:`template_plugin.transformations.SqueezeExcitationFusion`;
the kernel does the same operations in the same order as the ops it replaces (bit-identical results).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hetero_sdk import Node
from hetero_sdk.plugin import (
    FLOAT,
    REAL_TYPES,
    STRING,
    Attr,
    Input,
    OpDef,
    OutputSpec,
    as_output,
    define,
    expect_same_types,
    kernel,
)
from template_plugin.fused_conv import CONVOLUTION_ACTIVATIONS, finish
from template_plugin.reductions import mean
from template_plugin.workspace import Workspace

__all__ = ["SQUEEZE_EXCITATION", "SQUEEZE_EXCITATION_OP", "squeeze_excitation", "squeeze_excitation_into"]

SQUEEZE_EXCITATION = "TemplateSqueezeExcitation"
"""The op type name."""


def squeeze_excitation(
    data: Any,
    reduce_filters: Any,
    reduce_bias: Any,
    expand_filters: Any,
    expand_bias: Any,
    activation: str = "relu",
    gate: tuple[float, float] = (0.0, 1.0),
    name: str | None = None,
) -> Node:
    """``data * clamp(expand(activation(reduce(mean(data)))), *gate)`` as one op.

    :param data: ``[N, C, spatial...]``, a real element type.
    :param reduce_filters: the first pointwise convolution's filters, ``[C_MID, C, 1...]``.
    :param reduce_bias: one value per ``C_MID`` channel (``[1, C_MID, 1...]``, ``[C_MID, 1...]`` or one value).
    :param expand_filters: the second one's, ``[C, C_MID, 1...]``.
    :param expand_bias: one value per ``C`` channel.
    :param activation: after the first convolution, one of :data:`~template_plugin.fused_conv.CONVOLUTION_ACTIVATIONS`.
    :param gate: the bounds the second convolution's result is clamped to (a hard sigmoid's ``(0, 1)``).
    :param name: the node's friendly name.
    """
    x = as_output(data)
    inputs = [x, *(as_output(v, like=x) for v in (reduce_filters, reduce_bias, expand_filters, expand_bias))]
    attrs = {"activation": activation, "gate_min": float(gate[0]), "gate_max": float(gate[1])}
    return Node(SQUEEZE_EXCITATION_OP, inputs, attrs, name)


def _infer(node: Node) -> list[OutputSpec]:
    element_type = expect_same_types(node, *range(5))
    data = node.input_value(0).partial_shape
    reduce, expand = node.input_value(1).partial_shape, node.input_value(3).partial_shape
    if data.rank < 3 or reduce.rank != data.rank or expand.rank != data.rank:
        raise node.error(f"data {data} must have a rank of 3 or more, and both filters ({reduce}, {expand}) the same")
    if any(d != 1 for d in (*reduce.dims[2:], *expand.dims[2:])):
        raise node.error(f"the filters {reduce} and {expand} must be pointwise (every kernel size 1)")
    channels, middle = data[1], reduce[0]
    for known, want, what in ((reduce[1], channels, "reduce's inputs"), (expand[0], channels, "expand's outputs"),
                              (expand[1], middle, "expand's inputs")):  # fmt: skip
        if known >= 0 and want >= 0 and known != want:
            raise node.error(f"{what} ({known}) must match {want} channels (data {data}, filters {reduce}, {expand})")
    if node.attrs["gate_min"] > node.attrs["gate_max"]:
        raise node.error(f"gate_min {node.attrs['gate_min']} is above gate_max {node.attrs['gate_max']}")
    return [(element_type, data)]


SQUEEZE_EXCITATION_OP = define(
    OpDef(
        SQUEEZE_EXCITATION,
        "template",
        _infer,
        inputs=(
            Input("data", REAL_TYPES, doc="[N, C, spatial...]"),
            Input("reduce_filters", REAL_TYPES, doc="[C_MID, C, 1...]"),
            Input("reduce_bias", REAL_TYPES, doc="one value per C_MID channel"),
            Input("expand_filters", REAL_TYPES, doc="[C, C_MID, 1...]"),
            Input("expand_bias", REAL_TYPES, doc="one value per C channel"),
        ),
        attrs=(
            Attr("activation", STRING, "relu", CONVOLUTION_ACTIVATIONS, doc="after the first convolution"),
            Attr("gate_min", FLOAT, 0.0, doc="the lower bound of the gate"),
            Attr("gate_max", FLOAT, 1.0, doc="the upper bound of the gate"),
        ),
        version="template",
        doc="data * clamp(expand(activation(reduce(mean over the spatial axes of data)))) in one kernel.",
    )
)


def squeeze_excitation_into(
    node: Node,
    workspace: Workspace | None,
    x: np.ndarray,
    reduce_filters: np.ndarray,
    reduce_bias: np.ndarray,
    expand_filters: np.ndarray,
    expand_bias: np.ndarray,
) -> np.ndarray:
    """The ``TemplateSqueezeExcitation`` kernel, its result in a buffer ``workspace`` lends (none: a fresh
    array). The mean, each convolution (one matrix product per image, then its bias and activation), the
    clamp and the product are TEMPLATE's kernels for ``ReduceMean``, pointwise ``TemplateConvolution``,
    ``Clamp`` and ``Multiply``, in that order."""
    batch, spatial = x.shape[0], (1,) * (x.ndim - 2)
    gate = mean(x, tuple(range(2, x.ndim)), True).astype(x.dtype, copy=False)
    for filters, bias, activation in (
        (reduce_filters, reduce_bias, node.attrs["activation"]),
        (expand_filters, expand_bias, "none"),
    ):
        product = np.matmul(filters.reshape(filters.shape[0], -1), gate.reshape(batch, -1, 1))
        product = product.reshape(batch, -1, *spatial)
        gate = finish(activation, None, np.add(product, bias, out=product), None, None)
    np.clip(gate, node.attrs["gate_min"], node.attrs["gate_max"], out=gate)
    return np.multiply(x, gate, out=None if workspace is None else workspace.output(x.shape, x.dtype))


@kernel(SQUEEZE_EXCITATION)
def _squeeze_excitation_kernel(node: Node, x: np.ndarray, *weights: np.ndarray) -> np.ndarray:
    return squeeze_excitation_into(node, None, x, *weights)
