"""FakeQuantize (OpenVINO opset1, as NNCF writes quantized models): data quantized to ``levels`` steps
and mapped onto an output range; one array-API kernel serves the reference evaluator, TEMPLATE and XLA."""

from __future__ import annotations

from typing import Any

from hetero_sdk.array_api import namespace
from hetero_sdk.graph.node import Node
from hetero_sdk.graph.op_def import INT, LOWER_STRING, Attr, Input, OpDef, OutputSpec, define
from hetero_sdk.ops.basic import as_output
from hetero_sdk.ops.checks import REAL_TYPES, broadcast, expect_same_types

__all__ = ["FAKE_QUANTIZE", "fake_quantize"]


def fake_quantize(
    data: Any,
    input_low: Any,
    input_high: Any,
    output_low: Any,
    output_high: Any,
    levels: int,
    auto_broadcast: str = "numpy",
    name: str | None = None,
) -> Node:
    """Quantizes ``data`` to ``levels`` steps between ``input_low`` and ``input_high`` and maps them onto
    ``output_low..output_high`` (``FakeQuantize``, opset1): values at or below ``min(input_low,
    input_high)`` give ``output_low``, values above ``max(...)`` give ``output_high``, others
    ``round((x - il) / (ih - il) * (levels - 1)) / (levels - 1) * (oh - ol) + ol`` (halves to even)."""
    inputs = [as_output(v) for v in (data, input_low, input_high, output_low, output_high)]
    return Node(FAKE_QUANTIZE, inputs, {"levels": levels, "auto_broadcast": auto_broadcast}, name)


def _infer_fake_quantize(node: Node) -> list[OutputSpec]:
    element_type = expect_same_types(node, 0, 1, 2, 3, 4)
    if node.attrs["levels"] < 2:
        raise node.error(f"levels is {node.attrs['levels']}; FakeQuantize needs at least 2")
    mode = node.attrs["auto_broadcast"]
    shape = node.input_value(0).partial_shape
    for index in range(1, 5):
        shape = broadcast(node, shape, node.input_value(index).partial_shape, mode)
    return [(element_type, shape)]


def _fake_quantize(node: Node, x: Any, il: Any, ih: Any, ol: Any, oh: Any) -> Any:
    xp = namespace(x)
    steps = float(node.attrs["levels"] - 1)
    span = ih - il
    safe = xp.where(span == 0, xp.ones_like(span), span)
    quantized = xp.round((x - il) / safe * steps) / steps * (oh - ol) + ol
    out = xp.where(x <= xp.minimum(il, ih), ol, xp.where(x > xp.maximum(il, ih), oh, quantized))
    return xp.astype(out, x.dtype)


# -- HardSigmoid, IsNaN ------------------------------------------------------------------------------------


FAKE_QUANTIZE = define(
    OpDef(
        "FakeQuantize",
        "quantization",
        _infer_fake_quantize,
        inputs=(
            Input("data", REAL_TYPES),
            Input("input_low", REAL_TYPES),
            Input("input_high", REAL_TYPES),
            Input("output_low", REAL_TYPES),
            Input("output_high", REAL_TYPES),
        ),
        attrs=(
            Attr("levels", INT, doc="the number of quantization levels (256 for 8 bits)"),
            Attr("auto_broadcast", LOWER_STRING, "numpy", ("numpy", "none"), doc="how the bounds broadcast"),
        ),
        version="opset1",
        evaluate=_fake_quantize,
        doc="Quantizes to `levels` steps and maps back onto the output range (NNCF's quantized models).",
    )
)
