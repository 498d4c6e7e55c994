"""Stateful models and their explicit form: :func:`make_stateful` turns input/output pairs into
variables (OpenVINO's ``MakeStateful`` pass, optimum-intel's KV-cache convention), and
:func:`make_stateless` gives back the explicit form that devices compile (each variable an input and an
output again, plus a small model computing the initial values).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from hetero_sdk.element_type import Type
from hetero_sdk.errors import ModelValidationError, PortNotFoundError
from hetero_sdk.graph.model import Model
from hetero_sdk.graph.node import Node, Output
from hetero_sdk.graph.variables import Variable
from hetero_sdk.ops.basic import constant, parameter, result
from hetero_sdk.ops.movement import concat, gather
from hetero_sdk.ops.shape_manipulation import broadcast, shape_of
from hetero_sdk.ops.state import assign, read_value
from hetero_sdk.shape import DYNAMIC, PartialShape

__all__ = ["BEAM_IDX", "StatelessForm", "find_kv_cache_pairs", "make_stateful", "make_stateless"]

BEAM_IDX = "beam_idx"
"""The name of the input :func:`make_stateful` adds with ``beam_idx=True`` (optimum-intel's)."""

_PAST = re.compile(r"past_key_values\.(\d+)\.(key|value)")
_PRESENT = "present.{}.{}"


def find_kv_cache_pairs(model: Model) -> dict[str, str]:
    """The key/value cache pairs of ``model``, in input order: its ``past_key_values.N.key|value`` inputs
    with their ``present.N.key|value`` outputs (the names of torch, optimum and onnxruntime-genai
    exports), and any other input that an op reads as a cache it writes in place
    (:attr:`~hetero_sdk.graph.op_def.OpDef.caches`) with the output that op's updated cache feeds."""
    outputs = {name for port in model.outputs for name in port.names}
    declared = _declared_cache_pairs(model)
    pairs: dict[str, str] = {}
    for port in model.inputs:
        for name in sorted(port.names):
            match = _PAST.fullmatch(name)
            if match and _PRESENT.format(*match.groups()) in outputs:
                pairs[name] = _PRESENT.format(*match.groups())
                break
        else:
            found = declared.get(port.any_name)
            if found is not None and found not in pairs.values():
                pairs[port.any_name] = found
    return pairs


def _declared_cache_pairs(model: Model) -> dict[str, str]:
    """Each input an op reads as a cache it writes in place, with the model output that returns it."""
    pairs: dict[str, str] = {}
    for port in model.outputs:
        source = port.node.input_value(0)
        declared = source.node.op.cache_of(source.index)
        if declared is None:
            continue
        past = source.node.input_value(declared.past)
        if past.node.type_name == "Parameter" and past.any_name not in pairs:
            pairs[past.any_name] = port.any_name
    return pairs


def make_stateful(model: Model, pairs: Mapping[str, str] | None = None, *, beam_idx: bool = False) -> Model:
    """Turns input/output pairs of ``model`` into variables, in place, and returns the model.

    Each pair becomes a variable whose id is the input's name: the input's Parameter gives way to a
    ``ReadValue`` and the output's Result to an ``Assign`` (a sink), so the pair leaves the model's
    inputs and outputs and the infer request carries the value from one inference to the next.

    A variable has the input's shape, with the dimensions the output knows and the input does not
    (onnxruntime-genai's builder leaves the head size of its cache inputs unnamed:
    ``[batch, kv_heads, past_sequence_length, kv_cache_dim]``). It starts as zeros of that shape,
    with each dynamic dimension 0 (an empty KV cache)
    except the first, the batch: it is taken at run time from the first dimension of the model's first
    remaining input (``input_ids``), as optimum-intel builds it (ShapeOf, Gather, Concat, Broadcast).
    A model with no other input starts with a batch of 1.

    :param pairs: input name to the name of the output that feeds it on the next call
        (``{"past_key_values.0.key": "present.0.key", ...}``); None finds the
        ``past_key_values.N.key|value`` / ``present.N.key|value`` pairs and the caches ops declare they
        write in place (:func:`find_kv_cache_pairs`).
    :param beam_idx: add optimum-intel's ``beam_idx`` input (i32, ``[batch]``): every variable's rows
        are gathered by it before use, which reorders the cache for beam search (greedy and sampling
        pass ``arange(batch)``).
    :raises PortNotFoundError: for a name in ``pairs`` that is no input or output (listing them).
    :raises ModelValidationError: for a pair whose element types or shapes cannot match, an input named
        twice, or no pairs found with ``pairs=None`` (listing the inputs and outputs).
    """
    if pairs is None:
        pairs = find_kv_cache_pairs(model)
        if not pairs:
            ins = ", ".join(p.any_name for p in model.inputs) or "none"
            outs = ", ".join(p.any_name for p in model.outputs) or "none"
            raise ModelValidationError(
                f"model '{model.friendly_name}': no past_key_values.N.key|value input has a present.N.key|value "
                f"output, and no op writes an input's cache in place; its inputs: {ins}; its outputs: {outs}; "
                "name the pairs: make_stateful(model, {input name: output name})"
            )
    found = [(_pair(model, i, o), i) for i, o in pairs.items()]
    _check_distinct([p for (p, _), _ in found], "input", model)
    _check_distinct([r for (_, r), _ in found], "output", model)
    states = {id(p) for (p, _), _ in found}
    others = [p for p in model.get_parameters() if id(p) not in states]
    beam = parameter([_batch_dim(found)], Type.i32, name=BEAM_IDX) if beam_idx else None
    if beam is not None:
        model.add_parameters([beam])  # (before anything consumes it)
    users = model.consumers()
    renames: list[tuple[Node, str]] = []
    assigns = []
    for (param, res), variable_id in found:
        port = param.output(0)
        shape = port.partial_shape.merge(res.input_value(0).partial_shape)  # (checked by _pair)
        assert shape is not None
        reader = read_value(_zeros(shape, port.element_type, others), variable_id, shape, port.element_type)
        value = reader.output(0)
        if beam is not None:
            value = gather(value, beam, 0, name=f"{variable_id}/beam_gather").output(0)
        for user, index in users.get(port, []):
            user.set_input(index, value)
        writer = assign(res.input_value(0), variable_id)
        renames += [(reader, param.friendly_name), (writer, res.friendly_name)]
        assigns.append(writer)
    model.add_sinks(assigns)
    for (param, res), _ in found:
        model.remove_result(res)
        model.remove_parameter(param)
    for node, name in renames:  # the state ops take the names of the Parameters and Results they replace
        node.friendly_name = name
    model.validate()
    return model


def _pair(model: Model, input_name: str, output_name: str) -> tuple[Node, Node]:
    try:
        param, res = model.input(input_name).node, model.output(output_name).node
    except PortNotFoundError as exc:
        ins = ", ".join(p.any_name for p in model.inputs) or "none"
        outs = ", ".join(p.any_name for p in model.outputs) or "none"
        raise PortNotFoundError(f"make_stateful: {exc}; its inputs: {ins}; its outputs: {outs}") from None
    given, fed = param.output(0), res.input_value(0)
    if given.element_type != fed.element_type or given.partial_shape.merge(fed.partial_shape) is None:
        raise ModelValidationError(
            f"model '{model.friendly_name}': input '{input_name}' ({given.element_type.value}{given.partial_shape}) "
            f"cannot be fed by output '{output_name}' ({fed.element_type.value}{fed.partial_shape}); pair each "
            "input with the output of the same element type and rank that feeds it on the next call"
        )
    return param, res


def _check_distinct(nodes: list[Node], kind: str, model: Model) -> None:
    seen: set[int] = set()
    for node in nodes:
        if id(node) in seen:
            raise ModelValidationError(
                f"model '{model.friendly_name}': {kind} '{node.output(0).any_name}' is in two pairs; "
                "each variable needs its own input and output"
            )
        seen.add(id(node))


def _batch_dim(found: list[tuple[tuple[Node, Node], str]]) -> int:
    dims = {p.output(0).partial_shape[0] for (p, _), _ in found if p.output(0).partial_shape.rank}
    return dims.pop() if len(dims) == 1 else DYNAMIC


def _zeros(shape: PartialShape, element_type: Type, others: list[Node]) -> Output:
    """Zeros of ``shape``, dynamic dimensions 0 but a dynamic batch (dimension 0), taken from the first
    of ``others`` (1 when there is none)."""
    zero = constant(np.zeros((), element_type.numpy))
    dims = [0 if d == DYNAMIC else d for d in shape.dims]
    dynamic_batch = shape.rank > 0 and shape[0] == DYNAMIC
    if dynamic_batch and others and others[0].output(0).partial_shape.rank > 0:
        batch = gather(shape_of(others[0], Type.i64), constant(np.asarray([0], np.int64)), 0)
        target = concat([batch, constant(np.asarray(dims[1:], np.int64))], 0)
        return broadcast(zero, target).output(0)
    if dynamic_batch:
        dims[0] = 1
    return broadcast(zero, constant(np.asarray(dims, np.int64))).output(0)


@dataclass(frozen=True)
class StatelessForm:
    """A stateful model as devices compile it.

    :ivar model: the explicit model: the stateful model's inputs, then one input per variable (named
        after it, in :attr:`variables` order); its outputs, then one output per variable (the value
        its Assign wrote). Each such Parameter and Result has the friendly name of the ReadValue or
        Assign it replaces.
    :ivar variables: the variables, in the order of the added inputs and outputs.
    :ivar init: computes the initial values of the variables whose ReadValue has an initial-value
        input, from the stateful model's inputs (one output each, see :attr:`init_of`); None when
        every variable starts as zeros of its (static) shape.
    :ivar init_of: per variable, its output index in :attr:`init`, or None: zeros.
    :ivar init_nodes: per variable, the friendly names of the nodes that compute its initial value
        (they are not in :attr:`model`).
    """

    model: Model
    variables: tuple[Variable, ...]
    init: Model | None
    init_of: tuple[int | None, ...]
    init_nodes: tuple[frozenset[str], ...]


def make_stateless(model: Model) -> StatelessForm:
    """The explicit form of a stateful model (see :class:`StatelessForm`); ``model`` is not changed.

    :raises ModelValidationError: when an initial value depends on a variable.
    """
    explicit = model.clone()
    readers = [n for n in explicit.get_ops() if n.type_name == "ReadValue"]
    writers = {s.attrs["variable_id"]: s for s in explicit.get_sinks()}
    variables = tuple(
        Variable(r.attrs["variable_id"], r.attrs["variable_shape"], r.attrs["variable_type"]) for r in readers
    )
    explicit_users = explicit.consumers()
    params, results = [], []
    for reader, variable in zip(readers, variables):
        param = parameter(variable.data_shape, variable.data_type, name=reader.friendly_name)
        param.output(0).set_names({variable.variable_id})
        for user, index in explicit_users.get(reader.output(0), []):
            user.set_input(index, param.output(0))
        writer = writers[variable.variable_id]
        for user, index in explicit_users.get(writer.output(0), []):
            user.set_input(index, writer.input_value(0))
        explicit.remove_sink(writer)
        params.append(param)
        results.append(result(writer.input_value(0), name=writer.friendly_name))
    explicit.add_parameters(params)
    explicit.add_results(results)
    init, init_of, init_nodes = _init_model(model)
    return StatelessForm(explicit, variables, init, init_of, init_nodes)


def _init_model(model: Model) -> tuple[Model | None, tuple[int | None, ...], tuple[frozenset[str], ...]]:
    copy = model.clone()
    readers = [n for n in copy.get_ops() if n.type_name == "ReadValue"]
    outputs: list[Output] = []
    init_of: list[int | None] = []
    for reader in readers:
        if reader.get_input_size():
            init_of.append(len(outputs))
            outputs.append(reader.input_value(0))
        else:
            init_of.append(None)
    if not outputs:
        return None, tuple(init_of), tuple(frozenset() for _ in readers)
    init = Model([result(o) for o in outputs], copy.get_parameters(), f"{model.friendly_name}/init")
    for node in init.get_ops():
        if node.type_name == "ReadValue":
            raise ModelValidationError(
                f"model '{model.friendly_name}': an initial value reads variable '{node.attrs['variable_id']}'; "
                "an initial value may depend on the model's inputs only"
            )
    nodes: list[frozenset[str]] = []
    for reader in readers:
        if not reader.get_input_size():
            nodes.append(frozenset())
            continue
        alone = Model([result(reader.input_value(0))], copy.get_parameters())
        nodes.append(frozenset(n.friendly_name for n in alone.get_ops() if n.type_name not in ("Parameter", "Result")))
    return init, tuple(init_of), tuple(nodes)
