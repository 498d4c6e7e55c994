"""The translation rules: one function per ONNX op type (and per opset version where the op changed),
registered in :data:`RULES` as OpenVINO's ONNX frontend registers its ``op::set_N`` translators.

A rule receives a :class:`~hetero_sdk.frontend.onnx.node_context.NodeContext` and returns one value per
ONNX output of the node (None for an optional output it does not produce)::

    @rule("Relu")
    def relu(ctx: NodeContext) -> Outputs:
        return [opset.relu(ctx.input(0)).output(0)]

    @rule("Squeeze", since=13)           # axes became an input in opset 13
    def squeeze_13(ctx: NodeContext) -> Outputs: ...
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from hetero_sdk.errors import UnsupportedOperationError
from hetero_sdk.extensions import onnx_rules
from hetero_sdk.frontend.onnx.values import Value
from hetero_sdk.registry import Registry

if TYPE_CHECKING:
    from hetero_sdk.frontend.onnx.node_context import NodeContext

__all__ = ["DEFAULT_DOMAIN", "RULES", "Outputs", "Rule", "find_rule", "rule"]

DEFAULT_DOMAIN: Final = ""
"""The ONNX operator domain (``ai.onnx``), as ONNX files spell it."""

Outputs = Sequence[Value | None]
"""What a rule returns: one value per ONNX output of the node (a tensor; a sequence or an empty optional,
see :mod:`.values`), None where it is not produced."""


@dataclass(frozen=True)
class Rule:
    """How one ONNX op type translates from opset version ``since`` on (until the next rule's)."""

    op_type: str
    domain: str
    since: int
    translate: Callable[[NodeContext], Outputs]


RULES: Registry[list[Rule]] = Registry("ONNX op type", UnsupportedOperationError)
"""The rules of each op type (``"Conv"``, or ``"domain:Op"`` outside ``ai.onnx``), oldest first."""


def _key(domain: str, op_type: str) -> str:
    return op_type if domain in (DEFAULT_DOMAIN, "ai.onnx") else f"{domain}:{op_type}"


def rule(
    *op_types: str, since: int = 1, domain: str = DEFAULT_DOMAIN
) -> Callable[[Callable[..., Outputs]], Callable[..., Outputs]]:
    """A decorator registering a translation of ``op_types`` for opset versions ``since`` and later."""

    def decorate(translate: Callable[..., Outputs]) -> Callable[..., Outputs]:
        for op_type in op_types:
            key = _key(domain, op_type)
            versions = RULES.find(key) or RULES.register(key, [])
            if any(r.since == since for r in versions):
                raise ValueError(f"ONNX {key} already has a rule since opset {since}")
            versions.append(Rule(op_type, domain, since, translate))
            versions.sort(key=lambda r: r.since)
        return translate

    return decorate


def find_rule(domain: str, op_type: str, version: int) -> Rule | None:
    """The rule translating ``op_type`` of ``domain`` in opset ``version``, or None: the SDK's own, else a
    registered extension's (installed extensions load on the first op the SDK has no rule for)."""
    found = None
    for candidate in RULES.find(_key(domain, op_type)) or ():
        if candidate.since <= version:
            found = candidate
    if found is None and _key(domain, op_type) not in RULES:
        for extension_rule in onnx_rules("" if domain == "ai.onnx" else domain, op_type):
            if extension_rule.since <= version:
                found = Rule(op_type, domain, extension_rule.since, extension_rule.translate)
    return found
