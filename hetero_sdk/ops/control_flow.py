"""Control flow: If, Loop and Scan, ops whose attributes hold sub-graphs (bodies, each a :class:`Model`).

A body's Parameters receive the op's inputs, its Results give the op's outputs, as listed below. A
body reads no tensor of the outer graph directly: what it needs from outside is an input of the op
(ONNX's frontend turns captured outer values into such inputs). HETERO places an op and its bodies on
one device.

Whenever the op's shapes are inferred, its bodies' Parameters take the shapes of the values they
receive (as OpenVINO's ops refresh their bodies), and a Loop's or Scan's carried values get dynamic
dimensions where iterations change them: a body follows ``Model.reshape`` of the outer model, and
devices read the shapes it will run with. A body therefore belongs to one op: pass a clone to another.

- ``If(cond, *inputs)``: runs ``then_body`` or ``else_body``; both take ``inputs`` and give one
  Result per output of the op. Where the bodies give different ranks for an output (and ``cond`` is
  not known while building), that output has a dynamic rank (``PartialShape.dynamic()``): a device
  that runs ``If`` at run time (TEMPLATE) runs it; one that needs static ranks (XLA) declines it.
- ``Loop(trip_count, condition, *carried, *invariant)`` (OpenVINO's Loop, ONNX's semantics): the body
  takes ``(iteration, condition, *carried, *invariant)`` and gives ``(condition, *carried, *scanned)``;
  it runs while the condition holds and fewer than ``trip_count`` iterations ran (``-1``: no limit).
  The op gives the last carried values, then each scanned value of every iteration stacked on a new
  first axis.
- ``Scan(*states, *scan_inputs, *invariant)`` (ONNX's Scan): the body takes ``(*states, *slices,
  *invariant)`` and gives ``(*states, *scanned)``; it runs once per slice of the scan inputs along
  their scan axes. The op gives the last states, then the scanned values stacked along their axes.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from typing import Any

from hetero_sdk.element_type import Type
from hetero_sdk.errors import ModelValidationError
from hetero_sdk.graph.model import Model
from hetero_sdk.graph.node import Node, Output
from hetero_sdk.graph.op_def import INT, INTS, Attr, AttrKind, Input, OpDef, OutputSpec, define
from hetero_sdk.ops.basic import as_output, as_outputs
from hetero_sdk.ops.checks import INDEX_TYPES
from hetero_sdk.ops.folding import constant_value
from hetero_sdk.shape import DYNAMIC, PartialShape

__all__ = ["BODY", "IF", "LOOP", "SCAN", "bodies", "if_op", "loop", "loop_iterations", "scan"]


def _body(value: Any) -> Model:
    if not isinstance(value, Model):
        raise ValueError(f"must be a Model (a sub-graph), got {type(value).__name__}")
    return value


BODY = AttrKind("model", _body)
"""The kind of an attribute holding a sub-graph."""

_BOOLEAN = frozenset({Type.boolean})


def bodies(node: Node) -> list[Model]:
    """The sub-graphs ``node`` carries (empty for ops without any)."""
    return [value for value in node.attrs.values() if isinstance(value, Model)]


Signature = tuple[Type, PartialShape]


def _signature(value: Output) -> Signature:
    return value.element_type, value.partial_shape


def _body_results(node: Node, what: str, body: Model, values: Sequence[Signature]) -> list[Signature]:
    """Binds ``values`` to the body's Parameters and gives what its Results give.

    There must be one Parameter per value, of the value's element type. Each Parameter takes the
    value's shape (``Model.reshape``, all or nothing), as OpenVINO's ops refresh their bodies: a body
    declared for other shapes, or with dynamic dimensions, follows what it receives, and devices find
    its shapes as they will run.
    """
    parameters = body.get_parameters()
    if len(parameters) != len(values):
        raise node.error(f"{what} has {len(parameters)} Parameter(s) but receives {len(values)} value(s)")
    for index, (parameter, (element_type, shape)) in enumerate(zip(parameters, values)):
        port = parameter.output(0)
        if port.element_type != element_type:
            raise node.error(
                f"{what} Parameter {index} ('{port.any_name}') is {port.element_type.value}{port.partial_shape} "
                f"but receives {element_type.value}{shape}"
            )
    try:
        body.reshape({index: shape for index, (_, shape) in enumerate(values)})
    except ModelValidationError as exc:
        received = ", ".join(f"{t.value}{s}" for t, s in values)
        raise node.error(f"{what} does not accept the values it receives ({received}): {exc}") from None
    return [_signature(r.input_value(0)) for r in body.get_results()]


def _carried_fixpoint(
    node: Node,
    body: Model,
    bind: Callable[[list[Signature]], list[Signature]],
    carried: Sequence[Signature],
    first: int,
    what: str,
) -> tuple[list[PartialShape], list[Signature]]:
    """The shapes of carried values (Loop) or states (Scan) that hold in every iteration, and what the
    body gives for them: start from the initial shapes, make each dimension the body changes dynamic,
    and infer again until nothing changes (each pass makes one more dimension dynamic, at least).

    :param bind: the body's inputs for given carried signatures.
    :param first: the index of the first carried value among the body's results.
    """
    shapes = [shape for _, shape in carried]
    while True:
        current = [(t, s) for (t, _), s in zip(carried, shapes)]
        results = _body_results(node, "body", body, bind(current))
        finals = results[first : first + len(shapes)]
        if len(finals) < len(shapes):
            return shapes, results  # the caller names what is missing
        joined: list[PartialShape] = []
        for index, ((element_type, initial), (final_type, final), shape) in enumerate(zip(carried, finals, shapes)):
            settled = _joined(shape, final) if element_type == final_type else None
            if settled is None:
                raise node.error(
                    f"{what} {index} starts as {element_type.value}{initial} but the body gives "
                    f"{final_type.value}{final}; element type and rank must stay"
                )
            joined.append(settled)
        if joined == shapes:
            return shapes, results
        shapes = joined


def _joined(a: PartialShape, b: PartialShape) -> PartialShape | None:
    """The shape both ``a`` and ``b`` fit: equal dims kept, differing ones dynamic; None for other ranks
    (or a dynamic one)."""
    if not (a.rank_is_static and b.rank_is_static) or a.rank != b.rank:
        return None
    return PartialShape([x if x == y else DYNAMIC for x, y in zip(a.dims, b.dims)])


def _scalar_flag(node: Node, index: int, what: str) -> None:
    shape = node.input_value(index).partial_shape
    if shape.dims not in ((), (1,), (DYNAMIC,)):
        raise node.error(f"{what} must be a scalar (or one element), got shape {shape}")


# -- If -------------------------------------------------------------------------------------------------


def _infer_if(node: Node) -> list[OutputSpec]:
    _scalar_flag(node, 0, "cond")
    values = [_signature(v) for v in node.input_values()[1:]]
    known = constant_value(node.input_value(0))
    if known is not None:  # only the body taken must accept the values (the other never runs)
        taken = "then_body" if bool(known.reshape(-1)[0]) else "else_body"
        other = "else_body" if taken == "then_body" else "then_body"
        results = _body_results(node, taken, node.attrs[taken], values)
        with contextlib.suppress(ModelValidationError):
            _body_results(node, other, node.attrs[other], values)
        return list(results)
    then_out = _body_results(node, "then_body", node.attrs["then_body"], values)
    else_out = _body_results(node, "else_body", node.attrs["else_body"], values)
    if len(then_out) != len(else_out):
        raise node.error(f"then_body gives {len(then_out)} result(s), else_body {len(else_out)}; they must agree")
    specs: list[OutputSpec] = []
    for index, ((a_type, a_shape), (b_type, b_shape)) in enumerate(zip(then_out, else_out)):
        if a_type != b_type:
            raise node.error(
                f"output {index}: then_body gives {a_type.value}{a_shape}, else_body "
                f"{b_type.value}{b_shape}; the branches must agree on element type"
            )
        specs.append((a_type, _joined(a_shape, b_shape) or PartialShape.dynamic()))
    return specs


IF = define(
    OpDef(
        "If",
        "control_flow",
        _infer_if,
        inputs=(Input("cond", _BOOLEAN), Input("inputs", optional=True, variadic=True)),
        attrs=(
            Attr("then_body", BODY, doc="the sub-graph run when cond is true"),
            Attr("else_body", BODY, doc="the sub-graph run when cond is false"),
        ),
        version="opset8",
        doc="Runs one of two sub-graphs on the inputs, chosen by a boolean scalar.",
    )
)


def if_op(cond: Any, then_body: Model, else_body: Model, inputs: Sequence[Any] = (), name: str | None = None) -> Node:
    """Runs ``then_body`` or ``else_body`` on ``inputs`` (``If``), as ``cond`` says.

    :param cond: a boolean scalar (or one-element tensor).
    :param then_body: a Model with one Parameter per input and one Result per output of the op.
    :param else_body: the same, for a false ``cond``.
    :param inputs: the values both bodies receive, in the order of their Parameters.
    :param name: the node's friendly name.
    :returns: the node; its outputs are the taken body's Results.
    """
    attrs = {"then_body": then_body, "else_body": else_body}
    return Node(IF, [as_output(cond), *as_outputs(inputs)], attrs, name)


# -- Loop -----------------------------------------------------------------------------------------------


def _infer_loop(node: Node) -> list[OutputSpec]:
    _scalar_flag(node, 0, "trip_count")
    _scalar_flag(node, 1, "condition")
    body: Model = node.attrs["body"]
    invariant = node.attrs["num_invariant_inputs"]
    values = node.input_values()[2:]
    if not 0 <= invariant <= len(values):
        raise node.error(f"num_invariant_inputs={invariant} is out of range for {len(values)} loop input(s)")
    carried = [_signature(v) for v in values[: len(values) - invariant]]
    fixed = [_signature(v) for v in values[len(values) - invariant :]]
    parameters = body.get_parameters()
    if len(parameters) != 2 + len(values):
        raise node.error(
            f"body has {len(parameters)} Parameter(s); a Loop over {len(carried)} carried and {invariant} "
            f"invariant value(s) needs {2 + len(values)}: iteration, condition, then the values"
        )
    iteration, condition = parameters[0], parameters[1]
    if iteration.get_output_element_type(0) not in INDEX_TYPES or condition.get_output_element_type(0) != Type.boolean:
        raise node.error("body Parameter 0 (the iteration) must be i32 or i64, and Parameter 1 (the condition) boolean")
    head = [_signature(iteration.output(0)), _signature(condition.output(0))]
    shapes, results = _carried_fixpoint(
        node, body, lambda current: [*head, *current, *fixed], carried, first=1, what="carried value"
    )
    if len(results) < 1 + len(carried) or results[0][0] != Type.boolean:
        raise node.error(f"body must give a boolean condition, then {len(carried)} carried value(s), then scanned ones")
    known = loop_iterations(node)
    count = DYNAMIC if known is None else known
    specs: list[OutputSpec] = [(t, shape) for (t, _), shape in zip(carried, shapes)]
    specs += [(t, PartialShape([count, *shape.dims])) for t, shape in results[1 + len(carried) :]]
    return specs


def loop_iterations(node: Node) -> int | None:
    """How many iterations a Loop node runs, when that is known while building: its trip count is a
    known non-negative number, its initial condition is known, and its body passes the condition on
    unchanged (or gives a constant true), so nothing but the trip count ends it."""
    trips = constant_value(node.input_value(0))
    start = constant_value(node.input_value(1))
    if trips is None or start is None or int(trips.reshape(-1)[0]) < 0:
        return None
    if not bool(start.reshape(-1)[0]):
        return 0
    body: Model = node.attrs["body"]
    source = body.get_results()[0].input_value(0).node
    unchanged = source is body.get_parameters()[1]
    always = source.type_name == "Constant" and bool(source.attrs["value"].all())
    return int(trips.reshape(-1)[0]) if unchanged or always else None


LOOP = define(
    OpDef(
        "Loop",
        "control_flow",
        _infer_loop,
        inputs=(
            Input("trip_count", INDEX_TYPES, doc="the most iterations; -1 for no limit"),
            Input("condition", _BOOLEAN, doc="whether the first iteration runs"),
            Input("values", optional=True, variadic=True, doc="carried values, then invariant ones"),
        ),
        attrs=(
            Attr("body", BODY, doc="(iteration, condition, *carried, *invariant) -> (condition, *carried, *scanned)"),
            Attr("num_invariant_inputs", INT, 0, doc="how many of the last inputs the body reads unchanged", minimum=0),
        ),
        version="opset5",
        doc="Runs a sub-graph while its condition holds, carrying values from one iteration to the next and "
        "stacking values of every iteration.",
    )
)


def loop(
    trip_count: Any,
    condition: Any,
    body: Model,
    carried: Sequence[Any] = (),
    invariant: Sequence[Any] = (),
    name: str | None = None,
) -> Node:
    """Runs ``body`` repeatedly (``Loop``): while its condition holds, at most ``trip_count`` times.

    :param trip_count: an i64 or i32 scalar; ``-1`` for no limit.
    :param condition: a boolean scalar: whether the first iteration runs.
    :param body: a Model taking ``(iteration, condition, *carried, *invariant)`` and giving
        ``(condition, *carried, *scanned)``.
    :param carried: the initial values carried from iteration to iteration.
    :param invariant: values every iteration reads unchanged.
    :param name: the node's friendly name.
    :returns: the node; outputs: the final carried values, then each scanned value stacked on axis 0.
    """
    inputs = [as_output(trip_count), as_output(condition), *as_outputs(carried), *as_outputs(invariant)]
    return Node(LOOP, inputs, {"body": body, "num_invariant_inputs": len(invariant)}, name)


# -- Scan -----------------------------------------------------------------------------------------------


def _axis(node: Node, value: int, rank: int, what: str) -> int:
    if not -rank <= value < rank:
        raise node.error(f"{what} {value} is out of range for rank {rank}")
    return value % rank


def _infer_scan(node: Node) -> list[OutputSpec]:
    body: Model = node.attrs["body"]
    m, invariant = node.attrs["num_scan_inputs"], node.attrs["num_invariant_inputs"]
    values = node.input_values()
    n = len(values) - m - invariant
    if m < 1 or n < 0:
        raise node.error(f"{len(values)} input(s) cannot hold {m} scan input(s) and {invariant} invariant one(s)")
    input_axes = node.attrs["scan_input_axes"] or [0] * m
    if len(input_axes) != m or len(node.attrs["scan_input_directions"] or [0] * m) != m:
        raise node.error(f"scan_input_axes and scan_input_directions need {m} value(s)")
    scanned = values[n : n + m]
    axes = [_axis(node, a, v.partial_shape.rank, "scan_input_axes value") for a, v in zip(input_axes, scanned)]
    lengths = {v.partial_shape[a] for v, a in zip(scanned, axes)} - {DYNAMIC}
    if len(lengths) > 1:
        raise node.error(f"the scan inputs have different lengths along their scan axes: {sorted(lengths)}")
    length = lengths.pop() if lengths else DYNAMIC
    slices = [(v.element_type, _without(v.partial_shape, a)) for v, a in zip(scanned, axes)]
    fixed = [*slices, *map(_signature, values[n + m :])]
    states = [_signature(v) for v in values[:n]]
    shapes, results = _carried_fixpoint(node, body, lambda current: [*current, *fixed], states, first=0, what="state")
    if len(results) < n:
        raise node.error(f"body gives {len(results)} result(s); it must give the {n} state(s) first")
    k = len(results) - n
    output_axes = node.attrs["scan_output_axes"] or [0] * k
    if len(output_axes) != k or len(node.attrs["scan_output_directions"] or [0] * k) != k:
        raise node.error(f"scan_output_axes and scan_output_directions need {k} value(s)")
    specs: list[OutputSpec] = [(t, shape) for (t, _), shape in zip(states, shapes)]
    for (element_type, shape), axis in zip(results[n:], output_axes):
        dims = list(shape.dims)
        dims.insert(_axis(node, axis, len(dims) + 1, "scan_output_axes value"), length)
        specs.append((element_type, PartialShape(dims)))
    return specs


def _without(shape: PartialShape, axis: int) -> PartialShape:
    """``shape`` without ``axis``: what a body sees of one slice."""
    return PartialShape(shape.dims[:axis] + shape.dims[axis + 1 :])


SCAN = define(
    OpDef(
        "Scan",
        "control_flow",
        _infer_scan,
        inputs=(Input("values", variadic=True, doc="states, then scan inputs, then invariant values"),),
        attrs=(
            Attr("body", BODY, doc="(*states, *slices, *invariant) -> (*states, *scanned)"),
            Attr("num_scan_inputs", INT, doc="how many inputs are scanned", minimum=1),
            Attr("num_invariant_inputs", INT, 0, doc="how many of the last inputs the body reads unchanged", minimum=0),
            Attr("scan_input_axes", INTS, [], doc="the axis each scan input is sliced along (default 0)"),
            Attr(
                "scan_input_directions", INTS, [], doc="0: first slice first; 1: last slice first", minimum=0, maximum=1
            ),
            Attr("scan_output_axes", INTS, [], doc="the axis each scanned output is stacked along (default 0)"),
            Attr(
                "scan_output_directions",
                INTS,
                [],
                doc="0: first iteration first; 1: last iteration first",
                minimum=0,
                maximum=1,
            ),
        ),
        version="onnx9",
        doc="Runs a sub-graph once per slice of its scan inputs, carrying states and stacking outputs.",
    )
)


def scan(
    body: Model,
    states: Sequence[Any],
    scan_inputs: Sequence[Any],
    invariant: Sequence[Any] = (),
    scan_input_axes: Sequence[int] = (),
    scan_input_directions: Sequence[int] = (),
    scan_output_axes: Sequence[int] = (),
    scan_output_directions: Sequence[int] = (),
    name: str | None = None,
) -> Node:
    """Runs ``body`` once per slice of ``scan_inputs`` (``Scan``, as ONNX's).

    :param body: a Model taking ``(*states, *slices, *invariant)`` and giving ``(*states, *scanned)``.
    :param states: the initial states.
    :param scan_inputs: the tensors sliced along their scan axes; all as long along them.
    :param invariant: values every iteration reads unchanged.
    :param scan_input_axes: each scan input's axis (default 0).
    :param scan_input_directions: 1 to scan an input from its last slice (default 0).
    :param scan_output_axes: the axis each scanned output is stacked along (default 0).
    :param scan_output_directions: 1 to stack an output's slices from the last iteration (default 0).
    :param name: the node's friendly name.
    :returns: the node; outputs: the final states, then the stacked scanned values.
    """
    attrs = {
        "body": body,
        "num_scan_inputs": len(scan_inputs),
        "num_invariant_inputs": len(invariant),
        "scan_input_axes": list(scan_input_axes),
        "scan_input_directions": list(scan_input_directions),
        "scan_output_axes": list(scan_output_axes),
        "scan_output_directions": list(scan_output_directions),
    }
    return Node(SCAN, [*as_outputs(states), *as_outputs(scan_inputs), *as_outputs(invariant)], attrs, name)
