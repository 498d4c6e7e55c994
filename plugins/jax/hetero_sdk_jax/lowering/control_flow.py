"""Lowerings of If, Loop and Scan: each body is lowered to a JAX function of its own (specialised to
the shapes it receives) and run by ``lax.cond``, ``lax.while_loop`` or ``lax.scan``.

XLA needs every shape static, so it declines (see :func:`problem`) a Loop whose stacked outputs grow
with a trip count it cannot know, a loop whose carried values change shape, and an If whose branches
give different shapes when the condition is not known while compiling.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import jax.numpy as jnp
import numpy as np
from hetero_sdk import Model, Node
from hetero_sdk.plugin import constant_value, loop_iterations
from jax import lax

from hetero_sdk_jax.lowering.graph import lower, specialize
from hetero_sdk_jax.lowering.registry import lowering, lowering_check

__all__ = ["problem"]


def _function(body: Model, inputs: Sequence[Any]) -> Callable[..., tuple[Any, ...]]:
    return lower(specialize(body, [tuple(jnp.shape(x)) for x in inputs]))


def _known_flag(node: Node, index: int) -> bool | None:
    value = constant_value(node.input_value(index))
    return None if value is None else bool(np.asarray(value).reshape(-1)[0])


@lowering("If")
def if_(node: Node, cond: Any, *inputs: Any) -> tuple[Any, ...]:
    then_fn = _function(node.attrs["then_body"], inputs)
    else_fn = _function(node.attrs["else_body"], inputs)
    known = _known_flag(node, 0)
    if known is not None:
        return (then_fn if known else else_fn)(*inputs)
    operands = tuple(jnp.asarray(x) for x in inputs)
    return lax.cond(jnp.reshape(cond, ()), lambda ops: then_fn(*ops), lambda ops: else_fn(*ops), operands)  # type: ignore[no-any-return]


@lowering("Loop")
def loop(node: Node, trip_count: Any, condition: Any, *values: Any) -> tuple[Any, ...]:
    body: Model = node.attrs["body"]
    carried_count = len(values) - node.attrs["num_invariant_inputs"]
    carried, invariant = values[:carried_count], values[carried_count:]
    iteration_type = body.get_parameters()[0].get_output_element_type(0).numpy
    first = np.zeros((), iteration_type)
    fn = _function(body, [first, np.zeros((), bool), *values])
    if len(body.get_results()) == 1 + carried_count:
        limit = jnp.reshape(trip_count, ())

        def keep_going(state: tuple[Any, ...]) -> Any:
            iteration, go = state[0], state[1]
            return go & ((limit < 0) | (iteration < limit))

        def step(state: tuple[Any, ...]) -> tuple[Any, ...]:
            iteration, go, *current = state
            out = fn(iteration, go, *current, *invariant)
            return (iteration + 1, jnp.reshape(out[0], ()), *out[1:])

        start = (jnp.asarray(first), jnp.reshape(condition, ()).astype(bool), *map(jnp.asarray, carried))
        return tuple(lax.while_loop(keep_going, step, start)[2:])
    trips = loop_iterations(node)  # problem() made sure it is known
    assert trips is not None

    def scan_step(current: tuple[Any, ...], iteration: Any) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
        out = fn(iteration, jnp.asarray(True), *current, *invariant)
        return tuple(out[1 : 1 + carried_count]), tuple(out[1 + carried_count :])

    final, stacked = lax.scan(scan_step, tuple(map(jnp.asarray, carried)), jnp.arange(trips, dtype=iteration_type))
    return (*final, *stacked)


@lowering("Scan")
def scan(node: Node, *values: Any) -> tuple[Any, ...]:
    attrs = node.attrs
    m, invariant_count = attrs["num_scan_inputs"], attrs["num_invariant_inputs"]
    n = len(values) - m - invariant_count
    states, invariant = values[:n], values[n + m :]
    sequences = []
    for x, axis, direction in zip(
        values[n : n + m], attrs["scan_input_axes"] or [0] * m, _or_zeros(attrs, "scan_input_directions", m)
    ):
        moved = jnp.moveaxis(jnp.asarray(x), axis, 0)
        sequences.append(moved[::-1] if direction else moved)
    fn = _function(attrs["body"], [*states, *(s[0] for s in sequences), *invariant])

    def step(current: tuple[Any, ...], slices: tuple[Any, ...]) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
        out = fn(*current, *slices, *invariant)
        return tuple(out[:n]), tuple(out[n:])

    final, stacked = lax.scan(step, tuple(map(jnp.asarray, states)), tuple(sequences))
    k = len(stacked)
    outputs = []
    for value, axis, direction in zip(
        stacked, attrs["scan_output_axes"] or [0] * k, _or_zeros(attrs, "scan_output_directions", k)
    ):
        ordered = value[::-1] if direction else value
        outputs.append(jnp.moveaxis(ordered, 0, axis % ordered.ndim))
    return (*final, *outputs)


def _or_zeros(attrs: dict[str, Any], key: str, count: int) -> list[int]:
    return list(attrs[key] or [0] * count)


@lowering_check("If", "Loop", "Scan")
def problem(node: Node) -> str | None:
    """Why XLA cannot run this control-flow node with static shapes, or None when it can."""
    if node.type_name == "If" and _known_flag(node, 0) is None:
        then_out = [r.get_output_partial_shape(0) for r in node.attrs["then_body"].get_results()]
        else_out = [r.get_output_partial_shape(0) for r in node.attrs["else_body"].get_results()]
        if any(a.is_static and b.is_static and a != b for a, b in zip(then_out, else_out)):
            return "its branches give different shapes and the condition is not known while compiling"
    if node.type_name in ("Loop", "Scan"):
        first_carried = 2 if node.type_name == "Loop" else 0
        carried = node.get_output_size() - _stacked_count(node)
        for i in range(carried):
            initial = node.input_value(first_carried + i).partial_shape
            if initial.is_static and node.get_output_partial_shape(i) != initial:
                return f"carried value {i} changes shape from one iteration to the next"
    if node.type_name == "Loop" and _stacked_count(node) and loop_iterations(node) is None:
        return "its stacked outputs grow with an iteration count XLA cannot know while compiling"
    return None


def _stacked_count(node: Node) -> int:
    body: Model = node.attrs["body"]
    results = len(body.get_results())
    if node.type_name == "Loop":
        return results - 1 - (node.get_input_size() - 2 - node.attrs["num_invariant_inputs"])
    return results - (node.get_input_size() - node.attrs["num_scan_inputs"] - node.attrs["num_invariant_inputs"])
