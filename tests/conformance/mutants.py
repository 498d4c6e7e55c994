"""Mutant devices: the small correct device of ``bad_plugins`` (MINI) with one plausible kernel bug each,
the kind a real backend ships (an axis, an attribute or a rounding mode ignored). The kit's ``ci``
profile must catch every one (``test_ci_profile_catches_mutants.py``).

Run the kit on one with ``--conformance-plugin tests.conformance.mutants:SoftmaxOffOnLastAxis``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

import hetero_sdk as hs
from hetero_sdk.graph import Node
from hetero_sdk.reference import evaluate, run_node

from .bad_plugins import MiniCompiledModel, MiniDevice

__all__ = ["MUTANTS", "Mutant"]

Kernel = Callable[[Node, list[np.ndarray]], list[np.ndarray] | None]
"""A mutated kernel: the op's outputs, or None where the mutant computes as the reference does."""


def _with_attrs(node: Node, args: list[np.ndarray], **attrs: Any) -> list[np.ndarray]:
    """``node`` run by the reference kernel with some attributes replaced (what a kernel that ignores an
    attribute computes)."""
    changed = Node(node.op, list(node.input_values()), {**node.attrs, **attrs}, name=f"{node.friendly_name}_mutant")
    return run_node(changed, args)


def _softmax_off_on_last_axis(node: Node, args: list[np.ndarray]) -> list[np.ndarray] | None:
    x = args[0]
    if node.attrs["axis"] not in (-1, x.ndim - 1):
        return None
    scaled = (x.astype(np.float64) * 1.01).astype(x.dtype)  # a stray temperature on the fast path
    return run_node(node, [scaled])


def _convolution_ignores_dilations(node: Node, args: list[np.ndarray]) -> list[np.ndarray] | None:
    dilations = node.attrs["dilations"]
    if all(d == 1 for d in dilations):
        return None
    return _with_attrs(node, args, dilations=[1] * len(dilations))


def _resize_nearest_floors(node: Node, args: list[np.ndarray]) -> list[np.ndarray] | None:
    if node.attrs["mode"] != "nearest" or node.attrs["nearest_mode"] == "floor":
        return None
    return _with_attrs(node, args, nearest_mode="floor")


def _integer_divide_truncates(node: Node, args: list[np.ndarray]) -> list[np.ndarray] | None:
    a, b = args
    if a.dtype.kind not in "iu":
        return None
    return [np.trunc(a.astype(np.float64) / b).astype(a.dtype)]  # C's division, not the floor


def _if_takes_the_wrong_branch(node: Node, args: list[np.ndarray]) -> list[np.ndarray] | None:
    cond = bool(np.asarray(args[0]).reshape(-1)[0])
    return evaluate(node.attrs["else_body" if cond else "then_body"], list(args[1:]))


def _loop_stops_one_early(node: Node, args: list[np.ndarray]) -> list[np.ndarray] | None:
    trips = int(np.asarray(args[0]).reshape(-1)[0])
    if trips <= 0:
        return None
    return run_node(node, [np.asarray(trips - 1, args[0].dtype), *args[1:]])


def _scan_ignores_input_directions(node: Node, args: list[np.ndarray]) -> list[np.ndarray] | None:
    if not any(node.attrs["scan_input_directions"]):
        return None
    return _with_attrs(node, args, scan_input_directions=[])


def _non_zero_column_major(node: Node, args: list[np.ndarray]) -> list[np.ndarray] | None:
    (indices,) = run_node(node, args)
    if indices.shape[0] < 2:
        return None
    order = np.lexsort(indices)  # sorted by the first axis last: column-major order
    return [indices[:, order]]


def _nms_ignores_score_threshold(node: Node, args: list[np.ndarray]) -> list[np.ndarray] | None:
    if len(args) < 5:
        return None
    return run_node(node, [*args[:4], np.zeros_like(args[4]), *args[5:]])


def _interpolate_ignores_antialias(node: Node, args: list[np.ndarray]) -> list[np.ndarray] | None:
    return _with_attrs(node, args, antialias=False) if node.attrs["antialias"] else None


def _unique_forgets_to_sort(node: Node, args: list[np.ndarray]) -> list[np.ndarray] | None:
    return _with_attrs(node, args, sorted=False) if node.attrs["sorted"] else None


@dataclass(frozen=True)
class Mutant:
    """One mutant: its device name, the op whose kernel is wrong, how, and an op it leaves right.

    :ivar device: the device name it is registered under.
    :ivar op_type: the mutated op.
    :ivar bug: what the kernel gets wrong, in words.
    :ivar kernel: the mutated kernel.
    :ivar control: an op the mutant computes right (its check must pass).
    """

    device: str
    op_type: str
    bug: str
    kernel: Kernel
    control: str = "Relu"

    @property
    def plugin(self) -> str:
        """The ``--conformance-plugin`` spec of its device class."""
        return f"tests.conformance.mutants:{_class_name(self.device)}"


MUTANTS = (
    Mutant("SOFTMAX_LAST_AXIS", "Softmax", "scales the logits by 1.01 on the last axis", _softmax_off_on_last_axis),
    Mutant("CONV_NO_DILATION", "Convolution", "ignores dilations", _convolution_ignores_dilations),
    Mutant("RESIZE_FLOOR", "Resize", "rounds nearest by flooring, whatever nearest_mode says", _resize_nearest_floors),
    Mutant("DIV_TRUNC", "Divide", "truncates integer quotients (OpenVINO floors)", _integer_divide_truncates),
    Mutant(
        "IF_WRONG_BRANCH",
        "If",
        "runs else_body when the condition holds, and then_body when not",
        _if_takes_the_wrong_branch,
    ),
    Mutant("LOOP_SHORT", "Loop", "runs one iteration fewer than a positive trip count", _loop_stops_one_early),
    Mutant(
        "SCAN_FORWARD",
        "Scan",
        "reads every scan input forwards (ignores scan_input_directions)",
        _scan_ignores_input_directions,
    ),
    Mutant("NONZERO_COLUMNS", "NonZero", "lists the indices in column-major order", _non_zero_column_major),
    Mutant("NMS_NO_THRESHOLD", "NonMaxSuppression", "ignores score_threshold", _nms_ignores_score_threshold),
    Mutant("INTERP_NO_AA", "Interpolate", "ignores antialias", _interpolate_ignores_antialias),
    Mutant(
        "UNIQUE_UNSORTED", "Unique", "keeps the order of first occurrence when asked to sort", _unique_forgets_to_sort
    ),
)
"""Every mutant, with the op check that must catch it."""


def _class_name(device: str) -> str:
    return "".join(part.title() for part in device.split("_")) + "Mutant"


def _device_class(mutant: Mutant) -> type[MiniDevice]:
    class Compiled(MiniCompiledModel):
        def compute(self, node: hs.Node, args: list[np.ndarray]) -> list[np.ndarray]:
            if node.type_name == mutant.op_type:
                wrong = mutant.kernel(node, args)
                if wrong is not None:
                    return wrong
            return super().compute(node, args)

    return type(_class_name(mutant.device), (MiniDevice,), {"compiled_class": Compiled, "__doc__": mutant.bug})


for _mutant in MUTANTS:
    globals()[_class_name(_mutant.device)] = _device_class(_mutant)
