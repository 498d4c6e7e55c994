"""Transitional: the decorator the op families not yet written as :class:`OpDef` values still use.

Removed once every family declares its inputs and attributes.
"""

from __future__ import annotations

from collections.abc import Callable

from hetero_sdk.graph.op_def import OPS, InferFn, Input, OpDef, OutputSpec, define
from hetero_sdk.ops.basic import as_output, as_outputs
from hetero_sdk.ops.folding import constant_value

__all__ = ["OpDef", "OutputSpec", "as_output", "as_outputs", "constant_value", "get_op_def", "op_types", "register_op"]


def register_op(
    type_name: str,
    family: str,
    version: str = "opset1",
    *,
    data_dependent: bool = False,
    shape_inputs: tuple[int, ...] = (),
) -> Callable[[InferFn], InferFn]:
    """Defines ``type_name`` with the decorated shape inference, which checks its own inputs.

    :param shape_inputs: the indices of the inputs whose values decide output shapes.
    """
    positions = max(shape_inputs, default=-1) + 1
    inputs = tuple(Input(optional=True, decides_shape=i in shape_inputs) for i in range(positions))
    inputs += (Input(optional=True, variadic=True),)

    def decorate(infer: InferFn) -> InferFn:
        define(OpDef(type_name, family, infer, inputs, version=version, data_dependent=data_dependent))
        return infer

    return decorate


def get_op_def(type_name: str) -> OpDef:
    """The definition of ``type_name``."""
    return OPS.get(type_name)


def op_types() -> list[str]:
    """Every defined op type, sorted."""
    return OPS.names()
