"""A KV cache of fixed capacity: the explicit-cache decoder rewritten so that its cache inputs are
buffers of any capacity, written in place, and the filled length is a value, not a shape.

An exported decoder grows each cache by ``present = Concat(past, new, axis)`` and reads the past
length from ``ShapeOf(past)``: the length is a shape, so a compiler that specialises on shapes (XLA)
builds a new executable for every token. OpenVINO GenAI's static NPU pipeline and JAX serving keep the
cache in a buffer of fixed capacity instead; this pass does that to the graph:

- each ``Concat(past, new, axis)`` becomes a scatter of ``new`` into the buffer ``past`` at the rows
  ``past_length ... past_length + new_length - 1``: ``present`` is the updated buffer (same capacity);
- the past length read from ``ShapeOf(past)`` is split in two worlds. Where it decides a shape (a
  ``Range`` limit, a ``Reshape``/``Broadcast`` target, ...) it reads ``capacity - new_length``, so that
  ``past + new`` is the buffer's capacity and every key-axis tensor has the buffer's length; where it is
  a value (positions for the rotary embedding, ...) it reads the new ``past_length`` input;
- a ``Range`` whose start is the past length is written ``start + Range(0, stop - start)``, so that
  its length does not depend on the past length and its values do.

Keys at rows ``>= past_length + new_length`` are masked by the decoder's own causal mask (key ``j`` is
seen by query ``i`` only when ``j <= past_length + i``), and the caller pads the attention mask with
zeros to the capacity: the logits are those of the model run with the cache as exported.

A cache may also be written by an op that declares it does so in place (an
:class:`~hetero_sdk.graph.op_def.InPlaceCache` in its :attr:`~hetero_sdk.graph.op_def.OpDef.caches`,
as com.microsoft GroupQueryAttention does): its output is the buffer already, so no scatter is added,
and the inputs it reads the filled length from must follow the values the request sets (checked): the
attention mask's (padded with zeros, its sum is the filled length) or ``past_length``, where the model
read the cache's shape. Such an op usually takes the capacity from the mask's length. Nothing here
names a particular op.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from hetero_sdk import opset
from hetero_sdk.element_type import Type
from hetero_sdk.errors import ModelValidationError
from hetero_sdk.graph.model import Model
from hetero_sdk.graph.node import Node, Output
from hetero_sdk.graph.op_def import InPlaceCache
from hetero_sdk.ops.folding import constant_value
from hetero_sdk.reference import evaluate

__all__ = ["FixedCapacityCache", "PAST_LENGTH", "check_fixed_capacity", "with_fixed_capacity_cache"]

PAST_LENGTH = "past_length"
"""The name of the input the rewritten model takes the filled length of its cache buffers from."""

_SHAPE_MATH = frozenset(
    {
        "Slice", "StridedSlice", "Squeeze", "Unsqueeze", "Reshape", "Concat", "Gather", "Add", "Subtract",
        "Multiply", "Divide", "Convert", "Maximum", "Minimum", "Negative", "FloorMod",
    }
)  # fmt: skip
"""Ops that compute small integer shape vectors and scalars: copied into both worlds."""

_SEQUENCE_INPUTS = {"input_ids": 1, "inputs_embeds": 1}
"""Decoder inputs whose axis counts the tokens a step adds (the rows each cache grows by)."""


@dataclass
class FixedCapacityCache:
    """What :func:`with_fixed_capacity_cache` made: the rewritten model and how to feed it.

    :ivar model: the rewritten model; its cache inputs take buffers whose ``axes`` have any capacity
        (the same for every cache), its ``past_length`` input the rows filled, and each cache output
        returns the updated buffer.
    :ivar axes: per cache input name, the axis the cache grows along.
    :ivar pairs: per cache input name, the output name that returns its updated buffer.
    :ivar rows: the input whose axis counts the rows a step adds (``input_ids``, axis 1).
    :ivar padded_inputs: inputs whose last axis spans the keys (the attention mask): the caller pads
        them with zeros to the capacity.
    """

    model: Model
    axes: dict[str, int]
    pairs: dict[str, str]
    rows: tuple[str, int]
    padded_inputs: list[str] = field(default_factory=list)


def with_fixed_capacity_cache(model: Model, pairs: Mapping[str, str]) -> FixedCapacityCache:
    """The explicit-cache decoder ``model`` rewritten to keep its caches in fixed-capacity buffers
    (see the module's docstring). ``model`` is left unchanged.

    :param pairs: cache input name -> the output name that returns the grown cache (as
        :func:`~hetero_sdk.make_stateful` takes them).
    :raises ModelValidationError: when a cache output is neither ``Concat(past, new)`` of its input nor
        an op's output declared as that input written in place, such an op's filled length does not
        follow the values the request sets (the padded attention mask's, ``past_length``), the caches
        grow along different axes, or the model already has a ``past_length`` input.
    """
    if not pairs:
        raise ModelValidationError("with_fixed_capacity_cache needs at least one cache (input, output) pair")
    model = model.clone()
    if any(PAST_LENGTH in port.names for port in model.inputs):
        raise ModelValidationError(f"model '{model.friendly_name}' already has an input named {PAST_LENGTH!r}")
    caches = [_cache(model, past, present) for past, present in pairs.items()]
    past_length = opset.parameter([], Type.i64, name=PAST_LENGTH)
    past_length.output(0).set_names({PAST_LENGTH})
    users = model.consumers()
    rows = _new_rows(model)
    mask = next((p for p in model.inputs if "attention_mask" in p.names and p.partial_shape.rank == 2), None)
    length_world, value_world = _split_past_lengths(model, caches, rows, past_length.output(0), users, mask)
    _rewire_consumers(model, length_world, value_world, users)
    for cache in caches:
        if cache.in_place is None:
            _scatter_into_buffer(cache, past_length.output(0), users)
    rewritten = Model(model.get_results(), [*model.get_parameters(), past_length], model.friendly_name)
    rewritten.get_rt_info().update(model.get_rt_info())
    rewritten.validate_nodes_and_infer_types()
    padded = [p.any_name for p in rewritten.inputs if "attention_mask" in p.names]
    _check_lengths_are_run_time_values(
        caches, [past_length, *(p.node for p in rewritten.inputs if p.any_name in padded)]
    )
    rows_input = (rows[0].any_name, rows[1])
    return FixedCapacityCache(rewritten, {c.name: c.axis for c in caches}, dict(pairs), rows_input, padded)


@dataclass
class _Cache:
    name: str
    parameter: Node
    writer: Node
    """The node whose output is the grown cache: a Concat, or an op that writes it in place."""
    axis: int
    in_place: InPlaceCache | None = None

    @property
    def past(self) -> Output:
        """The cache as the model reads it: the buffer, or its rows reordered by a beam index."""
        return self.writer.input_value(0 if self.in_place is None else self.in_place.past)

    @property
    def new(self) -> Output:
        return self.writer.input_value(1)


def _cache(model: Model, past: str, present: str) -> _Cache:
    parameter_port = model.input(past)
    result_port = model.output(present)
    source = result_port.node.input_value(0) if result_port.node.type_name == "Result" else result_port
    grown = source.node
    rank = parameter_port.partial_shape.rank
    declared = grown.op.cache_of(source.index)
    if declared is not None and _cache_read(grown.input_value(declared.past)) == parameter_port:
        axis = declared.axis + rank if declared.axis < 0 else declared.axis
        return _Cache(past, parameter_port.node, grown, axis, declared)
    inputs = grown.input_values()
    if grown.type_name != "Concat" or len(inputs) != 2 or _cache_read(inputs[0]) != parameter_port:
        raise ModelValidationError(
            f"output {present!r} is not Concat({past!r}, new) nor an op's output that writes {past!r} in place "
            f"(OpDef.caches): a fixed-capacity cache needs the cache to grow by one Concat of the past and the new "
            f"rows, or by an op declaring an InPlaceCache (it is {grown.type_name} '{grown.friendly_name}')"
        )
    axis = int(grown.attrs["axis"])
    axis = axis + rank if axis < 0 else axis
    if axis == 0:
        raise ModelValidationError(f"output {present!r} grows along axis 0, the batch; a cache grows along another")
    return _Cache(past, parameter_port.node, grown, axis)


def _check_lengths_are_run_time_values(caches: list[_Cache], sources: list[Node]) -> None:
    """Each input an in-place cache's op reads the filled length from must take its value from what the
    request sets each step: the attention mask's values (padded with zeros, their sum is the filled
    length) or ``past_length``. A length read from a shape (the mask's length is the capacity) or a
    constant would make the op write every step at one place."""
    wanted = {id(node) for node in sources}
    for cache in caches:
        if cache.in_place is None:
            continue
        for index in cache.in_place.lengths:
            if not _value_depends_on(cache.writer.input_value(index), wanted):
                spec = cache.writer.op.input_spec(index)
                raise ModelValidationError(
                    f"{cache.writer.type_name} '{cache.writer.friendly_name}' reads the filled length of cache "
                    f"{cache.name!r} from its {spec.label(index) if spec else f'input {index}'}, whose value follows "
                    "neither the attention mask's values nor the cache's shape: with the cache in a fixed-capacity "
                    "buffer it could not tell where to write; compute it from the attention mask (its sum)"
                )


def _value_depends_on(output: Output, wanted: set[int]) -> bool:
    """Whether ``output``'s value depends on the value of a node in ``wanted`` (a ShapeOf reads no value)."""
    seen: set[int] = set()
    stack = [output.node]
    while stack:
        node = stack.pop()
        if id(node) in wanted:
            return True
        if id(node) in seen or node.type_name == "ShapeOf":
            continue
        seen.add(id(node))
        stack.extend(v.node for v in node.input_values())
    return False


def _cache_read(value: Output) -> Output:
    """The cache input ``value`` reads: itself, or the input of a Gather along the batch axis (the rows
    reordered by optimum-intel's ``beam_idx``)."""
    node = value.node
    if node.type_name == "Gather" and node.attrs.get("batch_dims", 0) == 0:
        axis = constant_value(node.input_value(2))
        if axis is not None and int(axis) == 0:
            return node.input_value(0)
    return value


def _split_past_lengths(
    model: Model,
    caches: list[_Cache],
    new_rows: tuple[Output, int],
    past_length: Output,
    users: dict[Output, list[tuple[Node, int]]],
    mask: Output | None,
) -> tuple[dict[Output, Output], dict[Output, Output]]:
    """Both copies of every small integer computation that reads a cache's shape: by original output,
    the one that sees ``capacity - new_length`` as the past length, and the one that sees the value."""
    axes = {c.axis for c in caches}
    if len(axes) != 1:
        raise ModelValidationError(f"the caches grow along different axes {sorted(axes)}; one axis is needed")
    length: dict[Output, Output] = {}
    value: dict[Output, Output] = {}
    by_read = {id(source.node): c for c in caches for source in {c.past, c.parameter.output(0)}}
    for node in model.get_ops():
        if node.type_name == "ShapeOf" and id(node.input_value(0).node) in by_read:
            cache = by_read[id(node.input_value(0).node)]
            both = _shape_in_both_worlds(cache, new_rows, past_length, node, mask)
            length[node.output(0)], value[node.output(0)] = both
        elif _is_shape_math(node) and any(v in length for v in node.input_values()):
            for world in (length, value):
                twin = Node(node.op, [world.get(v, v) for v in node.input_values()], dict(node.attrs))
                world[node.output(0)] = twin.output(0)
    _normalize_ranges(model, length, value, users)
    return length, value


def _new_rows(model: Model) -> tuple[Output, int]:
    """The input whose axis counts the rows a step adds to every cache: the token input, as decoders
    name it (reading it from a cache's new rows would make each layer depend on the layers after it)."""
    for port in model.inputs:
        axis = _SEQUENCE_INPUTS.get(port.any_name)
        if axis is not None and (port.partial_shape.rank or 0) > axis:
            return port, axis
    raise ModelValidationError(
        f"model '{model.friendly_name}' has no input {' or '.join(_SEQUENCE_INPUTS)}, so the rows each step adds "
        "to its caches are unknown; a fixed-capacity cache needs the decoder's token input"
    )


def _is_shape_math(node: Node) -> bool:
    if node.type_name not in _SHAPE_MATH or node.get_output_size() != 1:
        return False
    out = node.outputs()[0]
    rank = out.partial_shape.rank
    return out.element_type.is_integral and rank is not None and rank <= 1


def _shape_in_both_worlds(
    cache: _Cache, new_rows: tuple[Output, int], past_length: Output, shape_node: Node, mask: Output | None
) -> tuple[Output, Output]:
    output_type = shape_node.attrs["output_type"]
    buffer_shape = _buffer_shape(cache, mask, output_type)
    rank = cache.parameter.output(0).partial_shape.rank
    a = cache.axis

    def part(source: Output, start: int, stop: int) -> Output:
        return opset.slice(source, [start], [stop], [1], [0]).output(0)

    before, capacity, after = part(buffer_shape, 0, a), part(buffer_shape, a, a + 1), part(buffer_shape, a + 1, rank)
    rows, axis = new_rows
    new_length = part(opset.shape_of(rows, output_type).output(0), axis, axis + 1)
    as_length = opset.concat([before, opset.subtract(capacity, new_length).output(0), after], 0).output(0)
    filled = opset.reshape(_as_type(past_length, output_type), opset.constant(np.array([1], np.int64)), False).output(0)
    as_value = opset.concat([before, filled, after], 0).output(0)
    return as_length, as_value


def _buffer_shape(cache: _Cache, mask: Output | None, output_type: Type) -> Output:
    """The shape of ``cache``'s buffer. With an attention mask ``[batch, capacity]`` (the request pads it
    to the capacity) and the cache's other dimensions static, it is read from the mask's shape and
    constants, not from the buffer: a model split over devices (HETERO) then reads no layer's cache
    where that layer does not run (an exported decoder takes the past length from one layer's cache,
    and every layer uses it)."""
    dims = cache.parameter.output(0).partial_shape.dims
    if mask is None or any(d < 0 for i, d in enumerate(dims) if i not in (0, cache.axis)):
        return opset.shape_of(cache.parameter, output_type).output(0)
    mask_shape = opset.shape_of(mask, output_type).output(0)
    parts = []
    for i, d in enumerate(dims):
        if i in (0, cache.axis):
            at = 0 if i == 0 else 1
            parts.append(opset.slice(mask_shape, [at], [at + 1], [1], [0]).output(0))
        else:
            parts.append(opset.constant(np.array([d], output_type.numpy)).output(0))
    return opset.concat(parts, 0).output(0)


def _as_type(value: Output, element_type: Type) -> Output:
    return value if value.element_type == element_type else opset.convert(value, element_type).output(0)


def _normalize_ranges(
    model: Model,
    length: dict[Output, Output],
    value: dict[Output, Output],
    users: dict[Output, list[tuple[Node, int]]],
) -> None:
    """``Range(start, stop, step)`` with a start read from a cache's shape becomes
    ``start + Range(0, stop - start, step)``: its length no longer depends on the past length."""
    for node in model.get_ops():
        if node.type_name != "Range" or node.input_value(0) not in length:
            continue
        start, stop, step = node.input_values()
        output_type = node.attrs["output_type"]
        count = opset.subtract(length.get(stop, stop), length[start])
        zero = opset.constant(np.zeros((), start.element_type.numpy))
        offsets = opset.range(zero, count, step, output_type)
        shifted = opset.add(offsets, _as_type(value[start], output_type)).output(0)
        for user, index in users.pop(node.output(0), []):
            user.set_input(index, shifted)


def _rewire_consumers(
    model: Model,
    length: dict[Output, Output],
    value: dict[Output, Output],
    users: dict[Output, list[tuple[Node, int]]],
) -> None:
    """Every consumer outside the copied computations takes the copy its input's role asks for: the
    length world where the input decides a shape, the value world elsewhere (the inputs an op reads a
    cache's filled length from among them: they never decide a shape)."""
    copied = {id(v.node) for v in (*length.values(), *value.values())}
    originals = set(length)
    for node in model.get_ops():
        if id(node) in copied:
            continue
        for index, source in enumerate(node.input_values()):
            if source not in originals:
                continue
            spec = node.op.input_spec(index)
            world = length if spec is not None and spec.decides_shape else value
            node.set_input(index, world[source])


def _scatter_into_buffer(cache: _Cache, past_length: Output, users: dict[Output, list[tuple[Node, int]]]) -> None:
    new = cache.new
    a = cache.axis
    shape = opset.shape_of(new).output(0)
    count = opset.squeeze(opset.slice(shape, [a], [a + 1], [1], [0]), opset.constant(np.array([0], np.int64))).output(0)
    rows = opset.range(opset.constant(np.zeros((), np.int64)), count, opset.constant(np.ones((), np.int64)), Type.i64)
    positions = opset.add(rows, past_length).output(0)
    rank = new.partial_shape.rank
    column = [1] * rank
    column[a] = -1
    indices = opset.broadcast(
        opset.reshape(positions, opset.constant(np.array(column, np.int64)), False), shape
    ).output(0)
    scattered = opset.scatter_elements_update(cache.past, indices, new, axis=a)
    for user, index in users.get(cache.writer.output(0), []):
        user.set_input(index, scattered.output(0))
    names = cache.writer.output(0).explicit_names
    if names:
        scattered.output(0).set_names(names)


def check_fixed_capacity(model: Model, fixed: FixedCapacityCache, tolerance: float = 1e-4) -> None:
    """Checks on one small step that ``fixed.model`` computes what ``model`` computes, its buffers' rows
    past the filled ones holding random values: a decoder that masks every key it has not filled passes;
    one that reads the whole cache (no causal mask) does not, and must keep its growing cache.

    Both run on the reference evaluator, with a batch of 1, 2 new rows after 3 filled ones, in buffers
    of 8 rows; integer inputs are zeros (valid ids and indices), the attention mask ones, float inputs
    random.

    :raises ModelValidationError: naming the output that differs, or the error the step raised.
    """
    filled, rows, capacity = 3, 2, 8
    rng = np.random.default_rng(0)
    rows_input, rows_axis = fixed.rows
    plain: dict[str, np.ndarray] = {}
    buffered: dict[str, np.ndarray] = {}
    for port in model.inputs:
        name = port.any_name
        dims = list(port.partial_shape.dims)
        dtype = port.element_type.numpy
        if name in fixed.axes:
            axis = fixed.axes[name]
            shape = [1 if d < 0 else d for d in dims]
            shape[axis] = capacity
            buffer = rng.standard_normal(shape).astype(dtype)
            plain[name] = np.take(buffer, np.arange(filled), axis=axis)
            buffered[name] = buffer
            continue
        shape = [1 if d < 0 else d for d in dims]
        if name == rows_input:
            shape[rows_axis] = rows
        if name in fixed.padded_inputs:
            shape[-1] = filled + rows
            mask = np.ones(shape, dtype)
            plain[name] = mask
            buffered[name] = np.concatenate([mask, np.zeros((*shape[:-1], capacity - shape[-1]), dtype)], axis=-1)
            continue
        value = (
            rng.standard_normal(shape).astype(dtype) if np.issubdtype(dtype, np.floating) else np.zeros(shape, dtype)
        )
        plain[name] = buffered[name] = value
    buffered[PAST_LENGTH] = np.array(filled, np.int64)
    try:
        expected = evaluate(model, plain)
        got = evaluate(fixed.model, buffered)
    except Exception as exc:  # a step the plain model cannot take with these inputs either: no proof
        raise ModelValidationError(
            f"a fixed-capacity step of '{model.friendly_name}' could not be checked: {exc}"
        ) from exc
    caches = {model.output(present).any_name: fixed.axes[past] for past, present in fixed.pairs.items()}
    for port, want, have in zip(model.outputs, expected, got):
        name = port.any_name
        if name in caches:
            have = np.take(have, np.arange(filled + rows), axis=caches[name])
        if want.shape != have.shape or not np.allclose(want, have, rtol=tolerance, atol=tolerance, equal_nan=True):
            raise ModelValidationError(
                f"output {name!r} of '{model.friendly_name}' changes when its caches' unfilled rows do: the model "
                "reads past the filled rows (no mask hides them), so its caches cannot live in fixed-capacity buffers"
            )
