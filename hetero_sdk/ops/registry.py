"""The op registry: every op type's definition (shape and type inference, attribute checks).

An op is defined once, here in the SDK, in the module of its family; kernels live with each device.
Plugins may register device-specific ops (a fused op a transformation produces) with :func:`register_op`.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from hetero_sdk.element_type import Type
from hetero_sdk.errors import UnsupportedOperationError
from hetero_sdk.shape import PartialShape

if TYPE_CHECKING:
    from hetero_sdk.graph.node import Node, Output

__all__ = ["OpDef", "OutputSpec", "get_op_def", "op_types", "register_op"]

OutputSpec = tuple[Type, PartialShape | Sequence[int]]
InferFn = Callable[["Node"], Sequence[OutputSpec]]


@dataclass(frozen=True)
class OpDef:
    """The definition of one op type.

    :ivar type_name: the OpenVINO op type name (``MatMul``).
    :ivar family: the family module it belongs to (``elementwise``, ``convolution``...).
    :ivar infer: checks a node's inputs and attributes and returns one ``(Type, shape)`` per output.
    :ivar version: the opset the op comes from.
    :ivar data_dependent: True when output shapes depend on input values (NonZero, NMS).
    """

    type_name: str
    family: str
    infer: InferFn
    version: str = "opset1"
    data_dependent: bool = False


_OPS: dict[str, OpDef] = {}


def register_op(
    type_name: str, family: str, version: str = "opset1", *, data_dependent: bool = False
) -> Callable[[InferFn], InferFn]:
    """Registers the decorated function as the shape and type inference of ``type_name``.

    :raises ValueError: when ``type_name`` is registered already.
    """

    def decorate(infer: InferFn) -> InferFn:
        if type_name in _OPS:
            raise ValueError(f"op type '{type_name}' is registered already (family {_OPS[type_name].family})")
        _OPS[type_name] = OpDef(type_name, family, infer, version, data_dependent)
        return infer

    return decorate


def get_op_def(type_name: str) -> OpDef:
    """The definition of ``type_name``.

    :raises UnsupportedOperationError: for an unknown type, listing close matches.
    """
    _load_families()
    try:
        return _OPS[type_name]
    except KeyError:
        close = difflib.get_close_matches(type_name, _OPS, n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else f"; {len(_OPS)} op types are registered"
        raise UnsupportedOperationError(f"unknown op type '{type_name}'{hint}") from None


def op_types() -> list[str]:
    """Every registered op type name, sorted."""
    _load_families()
    return sorted(_OPS)


def _load_families() -> None:
    import hetero_sdk.ops  # noqa: F401  (registers every family on import)


# -- helpers for op definitions and factories ---------------------------------------------------------


def as_output(value: Any, like: Output | None = None) -> Output:
    """Turns a Node, an Output, or a constant value (array or scalar) into an Output.

    A Python scalar becomes a constant of ``like``'s element type when given, else f32 / i64 / boolean.
    """
    from hetero_sdk.graph.node import Node, Output

    if isinstance(value, Output):
        return value
    if isinstance(value, Node):
        if value.get_output_size() != 1:
            raise TypeError(
                f"{value.type_name} '{value.friendly_name}' has {value.get_output_size()} outputs; "
                "pass one of node.outputs() instead of the node"
            )
        return value.output(0)
    from hetero_sdk.ops.basic import constant

    if isinstance(value, (bool, int, float)) and not isinstance(value, np.generic):
        if like is not None:
            dtype = like.element_type.numpy
        elif isinstance(value, bool):
            dtype = np.dtype(np.bool_)
        elif isinstance(value, int):
            dtype = np.dtype(np.int64)
        else:
            dtype = np.dtype(np.float32)
        return constant(np.asarray(value, dtype=dtype)).output(0)
    return constant(np.asarray(value)).output(0)


def as_outputs(values: Iterable[Any]) -> list[Output]:
    """:func:`as_output` over a sequence."""
    return [as_output(v) for v in values]


_FOLDABLE_FOR_SHAPES = frozenset(
    {
        "Add", "Broadcast", "Concat", "Convert", "Divide", "Equal", "Gather", "Maximum", "Minimum",
        "Multiply", "Range", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceSum", "Reshape", "Select",
        "ShapeOf", "Slice", "Squeeze", "StridedSlice", "Subtract", "Unsqueeze",
    }
)  # fmt: skip
_MAX_FOLD_ELEMENTS = 1 << 16


def constant_value(output: Output, _depth: int = 0) -> np.ndarray | None:
    """The value of ``output`` when it is known at build time, else None.

    Known means: a Constant, a ShapeOf of a static shape, or a small shape-computing subgraph of
    those (so ``Reshape(x, Concat(ShapeOf(x)[0:1], [-1]))`` infers static shapes).
    """
    node = output.node
    if node.type_name == "Constant":
        return node.attrs["value"]
    if node.type_name == "ShapeOf":
        shape = node.input_value(0).partial_shape
        return np.array(shape.dims, dtype=node.get_output_element_type(0).numpy) if shape.is_static else None
    if node.type_name not in _FOLDABLE_FOR_SHAPES or _depth > 32:
        return None
    values = []
    for source in node.input_values():
        value = constant_value(source, _depth + 1)
        if value is None or value.size > _MAX_FOLD_ELEMENTS:
            return None
        values.append(value)
    from hetero_sdk.reference import run_node

    return run_node(node, values)[output.index]
