"""Range: the sequence ``start, start + step, ...`` up to ``stop``, of the shape-manipulation family
(re-exported by :mod:`.shape_manipulation`)."""

from __future__ import annotations

import builtins
import math
from typing import Any

import numpy as np

from hetero_sdk.graph.node import Node
from hetero_sdk.graph.op_def import ELEMENT_TYPE, Attr, Input, OpDef, OutputSpec, define
from hetero_sdk.ops.basic import as_output
from hetero_sdk.ops.checks import NUMERIC_TYPES, expect_rank
from hetero_sdk.ops.folding import constant_value
from hetero_sdk.shape import DYNAMIC

__all__ = ["RANGE", "range"]


def range(start: Any, stop: Any, step: Any, output_type: Any, name: str | None = None) -> Node:  # noqa: A001
    """The sequence ``start, start + step, ...`` up to ``stop`` excluded (``Range``, opset4), like ``np.arange``.

    Its length is ``max(ceil((stop - start) / step), 0)``; for an integer ``output_type`` the three
    values are first truncated toward zero.

    :param start: a numeric scalar input or number; likewise ``stop`` and ``step`` (non-zero).
    :param output_type: the element type of the output (any numeric type).
    """
    return Node(RANGE, [as_output(start), as_output(stop), as_output(step)], {"output_type": output_type}, name)


def _range_infer(node: Node) -> list[OutputSpec]:
    output_type = node.attrs["output_type"]
    for i, what in enumerate(("start", "stop", "step")):
        expect_rank(node, i, 0, what=what)
    values = [v for v in (constant_value(node.input_value(i)) for i in builtins.range(3)) if v is not None]
    if len(values) < 3:
        return [(output_type, [DYNAMIC])]
    start, stop, step = _range_bounds(node, *values)
    return [(output_type, [max(math.ceil((stop - start) / step), 0)])]


def _range_bounds(node: Node, *values: Any) -> tuple[float, float, float]:
    """Range's start, stop and step as the output type reads them; at compile time and at run time.
    :raises ModelValidationError: for a step of 0 or a value that is not finite."""
    output_type = node.attrs["output_type"]
    start, stop, step = (float(np.trunc(v) if output_type.is_integral else v) for v in values)
    if step == 0:
        raise node.error(f"step is 0 (after conversion to {output_type.value}), so stop {stop} is never reached")
    if not all(math.isfinite(v) for v in (start, stop, step)):
        raise node.error(f"start {start}, stop {stop} and step {step} must be finite")
    return start, stop, step


def _range_kernel(node: Node, start: Any, stop: Any, step: Any) -> Any:
    first, last, delta = _range_bounds(node, start, stop, step)
    count = max(math.ceil((last - first) / delta), 0)
    if node.attrs["output_type"].is_integral:
        return int(first) + np.arange(count, dtype=np.int64) * int(delta)
    return first + np.arange(count, dtype=np.float64) * delta


RANGE = define(
    OpDef(
        "Range",
        "shape_manipulation",
        _range_infer,
        inputs=tuple(Input(n, NUMERIC_TYPES, decides_shape=True, doc="a scalar") for n in ("start", "stop", "step")),
        attrs=(
            Attr("output_type", ELEMENT_TYPE, choices=tuple(sorted(NUMERIC_TYPES, key=str)), doc="the element type"),
        ),
        version="opset4",
        evaluate=_range_kernel,
        doc="start, start + step, ... up to stop excluded.",
    )
)
