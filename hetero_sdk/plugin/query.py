"""The shared ``query_model`` helper: which original ops a device supports, after its transformations.

OpenVINO's ``ov::get_supported_nodes``, used by every device plugin's ``query_model`` hook.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from hetero_sdk.transformations.fused_names import clear_fused_names, fused_names

if TYPE_CHECKING:
    from hetero_sdk.graph.model import Model
    from hetero_sdk.graph.node import Node

__all__ = ["decide_support", "get_supported_nodes"]


def get_supported_nodes(
    model: Model,
    transform: Callable[[Model], object],
    is_node_supported: Callable[[Node], bool],
) -> set[str]:
    """The friendly names of the ops of ``model`` that a device supports, given its transformations.

    OpenVINO's four steps of ``query_model``:

    1. **Remember the original names**: every op of ``model`` (Parameters, Constants and Results
       included) by friendly name.
    2. **Transform a clone**: ``model`` is cloned, every fused-names record on the clone is cleared
       (so each op stands for itself, even in a model transformed before), and ``transform`` runs on
       the clone, exactly as ``compile_model`` would run it. ``model`` is never changed.
    3. **Test the transformed ops**: ``is_node_supported`` is called once on every op of the
       transformed clone, Parameters, Constants and Results included. A transformed Parameter or
       Constant that has consumers counts as supported only when at least one of them is supported
       (a folded Constant feeding only rejected ops is not the device's to claim).
    4. **Map back through the fused-names record** (:func:`~hetero_sdk.transformations.fused_names`):
       each transformed op stands for the original ops named in its record. An original op is
       supported only when every transformed op standing for it is supported. An original op no
       transformed op stands for was removed by the transformations (folded into a Constant that
       did not keep it, or eliminated as dead code) and counts as supported.

    Then, on the original graph:

    - an original Parameter or Constant with consumers is claimed only when it is supported and at
      least one of its consumers is claimed; one without consumers is claimed when supported;
    - an original Result is claimed exactly when the op producing its input is.

    :param model: the model to examine; it is not modified.
    :param transform: the device's ``transform_model``: rewrites a model in place (its return value
        is ignored). Pass ``lambda m: None`` to examine the model as it is.
    :param is_node_supported: whether the device runs a transformed op.
    :returns: the claimed friendly names of ``model``'s ops.
    :raises Exception: whatever ``transform`` or ``is_node_supported`` raises: a failing transformation is a
        plugin bug to report, not an unsupported op.
    """
    claimed, _ = decide_support(model, transform, lambda node: None if is_node_supported(node) else "")
    return claimed


def decide_support(
    model: Model, transform: Callable[[Model], object], why_not: Callable[[Node], str | None]
) -> tuple[set[str], dict[str, str]]:
    """:func:`get_supported_nodes` with reasons: the claimed friendly names of ``model``'s ops, and for
    each original op that is not claimed, why.

    :param why_not: why the device declines a transformed op, or None when it runs it.
    :returns: ``(claimed, declined)``: ``declined`` maps each unclaimed friendly name to a reason.
    """
    original = model.get_ops()
    names = {node.friendly_name for node in original}

    clone = model.clone()
    for node in clone.get_ops():
        clear_fused_names(node)
    transform(clone)

    transformed = clone.get_ops()
    verdict = {id(node): why_not(node) for node in transformed}
    users = clone.consumers()
    for node in transformed:
        if _follows_consumers(node) and verdict[id(node)] is None:
            consumers = [n for port in node.outputs() for n, _ in users.get(port, ())]
            if consumers and all(verdict[id(n)] is not None for n in consumers):
                verdict[id(node)] = _FEEDS_DECLINED

    declined: dict[str, str] = {}
    for node in transformed:
        reason = verdict[id(node)]
        if reason is not None:
            for name in sorted(fused_names(node) & names):
                declined.setdefault(name, _as_transformed(node, name, reason))

    original_users = model.consumers()
    for node in reversed(original):
        if _follows_consumers(node) and node.friendly_name not in declined:
            consumers = [n for port in node.outputs() for n, _ in original_users.get(port, ())]
            if consumers and all(n.friendly_name in declined for n in consumers):
                declined[node.friendly_name] = _FEEDS_DECLINED
    for node in original:
        if node.type_name == "Result":
            source = node.input_value(0).node.friendly_name
            if source in declined:
                declined[node.friendly_name] = f"the op it returns, '{source}', is declined"
            else:
                declined.pop(node.friendly_name, None)
    return names - set(declined), declined


_FEEDS_DECLINED = "every op it feeds is declined"


def _as_transformed(node: Node, name: str, reason: str) -> str:
    """The reason an original op is declined, naming the transformed op it became when that differs."""
    if node.friendly_name == name:
        return reason
    became = f"{node.type_name} '{node.friendly_name}' after the device's transformations"
    return f"{reason} ({became})" if reason else f"declined as {became}"


def _follows_consumers(node: Node) -> bool:
    """Parameters and Constants: structural ops without inputs, supported wherever their consumers are."""
    return node.op.structural and node.get_input_size() == 0
