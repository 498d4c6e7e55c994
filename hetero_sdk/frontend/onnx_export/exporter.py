"""Writing a Model (and its bodies) as ONNX graphs: inputs, initializers, one rule per node, outputs."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import onnx
from onnx import helper

from hetero_sdk.element_type import Type
from hetero_sdk.errors import UnsupportedOperationError
from hetero_sdk.frontend.onnx_export.context import EXPORTERS, ExportContext, Names, NotExportable, onnx_type
from hetero_sdk.graph.model import Model
from hetero_sdk.graph.node import Output
from hetero_sdk.rt_info import DIM_NAMES
from hetero_sdk.shape import DYNAMIC, PartialShape

__all__ = ["GraphExporter"]

_STRUCTURAL = ("Parameter", "Constant", "Result")


class GraphExporter:
    """Exports one model: every graph shares the names (ONNX forbids shadowing) and the list of
    nodes that cannot be exported, reported at once by :meth:`export`."""

    def __init__(self, opset: int) -> None:
        self.opset = opset
        self.names = Names()
        self.node_names = Names()
        self.problems: list[str] = []

    def export(self, model: Model) -> onnx.GraphProto:
        """The main graph of ``model``.

        :raises UnsupportedOperationError: listing every node (bodies included) that cannot be exported.
        """
        graph = self.graph(model, [None] * len(model.get_parameters()), model.friendly_name or "hetero_sdk_model")
        if self.problems:
            raise UnsupportedOperationError(
                f"model '{model.friendly_name}': {len(self.problems)} node(s) cannot be exported to ONNX "
                f"opset {self.opset}: " + "; ".join(self.problems)
            )
        return graph

    def graph(
        self, model: Model, bound: Sequence[str | None], name: str, retyped: Mapping[int, Type] | None = None
    ) -> onnx.GraphProto:
        """``model`` as an ONNX graph. A body Parameter bound to a name reads that enclosing tensor
        (ONNX's captured values); the others become the graph's inputs, of the type ``retyped`` gives
        by index where ONNX fixes it (a Loop's iteration number), cast to the Parameter's."""
        ops = model.get_ordered_ops()
        consumed = {value for node in ops for value in node.input_values()}
        constants = {n.output(0): n.attrs["value"] for n in ops if n.type_name == "Constant"}
        ctx = ExportContext(
            opset=self.opset,
            names=self.names,
            node_names=self.node_names,
            values={},
            nodes=[],
            initializers={},
            constants=constants,
            body=self.graph,
            consumed=consumed,
        )
        inputs = []
        for index, (parameter, outer) in enumerate(zip(model.get_parameters(), bound)):
            port = parameter.output(0)
            if outer is not None:
                ctx.values[port] = outer
                continue
            tensor_name = self.names.unique(port.any_name)
            ctx.values[port] = tensor_name
            symbols = parameter.get_rt_info().get(DIM_NAMES) or []
            element_type = (retyped or {}).get(index, port.element_type)
            if element_type != port.element_type:
                given = self.names.unique(f"{tensor_name}/{element_type.value}")
                ctx.nodes.append(
                    helper.make_node(
                        "Cast",
                        [given],
                        [tensor_name],
                        name=self.node_names.unique(given),
                        to=onnx_type(port.element_type),
                    )
                )
                tensor_name = given
            inputs.append(
                _value_info(tensor_name, port, symbols, default_symbol=tensor_name, element_type=element_type)
            )
        results = model.get_results()
        for result in results:  # the graph outputs' names first: they keep the tensor names
            port = result.input_value(0)
            if port.node.type_name not in _STRUCTURAL and port not in ctx.values:
                ctx.values[port] = self.names.unique(port.any_name)
        for node in ops:
            if node.type_name in _STRUCTURAL:
                continue
            for port in node.outputs():
                if port not in ctx.values:
                    ctx.values[port] = self.names.unique(port.any_name)
            ctx.node, ctx.outputs = node, [ctx.values[p] for p in node.outputs()]
            rule = EXPORTERS.find(node.type_name)
            if rule is None:
                self.problems.append(f"{node.type_name} '{node.friendly_name}' (no ONNX counterpart)")
                continue
            try:
                rule(ctx)
            except NotExportable as exc:
                self.problems.append(str(exc))
        ctx.node = ctx.outputs = None
        outputs, written = [], set()
        for result in results:
            port = result.input_value(0)
            tensor_name = ctx.value(port)
            if port.node.type_name in _STRUCTURAL or tensor_name in written:
                copy = self.names.unique(result.friendly_name if tensor_name in written else port.any_name)
                ctx.nodes.append(helper.make_node("Identity", [tensor_name], [copy], name=self.node_names.unique(copy)))
                tensor_name = copy
            written.add(tensor_name)
            if not port.partial_shape.rank_is_static:
                self.problems.append(
                    f"output '{tensor_name}' has a dynamic rank (an If whose branches give different ranks): "
                    "an ONNX graph output needs a rank; freeze the input that decides the If"
                )
            outputs.append(_value_info(tensor_name, port, []))
        return helper.make_graph(ctx.nodes, name, inputs, outputs, list(ctx.initializers.values()))


def _value_info(
    name: str,
    port: Output,
    symbols: Sequence[str | None],
    default_symbol: str = "",
    element_type: Type | None = None,
) -> onnx.ValueInfoProto:
    """A typed, shaped value: dynamic dims as ``dim_param`` (the Parameter's symbol, else a name made
    from ``default_symbol``), or unknown when no symbol is given."""
    shape: PartialShape = port.partial_shape
    if not shape.rank_is_static:  # an If whose branches give different ranks: a type without a shape
        return helper.make_tensor_value_info(name, onnx_type(element_type or port.element_type), None)
    dims: list[int | str | None] = []
    for axis, dim in enumerate(shape.dims):
        if dim != DYNAMIC:
            dims.append(dim)
        elif axis < len(symbols) and symbols[axis]:
            dims.append(symbols[axis])
        else:
            dims.append(f"{default_symbol}_dim{axis}" if default_symbol else None)
    return helper.make_tensor_value_info(name, onnx_type(element_type or port.element_type), dims)
