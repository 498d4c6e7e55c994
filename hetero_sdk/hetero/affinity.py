"""Assigning a device to every op: manual (rt_info ``affinity``), automatic (``query_model`` in
priority order) or combined (the user edits query_model's answer and writes it back)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from hetero_sdk import properties as props
from hetero_sdk import rt_info
from hetero_sdk.device_name import parse_device_name
from hetero_sdk.errors import AffinityError, DeviceNameError, HeteroSDKError, UnsupportedOperationError
from hetero_sdk.graph import Model, Node
from hetero_sdk.hetero.subgraph import Subgraph
from hetero_sdk.hetero.submodels import split_model

if TYPE_CHECKING:
    from hetero_sdk import Core

__all__ = ["HETERO", "Placement", "assign_affinities", "compute_nodes", "has_manual_affinities"]

HETERO = "HETERO"
"""The HETERO device's name, which no affinity may name."""


@dataclass
class Placement:
    """Where each op runs and why.

    :ivar device: compute op friendly name to device.
    :ivar rejected_by: for each op, the devices asked before the one that took it (automatic mode).
    :ivar manual: True when the affinities came from rt_info.
    :ivar structural: Parameters, Constants and Results to the first device asked whose own answer
        names them (automatic mode), for those no compute op places.
    """

    device: dict[str, str]
    rejected_by: dict[str, list[str]] = field(default_factory=dict)
    manual: bool = False
    structural: dict[str, str] = field(default_factory=dict)


def compute_nodes(model: Model) -> list[Node]:
    """The ops that need a device, in topological order: not the structural ones (Parameters and
    Constants go with their consumers, a Constant copied into each subgraph using it; a Result with its
    producer)."""
    return [n for n in model.get_ordered_ops() if not n.op.structural]


def has_manual_affinities(model: Model) -> bool:
    """True when any op of ``model`` has an rt_info ``affinity`` (manual mode)."""
    return any(rt_info.AFFINITY in n.get_rt_info() for n in model.get_ordered_ops())


def assign_affinities(
    model: Model,
    priorities: Sequence[str],
    core: Core,
    device_properties: Mapping[str, Mapping[str, Any]],
    *,
    require_all: bool = True,
) -> Placement:
    """Gives every compute op a device.

    Manual mode when any op has rt_info ``affinity``: every compute op must then have one naming a
    device of ``priorities`` (or any registered device when no priorities are given). Otherwise
    automatic mode: each device is asked, in priority order, with ``query_model``; the first device
    that claims an op gets it, and a device is asked only while unclaimed ops remain, and only about
    them (the model cut to those ops, whose inputs from claimed ops become Parameters, as they will be
    when their subgraph is compiled).

    :raises AffinityError: for missing or unknown manual affinities, naming the ops.
    :raises UnsupportedOperationError: for ops no device claims, naming them and the devices asked
        (with ``require_all``; otherwise they are left out of the placement).
    """
    ops = compute_nodes(model)
    if has_manual_affinities(model):
        return Placement(_manual(ops, priorities, core), manual=True)
    if not priorities:
        raise AffinityError(
            "no affinities are set and no devices are given: use HETERO:A,B or set MULTI_DEVICE_PRIORITIES"
        )
    device: dict[str, str] = {}
    rejected_by: dict[str, list[str]] = {}
    structural: dict[str, str] = {}
    wanted = {n.friendly_name for n in ops}
    for name in priorities:
        if wanted <= device.keys():
            break
        asked = _unclaimed(model, ops, device, name) if device else model
        claimed = core.query_model(asked, name, dict(device_properties.get(name, {})))
        for op in sorted(wanted - device.keys()):
            if op in claimed:
                device[op] = name
            else:
                rejected_by.setdefault(op, []).append(name)
        for node in asked.get_ordered_ops():
            if node.op.structural and node.friendly_name in claimed:
                structural.setdefault(node.friendly_name, name)
    unclaimed = sorted(wanted - device.keys())
    if unclaimed and require_all:
        shown = ", ".join(f"{op} ({model_type(ops, op)})" for op in unclaimed[:20])
        raise UnsupportedOperationError(
            f"no device supports {len(unclaimed)} op(s): {shown}; devices asked: {', '.join(priorities)}. "
            "Add a device that supports them (e.g. TEMPLATE) to the priorities"
        )
    return Placement(device, rejected_by, structural=structural)


def _unclaimed(model: Model, ops: Sequence[Node], device: Mapping[str, str], asking: str) -> Model:
    """``model`` cut to its compute ops no device has claimed yet (see :func:`assign_affinities`)."""
    claimed = Subgraph("claimed", frozenset(n for n in ops if n.friendly_name in device))
    rest = Subgraph(asking, frozenset(n for n in ops if n.friendly_name not in device))
    return split_model(model, [claimed, rest], host_shapes=False).submodels[1].model


def model_type(ops: Sequence[Node], name: str) -> str:
    """The type of the op named ``name``."""
    return next((n.type_name for n in ops if n.friendly_name == name), "?")


def _manual(ops: Sequence[Node], priorities: Sequence[str], core: Core) -> dict[str, str]:
    missing = [n.friendly_name for n in ops if rt_info.AFFINITY not in n.get_rt_info()]
    if missing:
        raise AffinityError(
            f"manual affinities are incomplete: {len(missing)} op(s) have none: {', '.join(missing[:20])}; "
            "set node.get_rt_info()['affinity'] on every op, or remove all affinities for automatic mode"
        )
    given = {n.friendly_name: n.get_rt_info()[rt_info.AFFINITY] for n in ops}
    odd = {op: value for op, value in given.items() if not isinstance(value, str)}
    if odd:
        where = ", ".join(f"{op}: {value!r} ({type(value).__name__})" for op, value in list(odd.items())[:10])
        raise AffinityError(f"affinities must be device names (strings); {where}")
    device: dict[str, str] = given
    splitting = sorted({name for name in device.values() if _splits(name)})
    if splitting:
        ops_on = [op for op, d in device.items() if d == splitting[0]]
        choices = priorities or [d for d in core.registered_devices if not _splits(d)]
        raise AffinityError(
            f"affinity {splitting[0]!r} on {', '.join(ops_on[:10])} names HETERO, which would split the model "
            f"again: name the device that runs each op, one of: {', '.join(choices)}"
        )
    refused = {name for name in set(device.values()) if not _allowed(name, priorities, core)}
    unknown: dict[str, list[str]] = {}
    for op, name in device.items():
        if name in refused:
            unknown.setdefault(name, []).append(op)
    if unknown:
        where = "; ".join(f"{d!r} on {', '.join(ops_[:10])}" for d, ops_ in sorted(unknown.items()))
        choices = ", ".join(priorities) if priorities else ", ".join(core.registered_devices)
        raise AffinityError(f"affinities name unknown device(s): {where}; use one of: {choices}")
    return device


def _splits(name: str) -> bool:
    """True for HETERO itself (``HETERO``, ``HETERO.0``, ``HETERO:A,B``): an affinity to it would split again."""
    return _plugin_name(name) == HETERO


def _allowed(name: str, priorities: Sequence[str], core: Core) -> bool:
    """Whether an affinity may name ``name``: a listed device, or one of its ids (``TEMPLATE.1`` when
    ``TEMPLATE`` is listed); any registered device when none is listed."""
    if name in priorities:
        return True
    if priorities and _plugin_name(name) not in priorities:
        return False
    return _known(core, name)


def _plugin_name(name: str) -> str | None:
    """The plugin part of a device string (``TEMPLATE`` of ``TEMPLATE.1``), None when it is malformed."""
    try:
        return parse_device_name(name).name
    except DeviceNameError:
        return None


def _known(core: Core, name: str) -> bool:
    try:
        core.get_property(name, props.available_devices)
    except (HeteroSDKError, ValueError):
        return False
    return True
