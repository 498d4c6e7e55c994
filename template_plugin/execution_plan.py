"""Compiling a model into a flat execution plan: ops in order, each value in a slot freed after its
last use, constants materialised once for every request."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Any

import numpy as np

from hetero_sdk import Model, Node
from hetero_sdk.errors import InferenceError, RequestCancelledError, UnsupportedOperationError
from hetero_sdk.plugin import Kernel, RunContext
from template_plugin import plan_kernels  # noqa: F401  (registers TEMPLATE's kernels)
from template_plugin.arena import Arena, Donation
from template_plugin.kernels import has_kernel, kernel_for, lends
from template_plugin.plan_kernels import IN_PLACE

__all__ = ["ExecutionPlan", "Step"]


@dataclass(frozen=True, slots=True)
class Step:
    """One op: its kernel, the slots it reads and writes, the slots dead after it, whether the kernel
    takes the arena (``kernel(node, arena, *inputs)``) and which of its inputs (positions in ``args``)
    die with it and may take its result (an elementwise kernel of :data:`IN_PLACE`)."""

    node: Node
    kernel: Kernel
    args: tuple[int, ...]
    outs: tuple[int, ...]
    out_dtypes: tuple[np.dtype[Any], ...]
    release: tuple[int, ...]
    lends: bool = False
    donors: tuple[int, ...] = ()
    fetch: Any = field(init=False, repr=False, compare=False)
    """Takes the step's inputs from the slots: a tuple of them when :attr:`many`, else the one input
    (None when the op has no inputs)."""
    many: bool = field(init=False, repr=False, compare=False)
    single: bool = field(init=False, repr=False, compare=False)
    """Whether the op has one output, then in :attr:`out_slot` with element type :attr:`out_dtype`."""
    out_slot: int = field(init=False, repr=False, compare=False)
    out_dtype: Any = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "fetch", itemgetter(*self.args) if self.args else None)
        set_(self, "many", len(self.args) > 1)
        set_(self, "single", len(self.outs) == 1)
        set_(self, "out_slot", self.outs[0] if self.outs else -1)
        set_(self, "out_dtype", self.out_dtypes[0] if self.out_dtypes else None)


class ExecutionPlan:
    """A model lowered to steps over numbered slots.

    :raises UnsupportedOperationError: naming every op without a kernel.
    """

    def __init__(self, model: Model) -> None:
        ops = model.get_ordered_ops()
        graph = ("Parameter", "Result", "Constant")
        missing = sorted({f"{n.friendly_name} ({n.type_name})" for n in ops
                          if n.type_name not in graph and not has_kernel(n.type_name)})  # fmt: skip
        if missing:
            raise UnsupportedOperationError(f"TEMPLATE has no kernel for: {', '.join(missing)}")
        slot_of: dict[tuple[int, int], int] = {}
        for node in ops:
            for port in range(node.get_output_size()):
                slot_of[(id(node), port)] = len(slot_of)
        self.num_slots = len(slot_of)
        self.input_slots = [slot_of[(id(p), 0)] for p in model.get_parameters()]
        self.output_slots = [slot_of[(id(r.input_value(0).node), r.input_value(0).index)] for r in model.get_results()]
        self.constants: list[tuple[int, np.ndarray]] = []
        last_use: dict[int, int] = {}
        compute: list[Node] = []
        for node in ops:
            if node.type_name == "Constant":
                self.constants.append((slot_of[(id(node), 0)], node.attrs["value"]))
            elif node.type_name not in ("Parameter", "Result"):
                for source in node.input_values():
                    last_use[slot_of[(id(source.node), source.index)]] = len(compute)
                compute.append(node)
        self.peak_bytes = 0
        """The most bytes held at once during the last run by inputs, intermediate results and the
        request's arena (the buffers it keeps between inferences, lent or not; constants excluded;
        outputs included; views of arrays outside the arena counted as if they owned their data)."""
        keep = set(self.output_slots) | {s for s, _ in self.constants}
        dead_after: dict[int, list[int]] = {}
        for slot, step in last_use.items():
            if slot not in keep:
                dead_after.setdefault(step, []).append(slot)
        read = set(last_use) | set(self.output_slots)
        self.steps = [
            Step(
                node,
                kernel_for(node, [slot_of[(id(node), i)] in read for i in range(node.get_output_size())]),
                tuple(slot_of[(id(s.node), s.index)] for s in node.input_values()),
                tuple(slot_of[(id(node), i)] for i in range(node.get_output_size())),
                tuple(t.numpy for t in (node.get_output_element_type(i) for i in range(node.get_output_size()))),
                tuple(dead_after.get(i, ())),
                lends(node.type_name),
                _donors(node, [slot_of[(id(s.node), s.index)] for s in node.input_values()], dead_after.get(i, [])),
            )
            for i, node in enumerate(compute)
        ]

    def run(self, inputs: Sequence[Any], context: RunContext) -> list[np.ndarray]:
        """Executes the steps on ``inputs``; thread-safe (all state is local to the call or to the
        request's :attr:`RunContext.state`, which one request never uses twice at once, but for
        :attr:`peak_bytes`, which the last finished call sets).

        The lending kernels write into buffers of the request's arena (a fresh one per call when the
        caller keeps no state); a buffer goes back to the arena once no live value is it or a view
        of it, and a model output leaves the arena.
        """
        arena: Arena = Arena() if context.state is None else context.state
        try:
            return self._run(inputs, context, arena)
        finally:
            arena.reclaim()

    def _run(self, inputs: Sequence[Any], context: RunContext, arena: Arena) -> list[np.ndarray]:
        env: list[Any] = [None] * self.num_slots
        owners: list[Any] = [None] * self.num_slots  # the lent buffer each value is (a view of)
        for slot, value in self.constants:
            env[slot] = value
        live = 0
        for slot, value in zip(self.input_slots, inputs):
            env[slot] = array = np.asarray(value)
            live += array.nbytes
        peak = live + arena.nbytes
        refs: dict[int, int] = {}  # lent buffer id -> live values that are it or view it
        owner, lent, ndarray = arena.owner, arena.lent_buffers, np.ndarray
        profile = context.profile is not None
        cancelled = context.cancelled.is_set
        # The loop runs once per op and inference (hundreds of small ops a decoded token): it binds what
        # it reads to locals and takes the common step (one array out of the expected dtype, owning its
        # memory) without building tuples; the rest as before.
        try:  # around the loop, not around each step: free until a kernel fails; `step` names it
            with np.errstate(all="ignore"):  # IEEE 754 results (inf, nan) are the answer, not a warning
                for step in self.steps:
                    if cancelled():
                        context.check_cancelled()
                    node, fetch = step.node, step.fetch
                    args = fetch(env) if step.many else (fetch(env),) if fetch is not None else ()
                    if step.lends:
                        args = (_workspace(step, args, owners, refs, arena) if step.donors else arena, *args)
                    if profile:
                        with context.timed(node.friendly_name, node.type_name, f"ref_{node.type_name}"):
                            raw = step.kernel(node, *args)
                    else:
                        raw = step.kernel(node, *args)
                    if type(raw) is ndarray and step.single:  # the usual step: one array out
                        if raw.dtype is not step.out_dtype and raw.dtype != step.out_dtype:
                            raw = raw.astype(step.out_dtype, copy=False)
                        slot = step.out_slot
                        env[slot] = raw
                        if raw.base is None:  # owns its memory: lent, or fresh
                            buffer = lent.get(id(raw))
                            if buffer is not raw:
                                buffer = None
                        else:
                            buffer = owner(raw)
                        owners[slot] = buffer
                        if buffer is None:
                            live += raw.nbytes
                        else:
                            key = id(buffer)
                            refs[key] = refs.get(key, 0) + 1
                    else:
                        results = zip(step.outs, (raw,) if not isinstance(raw, (tuple, list)) else raw, step.out_dtypes)
                        for slot, value, dtype in results:
                            if type(value) is not ndarray or value.dtype != dtype:
                                value = np.asarray(value).astype(dtype, copy=False)
                            env[slot] = value
                            owners[slot] = buffer = owner(value)
                            if buffer is None:
                                live += value.nbytes
                            else:
                                key = id(buffer)
                                refs[key] = refs.get(key, 0) + 1
                    if live + arena.nbytes > peak:
                        peak = live + arena.nbytes
                    for slot in step.release:
                        buffer = owners[slot]
                        if buffer is None:
                            live -= env[slot].nbytes
                        else:
                            owners[slot] = None
                            key = id(buffer)
                            if refs[key] > 1:
                                refs[key] -= 1
                            else:
                                del refs[key]
                                arena.give_back(buffer)
                        env[slot] = None
        except (InferenceError, RequestCancelledError):
            raise
        except Exception as exc:
            raise _failure(step, exc) from exc
        self.peak_bytes = peak
        outputs = [env[slot] for slot in self.output_slots]
        for value in outputs:
            buffer = owner(value)
            if buffer is not None:
                arena.hand_over(buffer)
        return outputs


def _failure(step: Step, exc: Exception) -> InferenceError:
    """A kernel's failure as an :class:`InferenceError` naming the node it ran for."""
    node = step.node
    where = f"{node.type_name} '{node.friendly_name}'"
    said = str(exc)
    said = said[len(where) :].lstrip(": ") if said.startswith(where) else f"{type(exc).__name__}: {said}"
    if isinstance(exc, MemoryError) or "too big" in said or "Maximum allowed size" in said:
        said += "; its output does not fit in memory: check the sizes its inputs ask for"
    return InferenceError(f"TEMPLATE failed to run {where}: {said}")


def _donors(node: Node, args: list[int], dead: list[int]) -> tuple[int, ...]:
    """The positions of ``node``'s inputs that die with it, when its kernel may write over one."""
    return tuple(i for i, slot in enumerate(args) if slot in dead) if node.type_name in IN_PLACE else ()


def _workspace(step: Step, args: Sequence[Any], owners: list[Any], refs: dict[int, int], arena: Arena) -> Any:
    """``arena``, or a :class:`Donation` of a dying input that is a whole lent buffer no other live value
    is or views (the plan counts them in ``refs``)."""
    for index in step.donors:
        buffer = owners[step.args[index]]
        value = args[index]
        if buffer is not None and refs[id(buffer)] == 1 and value.size == buffer.size and value.flags.c_contiguous:
            return Donation(arena, value)
    return arena
