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
from typing import Final

from hetero_sdk.errors import UnsupportedOperationError
from hetero_sdk.extensions import OnnxRule, onnx_rules
from hetero_sdk.frontend.onnx.values import Value
from hetero_sdk.registry import Registry

__all__ = ["DEFAULT_DOMAIN", "RULES", "Outputs", "find_rule", "rule", "sdk_rule_versions"]

DEFAULT_DOMAIN: Final = ""
"""The ONNX operator domain (``ai.onnx``), as ONNX files spell it."""

Outputs = Sequence[Value | None]
"""What a rule returns: one value per ONNX output of the node (a tensor; a sequence or an empty optional,
see :mod:`.values`), None where it is not produced."""


RULES: Registry[list[OnnxRule]] = Registry("ONNX op type", UnsupportedOperationError)
"""The SDK's rules of each op type (``"Conv"``, or ``"domain:Op"`` outside ``ai.onnx``), oldest first, as
:class:`~hetero_sdk.extensions.OnnxRule` (the type of extensions' rules too)."""


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
            versions.append(OnnxRule(domain, op_type, translate, since))
            versions.sort(key=lambda r: r.since)
        return translate

    return decorate


def find_rule(domain: str, op_type: str, version: int) -> OnnxRule | None:
    """The rule translating ``op_type`` of ``domain`` in opset ``version``, or None: an extension's rule
    that replaces the SDK's (from its ``since`` on), else the SDK's own, else a registered extension's
    (installed extensions load on the first op the SDK has no rule for)."""
    found = None
    domain = DEFAULT_DOMAIN if domain == "ai.onnx" else domain
    own = RULES.find(_key(domain, op_type))
    if own:
        for replacing in onnx_rules(domain, op_type, load=False):  # only rules that say `replaces` pass registration
            if replacing.since <= version:
                found = replacing
        if found is not None:
            return found
    for candidate in own or ():
        if candidate.since <= version:
            found = candidate
    if found is None and own is None:
        for extension_rule in onnx_rules(domain, op_type):
            if extension_rule.since <= version:
                found = extension_rule
    return found


def sdk_rule_versions(domain: str, op_type: str) -> list[int]:
    """The opset versions from which the SDK's own rules translate ``op_type`` of ``domain`` (empty when
    it has none)."""
    return [r.since for r in RULES.find(_key(DEFAULT_DOMAIN if domain == "ai.onnx" else domain, op_type)) or ()]
