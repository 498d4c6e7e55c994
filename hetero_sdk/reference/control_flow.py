"""Reference kernels of the control-flow ops: each body runs with the reference evaluator."""

from __future__ import annotations

from typing import Any

import numpy as np

from hetero_sdk.errors import ModelValidationError
from hetero_sdk.graph.model import Model
from hetero_sdk.graph.node import Node
from hetero_sdk.reference.registry import evaluate, kernel
from hetero_sdk.shape import PartialShape


@kernel("If")
def if_(node: Node, cond: np.ndarray, *inputs: np.ndarray) -> list[np.ndarray]:
    body = node.attrs["then_body"] if bool(np.asarray(cond).reshape(-1)[0]) else node.attrs["else_body"]
    return evaluate(body, list(inputs))


@kernel("Loop")
def loop(node: Node, trip_count: np.ndarray, condition: np.ndarray, *values: np.ndarray) -> list[np.ndarray]:
    body = node.attrs["body"]
    parameters = body.get_parameters()
    carried_count = len(values) - node.attrs["num_invariant_inputs"]
    carried, invariant = list(values[:carried_count]), list(values[carried_count:])
    limit = int(np.asarray(trip_count).reshape(-1)[0])
    iteration_type = parameters[0].get_output_element_type(0).numpy
    go = bool(np.asarray(condition).reshape(-1)[0])
    scanned: list[list[np.ndarray]] = [[] for _ in range(len(body.get_results()) - 1 - carried_count)]
    iteration = 0
    while go and (limit < 0 or iteration < limit):
        outputs = evaluate(body, [np.array(iteration, iteration_type), np.array(go), *carried, *invariant])
        go = bool(outputs[0].reshape(-1)[0])
        carried = outputs[1 : 1 + carried_count]
        for stack, value in zip(scanned, outputs[1 + carried_count :]):
            stack.append(value)
        iteration += 1
    results = body.get_results()
    if iteration == 0 and scanned:  # no iteration ran: the body's shapes for the values it would have received
        results = _results_for(body, [np.array(0, iteration_type), np.array(go), *carried, *invariant])
    return [
        *carried,
        *(_stacked(node, carried_count + i, stack, results[1 + carried_count + i]) for i, stack in enumerate(scanned)),
    ]


def _results_for(body: Model, values: list[np.ndarray]) -> list[Node]:
    """The Results of a copy of ``body`` whose Parameters take the shapes of ``values`` (the body's own
    Results where it does not accept them): what a scanned output's slices would have been."""
    copy = body.clone()
    try:
        copy.reshape({index: PartialShape(value.shape) for index, value in enumerate(values)})
    except ModelValidationError:
        return body.get_results()
    return copy.get_results()


@kernel("Scan")
def scan(node: Node, *values: np.ndarray) -> list[np.ndarray]:
    attrs = node.attrs
    m, invariant_count = attrs["num_scan_inputs"], attrs["num_invariant_inputs"]
    n = len(values) - m - invariant_count
    states, invariant = list(values[:n]), list(values[n + m :])
    scan_inputs = [
        np.moveaxis(x, axis, 0)[::-1] if direction else np.moveaxis(x, axis, 0)
        for x, axis, direction in zip(values[n : n + m], attrs["scan_input_axes"] or [0] * m, _directions(attrs, m))
    ]
    body = attrs["body"]
    k = len(body.get_results()) - n
    scanned: list[list[np.ndarray]] = [[] for _ in range(k)]
    for step in range(scan_inputs[0].shape[0]):
        outputs = evaluate(body, [*states, *(x[step] for x in scan_inputs), *invariant])
        states = outputs[:n]
        for stack, value in zip(scanned, outputs[n:]):
            stack.append(value)
    out_axes = attrs["scan_output_axes"] or [0] * k
    out_directions = attrs["scan_output_directions"] or [0] * k
    stacked = []
    results = body.get_results()
    for index, (stack, axis, direction) in enumerate(zip(scanned, out_axes, out_directions)):
        whole = _stacked(node, n + index, stack[::-1] if direction else stack, results[n + index])
        stacked.append(np.moveaxis(whole, 0, axis % whole.ndim))
    return [*states, *stacked]


def _directions(attrs: dict[str, Any], m: int) -> list[int]:
    return list(attrs["scan_input_directions"] or [0] * m)


def _stacked(node: Node, output: int, stack: list[np.ndarray], result: Node) -> np.ndarray:
    """The values of every iteration on a new first axis; empty (``[0, ...]``) after no iteration, the
    other dimensions taken from the body's ``result`` (0 where it does not know them)."""
    if stack:
        return np.stack(stack)
    dims = [0 if d < 0 else d for d in result.get_output_partial_shape(0).dims]
    return np.zeros([0, *dims], node.get_output_element_type(output).numpy)
