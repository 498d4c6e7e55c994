"""Case recipes of the control-flow family: If, Loop and Scan, each a small model whose op runs bodies
(sub-models) built here from a few elementwise ops.

The bodies are drawn too: which elementwise op each computes, whether a body reads an outer value or a
constant, whether a Loop ends on its trip count or on a condition its body computes (then its output
lengths depend on the inputs' values), a Scan's axes and directions. Each op also has key cases that
every profile runs: an If choosing each branch at run time, a Loop whose iteration count is decided by
an input, a Scan read and stacked backwards along a non-leading axis.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from hetero_sdk import opset
from hetero_sdk.conformance.case_builder import BOOL, F32, I32, I64, Builder, OpCase, key_case, recipe
from hetero_sdk.graph import Model, Node

__all__ = ["BODY_OPS"]

BODY_OPS: dict[str, Callable[[Node, Node], Node]] = {
    "Add": lambda a, b: opset.add(a, b),
    "Subtract": lambda a, b: opset.subtract(a, b),
    "Multiply": lambda a, b: opset.multiply(a, b),
    "Maximum": lambda a, b: opset.maximum(a, b),
}
"""The elementwise ops bodies are built of (every device that runs a body runs these)."""

_DATA_TYPES = (F32, I32)


def _body(b: Builder, shapes: list[list[int]], dtype: type, name: str, results: int = 1) -> Model:
    """A body of ``len(shapes)`` Parameters giving ``results`` values of the first Parameter's shape: each
    result combines the first Parameter with another Parameter or a constant by a drawn op."""
    params = [opset.parameter(shape, dtype, name=f"{name}_p{i}") for i, shape in enumerate(shapes)]
    outputs = []
    for index in range(results):
        op = BODY_OPS[b.pick(sorted(BODY_OPS))]
        other = b.pick(range(1, len(params))) if len(params) > 1 and b.flag() else None
        right = params[other] if other is not None else opset.constant(b.values([], dtype, -2, 2))
        outputs.append(opset.result(op(params[0], right), name=f"{name}_r{index}"))
    return Model(outputs, params, name=name)


def _cond(b: Builder, value: bool) -> Node:
    """The condition: a scalar or one-element tensor, an input (chosen at run time) or a constant."""
    return b.operand(np.array(value, BOOL).reshape(b.pick(([], [1]))), "cond")


@recipe("If")
def _if(b: Builder, op_type: str) -> OpCase:
    dtype = b.pick(_DATA_TYPES)
    shape = b.shape(0, 3)
    count = b.integer(1, 3)
    values = [b.values(shape, dtype, -5, 5) for _ in range(count)]
    outer = [b.input(v, f"x{i}") if i == 0 else b.operand(v, f"x{i}") for i, v in enumerate(values)]
    results = b.integer(1, 2)
    then_body = _body(b, [shape] * count, dtype, "then", results)
    else_body = _body(b, [shape] * count, dtype, "else", results)
    cond = b.flag()
    node = opset.if_op(_cond(b, cond), then_body, else_body, outer, name="op")
    return b.case(op_type, node.outputs(), "simple", 2, cond=cond, inputs=count, results=results)


def _if_key_case(cond: bool) -> OpCase:
    """An If whose branch an input chooses at run time: ``x + y`` when true, ``x - y`` when false."""
    b = Builder.fixed(3 if cond else 4)
    shape = [2, 3]
    x = b.input(b.values(shape, F32, -3, 3), "x")
    y = b.input(b.values(shape, F32, 1, 3), "y")  # never 0: the two branches differ everywhere
    bodies = []
    for name, op in (("then", opset.add), ("else", opset.subtract)):
        p = [opset.parameter(shape, F32, name=f"{name}_p{i}") for i in range(2)]
        bodies.append(Model([opset.result(op(p[0], p[1]), name=f"{name}_r")], p, name=name))
    node = opset.if_op(b.input(np.array(cond), "cond"), bodies[0], bodies[1], [x, y], name="op")
    return b.case("If", node, "simple", 2, cond=cond, inputs=2, results=1)


key_case("If")(lambda: _if_key_case(True))
key_case("If")(lambda: _if_key_case(False))


def _loop_body(b: Builder, shape: list[int], dtype: type, invariant: bool, stop_at: int | None, scanned: int) -> Model:
    """``(i, cond, x[, w]) -> (cond', x + f(i)[ * w], scanned...)``; ``cond'`` is ``i + 1 < stop_at`` when
    the body decides when to stop, else the condition passed on."""
    iteration = opset.parameter([], b.pick((I64, I32)), name="loop_i")
    condition = opset.parameter([], BOOL, name="loop_cond")
    x = opset.parameter(shape, dtype, name="loop_x")
    params = [iteration, condition, x]
    step = opset.add(opset.convert(iteration, dtype), opset.constant(np.array(1, dtype)))
    if invariant:
        w = opset.parameter(shape, dtype, name="loop_w")
        params.append(w)
        step = opset.multiply(step, w)
    carried = BODY_OPS[b.pick(("Add", "Subtract", "Maximum"))](x, step)
    if stop_at is None:
        go = condition
    else:
        one = opset.constant(np.array(1, iteration.get_output_element_type(0).numpy))
        go = opset.less(opset.add(iteration, one), opset.constant(np.array(stop_at, one.attrs["value"].dtype)))
    outputs = [opset.result(go, name="loop_cond_out"), opset.result(carried, name="loop_x_out")]
    outputs += [opset.result(opset.multiply(x, step) if i else carried, name=f"loop_scan{i}") for i in range(scanned)]
    return Model(outputs, params, name="body")


@recipe("Loop")
def _loop(b: Builder, op_type: str) -> OpCase:
    dtype = b.pick(_DATA_TYPES)
    shape = b.shape(0, 2, 1, 3)
    trips = b.integer(0, 4)
    ends_itself = b.flag()
    stop_at = b.integer(1, 4) if ends_itself else None
    trip_count = -1 if ends_itself and b.flag() else trips
    invariant = b.flag()
    scanned = b.integer(0, 2)
    body = _loop_body(b, shape, dtype, invariant, stop_at, scanned)
    trip = b.operand(np.array(trip_count, b.pick((I64, I32))), "trip_count")
    start = b.operand(np.array(b.integer(0, 4) > 0), "condition")
    x = b.input(b.values(shape, dtype, -5, 5), "x")
    fixed = [b.operand(b.values(shape, dtype, -2, 2), "w")] if invariant else []
    node = opset.loop(trip, start, body, [x], fixed, name="op")
    attrs = {"trip_count": trip_count, "stop_at": stop_at, "invariant": invariant, "scanned": scanned}
    return b.case(op_type, node.outputs(), "accumulate", 5, **attrs)


@key_case("Loop")
def _loop_counted_by_an_input() -> OpCase:
    """A Loop whose trip count is an input (3): its stacked output has a length known only at run time."""
    b = Builder.fixed(5)
    i = opset.parameter([], I64, name="loop_i")
    c = opset.parameter([], BOOL, name="loop_cond")
    x = opset.parameter([2], F32, name="loop_x")
    step = opset.add(opset.convert(i, F32), opset.constant(np.array(1, F32)))
    out = opset.multiply(x, step)
    body = Model([opset.result(c), opset.result(out), opset.result(opset.add(out, step))], [i, c, x], name="body")
    trip = b.input(np.array(3, I64), "trip_count")
    node = opset.loop(trip, opset.constant(np.array(True)), body, [b.input(b.values([2], F32, -2, 2), "x")], name="op")
    return b.case("Loop", node.outputs(), "accumulate", 5, trip_count=3, stop_at=None, invariant=False, scanned=1)


def _scan_body(b: Builder, state: list[int], piece: list[int], dtype: type, invariant: bool, scanned: int) -> Model:
    """``(s, x_t[, w]) -> (op(s, x_t)[ * w], scanned...)``: the new state, then values stacked per step."""
    s = opset.parameter(state, dtype, name="scan_s")
    x = opset.parameter(piece, dtype, name="scan_x")
    params = [s, x]
    new = BODY_OPS[b.pick(("Add", "Subtract", "Maximum"))](s, x)
    if invariant:
        w = opset.parameter(state, dtype, name="scan_w")
        params.append(w)
        new = opset.multiply(new, w)
    outputs = [opset.result(new, name="scan_s_out")]
    outputs += [opset.result(opset.multiply(s, x) if i else new, name=f"scan_out{i}") for i in range(scanned)]
    return Model(outputs, params, name="body")


@recipe("Scan")
def _scan(b: Builder, op_type: str) -> OpCase:
    dtype = b.pick(_DATA_TYPES)
    piece = b.shape(1, 2, 1, 3)
    length = b.integer(1, 4)
    axis = b.integer(0, len(piece))
    whole = [*piece[:axis], length, *piece[axis:]]
    invariant = b.flag()
    scanned = b.integer(1, 2)
    body = _scan_body(b, piece, piece, dtype, invariant, scanned)
    state = b.operand(b.values(piece, dtype, -2, 2), "state")
    x = b.input(b.values(whole, dtype, -2, 2), "x")
    fixed = [b.operand(b.values(piece, dtype, 1, 2), "w")] if invariant else []
    axis_in = axis - len(whole) if b.flag() else axis
    direction = b.integer(0, 1)
    out_axes = [b.integer(0, len(piece)) for _ in range(scanned)]
    out_directions = [b.integer(0, 1) for _ in range(scanned)]
    node = opset.scan(body, [state], [x], fixed, [axis_in], [direction], out_axes, out_directions, name="op")
    attrs = {"axis": axis_in, "direction": direction, "output_axes": out_axes, "output_directions": out_directions}
    return b.case(op_type, node.outputs(), "accumulate", length, **attrs)


@key_case("Scan")
def _scan_backwards_along_the_last_axis() -> OpCase:
    """A running sum read from the last slice along axis 1, stacked backwards along axis 1."""
    b = Builder.fixed(7)
    s, x = opset.parameter([2], F32, name="scan_s"), opset.parameter([2], F32, name="scan_x")
    total = opset.add(s, x)
    body = Model([opset.result(total), opset.result(opset.multiply(total, x))], [s, x], name="body")
    state = opset.constant(np.zeros(2, F32), name="state")
    data = b.input(b.values([2, 4], F32, -2, 2), "x")
    node = opset.scan(body, [state], [data], [], [1], [1], [1], [1], name="op")
    attrs = {"axis": 1, "direction": 1, "output_axes": [1], "output_directions": [1]}
    return b.case("Scan", node.outputs(), "accumulate", 4, **attrs)


@key_case("Loop")
def _loop_without_a_trip_limit() -> OpCase:
    """A trip count of -1 (no limit): the body's condition ends the Loop after 3 iterations."""
    b = Builder.fixed(12)
    body = _fixed_stop_body(3)
    trip = b.input(np.array(-1, I64), "trip_count")
    node = opset.loop(trip, opset.constant(np.array(True)), body, [b.input(b.values([2], F32, -2, 2), "x")], name="op")
    return b.case("Loop", node.outputs(), "accumulate", 5, trip_count=-1, stop_at=3, invariant=False, scanned=1)


def _fixed_stop_body(stop_at: int) -> Model:
    """``(i, cond, x) -> (i + 1 < stop_at, x + i + 1, x)``."""
    i = opset.parameter([], I64, name="loop_i")
    c = opset.parameter([], BOOL, name="loop_cond")
    x = opset.parameter([2], F32, name="loop_x")
    one = opset.constant(np.array(1, I64))
    go = opset.less(opset.add(i, one), opset.constant(np.array(stop_at, I64)))
    out = opset.add(x, opset.convert(opset.add(i, one), F32))
    return Model([opset.result(go), opset.result(out), opset.result(x)], [i, c, x], name="body")
