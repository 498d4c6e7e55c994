"""Rules for ONNX's control flow: If, Loop and Scan become the opset's ops of the same names, their
bodies Models. An If whose condition is known while translating (often a check on a static rank or
shape) is replaced by the branch it takes, so a branch that could not be built for the input's rank
never needs to be."""

from __future__ import annotations

import numpy as np

from hetero_sdk import opset
from hetero_sdk.element_type import Type
from hetero_sdk.frontend.onnx.node_context import NodeContext
from hetero_sdk.frontend.onnx.rules import Outputs, rule
from hetero_sdk.frontend.onnx.values import describe
from hetero_sdk.graph.limits import UNROLLED_COPIES
from hetero_sdk.graph.node import Output
from hetero_sdk.shape import PartialShape

__all__: list[str] = []


def _outputs(node: object) -> list[Output]:
    return list(node.outputs())  # type: ignore[attr-defined]


def _captured(*bodies: object) -> list[Output]:
    """The enclosing tensors any of ``bodies`` reads, in first-read order."""
    seen: dict[Output, None] = {}
    for body in bodies:
        for value in body.captures:  # type: ignore[attr-defined]
            seen.setdefault(value)
    return list(seen)


@rule("If")
def if_(ctx: NodeContext) -> Outputs:
    known = ctx.constant_input(0)
    if known is not None:
        return ctx.inline_subgraph("then_branch" if bool(np.asarray(known).reshape(-1)[0]) else "else_branch")
    then_body, else_body = ctx.subgraph("then_branch"), ctx.subgraph("else_branch")
    captured = _captured(then_body, else_body)
    node = opset.if_op(ctx.input(0), then_body.model(captured), else_body.model(captured), inputs=captured)
    return _outputs(node)


@rule("Loop")
def loop(ctx: NodeContext) -> Outputs:
    trip_count = ctx.optional_input(0) or ctx.const(-1, np.int64)
    condition = ctx.optional_input(1) or ctx.const(True)
    for i in range(2, len(ctx.inputs)):
        if not isinstance(ctx.any_input(i), Output | None):
            raise ctx.unsupported(
                f"a Loop carrying {describe(ctx.any_input(i))} (input {i}): its length would depend on the "
                "iterations run, and hetero-sdk resolves sequences while translating"
            )
    carried = [ctx.input(i) for i in range(2, len(ctx.inputs))]
    signatures = [
        (Type.i64, PartialShape([])),
        (Type.boolean, PartialShape([])),
        *((value.element_type, value.partial_shape) for value in carried),
    ]
    body = ctx.subgraph("body", signatures)
    captured = _captured(body)
    node = opset.loop(trip_count, condition, body.model(captured), carried=carried, invariant=captured)
    return _outputs(node)


def _scan_split(ctx: NodeContext, values: list[Output]) -> tuple[int, list[Output], list[Output]]:
    """``num_scan_inputs`` (checked against the inputs there are), the states and the scanned inputs."""
    count = ctx.attr("num_scan_inputs")
    if not 1 <= count <= len(values):
        raise ctx.error(
            f"attribute num_scan_inputs={count} is outside its domain for {len(values)} state and scan input(s)",
            f"it counts the scanned inputs, the last of the node's inputs: 1 to {len(values)}",
        )
    return count, values[: len(values) - count], values[len(values) - count :]


def _listed(ctx: NodeContext, name: str, count: int) -> list[int]:
    """Attribute ``name``, one integer per scan input (0 each by default)."""
    values = list(ctx.attr(name, [0] * count))
    if len(values) != count:
        raise ctx.error(f"attribute {name} has {len(values)} value(s) for {count} scan input(s)")
    return values


@rule("Scan", since=9)
def scan(ctx: NodeContext) -> Outputs:
    count, states, scanned = _scan_split(ctx, [ctx.input(i) for i in range(len(ctx.inputs))])
    axes = [
        ctx.check_axis(axis, value.partial_shape.rank, f"scan_input_axes[{index}]")
        for index, (value, axis) in enumerate(zip(scanned, _listed(ctx, "scan_input_axes", count)))
    ]
    signatures = [(v.element_type, v.partial_shape) for v in states]
    for value, axis in zip(scanned, axes):
        dims = list(value.partial_shape.dims)
        del dims[axis]
        signatures.append((value.element_type, PartialShape(dims)))
    body = ctx.subgraph("body", signatures)
    captured = _captured(body)
    node = opset.scan(
        body.model(captured),
        states,
        scanned,
        invariant=captured,
        scan_input_axes=axes,
        scan_input_directions=_listed(ctx, "scan_input_directions", count),
        scan_output_axes=ctx.attr("scan_output_axes", []),
        scan_output_directions=ctx.attr("scan_output_directions", []),
    )
    return _outputs(node)


@rule("Scan", since=8)
def scan_8(ctx: NodeContext) -> Outputs:
    """Opset 8's Scan has a leading batch axis on every state and scanned input: one opset Scan per batch
    entry (the batch size must be known while translating, and within
    :data:`~hetero_sdk.graph.limits.UNROLLED_COPIES`), the results stacked back."""
    if ctx.has_input(0):
        raise ctx.unsupported("Scan-8 with sequence_lens (sequences of different lengths)")
    count, states, scanned = _scan_split(ctx, [ctx.input(i) for i in range(1, len(ctx.inputs))])
    for what, values, least in (("state", states, 1), ("scan input", scanned, 2)):
        for value in values:
            if value.partial_shape.rank < least:
                raise ctx.error(f"a {what} of rank {value.partial_shape.rank}: Scan-8 {what}s have a batch axis"
                                + (" and a scan axis" if least == 2 else ""))  # fmt: skip
    batch = (states or scanned)[0].partial_shape[0]
    if batch < 1:
        raise ctx.unsupported(f"Scan-8 whose batch size is {'0' if batch == 0 else 'not known while translating'}")
    UNROLLED_COPIES.check(batch, f"unrolling Scan-8 over its batch dimension ({batch})", ctx.error)
    directions = _listed(ctx, "directions", count)
    signatures = [(v.element_type, PartialShape(v.partial_shape.dims[1:])) for v in states]
    signatures += [(v.element_type, PartialShape(v.partial_shape.dims[2:])) for v in scanned]
    body = ctx.subgraph("body", signatures)
    captured = _captured(body)
    values = [*states, *scanned]
    per_entry = []
    for b in range(batch):
        index = ctx.const(b, np.int64)
        entry = [opset.gather(v, index, ctx.const(0, np.int64)).output(0) for v in values]
        node = opset.scan(
            body.model(captured),
            entry[: len(states)],
            entry[len(states) :],
            invariant=captured,
            scan_input_axes=[0] * count,
            scan_input_directions=directions,
        )
        per_entry.append([node.output(i) for i in range(node.get_output_size())])
    zero = ctx.const([0], np.int64)
    return [
        opset.concat([opset.unsqueeze(outputs[i], zero) for outputs in per_entry], 0).output(0)
        for i in range(len(per_entry[0]))
    ]
