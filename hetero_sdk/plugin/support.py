"""A device's supported-ops table: which op types it runs, on which element types, within which limits.

The declarative form of ``query_model`` (as ONNX Runtime's kernel registry is for its execution
providers): a device lists what it runs once, and the table answers every model's query, naming
the reason of each op it declines::

    table = SupportTable("MYDEV")
    table.add(["Add", "Multiply", "Relu"], element_types={Type.f32, Type.f16})
    table.add("MatMul", element_types={Type.f32},
              limits=[Limit("transposed inputs", lambda n: not n.attrs["transpose_a"])])

    answer = table.query(model, transform_model)   # in the query_model hook
    return answer.claims(device_name)

    table.check(model, device_name)                # in compile_model: raises, naming every declined op
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from hetero_sdk.element_type import Type
from hetero_sdk.errors import UnsupportedOperationError
from hetero_sdk.graph.op_def import OPS
from hetero_sdk.plugin.query import decide_support

if TYPE_CHECKING:
    from hetero_sdk.graph.model import Model
    from hetero_sdk.graph.node import Node

__all__ = ["Check", "Limit", "SupportAnswer", "SupportTable"]

Check = Callable[["Node"], "str | None"]
"""``check(node) -> reason or None``: why a device declines a node, or None when it runs it."""


@dataclass(frozen=True)
class Limit:
    """A limit on the nodes of an op type the device runs: a predicate and the reason when it fails.

    :ivar reason: what the device does not run, read after "declined: " (``"transpose_a=True"``).
    :ivar holds: True when the device runs the node.
    """

    reason: str
    holds: Callable[[Node], bool]

    def __call__(self, node: Node) -> str | None:
        """The reason when the limit does not hold for ``node``, else None."""
        return None if self.holds(node) else self.reason


@dataclass(frozen=True)
class _Entry:
    element_types: frozenset[Type] | None
    checks: tuple[Check, ...]


@dataclass(frozen=True)
class SupportAnswer:
    """A table's answer for one model.

    :ivar supported: the friendly names of the ops the device claims.
    :ivar declined: each friendly name the device does not claim, and why.
    """

    supported: set[str]
    declined: dict[str, str] = field(default_factory=dict)

    def claims(self, device_name: str) -> dict[str, str]:
        """The ``query_model`` hook's answer: each supported op's name to ``device_name``."""
        return dict.fromkeys(sorted(self.supported), device_name)

    def describe(self, limit: int = 10) -> str:
        """The declined ops and their reasons, one ``'name' (reason)`` per op, the first ``limit`` of them."""
        shown = [f"'{name}' ({reason})" if reason else f"'{name}'" for name, reason in self.declined.items()]
        extra = f"; and {len(shown) - limit} more" if len(shown) > limit else ""
        return "; ".join(shown[:limit]) + extra


class SupportTable:
    """What a device runs: op types, each with the element types it takes and its limits.

    Parameters, Constants and Results (structural ops) are always supported where their neighbours
    are; everything else must be added. A node is declined, with a reason, when its op type was never
    added, when one of its data inputs or outputs has an element type outside the entry's
    ``element_types`` (inputs that decide shapes, such as Reshape's target shape, are not checked),
    or when one of the entry's limits fails.

    :param device: the device's name, used in reasons and errors.
    """

    def __init__(self, device: str) -> None:
        self.device = device
        self._entries: dict[str, _Entry] = {}

    def add(
        self,
        op_types: str | Iterable[str],
        element_types: Iterable[Type] | None = None,
        limits: Iterable[Limit | Check] = (),
    ) -> SupportTable:
        """Declares that the device runs ``op_types``.

        Adding an op type again replaces its entry.

        :param op_types: one op type or several, each taking the same element types and limits.
        :param element_types: the element types the op computes on (every data input and output);
            None for any.
        :param limits: :class:`Limit` objects, or functions returning a reason or None
            (:data:`Check`), tried in order; the first reason found declines the node.
        :returns: the table, so that calls chain.
        """
        entry = _Entry(None if element_types is None else frozenset(element_types), tuple(limits))
        for op_type in [op_types] if isinstance(op_types, str) else op_types:
            self._entries[op_type] = entry
        return self

    def op_types(self) -> frozenset[str]:
        """The op types added to the table."""
        return frozenset(self._entries)

    def element_types(self, op_type: str) -> frozenset[Type] | None:
        """The element types ``op_type`` takes (None: any), or an empty set when it is not in the table."""
        entry = self._entries.get(op_type)
        return frozenset() if entry is None else entry.element_types

    def why_not(self, node: Node) -> str | None:
        """Why the device declines ``node`` taken alone, or None when it runs it."""
        if node.op.structural:
            return None
        entry = self._entries.get(node.type_name)
        if entry is None:
            return f"{self.device} does not run op type {node.type_name}"
        if entry.element_types is not None:
            wrong = _wrong_type(node, entry.element_types)
            if wrong is not None:
                if 2 * len(entry.element_types) > len(Type):
                    return f"{self.device} does not run {node.type_name} on {wrong}"
                allowed = ", ".join(sorted(t.name for t in entry.element_types))
                return f"{self.device} runs {node.type_name} on {allowed} only, not {wrong}"
        for check in entry.checks:
            reason = check(node)
            if reason is not None:
                return f"{self.device} does not run {node.type_name} with {reason}"
        return None

    def __call__(self, node: Node) -> bool:
        """True when the device runs ``node`` taken alone: the ``is_node_supported`` of
        :func:`~hetero_sdk.plugin.get_supported_nodes`."""
        return self.why_not(node) is None

    def query(
        self,
        model: Model,
        transform: Callable[[Model], object] | None = None,
        in_context: Check | None = None,
    ) -> SupportAnswer:
        """Which ops of ``model`` the device claims, and why it declines the others.

        Works as :func:`~hetero_sdk.plugin.get_supported_nodes` does: ``transform`` runs on a clone,
        each transformed op is tested, and the answer is mapped back to ``model``'s op names.

        :param model: the model to examine; it is not modified.
        :param transform: the device's ``transform_model`` (None: the model as it is).
        :param in_context: a further check of a transformed op where its place in the model matters
            (an input that must be a Constant, say), tried after the table's.
        """

        def why_not(node: Node) -> str | None:
            reason = self.why_not(node)
            if reason is None and in_context is not None and not node.op.structural:
                reason = in_context(node)
            return reason

        supported, declined = decide_support(model, transform or _keep, why_not)
        return SupportAnswer(supported, declined)

    def check(self, model: Model, device_name: str | None = None) -> None:
        """Raises when the device declines any op of ``model`` taken as it is (for ``compile_model``).

        :raises UnsupportedOperationError: naming every declined compute op and why.
        """
        structural = {n.friendly_name for n in model.get_ops() if n.op.structural}
        answer = self.query(model)
        compute = SupportAnswer(set(), {k: v for k, v in answer.declined.items() if k not in structural})
        if compute.declined:
            device = device_name or self.device
            raise UnsupportedOperationError(
                f"device {device} cannot run {len(compute.declined)} op(s) of model '{model.friendly_name}': "
                f"{compute.describe()}. Run the model on HETERO:{device},TEMPLATE to send them to another device"
            )

    def summary(self) -> Mapping[str, str]:
        """Each op type in the table and the element types it takes (``"any"`` for all), sorted."""
        out = {}
        for op_type in sorted(self._entries):
            types = self._entries[op_type].element_types
            out[op_type] = "any" if types is None else ", ".join(sorted(t.name for t in types))
        return out


def _keep(model: Model) -> None:
    return None


def _wrong_type(node: Node, allowed: frozenset[Type]) -> str | None:
    """The first element type of a data input or output of ``node`` outside ``allowed``, described."""
    definition = OPS.find(node.type_name)
    skipped = definition.shape_inputs() if definition is not None else frozenset()
    for index, value in enumerate(node.input_values()):
        if index not in skipped and value.element_type not in allowed:
            return f"{value.element_type.name} (input {index})"
    for index, port in enumerate(node.outputs()):
        if port.element_type not in allowed:
            return f"{port.element_type.name} (output {index})"
    return None
