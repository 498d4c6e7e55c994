"""The registry of numpy reference kernels, and the functions that run them."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from hetero_sdk.errors import HeteroSDKError, InferenceError, UnsupportedOperationError
from hetero_sdk.extensions import REFERENCE, device_kernel
from hetero_sdk.graph.op_def import OPS, OpDef
from hetero_sdk.registry import Registry

if TYPE_CHECKING:
    from hetero_sdk.graph.model import Model
    from hetero_sdk.graph.node import Node

__all__ = ["KERNELS", "Kernel", "evaluate", "get_kernel", "kernel", "kernel_types", "run_node"]

Kernel = Callable[..., Any]
"""``kernel(node, *inputs) -> array | tuple of arrays``: one op's computation on numpy arrays."""

KERNELS: Registry[Kernel] = Registry("reference kernel", UnsupportedOperationError)
"""The numpy kernels of the ops whose definition has no array-API kernel, or that numpy computes
better its own way (more exactly); each written to be obviously correct, not fast."""

kernel = KERNELS
"""Registers the decorated function as the reference kernel of each op type named: ``@kernel("Add")``."""


def get_kernel(op: OpDef | str) -> Kernel:
    """The reference kernel of an op: its own numpy kernel, else its definition's array-API kernel (an
    extension op's: its ``"reference"`` kernel, else its array-API one, checked against its shape inference).

    :raises UnsupportedOperationError: when the op type is unknown, or defined without any kernel.
    """
    definition = op if isinstance(op, OpDef) else OPS.get(op)
    name = definition.type_name
    found = KERNELS.find(name) or device_kernel(name, REFERENCE) or definition.evaluate
    if found is None:
        raise UnsupportedOperationError(
            f"op type '{definition.type_name}' ({definition.family}) is defined but has no reference kernel; "
            f"register one with @hetero_sdk.reference.kernel({definition.type_name!r})"
        )
    return found


def kernel_types() -> list[str]:
    """Every op type with a reference kernel, sorted."""
    extension_ops = {t for t in OPS if device_kernel(t, REFERENCE) is not None}
    return sorted(set(KERNELS.names()) | {t for t, op in OPS.items() if op.evaluate is not None} | extension_ops)


def run_node(node: Node, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Runs ``node``'s reference kernel; outputs are cast to the node's output element types.

    Floating-point warnings (overflow, division by zero) are silenced: results follow IEEE 754.
    """
    with np.errstate(all="ignore"):
        raw = get_kernel(node.op)(node, *inputs)
    outputs = list(raw) if isinstance(raw, (tuple, list)) else [raw]
    return [
        np.asarray(value).astype(node.get_output_element_type(i).numpy, copy=False) for i, value in enumerate(outputs)
    ]


def evaluate(model: Model, inputs: Mapping[str, Any] | Sequence[Any]) -> list[np.ndarray]:
    """Runs ``model`` op by op with the reference kernels: the oracle every device is compared with.

    :param inputs: arrays by input tensor name, or in parameter order.
    :returns: one array per model output, in order.
    :raises InferenceError: for missing or extra inputs, or wrong shapes or element types.
    :raises UnsupportedOperationError: for a stateful model (it keeps no state between calls).
    """
    if model.is_stateful():
        raise UnsupportedOperationError(
            f"model '{model.friendly_name}' is stateful; evaluate runs one call and keeps no state: evaluate its "
            "explicit form (hetero_sdk.transformations.make_stateless(model).model), or compile it on TEMPLATE"
        )
    parameters = model.get_parameters()
    if isinstance(inputs, Mapping):
        by_name = {name: p for p in parameters for name in p.output(0).names}
        unknown = sorted(set(inputs) - set(by_name))
        if unknown:
            raise InferenceError(f"unknown input name(s) {unknown}; the model's inputs are {sorted(by_name)}")
        values = {id(by_name[k]): v for k, v in inputs.items()}
    else:
        if len(inputs) != len(parameters):
            raise InferenceError(f"the model has {len(parameters)} input(s), {len(inputs)} were given")
        values = {id(p): v for p, v in zip(parameters, inputs)}
    env: dict[int, list[np.ndarray]] = {}
    for p in parameters:
        if id(p) not in values:
            raise InferenceError(f"input '{p.output(0).any_name}' was not given")
        env[id(p)] = [_checked_input(p, values[id(p)])]
    for node in model.get_ops():
        if id(node) in env:
            continue
        args = [env[id(s.node)][s.index] for s in node.input_values()]
        try:
            env[id(node)] = run_node(node, args)
        except HeteroSDKError:
            raise
        except Exception as exc:
            raise InferenceError(
                f"{node.type_name} '{node.friendly_name}' failed: {type(exc).__name__}: {exc}"
            ) from exc
    return [env[id(r)][0] for r in model.get_results()]


def _checked_input(parameter: Node, value: Any) -> np.ndarray:
    port = parameter.output(0)
    array = np.asarray(value)
    if array.dtype != port.element_type.numpy:
        raise InferenceError(
            f"input '{port.any_name}' has element type {array.dtype}; the model expects {port.element_type.value}"
        )
    if not port.partial_shape.compatible(array.shape):
        raise InferenceError(
            f"input '{port.any_name}' has shape {list(array.shape)}; the model expects {port.partial_shape}"
        )
    return array
