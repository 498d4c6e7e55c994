"""``XlaLevelLookup``: element-wise work that depends on one 8-bit quantized level only, read from a table.

Between two quantized layers of a statically quantized model an activation is an 8-bit level: after
:class:`~hetero_sdk_jax.quantization.QuantizedRoundTripFolding` a ``Clamp`` of rounded values held in
f32 (NaN mapped to a level by a ``Select``), or an i8/u8 tensor. What follows it up to the next layer
is element-wise, with per-tensor scales and zero points: YOLOv8's SiLU in the QDQ format is
``Q(DQ(v) * DQ(Q(Sigmoid(DQ(v)))))``, thirteen f32 ops per value on XLA (8-9 ms of YOLOv8n's 12 ms
against 3 ms for its int8 products), where ONNX Runtime reads QLinearSigmoid from a 256-entry table.
Every value of such a chain is a function of the level alone: :class:`QuantizedLevelLookup`
evaluates the chain once, at compile time, with the ops' reference kernels on every level the source
can hold (and on NaN where it can be NaN), and replaces it by ``XlaLevelLookup(levels, table)``, a
gather from that table. The result is the reference semantics of the unfused chain, value for value.

The pass takes only chains whose every other operand is a constant of one element (per-tensor), and
only outputs whose chain holds an op that costs more than a gather (:data:`CHEAP`): a dequantize, a
requantize or a ReLU alone is cheaper computed than looked up (a gather measured 0.6 ms on
1x32x160x160, one thread; the SiLU chain 1.0 ms).
"""

from __future__ import annotations

import math
from typing import Any

import ml_dtypes
import numpy as np
from hetero_sdk import Model, Node, Output, Type
from hetero_sdk.plugin import (
    BOOL,
    FLOATS,
    INT,
    Attr,
    ConsumerMap,
    Input,
    MatcherPass,
    OpDef,
    OutputSpec,
    constant_value,
    define,
    run_node,
)

from hetero_sdk_jax.quantization import holds_integers

__all__ = ["CHEAP", "LEVEL_LOOKUP", "LEVEL_LOOKUP_OP", "MAX_LEVELS", "QuantizedLevelLookup", "level_lookup"]

LEVEL_LOOKUP = "XlaLevelLookup"
"""The op's type name."""

MAX_LEVELS = 256
"""The most levels a source may hold (8-bit)."""

CHEAP = frozenset(
    {"Add", "Subtract", "Multiply", "Divide", "Round", "Clamp", "IsNaN", "Select", "Convert", "Maximum", "Minimum",
     "Relu", "Negative", "Abs", "Floor", "Ceiling", "Sign"}
)  # fmt: skip
"""Ops XLA computes about as fast as a gather reads a table: a chain of these alone is left as it is."""

_FAMILIES = frozenset({"elementwise", "activation"})
_INTEGERS = frozenset({Type.i8, Type.u8})


def _infer(node: Node) -> list[OutputSpec]:
    levels, size = node.input_value(0), len(node.attrs["table"])
    if levels.element_type not in _INTEGERS | {Type.f32}:
        raise node.error(f"levels must be i8, u8 or f32 holding integers, not {levels.element_type.value}")
    if not 1 <= size <= MAX_LEVELS + 1:
        raise node.error(f"table must hold 1 to {MAX_LEVELS + 1} values, not {size}")
    return [(Type.f32, levels.partial_shape)]


def _definition(node: Node, levels: Any) -> np.ndarray:
    """The op's value in numpy: ``table[levels - low]``, levels clipped to the table's levels, NaN read
    at the table's last entry when ``nan_entry``, else as level 0."""
    table, low, nan_entry = np.asarray(node.attrs["table"], np.float32), node.attrs["low"], node.attrs["nan_entry"]
    high = low + table.size - (2 if nan_entry else 1)
    levels = np.asarray(levels)
    nan = np.isnan(levels) if levels.dtype.kind == "f" else np.zeros(levels.shape, bool)
    found = table[np.clip(np.where(nan, 0, levels), low, high).astype(np.int64) - low]
    return np.where(nan, table[-1], found) if nan_entry else found


LEVEL_LOOKUP_OP = define(
    OpDef(
        LEVEL_LOOKUP,
        "activation",  # element-wise on its one input: the layout passes carry it channels-last
        _infer,
        inputs=(Input("levels", _INTEGERS | {Type.f32}, doc="integers from low to low + levels - 1 (f32: or NaN)"),),
        attrs=(
            Attr("table", FLOATS, doc="f32 [levels] or [levels + 1]: the value of each level, then of NaN"),
            Attr("low", INT, doc="the lowest level (the table's first entry)"),
            Attr("nan_entry", BOOL, False, doc="the table's last entry is the value of NaN"),
        ),
        version="xla",
        evaluate=_definition,
        doc="table[levels - low], an element-wise chain over 8-bit levels evaluated once.",
    )
)


def level_lookup(levels: Output, table: np.ndarray, low: int, nan_entry: bool) -> Output:
    """An ``XlaLevelLookup`` node reading ``table`` at ``levels``."""
    attrs = {"table": np.asarray(table, np.float32).tolist(), "low": low, "nan_entry": nan_entry}
    return Node(LEVEL_LOOKUP_OP, [levels], attrs).output(0)


def _source_range(levels: Output, users: ConsumerMap) -> tuple[int, int, bool] | None:
    """``(low, high, may_be_nan)`` when ``levels`` holds integers from ``low`` to ``high`` (at most
    :data:`MAX_LEVELS` of them), else None. A Clamp read only through its NaN ``Select`` is left to
    the Select (a source that cannot be NaN needs no NaN entry)."""
    node = levels.node
    if not levels.partial_shape.rank_is_static or levels.partial_shape.rank < 1:
        return None
    if levels.element_type in _INTEGERS:
        info = ml_dtypes.iinfo(levels.element_type.numpy)
        return int(info.min), int(info.max), False
    if levels.element_type != Type.f32:
        return None
    if node.type_name == "Select":
        bounds = _clamp_bounds(node.input_value(2))
        fill = constant_value(node.input_value(1))
        test = node.input_value(0).node
        if bounds is None or fill is None or fill.size != 1 or test.type_name != "IsNaN":
            return None
        if test.input_value(0) != node.input_value(2) or not bounds[0] <= float(fill.reshape(-1)[0]) <= bounds[1]:
            return None
        if float(fill.reshape(-1)[0]) != int(fill.reshape(-1)[0]):
            return None
        return bounds[0], bounds[1], False
    bounds = _clamp_bounds(levels)
    if bounds is None or all(_reads_nan_select(n, levels) for n in users.nodes(levels)):
        return None
    return bounds[0], bounds[1], True


def _clamp_bounds(value: Output) -> tuple[int, int] | None:
    """``(lo, hi)`` when ``value`` is ``Clamp(integers, lo, hi)`` with integer bounds at most
    :data:`MAX_LEVELS` levels apart."""
    node = value.node
    if node.type_name != "Clamp" or value.element_type != Type.f32 or not holds_integers(node.input_value(0)):
        return None
    low, high = node.attrs["min"], node.attrs["max"]
    if not (math.isfinite(low) and math.isfinite(high)) or low != int(low) or high != int(high):
        return None  # an open side (ONNX's Clip without a bound) holds any number of levels
    if not 0 <= high - low < MAX_LEVELS:
        return None
    return int(low), int(high)


def _reads_nan_select(node: Node, clamped: Output) -> bool:
    """Whether ``node`` is the IsNaN or Select of ``Select(IsNaN(clamped), fill, clamped)``."""
    if node.type_name == "IsNaN":
        return True
    return (
        node.type_name == "Select" and node.input_value(2) == clamped and node.input_value(0).node.type_name == "IsNaN"
    )


def _same_value(a: Output, b: Output) -> bool:
    """Whether ``a`` and ``b`` are one output, or constants of one element with one value."""
    if a == b:
        return True
    if a.node.type_name != "Constant" or b.node.type_name != "Constant":
        return False
    x, y = constant_value(a), constant_value(b)
    return x is not None and y is not None and x.size == y.size == 1 and x.dtype == y.dtype and np.array_equal(x, y)


def _merge_twins(node: Node, users: ConsumerMap) -> bool:
    """Moves the uses of every node computing what ``node`` computes (same op, attributes and inputs) to
    ``node``; True when there was one. QOperator models quantize a value once per consumer
    (QLinearSigmoid's and QLinearMul's reads of one level), and both must be seen as functions of the one
    source."""
    merged = False
    values = node.input_values()
    for source in values:
        if source.node.type_name == "Constant":
            continue
        for twin in users.nodes(source):
            if twin is node or twin.op is not node.op or dict(twin.attrs) != dict(node.attrs):
                continue
            others = twin.input_values()
            if twin.get_output_size() == 1 and len(others) == len(values) and all(map(_same_value, others, values)):
                users.move(twin.output(0), node.output(0))
                users.detach(twin)
                merged = True
    return merged


def _operand(value: Output, rank: int) -> bool:
    """Whether ``value`` is a constant the chain may read: one element, of rank at most ``rank``."""
    known = constant_value(value) if value.node.type_name == "Constant" else None
    return known is not None and known.size == 1 and known.ndim <= rank


def _chain(source: Output, users: ConsumerMap) -> list[Node]:
    """The element-wise nodes whose every input is ``source``, one of these nodes or a one-element
    constant, in topological order."""
    rank = source.partial_shape.rank
    inside: set[Output] = {source}
    chain: list[Node] = []
    pending = list(users.nodes(source))
    seen: set[int] = set()
    while pending:
        node = pending.pop(0)
        if id(node) in seen:
            continue
        op = node.op
        if op.family not in _FAMILIES and node.type_name != "Convert":
            continue
        if op.evaluate is None or op.data_dependent or node.get_output_size() != 1 or node.type_name == LEVEL_LOOKUP:
            continue
        values = node.input_values()
        if not all(v in inside or _operand(v, rank) for v in values):
            continue  # another input not (yet) known: offered again when it joins
        seen.add(id(node))
        chain.append(node)
        inside.add(node.output(0))
        pending.extend(users.nodes(node.output(0)))
    return chain


def _table(source: Output, chain: list[Node], levels: np.ndarray) -> dict[Output, np.ndarray]:
    """Each chain node's output evaluated by the reference kernels with ``source`` holding ``levels``."""
    rank = source.partial_shape.rank
    values: dict[Output, np.ndarray] = {source: levels.reshape((1,) * (rank - 1) + (levels.size,))}
    for node in chain:
        inputs = [values[v] if v in values else constant_value(v) for v in node.input_values()]
        values[node.output(0)] = run_node(node, [np.asarray(v) for v in inputs])[0]  # every operand is known
    return values


def _ancestors(output: Output, source: Output) -> set[str]:
    """The op types between ``source`` and ``output`` (``output``'s node included)."""
    types: set[str] = set()
    stack, seen = [output], set()
    while stack:
        value = stack.pop()
        if value == source or id(value.node) in seen or value.node.type_name == "Constant":
            continue
        seen.add(id(value.node))
        types.add(value.node.type_name)
        stack.extend(value.node.input_values())
    return types


class QuantizedLevelLookup(MatcherPass):
    """Replaces each output of an element-wise chain over one source of 8-bit levels (see the module's
    docstring) that leaves the chain, is f32 and costs more than a gather by ``XlaLevelLookup`` of
    the source, its table computed with the reference kernels."""

    name = "QuantizedLevelLookup"
    anchors = ("Clamp", "Select", "Convert", "Parameter")

    def apply(self, model: Model, node: Node, users: ConsumerMap) -> bool:
        source = node.output(0)
        found = _source_range(source, users)
        if found is None:
            return False
        merged = False
        if node.type_name == "Select":  # Select(IsNaN(clamped), fill, clamped)
            for step in (node.input_value(2).node, node.input_value(0).node, node):
                merged |= _merge_twins(step, users)
        elif node.type_name == "Clamp":
            merged = _merge_twins(node, users)
        low, high, may_be_nan = found
        chain = _chain(source, users)
        if not chain:
            return merged
        levels = np.arange(low, high + 1, dtype=np.float64)
        if may_be_nan:
            levels = np.append(levels, np.nan)
        values = _table(source, chain, levels.astype(source.element_type.numpy))
        inside = {id(n) for n in chain}
        changed = merged
        for member in chain:
            output = member.output(0)
            outside = [n for n in users.nodes(output) if id(n) not in inside]
            if not outside or users.feeds_result(output) or output.element_type != Type.f32:
                continue
            if _ancestors(output, source) <= CHEAP:
                continue
            table = values[output]
            if table.size != levels.size:
                continue  # broadcast to more than one value per level: not a table
            lookup = level_lookup(source, table.reshape(-1), low, may_be_nan)
            users.attach(lookup.node)
            for consumer in outside:
                for index, value in enumerate(consumer.input_values()):
                    if value == output:
                        users.detach(consumer)
                        consumer.set_input(index, lookup)
                        users.attach(consumer)
                consumer.validate_and_infer_types()
            changed = True
        return changed
