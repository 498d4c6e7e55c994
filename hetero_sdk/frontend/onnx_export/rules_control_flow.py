"""Export rules of If, Loop and Scan: ONNX's ops of the same names, their bodies written as
subgraphs. The values a body reads unchanged (an If's inputs, a Loop's or Scan's invariant inputs)
are ONNX's captured values: the body reads the enclosing tensor by name."""

from __future__ import annotations

import numpy as np

from hetero_sdk.element_type import Type
from hetero_sdk.frontend.onnx_export.context import ExportContext, exporter

__all__: list[str] = []


def _inputs(ctx: ExportContext, start: int, stop: int | None = None) -> list[str]:
    stop = ctx.current.get_input_size() if stop is None else stop
    return [ctx.input(i) for i in range(start, stop)]


@exporter("If")
def if_(ctx: ExportContext) -> None:
    captured: list[str | None] = list(_inputs(ctx, 1))
    then_graph = ctx.body(ctx.attrs["then_body"], captured, f"{ctx.name}/then_branch", {})
    else_graph = ctx.body(ctx.attrs["else_body"], captured, f"{ctx.name}/else_branch", {})
    ctx.emit("If", [ctx.input(0)], ctx.outputs or [], then_branch=then_graph, else_branch=else_graph)


@exporter("Loop")
def loop(ctx: ExportContext) -> None:
    count = ctx.current.get_input_size()
    invariant = ctx.attrs["num_invariant_inputs"]
    carried = _inputs(ctx, 2, count - invariant)
    known = ctx.constant(0)
    unlimited = known is not None and int(np.asarray(known).reshape(-1)[0]) < 0
    trip_count = "" if unlimited else ctx.i64(0)
    if known is None:  # a negative count read at run time means no limit (OpenVINO); ONNX would run none
        no_limit = ctx.emit1("Less", [trip_count, ctx.const(0, name="zero")])
        largest = ctx.const(np.iinfo(np.int64).max, name="no_limit")
        trip_count = ctx.emit1("Where", [no_limit, largest, trip_count])
    body = ctx.attrs["body"]
    bound: list[str | None] = [None, None, *([None] * len(carried)), *_inputs(ctx, count - invariant)]
    iteration_type = body.get_parameters()[0].output(0).element_type
    graph = ctx.body(body, bound, f"{ctx.name}/body", {0: Type.i64} if iteration_type != Type.i64 else {})
    ctx.emit("Loop", [trip_count, ctx.input(1), *carried], ctx.outputs or [], body=graph)


@exporter("Scan")
def scan(ctx: ExportContext) -> None:
    attrs = ctx.attrs
    count = ctx.current.get_input_size()
    invariant, scanned = attrs["num_invariant_inputs"], attrs["num_scan_inputs"]
    values = _inputs(ctx, 0, count - invariant)
    bound: list[str | None] = [*([None] * len(values)), *_inputs(ctx, count - invariant)]
    graph = ctx.body(attrs["body"], bound, f"{ctx.name}/body", {})
    ctx.emit(
        "Scan",
        values,
        ctx.outputs or [],
        body=graph,
        num_scan_inputs=scanned,
        scan_input_axes=list(attrs["scan_input_axes"]) or None,
        scan_input_directions=list(attrs["scan_input_directions"]) or None,
        scan_output_axes=list(attrs["scan_output_axes"]) or None,
        scan_output_directions=list(attrs["scan_output_directions"]) or None,
    )
