"""Model mutation helpers for transformations: rewiring uses, replacing and eliminating nodes.

A :class:`~hetero_sdk.Model` owns the nodes its Results reach, so a node whose uses are all rewired
elsewhere leaves the model by itself. These helpers keep three things stable across a rewrite, as
OpenVINO's ``replace_node`` and ``replace_output_update_name`` do:

- **friendly names**: a replacement takes the friendly name of the node it replaces (for a fused
  pattern, the last node of the pattern, whose output the rest of the model sees);
- **tensor names**: the replacement's output ports carry the replaced ports' names, so the model's
  input and output names never change;
- **the fused-names record** (:mod:`~hetero_sdk.transformations.fused_names`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from hetero_sdk.errors import DynamicRankError
from hetero_sdk.graph.node import Node, Output
from hetero_sdk.transformations.fused_names import FUSED_NAMES, fused_names, merge_fused_names, set_fused_names

if TYPE_CHECKING:
    from hetero_sdk.graph.model import Model

__all__ = ["ConsumerMap", "MatcherPass", "copy_runtime_info", "eliminate_node", "replace_node", "replace_output"]

Use = tuple["Node", int]


class ConsumerMap:
    """The consumers of every output port of a model, kept up to date through rewrites.

    :meth:`Model.consumers` walks the whole model; a pass that rewrites many nodes builds one map
    and lets the helpers of this module update it, so each rewrite costs time proportional to the
    nodes it touches.

    :param model: the model whose consumers to map.
    """

    def __init__(self, model: Model) -> None:
        self._users: dict[Output, list[Use]] = model.consumers()

    def of(self, output: Output) -> list[Use]:
        """The ``(node, input index)`` pairs consuming ``output`` (a copy)."""
        return list(self._users.get(output, ()))

    def count(self, output: Output) -> int:
        """How many inputs consume ``output``."""
        return len(self._users.get(output, ()))

    def nodes(self, output: Output) -> list[Node]:
        """The distinct nodes consuming ``output``, in the order of their first use."""
        seen: dict[int, Node] = {}
        for node, _ in self._users.get(output, ()):
            seen.setdefault(id(node), node)
        return list(seen.values())

    def feeds_result(self, output: Output) -> bool:
        """True when a Result consumes ``output``."""
        return any(node.type_name == "Result" for node, _ in self._users.get(output, ()))

    def attach(self, node: Node) -> None:
        """Records the uses of ``node``'s inputs (after building a node that joins the model)."""
        for index, source in enumerate(node.input_values()):
            self._users.setdefault(source, []).append((node, index))

    def detach(self, node: Node) -> None:
        """Forgets the uses of ``node``'s inputs (after ``node`` left the model)."""
        for source in node.input_values():
            uses = self._users.get(source)
            if uses:
                uses[:] = [(n, i) for n, i in uses if n is not node]

    def move(self, old: Output, new: Output) -> list[Use]:
        """Reconnects every consumer of ``old`` to ``new`` and returns the moved uses."""
        uses = self._users.pop(old, [])
        for node, index in uses:
            node.set_input(index, new)
        if uses:
            self._users.setdefault(new, []).extend(uses)
        return uses


def replace_output(model: Model, old: Output, new: Output, consumers: ConsumerMap | None = None) -> int:
    """Reconnects every consumer of ``old``, Results included, to ``new``, and re-infers them.

    Names and records are left alone: see :func:`replace_node` and :func:`eliminate_node`.

    :param model: the model both ports belong to.
    :param old: the port whose uses move.
    :param new: the port they move to; it should have ``old``'s element type and a compatible shape.
    :param consumers: a map to use and update (built from ``model`` when omitted).
    :returns: the number of inputs reconnected.
    """
    users = consumers if consumers is not None else ConsumerMap(model)
    moved = users.move(old, new)
    for node in {id(n): n for n, _ in moved}.values():
        node.validate_and_infer_types()
    return len(moved)


def replace_node(
    model: Model,
    old: Node,
    new: Node | Sequence[Output],
    fused: Iterable[Node] = (),
    consumers: ConsumerMap | None = None,
) -> None:
    """Replaces ``old`` (the last node of a pattern) and the ``fused`` nodes before it by ``new``.

    Each output ``i`` of ``old`` is replaced by output ``i`` of ``new``. When ``new`` is a node, it
    takes ``old``'s friendly name, its rt_info (:func:`copy_runtime_info`) and, on each output, the
    tensor names of ``old``'s output. Every node whose outputs ``new`` provides records the union of
    the fused-names records of ``old`` and ``fused``. The fused nodes must not be used outside the
    pattern, or they stay in the model beside ``new``.

    :param model: the model ``old`` belongs to.
    :param old: the node whose uses move; its friendly name passes to ``new``.
    :param new: a node built on inputs already in the model, or one output port per output of ``old``.
    :param fused: the other nodes of the pattern, which leave the model with ``old``.
    :param consumers: a map to use and update (built from ``model`` when omitted).
    """
    users = consumers if consumers is not None else ConsumerMap(model)
    pattern = [*fused, old]
    record = set().union(*(fused_names(n) for n in pattern))
    if isinstance(new, Node):
        new.friendly_name = old.friendly_name
        copy_runtime_info(pattern, new)
        set_fused_names(new, record)
        users.attach(new)
        outputs = new.outputs()
    else:
        outputs = list(new)
        for producer in {id(o.node): o.node for o in outputs}.values():
            merge_fused_names(producer, pattern)
    if len(outputs) != old.get_output_size():
        raise old.error(f"replacement provides {len(outputs)} output(s) for {old.get_output_size()}")
    for old_port, new_port in zip(old.outputs(), outputs):
        if isinstance(new, Node):
            new_port.set_names(old_port.names)
        replace_output(model, old_port, new_port, users)
    for node in pattern:
        users.detach(node)


def eliminate_node(model: Model, node: Node, replacement: Output, consumers: ConsumerMap | None = None) -> bool:
    """Removes a single-output ``node`` whose value equals ``replacement``, rewiring its uses there.

    The producer of ``replacement`` absorbs ``node``'s fused-names record, so the eliminated op
    follows that producer in ``query_model``. Tensor names follow OpenVINO's
    ``replace_output_update_name``: when a Result consumes ``node``, ``replacement`` takes ``node``'s
    tensor names (the model output keeps its name); otherwise it adds them, unless ``replacement``
    is a model input or output already (a Parameter, or a port a Result reads), whose names never
    change. The elimination is refused (returns False) when a Result consumes ``node`` and
    ``replacement`` is such a port, since one tensor cannot carry two interface names.

    :param model: the model ``node`` belongs to.
    :param node: the op to remove.
    :param replacement: a port with ``node``'s element type and shape.
    :param consumers: a map to use and update (built from ``model`` when omitted).
    :returns: True when ``node`` was eliminated.
    """
    users = consumers if consumers is not None else ConsumerMap(model)
    port = node.output(0)
    producer = replacement.node
    to_result = users.feeds_result(port)
    fixed = producer.type_name == "Parameter" or users.feeds_result(replacement)
    if to_result and fixed:
        return False
    names = port.names
    replace_output(model, port, replacement, users)
    if to_result:
        replacement.set_names(names)
    elif not fixed:
        replacement.set_names(replacement.names | names)
    merge_fused_names(producer, [node])
    users.detach(node)
    return True


class MatcherPass:
    """A pass that offers every node of some op types to :meth:`apply`, in topological order, with one
    :class:`ConsumerMap` that the rewrite helpers keep up to date (OpenVINO's ``ov::pass::MatcherPass``
    with a pattern rooted at an op type).

    A subclass sets :attr:`name` and :attr:`anchors` and implements :meth:`apply`.
    """

    name = "MatcherPass"
    anchors: tuple[str, ...] = ()
    """The op types whose nodes :meth:`apply` is offered."""

    def run(self, model: Model) -> bool:
        """Offers every node of an :attr:`anchors` type to :meth:`apply`; returns True when one was rewritten."""
        users = ConsumerMap(model)
        changed = False
        for node in model.get_ops():
            if node.type_name in self.anchors:
                try:
                    changed |= self.apply(model, node, users)
                except DynamicRankError:  # a pattern over a value whose rank is known only at run time
                    continue
        return changed

    def apply(self, model: Model, node: Node, users: ConsumerMap) -> bool:
        """Rewrites the pattern rooted at ``node`` when it matches; returns True when it did."""
        raise NotImplementedError


def copy_runtime_info(sources: Sequence[Node], target: Node) -> None:
    """Copies rt_info from ``sources`` into ``target``, as OpenVINO's ``copy_runtime_info``.

    Keys present on every source with one value (``affinity`` on a pattern placed on one device)
    are copied; keys on which sources disagree, or that some sources lack, are dropped rather than
    guessed. The fused-names record is not copied (the rewrite helpers maintain it).
    """
    if not sources:
        return
    first, *rest = (s.get_rt_info() for s in sources)
    merged: dict[str, Any] = {}
    for key, value in first.items():
        if key == FUSED_NAMES:
            continue
        if all(key in other and _same(other[key], value) for other in rest):
            merged[key] = value
    target.get_rt_info().update(merged)


def _same(a: Any, b: Any) -> bool:
    try:
        return bool(a == b)
    except (TypeError, ValueError):  # arrays and other values without a boolean equality
        return a is b
