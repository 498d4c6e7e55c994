"""Pre- and postprocessing made into ops of the model (what ``PrePostProcessor.build`` does)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from hetero_sdk import opset
from hetero_sdk.element_type import Type
from hetero_sdk.errors import ModelValidationError
from hetero_sdk.graph.model import Model
from hetero_sdk.graph.node import Node, Output
from hetero_sdk.layout import Layout
from hetero_sdk.preprocess.info import ColorFormat, InputInfo, OutputInfo, ResizeAlgorithm, Step
from hetero_sdk.shape import PartialShape

__all__ = ["build_model"]


class _Flow:
    """The tensor the steps have made so far: its port, layout and colour format."""

    def __init__(self, where: str, value: Output, layout: Layout | None, color: ColorFormat) -> None:
        self.where = where
        self.value = value
        self.layout = layout
        self.color = color
        self.step = ""

    def error(self, message: str) -> ModelValidationError:
        step = f", step {self.step}" if self.step else ""
        return ModelValidationError(f"{self.where}{step}: {message}")

    def index(self, name: str, hint: str) -> int:
        """The index of dimension ``name`` in the current layout."""
        rank = self.value.partial_shape.rank
        if self.layout is None or not self.layout.has_name(name):
            have = "no layout" if self.layout is None else f"the layout {self.layout}"
            raise self.error(f"needs dimension {name} but the tensor has {have}; {hint}")
        try:
            return self.layout.index_in(name, rank)
        except ModelValidationError as exc:
            raise self.error(str(exc)) from None

    def transpose(self, target: Layout | tuple[int, ...] | None, fallback: Layout | None) -> None:
        rank = self.value.partial_shape.rank
        if target is None:
            target = fallback
            if target is None:
                raise self.error("converts to the other side's layout, but none is set; pass the layout to convert to")
        if isinstance(target, Layout):
            if self.layout is None:
                raise self.error(f"converts to {target} from no layout; set the tensor's layout first")
            try:
                src, dst = self.layout.resolved(rank), target.resolved(rank)
            except ModelValidationError as exc:
                raise self.error(str(exc)) from None
            missing = [d for d in dst if d != "?" and d not in src]
            if missing or sorted(d for d in dst if d != "?") != sorted(d for d in src if d != "?"):
                raise self.error(f"cannot convert the layout {self.layout} to {target}: they name other dimensions")
            if "?" in src:
                raise self.error(f"cannot convert the layout {self.layout}: its '?' dimensions have no name to follow")
            order = [src.index(d) for d in dst]
            layout: Layout | None = target
        else:
            order = list(target)
            if sorted(order) != list(range(rank)):
                raise self.error(f"{order} is not a permutation of the {rank} dimensions")
            layout = None
            if self.layout is not None and self.layout.rank == rank:
                layout = Layout("[" + ",".join(self.layout.names[i] for i in order) + "]")
        if order != list(range(rank)):
            self.value = opset.transpose(self.value, opset.constant(np.array(order, np.int64))).output(0)
        self.layout = layout

    def convert(self, element_type: Type) -> None:
        if self.value.element_type != element_type:
            self.value = opset.convert(self.value, element_type).output(0)

    def reverse(self, hint: str) -> None:
        if self.layout is not None and self.layout.has_name("C"):
            axis = self.index("C", hint)
        elif self.color != ColorFormat.UNDEFINED:
            axis = self.value.partial_shape.rank - 1  # an image without layout: channels last
        else:
            raise self.error(f"needs dimension C but the tensor has no layout; {hint}")
        channels = self.value.partial_shape[axis]
        if channels < 0:
            raise self.error("needs a static number of channels (dimension C)")
        indices = opset.constant(np.arange(channels - 1, -1, -1, dtype=np.int64))
        self.value = opset.gather(self.value, indices, opset.constant(np.int64(axis))).output(0)

    def per_channel(self, value: float | Sequence[float], what: str) -> Output:
        element_type = self.value.element_type
        if not element_type.is_real:
            raise self.error(
                f"{what} needs a floating-point tensor, this one is {element_type.value}; "
                "add convert_element_type(Type.f32) before it"
            )
        values = np.atleast_1d(np.asarray(value, dtype=element_type.numpy))
        if values.ndim != 1 or values.size == 0:
            raise self.error(f"{what} takes a number or a list of numbers, not {value!r}")
        if values.size == 1:
            return opset.constant(values.reshape(1)).output(0)
        rank = self.value.partial_shape.rank
        axis = self.index("C", "set the layout with tensor().set_layout(...)")
        channels = self.value.partial_shape[axis]
        if channels >= 0 and channels != values.size:
            raise self.error(f"{what} has {values.size} values for {channels} channels")
        shape = [1] * rank
        shape[axis] = values.size
        return opset.constant(values.reshape(shape)).output(0)

    def custom(self, step: Any) -> None:
        made = step(self.value)
        if isinstance(made, Node) and made.get_output_size() == 1:
            made = made.output(0)
        if not isinstance(made, Output):
            raise self.error(f"the custom step returned {type(made).__name__}; it must return an Output (or a Node)")
        self.value = made


def _tensor_shape(
    info: InputInfo, model_shape: PartialShape, tensor_layout: Layout | None, model_layout: Layout | None
) -> PartialShape:
    given = info.tensor_info.shape
    if given is not None:
        return given
    dims = list(model_shape)
    rank = len(dims)
    if tensor_layout is not None and model_layout is not None and tensor_layout != model_layout:
        src, dst = model_layout.resolved(rank), tensor_layout.resolved(rank)
        if sorted(src) == sorted(dst) and "?" not in src:
            dims = [dims[src.index(d)] for d in dst]
    else:
        for step in info.steps.steps:
            if step.name == "convert_layout" and isinstance(step.args[0], tuple) and len(step.args[0]) == rank:
                order, before = step.args[0], list(dims)
                for i, d in enumerate(order):
                    dims[d] = before[i]
                break
    if info.tensor_info.spatial is not None and tensor_layout is not None:
        height, width = info.tensor_info.spatial
        dims[tensor_layout.index_in("H", rank)] = height
        dims[tensor_layout.index_in("W", rank)] = width
    return PartialShape(dims)


def _input(model: Model, parameter: Node, info: InputInfo, consumers: list[tuple[Node, int]]) -> Node:
    port = parameter.output(0)
    where = f"preprocessing of input {port.any_name!r}"
    tensor, model_info = info.tensor_info, info.model_info
    model_layout = model_info.layout or tensor.layout
    tensor_layout = tensor.layout or model_info.layout
    try:
        shape = _tensor_shape(info, port.partial_shape, tensor_layout, model_layout)
    except ModelValidationError as exc:
        raise ModelValidationError(f"{where}: {exc}") from None
    element_type = tensor.element_type or port.element_type
    new = opset.parameter(shape, element_type, name=parameter.friendly_name)
    new.output(0).set_names(port.names)
    new.get_rt_info().update(parameter.get_rt_info())
    flow = _Flow(where, new.output(0), tensor_layout, tensor.color_format)
    for number, step in enumerate(info.steps.steps, 1):
        flow.step = f"{number} ({step.name})"
        _pre_step(flow, step, port, model_layout)
    flow.step = ""
    flow.convert(port.element_type)
    if model_layout is not None and flow.layout is not None and flow.layout != model_layout:
        flow.transpose(model_layout, None)
    if (
        not port.partial_shape.compatible(flow.value.partial_shape)
        or flow.value.partial_shape.rank != port.partial_shape.rank
    ):
        raise flow.error(
            f"the steps make {flow.value.element_type.value}{flow.value.partial_shape}, "
            f"the model takes {port.element_type.value}{port.partial_shape}"
        )
    for node, index in consumers:
        node.set_input(index, flow.value)
    return new


def _pre_step(flow: _Flow, step: Step, port: Output, model_layout: Layout | None) -> None:
    args = step.args
    if step.name == "convert_element_type":
        flow.convert(args[0] or port.element_type)
    elif step.name == "convert_layout":
        flow.transpose(args[0], model_layout)
    elif step.name == "resize":
        _resize(flow, args[0], args[1], args[2], port, model_layout)
    elif step.name == "mean":
        flow.value = opset.subtract(flow.value, flow.per_channel(args[0], "mean")).output(0)
    elif step.name == "scale":
        flow.value = opset.divide(flow.value, flow.per_channel(args[0], "scale")).output(0)
    elif step.name == "reverse_channels":
        flow.reverse("set the layout with tensor().set_layout(...)")
    elif step.name == "convert_color":
        _convert_color(flow, args[0])
    else:  # custom
        flow.custom(args[0])


def _resize(
    flow: _Flow,
    algorithm: ResizeAlgorithm,
    height: int | None,
    width: int | None,
    port: Output,
    model_layout: Layout | None,
) -> None:
    hint = "set the layout with tensor().set_layout(...)"
    h_axis, w_axis = flow.index("H", hint), flow.index("W", hint)
    if height is None or width is None:
        if model_layout is None or not (model_layout.has_name("H") and model_layout.has_name("W")):
            raise flow.error("resizes to the model's H and W, but the model's layout has none; set model().set_layout")
        rank = port.partial_shape.rank
        height = port.partial_shape[model_layout.index_in("H", rank)] if height is None else height
        width = port.partial_shape[model_layout.index_in("W", rank)] if width is None else width
        if height < 0 or width < 0:
            raise flow.error("the model's H or W is dynamic; pass dst_height and dst_width")
    if flow.value.element_type.is_integral:
        raise flow.error("resize needs a floating-point tensor; add convert_element_type(Type.f32) before it")
    sizes = opset.constant(np.array([height, width], np.int64))
    axes = opset.constant(np.array([h_axis, w_axis], np.int64))
    flow.value = opset.interpolate(flow.value, sizes, algorithm.value, "sizes", axes=axes).output(0)


def _convert_color(flow: _Flow, target: ColorFormat) -> None:
    source = flow.color
    if source == ColorFormat.UNDEFINED:
        raise flow.error("converts the colour, but the tensor has none; set it with tensor().set_color_format(...)")
    if target == ColorFormat.UNDEFINED:
        raise flow.error("converts to UNDEFINED; pass ColorFormat.RGB or ColorFormat.BGR")
    if source != target:
        flow.reverse("set the layout with tensor().set_layout(...)")
    flow.color = target


def _output(result: Node, info: OutputInfo) -> None:
    source = result.input_value(0)
    where = f"postprocessing of output {source.any_name!r}"
    names = source.names
    tensor, model_info = info.tensor_info, info.model_info
    flow = _Flow(where, source, model_info.layout or tensor.layout, ColorFormat.UNDEFINED)
    for number, step in enumerate(info.steps.steps, 1):
        flow.step = f"{number} ({step.name})"
        if step.name == "convert_element_type":
            target = step.args[0] or tensor.element_type
            if target is None:
                raise flow.error("converts to the tensor's element type, but none is set; pass one")
            flow.convert(target)
        elif step.name == "convert_layout":
            flow.transpose(step.args[0], tensor.layout)
        else:
            flow.custom(step.args[0])
    flow.step = ""
    if tensor.element_type is not None:
        flow.convert(tensor.element_type)
    if tensor.layout is not None and flow.layout is not None and flow.layout != tensor.layout:
        flow.transpose(tensor.layout, None)
    if flow.value != source:
        flow.value.set_names(names)
        source.set_names(())
        result.set_input(0, flow.value)


def build_model(model: Model, inputs: dict[int, InputInfo], outputs: dict[int, OutputInfo]) -> Model:
    """A copy of ``model`` with the inputs' preprocessing and the outputs' postprocessing made into ops.

    :raises ModelValidationError: for a step that does not fit (a layout without the dimension it needs,
        a mean with the wrong number of channels...), naming the input or output and the step.
    """
    clone = model.clone()
    parameters = clone.get_parameters()
    consumers = clone.consumers()
    for index, info in sorted(inputs.items()):
        old = parameters[index]
        parameters[index] = _input(clone, old, info, consumers.get(old.output(0), []))
    results = clone.get_results()
    for index, out_info in sorted(outputs.items()):
        _output(results[index], out_info)
    built = Model(results, parameters, name=clone.friendly_name, sinks=clone.get_sinks())
    built.get_rt_info().update(clone.get_rt_info())
    built.validate_nodes_and_infer_types()
    return built
