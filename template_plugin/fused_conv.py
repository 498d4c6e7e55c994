"""TEMPLATE's ``TemplateConvolution``: a (group) convolution, its bias Add, an activation and an affine
map (a per-channel Multiply, then maybe Add) in one kernel.

Produced by :class:`template_plugin.transformations.ConvolutionFusion`. The kernel computes the
convolution as GEMMs over contiguous im2col columns (:func:`template_plugin.convolution.grouped_convolution`),
then adds the bias, applies the activation and the affine map in place on the product: no intermediate
tensor per op.
The results are bit-identical to the ops it replaces (same operations in the same order), but for an
hswish followed by a scale: HSwish's division by 6 joins the scale (``y * gate * (scale / 6)``, one pass
over the result fewer; within 2 ulp of ``y * gate / 6 * scale``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hetero_sdk import Node, PartialShape
from hetero_sdk.errors import ModelValidationError
from hetero_sdk.plugin import (
    BOOL,
    INTS,
    LOWER_STRING,
    OPS,
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
from template_plugin.convolution import ConvolutionPlan, grouped_convolution, run_convolution
from template_plugin.workspace import Workspace

__all__ = [
    "CONVOLUTION",
    "CONVOLUTION_ACTIVATIONS",
    "CONVOLUTION_OP",
    "convolution_into",
    "finish",
    "fused_convolution",
]

CONVOLUTION = "TemplateConvolution"
"""The op type name."""

CONVOLUTION_ACTIVATIONS = ("none", "relu", "hswish")
"""Values of the ``activation`` attribute."""

_WINDOW = ("strides", "pads_begin", "pads_end", "dilations", "auto_pad")


def fused_convolution(
    conv: Node,
    bias: Any,
    activation: str = "none",
    name: str | None = None,
    *,
    scale: Any = None,
    shift: Any = None,
) -> Node:
    """``activation(conv + bias) [* scale [+ shift]]`` as one op, on ``conv``'s inputs and window attributes.

    :param conv: a ``Convolution`` or ``GroupConvolution`` node.
    :param bias: one value per output channel, shaped to broadcast along axis 1 of the result
        (``[1, C, 1, 1]``, ``[C, 1, 1]``, a scalar...).
    :param activation: one of :data:`CONVOLUTION_ACTIVATIONS`.
    :param name: the node's friendly name.
    :param scale: None, or one value per output channel (as ``bias``) multiplying the activation.
    :param shift: None, or one value per output channel added after ``scale`` (which it needs).
    :raises ModelValidationError: for a ``shift`` without a ``scale``.
    """
    if shift is not None and scale is None:
        raise ModelValidationError("TemplateConvolution: a shift needs a scale (pass scale=1 for a shift alone)")
    data = conv.input_value(0)
    inputs = [data, conv.input_value(1), as_output(bias, like=data)]
    inputs += [as_output(v, like=data) for v in (scale, shift) if v is not None]
    attrs = {key: conv.attrs[key] for key in _WINDOW}
    attrs.update(grouped=conv.type_name == "GroupConvolution", activation=activation)
    return Node(CONVOLUTION_OP, inputs, attrs, name)


def _infer(node: Node) -> list[OutputSpec]:
    expect_same_types(node, *range(node.get_input_size()))
    grouped = "GroupConvolution" if node.attrs["grouped"] else "Convolution"
    specs = list(OPS.get(grouped).infer(node))
    out = PartialShape(specs[0][1])
    for index, role in zip(range(2, node.get_input_size()), ("bias", "scale", "shift")):
        value = node.input_value(index).partial_shape
        padded = [1] * (out.rank - value.rank) + list(value.dims)
        if value.rank > out.rank or any(d != 1 for i, d in enumerate(padded) if i != 1) or padded[1] not in (1, out[1]):
            raise node.error(f"{role} {value} must hold one value per output channel of {out} (shape [1, C, 1...])")
    return specs


CONVOLUTION_OP = define(
    OpDef(
        CONVOLUTION,
        "template",
        _infer,
        inputs=(
            Input("data", REAL_TYPES, doc="[N, C_IN, spatial...]"),
            Input("filters", REAL_TYPES, doc="as Convolution's, or GroupConvolution's when grouped"),
            Input("bias", REAL_TYPES, doc="one value per output channel"),
            Input("scale", REAL_TYPES, optional=True, doc="one value per output channel, multiplies the activation"),
            Input("shift", REAL_TYPES, optional=True, doc="one value per output channel, added after scale"),
        ),
        attrs=(
            Attr("strides", INTS, doc="as Convolution's"),
            Attr("pads_begin", INTS, doc="as Convolution's"),
            Attr("pads_end", INTS, doc="as Convolution's"),
            Attr("dilations", INTS, doc="as Convolution's"),
            Attr("auto_pad", LOWER_STRING, "explicit", doc="as Convolution's"),
            Attr("grouped", BOOL, False, doc="filters are GroupConvolution's [G, C_OUT/G, C_IN/G, k...]"),
            Attr("activation", STRING, "none", CONVOLUTION_ACTIVATIONS, doc="applied to the biased result"),
        ),
        version="template",
        doc="activation(convolution(data, filters) + bias) [* scale [+ shift]] in one kernel.",
    )
)


def convolution_into(
    node: Node,
    workspace: Workspace | None,
    x: np.ndarray,
    w: np.ndarray,
    bias: np.ndarray,
    scale: np.ndarray | None = None,
    shift: np.ndarray | None = None,
    plan: ConvolutionPlan | None = None,
) -> np.ndarray:
    """The ``TemplateConvolution`` kernel with its buffers lent by ``workspace`` (none: fresh arrays).

    :param plan: the convolution's plan for ``x``'s shape and ``w``, kept by a caller whose filters are
        constant (:func:`~template_plugin.convolution.plan_convolution`); worked out here when None.

    The result is the workspace's :meth:`~template_plugin.workspace.Workspace.output` or a fresh
    array, never a view of a temporary.
    """
    if plan is None:
        y = grouped_convolution(node, x, w if node.attrs["grouped"] else w[np.newaxis], workspace)
    else:
        y = run_convolution(plan, x, workspace)
    dtype = np.result_type(y, bias)
    if y.flags.c_contiguous and y.dtype == dtype and (workspace is None or y.base is None or workspace.lent(y)):
        y = np.add(y, bias, out=y)  # a fresh array or the workspace's output
    else:  # a view (wide depthwise rows, maybe of a temporary) gets a compact result
        y = np.add(y, bias, out=np.empty(y.shape, dtype) if workspace is None else workspace.output(y.shape, dtype))
    return finish(node.attrs["activation"], workspace, y, scale, shift)


def finish(
    activation: str, workspace: Workspace | None, y: np.ndarray, scale: np.ndarray | None, shift: np.ndarray | None
) -> np.ndarray:
    """The biased product ``y`` (a fresh array or the workspace's output) through the activation and the
    affine map, in place."""
    if activation == "relu":
        np.maximum(y, np.zeros(y.shape[-1:], y.dtype), out=y)  # numpy's maximum is slow with a 0-d operand
    elif activation == "hswish":  # x * clip(x + 3, 0, 6) / 6, in HSwish's order
        three = np.asarray(3, y.dtype)
        gate = np.add(y, three, out=None if workspace is None else workspace.temporary("gate", y.shape, y.dtype))
        np.clip(gate, 0, 6, out=gate)
        np.multiply(y, gate, out=y)
        if scale is None:
            np.divide(y, np.asarray(6, y.dtype), out=y)
        else:
            scale = np.divide(scale, np.asarray(6, y.dtype))
    if scale is not None:
        np.multiply(y, scale, out=y)
    if shift is not None:
        np.add(y, shift, out=y)
    return y


@kernel(CONVOLUTION)
def _convolution_kernel(
    node: Node, x: np.ndarray, w: np.ndarray, bias: np.ndarray, scale: Any = None, shift: Any = None
) -> np.ndarray:
    return convolution_into(node, None, x, w, bias, scale, shift)
