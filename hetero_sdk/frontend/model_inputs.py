"""``convert_model(model, input=...)``: the model read with what ``input=`` sets on its inputs.

An ONNX model gets shapes, element types and frozen values while it is translated (as OpenVINO's
frontends do): a frozen input is a constant from the start, so an ``If`` it decides translates only the
branch it takes, and shapes made static fold. A model read another way (the native ``.json``, OpenVINO
IR, a :class:`~hetero_sdk.Model`) gets them afterwards: :meth:`Model.reshape`, a Convert after an input
given another element type, and :class:`~hetero_sdk.transformations.FreezeInputs`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from onnx import ModelProto

from hetero_sdk.frontend.input_spec import InputSpec, parse_input, resolve_inputs
from hetero_sdk.frontend.onnx import convert_onnx, is_onnx
from hetero_sdk.graph.model import Model
from hetero_sdk.graph.reshape import InputKey, ShapeLike
from hetero_sdk.ops.basic import convert
from hetero_sdk.serialization.container import MAGIC
from hetero_sdk.transformations.freeze_inputs import FreezeInputs
from hetero_sdk.transformations.graph_rewrite import ConsumerMap, replace_output

__all__ = ["apply_inputs", "convert_with_input"]

_OTHER_SUFFIXES = (".json", ".xml")


def convert_with_input(model: Any, argument: Any, read: Callable[[Any], Model]) -> Model:
    """``model`` converted with ``input=argument`` (see :mod:`hetero_sdk.frontend.input_spec`).

    :param read: reads a model that is not ONNX (``read_model``).
    :raises ModelValidationError: for an ``input=`` form not accepted, an input name the model lacks,
        or a shape, type or value that does not fit its input (naming it).
    """
    specs = parse_input(argument)
    if _is_onnx(model):
        return convert_onnx(model, specs)
    loaded = read(model)
    if isinstance(model, Model):  # converting never changes the caller's model
        loaded = loaded.clone()
    names = [port.any_name for port in loaded.inputs]
    apply_inputs(loaded, resolve_inputs(specs, names, f"model '{loaded.friendly_name}'"))
    return loaded


def _is_onnx(model: Any) -> bool:
    if isinstance(model, ModelProto):
        return True
    if isinstance(model, (bytes, bytearray, memoryview)):
        return not bytes(model).startswith(MAGIC)
    if isinstance(model, (str, os.PathLike)):
        path = Path(model)
        suffix = path.suffix.lower()
        if suffix == ".onnx":
            return True
        if suffix in _OTHER_SUFFIXES or not path.is_file():
            return False
        return is_onnx(path.read_bytes())
    return False


def apply_inputs(model: Model, specs: Mapping[str, InputSpec]) -> None:
    """Sets shapes, element types and frozen values on ``model``'s inputs, by input name.

    A new element type is the Parameter's, and a Convert to the type it had feeds its consumers, so the
    graph's types hold. Frozen inputs leave the model's inputs; what they decide is folded.

    :raises ModelValidationError: for a shape or value the model does not accept (naming the op).
    """
    shapes: dict[InputKey, ShapeLike] = {
        name: spec.shape for name, spec in specs.items() if spec.shape is not None and spec.value is None
    }
    if shapes:
        model.reshape(shapes)
    for name, spec in specs.items():
        if spec.element_type is not None and spec.value is None:
            _retype(model, name, spec)
    FreezeInputs({name: spec.value for name, spec in specs.items() if spec.value is not None}).run(model)


def _retype(model: Model, name: str, spec: InputSpec) -> None:
    port = model.input(name)
    declared = port.element_type
    if spec.element_type is None or spec.element_type == declared:
        return
    users = ConsumerMap(model)
    parameter = port.node
    parameter.attrs["element_type"] = spec.element_type
    parameter.validate_and_infer_types()
    cast = convert(port, declared, name=f"{parameter.friendly_name}/Convert")
    replace_output(model, port, cast.output(0), users)
