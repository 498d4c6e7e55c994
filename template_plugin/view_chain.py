"""``TemplateViewChain``: consecutive Reshape, Transpose, Unsqueeze and Squeeze ops as one op, and its fusion.

A decoder splits each projection into heads (``Reshape`` to ``[b, s, heads, d]``, ``Transpose`` to
``[b, heads, s, d]``) and merges them back (``Transpose``, ``Reshape``) in every layer; each op is one
numpy view (or the copy a Reshape of a transposed array makes), but one more step of the plan. Fused,
the chain is one step making the same numpy calls in order (the same values, bit for bit).
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

import numpy as np

from hetero_sdk import Node, PartialShape
from hetero_sdk.plugin import (
    INT,
    INTS,
    STRINGS,
    Attr,
    ConsumerMap,
    Input,
    MatcherPass,
    OpDef,
    OutputSpec,
    as_output,
    define,
    kernel,
    replace_node,
    reshape_dims,
    squeezed_dims,
    unsqueezed_dims,
)
from template_plugin.kernels import binder

if TYPE_CHECKING:
    from hetero_sdk import Model

__all__ = [
    "SPLIT_VIEWS",
    "SPLIT_VIEWS_OP",
    "VIEW_CHAIN",
    "VIEW_CHAIN_OP",
    "SplitViewsFusion",
    "ViewChainFusion",
    "split_views",
    "view_chain",
]

VIEW_CHAIN = "TemplateViewChain"
"""The op type name."""

STAGES = ("Reshape", "Transpose", "Unsqueeze", "Squeeze")
"""The ops a chain is made of, each with its data and one more input (pattern, order, axes); the
``stages`` attribute names them in lower case."""


def view_chain(
    data: Any, stages: list[str], operands: list[Any], special_zero: list[int], output_shape: PartialShape,
    name: str | None = None,
) -> Node:  # fmt: skip
    """``stages`` applied in order to ``data`` as one op.

    :param data: the first stage's data, any element type.
    :param stages: op types of :data:`STAGES` (any case).
    :param operands: each stage's second input (Reshape's pattern, Transpose's order, the axes).
    :param special_zero: each stage's ``special_zero`` (1 or 0; read for Reshapes only).
    :param output_shape: the last stage's output shape.
    :param name: the node's friendly name.
    """
    attrs = {
        "stages": [s.lower() for s in stages],
        "special_zero": list(special_zero),
        "output_shape": list(output_shape.dims),
    }
    return Node(VIEW_CHAIN_OP, [as_output(data), *(as_output(v) for v in operands)], attrs, name)


def _infer(node: Node) -> list[OutputSpec]:
    stages = node.attrs["stages"]
    if not stages or any(s not in _LOWER for s in stages) or len(stages) != node.get_input_size() - 1:
        raise node.error(f"stages {stages} must be one or more of {list(STAGES)}, one per input after the data")
    if len(node.attrs["special_zero"]) != len(stages):
        raise node.error(f"special_zero {node.attrs['special_zero']} must have one value per stage")
    for index in range(1, node.get_input_size()):
        if node.input_value(index).partial_shape.rank > 1:
            raise node.error(f"input {index} {node.input_value(index).partial_shape} must be a scalar or 1-D")
    return [(node.input_value(0).element_type, PartialShape(node.attrs["output_shape"]))]


_LOWER = frozenset(s.lower() for s in STAGES)

VIEW_CHAIN_OP = define(
    OpDef(
        VIEW_CHAIN,
        "template",
        _infer,
        inputs=(
            Input("data"),
            Input("operands", variadic=True, doc="each stage's pattern, order or axes"),
        ),
        attrs=(
            Attr("stages", STRINGS, [], doc="reshape, transpose, unsqueeze or squeeze, in order"),
            Attr("special_zero", INTS, [], doc="each stage's special_zero (Reshapes)"),
            Attr("output_shape", INTS, [], doc="the last stage's output shape, -1 where dynamic"),
        ),
        version="template",
        doc="Reshapes, Transposes, Unsqueezes and Squeezes in one kernel.",
    )
)


@functools.lru_cache(maxsize=256)
def _step(stage: str, shape: tuple[int, ...], operand: tuple[int, ...], special_zero: int) -> tuple[str, Any]:
    """How a stage takes its view of an input of ``shape``: ``("reshape", dims)`` or ``("transpose", order)``."""
    if stage == "reshape":
        return "reshape", reshape_dims(shape, operand, bool(special_zero))
    if stage == "unsqueeze":
        return "reshape", unsqueezed_dims(shape, operand)
    if stage == "squeeze":
        return "reshape", squeezed_dims(shape, operand or None)
    if len(operand) not in (0, len(shape)) or sorted(a % len(shape) for a in operand) != list(range(len(shape))):
        raise ValueError(f"Transpose order {list(operand)} is not a permutation of the {len(shape)} axes of the data")
    return "transpose", operand or None


@kernel(VIEW_CHAIN)
def _view_chain_kernel(node: Node, x: Any, *operands: Any) -> Any:
    x = np.asarray(x)
    attrs = node.attrs
    for stage, operand, zero in zip(attrs["stages"], operands, attrs["special_zero"]):
        how, argument = _step(stage, x.shape, tuple(np.asarray(operand).reshape(-1).tolist()), zero)
        x = x.reshape(argument) if how == "reshape" else x.transpose(argument)
    return x


class ViewChainFusion(MatcherPass):
    """Fuses two or more consecutive Reshape, Transpose (Constant order), Unsqueeze and Squeeze ops (two
    inputs each), each but the last with one use, into ``TemplateViewChain``; the fused op takes the last
    op's friendly name, tensor names and output shape and records the chain in ``fused_names``."""

    name = "TemplateViewChainFusion"
    anchors = STAGES

    def apply(self, model: Model, last: Node, users: ConsumerMap) -> bool:
        if not _chainable(last):
            return False
        after = users.of(last.output(0))
        if len(after) == 1 and _chainable(after[0][0]) and after[0][1] == 0:
            return False  # the chain goes on: its last op fuses it
        chain = [last]
        while _chainable(chain[0].input_value(0).node) and len(users.of(chain[0].input_value(0))) == 1:
            chain.insert(0, chain[0].input_value(0).node)
        if len(chain) < 2:
            return False
        zeros = [int(bool(n.attrs.get("special_zero", False))) for n in chain]
        fused = view_chain(
            chain[0].input_value(0), [n.type_name for n in chain], [n.input_value(1) for n in chain], zeros,
            last.output(0).partial_shape,
        )  # fmt: skip
        replace_node(model, last, fused, fused=chain[:-1], consumers=users)
        return True


def _chainable(node: Node) -> bool:
    if node.type_name not in STAGES or node.get_input_size() != 2 or node.get_output_size() != 1:
        return False
    return node.type_name != "Transpose" or node.input_value(1).node.type_name == "Constant"


SPLIT_VIEWS = "TemplateSplitViews"
"""The op type name of a Split whose parts each go through their own views."""

SEPARATOR = "|"
"""Ends one output's stages in ``TemplateSplitViews``' ``stages``."""


def split_views(
    data: Any, axis: Any, num_splits: int, stages: list[list[str]], operands: list[list[Any]],
    special_zero: list[list[int]], output_shapes: list[PartialShape], name: str | None = None,
) -> Node:  # fmt: skip
    """``Split(data, axis, num_splits)``, each part then through its ``stages`` (as :func:`view_chain`'s),
    as one op with one output per part.

    :param stages: per part, op types of :data:`STAGES` (any case; none for a bare part).
    :param operands: per part, each stage's second input.
    :param special_zero: per part, each stage's ``special_zero``.
    :param output_shapes: per part, its last stage's output shape.
    """
    flat_stages: list[str] = []
    flat_zeros: list[int] = []
    shapes: list[int] = []
    for part_stages, zeros, shape in zip(stages, special_zero, output_shapes):
        flat_stages += [s.lower() for s in part_stages] + [SEPARATOR]
        flat_zeros += [*zeros, 0]
        shapes += [shape.rank, *shape.dims]
    attrs = {"num_splits": num_splits, "stages": flat_stages, "special_zero": flat_zeros, "output_shapes": shapes}
    inputs = [as_output(data), as_output(axis), *(as_output(v) for part in operands for v in part)]
    return Node(SPLIT_VIEWS_OP, inputs, attrs, name)


@functools.lru_cache(maxsize=64)
def _per_part(stages: tuple[str, ...], zeros: tuple[int, ...]) -> tuple[tuple[tuple[str, int], ...], ...]:
    """The flattened ``stages`` and ``special_zero`` attributes as one tuple of ``(stage, special_zero)`` per part."""
    parts: list[tuple[tuple[str, int], ...]] = []
    current: list[tuple[str, int]] = []
    for stage, zero in zip(stages, zeros):
        if stage == SEPARATOR:
            parts.append(tuple(current))
            current = []
        else:
            current.append((stage, zero))
    return tuple(parts)


def _split_views_infer(node: Node) -> list[OutputSpec]:
    parts = node.attrs["num_splits"]
    stages, zeros = node.attrs["stages"], node.attrs["special_zero"]
    if parts < 1 or stages.count(SEPARATOR) != parts or len(zeros) != len(stages):
        raise node.error(f"stages {stages} must hold num_splits = {parts} lists, each ended by '|'")
    if any(s not in _LOWER and s != SEPARATOR for s in stages):
        raise node.error(f"stages {stages} must be of {sorted(_LOWER)}")
    if len(stages) - parts != node.get_input_size() - 2:
        raise node.error(f"{len(stages) - parts} stages take as many inputs after data and axis")
    specs: list[OutputSpec] = []
    shapes = list(node.attrs["output_shapes"])
    for _ in range(parts):
        if not shapes or len(shapes) < shapes[0] + 1:
            raise node.error(f"output_shapes {node.attrs['output_shapes']} must hold a rank and its dims per part")
        dims, shapes = shapes[1 : shapes[0] + 1], shapes[shapes[0] + 1 :]
        specs.append((node.input_value(0).element_type, PartialShape(dims)))
    return specs


SPLIT_VIEWS_OP = define(
    OpDef(
        SPLIT_VIEWS,
        "template",
        _split_views_infer,
        inputs=(
            Input("data"),
            Input("axis", doc="the Split's axis"),
            Input("operands", variadic=True, optional=True, doc="each stage's pattern, order or axes, part by part"),
        ),
        attrs=(
            Attr("num_splits", INT, 1, doc="how many equal parts, as Split's"),
            Attr("stages", STRINGS, [], doc="per part, its stages then '|'"),
            Attr("special_zero", INTS, [], doc="each stage's special_zero, 0 for each '|'"),
            Attr("output_shapes", INTS, [], doc="per part, its rank then its dims (-1 where dynamic)"),
        ),
        version="template",
        doc="Split, then each part's Reshapes, Transposes, Unsqueezes and Squeezes, in one kernel.",
    )
)


@kernel(SPLIT_VIEWS)
def _split_views_kernel(node: Node, x: Any, axis: Any, *operands: Any) -> tuple[Any, ...]:
    x = np.asarray(x)
    attrs = node.attrs
    dim = int(np.asarray(axis).reshape(-1)[0]) % x.ndim
    step = x.shape[dim] // attrs["num_splits"]
    lead = (slice(None),) * dim
    given = iter(operands)
    results = []
    for k, stages in enumerate(_per_part(tuple(attrs["stages"]), tuple(attrs["special_zero"]))):
        part = x[(*lead, slice(k * step, (k + 1) * step))]
        for stage, zero in stages:
            how, argument = _step(stage, part.shape, tuple(np.asarray(next(given)).reshape(-1).tolist()), zero)
            part = part.reshape(argument) if how == "reshape" else part.transpose(argument)
        results.append(part)
    return tuple(results)


class SplitViewsFusion(MatcherPass):
    """Fuses a Split whose every part has one use, a ``TemplateViewChain`` or one Reshape, Transpose
    (Constant order), Unsqueeze or Squeeze, with those views into ``TemplateSplitViews`` (GPT-2's query,
    key and value split into heads); each output takes its view's tensor names, the op the Split's
    friendly name."""

    name = "TemplateSplitViewsFusion"
    anchors = ("Split",)

    def apply(self, model: Model, split: Node, users: ConsumerMap) -> bool:
        ends: list[Node] = []
        stages: list[list[str]] = []
        operands: list[list[Any]] = []
        zeros: list[list[int]] = []
        for port in split.outputs():
            uses = users.of(port)
            if len(uses) != 1 or uses[0][1] != 0:
                return False
            view = uses[0][0]
            if view.type_name == VIEW_CHAIN:
                stages.append(list(view.attrs["stages"]))
                zeros.append(list(view.attrs["special_zero"]))
                operands.append(list(view.input_values()[1:]))
            elif _chainable(view):
                stages.append([view.type_name])
                zeros.append([int(bool(view.attrs.get("special_zero", False)))])
                operands.append([view.input_value(1)])
            else:
                return False
            ends.append(view)
        shapes = [end.output(0).partial_shape for end in ends]
        fused = split_views(
            split.input_value(0), split.input_value(1), split.attrs["num_splits"], stages, operands, zeros, shapes
        )
        fused.friendly_name = split.friendly_name
        users.attach(fused)
        for index, end in enumerate(ends):
            names = end.output(0).names
            replace_node(model, end, [fused.output(index)], fused=[split] if index == len(ends) - 1 else [],
                         consumers=users)  # fmt: skip
            fused.output(index).set_names(names)
        return True


def _constant_values(node: Node, first: int) -> list[tuple[int, ...] | None]:
    """The values of ``node``'s inputs from ``first`` on, as integer tuples where they are Constants."""
    found: list[tuple[int, ...] | None] = []
    for source in node.input_values()[first:]:
        value = source.node.attrs["value"] if source.node.type_name == "Constant" else None
        found.append(None if value is None else tuple(int(v) for v in np.asarray(value).reshape(-1)))
    return found


def _steps_of(
    stages: tuple[tuple[str, int], ...], shape: tuple[int, ...], operands: tuple[tuple[int, ...], ...]
) -> tuple[tuple[bool, Any], ...]:
    """Each stage's view of an input of ``shape``: ``(True, dims)`` for a reshape, ``(False, order)``."""
    steps = []
    for (stage, zero), operand in zip(stages, operands):
        how, argument = _step(stage, shape, operand, zero)
        if how == "reshape":
            shape = argument
        else:
            shape = tuple(shape[a] for a in argument) if argument is not None else shape[::-1]
        steps.append((how == "reshape", argument))
    return tuple(steps)


def _bind_view_chain(node: Node) -> Any:
    """``TemplateViewChain``'s kernel for ``node``: its stages and Constant operands read once, the views
    of each input shape and computed operands kept (the last 16)."""
    stages = tuple(zip(node.attrs["stages"], node.attrs["special_zero"]))
    constants = _constant_values(node, 1)
    computed = [i for i, c in enumerate(constants) if c is None]

    @functools.lru_cache(maxsize=16)
    def steps(shape: tuple[int, ...], given: tuple[tuple[int, ...], ...]) -> tuple[tuple[bool, Any], ...]:
        values: list[tuple[int, ...]] = [c or () for c in constants]
        for index, value in zip(computed, given):
            values[index] = value
        return _steps_of(stages, shape, tuple(values))

    def view_chain(node: Node, x: Any, *operands: Any) -> Any:
        if type(x) is not np.ndarray:
            return _view_chain_kernel(node, x, *operands)
        given = tuple(tuple(np.asarray(operands[i]).reshape(-1).tolist()) for i in computed)
        for reshape, argument in steps(x.shape, given):
            x = x.reshape(argument) if reshape else x.transpose(argument)
        return x

    return view_chain


def _bind_split_views(node: Node) -> Any:
    """``TemplateSplitViews``' kernel for ``node``: as :func:`_bind_view_chain`'s, the parts' indices too."""
    parts = _per_part(tuple(node.attrs["stages"]), tuple(node.attrs["special_zero"]))
    constants = _constant_values(node, 1)
    computed = [i for i, c in enumerate(constants) if c is None]
    count = node.attrs["num_splits"]

    @functools.lru_cache(maxsize=16)
    def plan(shape: tuple[int, ...], given: tuple[tuple[int, ...], ...]) -> tuple[Any, ...]:
        values: list[tuple[int, ...]] = [c or () for c in constants]
        for index, value in zip(computed, given):
            values[index] = value
        dim = values[0][0] % len(shape)
        step = shape[dim] // count
        operands = iter(values[1:])
        found = []
        for k, stages in enumerate(parts):
            where = (*(slice(None),) * dim, slice(k * step, (k + 1) * step))
            part = tuple(step if a == dim else n for a, n in enumerate(shape))
            found.append((where, _steps_of(stages, part, tuple(next(operands) for _ in stages))))
        return tuple(found)

    def split_views(node: Node, x: Any, *operands: Any) -> Any:
        if type(x) is not np.ndarray or x.ndim == 0:
            return _split_views_kernel(node, x, *operands)
        given = tuple(tuple(np.asarray(operands[i]).reshape(-1).tolist()) for i in computed)
        results = []
        for index, steps in plan(x.shape, given):
            part = x[index]
            for reshape, argument in steps:
                part = part.reshape(argument) if reshape else part.transpose(argument)
            results.append(part)
        return tuple(results)

    return split_views


binder.register(VIEW_CHAIN, lambda node, read: _bind_view_chain(node))
binder.register(SPLIT_VIEWS, lambda node, read: _bind_split_views(node))
