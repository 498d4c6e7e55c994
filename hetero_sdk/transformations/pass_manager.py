"""Running transformation passes over a model, like ``ov::pass::Manager``."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from hetero_sdk.errors import ModelValidationError

if TYPE_CHECKING:
    from hetero_sdk.graph.model import Model
    from hetero_sdk.graph.node import Node

__all__ = ["FunctionPass", "ModelPass", "PassConfig", "PassGroup", "PassManager", "PassRecord"]


@runtime_checkable
class ModelPass(Protocol):
    """A transformation: rewrites a model in place (``ov::pass::ModelPass``).

    :ivar name: the pass's name; :class:`PassConfig` disables passes by it.
    """

    name: str

    def run(self, model: Model) -> bool:
        """Transforms ``model`` in place.

        :returns: True when the model changed.
        """
        ...


class FunctionPass:
    """Wraps a function ``fn(model) -> bool`` as a named pass.

    :param name: the pass's name.
    :param fn: the transformation; returns True when it changed the model.
    """

    def __init__(self, name: str, fn: Callable[[Model], bool]) -> None:
        self.name = name
        self._fn = fn

    def run(self, model: Model) -> bool:
        """Runs the wrapped function."""
        return bool(self._fn(model))

    def __repr__(self) -> str:
        return f"<FunctionPass '{self.name}'>"


@dataclass(frozen=True)
class PassGroup:
    """Passes run in order as one step, optionally repeated until none changes the model.

    Like OpenVINO's ``GraphRewrite``, a group lets passes that enable each other (constant folding
    and no-op elimination) reach a fixed point.

    :ivar name: the group's name; disabling it disables all its passes.
    :ivar passes: the member passes, in order.
    :ivar until_fixed_point: repeat the members while one of them reports a change.
    :ivar max_iterations: the most rounds a fixed-point group runs.
    """

    name: str
    passes: tuple[ModelPass, ...]
    until_fixed_point: bool = True
    max_iterations: int = 10


def _pass_name(item: str | ModelPass | type) -> str:
    if isinstance(item, str):
        return item
    name = getattr(item, "name", None)
    if not isinstance(name, str):
        raise TypeError(f"{item!r} has no 'name' to identify a pass by; pass the name as a string")
    return name


class PassConfig:
    """Which passes run (``ov::pass::PassConfig``): passes are disabled and enabled by name.

    Names are matched exactly; a pass class with a ``name`` class attribute (or a pass object) may
    be given instead of its name.
    """

    def __init__(self) -> None:
        self._disabled: set[str] = set()

    def disable(self, *passes: str | ModelPass | type) -> None:
        """Disables the given passes (or groups)."""
        self._disabled.update(_pass_name(p) for p in passes)

    def enable(self, *passes: str | ModelPass | type) -> None:
        """Enables the given passes again."""
        self._disabled.difference_update(_pass_name(p) for p in passes)

    def is_disabled(self, item: str | ModelPass | type) -> bool:
        """True when the pass (or group) is disabled."""
        return _pass_name(item) in self._disabled

    @property
    def disabled(self) -> frozenset[str]:
        """The disabled names."""
        return frozenset(self._disabled)


@dataclass(frozen=True)
class PassRecord:
    """What one run of one pass did, for debugging.

    :ivar name: the pass's name.
    :ivar changed: what the pass reported.
    :ivar removed: friendly names of the ops that left the model during the run, sorted.
    :ivar added: friendly names of the ops that joined it, sorted.
    :ivar seconds: wall time of the run.
    :ivar group: the enclosing group's name, or None.
    :ivar iteration: the round of a fixed-point group (0 outside groups).
    :ivar skipped: True when the pass was disabled and did not run.
    """

    name: str
    changed: bool
    removed: tuple[str, ...] = ()
    added: tuple[str, ...] = ()
    seconds: float = 0.0
    group: str | None = None
    iteration: int = 0
    skipped: bool = False


class PassManager:
    """Runs registered passes in order on a model, in place (``ov::pass::Manager``).

    Example::

        manager = PassManager()
        manager.register_group([ConstantFolding(), NopElimination()], "CommonOptimizations")
        manager.register_pass(DeadCodeElimination())
        manager.get_pass_config().disable("NopElimination")
        manager.run_passes(model)
        print(manager.summary())

    :param validate: re-run shape and type inference and the structural checks after every pass
        that reports a change (OpenVINO's per-pass validation); a failure names the pass.
    """

    def __init__(self, *, validate: bool = True) -> None:
        self.validate = validate
        self.records: list[PassRecord] = []
        """What each pass did during the last :meth:`run_passes`."""
        self._steps: list[ModelPass | PassGroup] = []
        self._config = PassConfig()

    def register_pass(self, transformation: ModelPass) -> ModelPass:
        """Appends ``transformation`` to the pipeline and returns it.

        :raises TypeError: when it has no string ``name`` or no ``run`` method.
        """
        if not isinstance(getattr(transformation, "name", None), str) or not callable(
            getattr(transformation, "run", None)
        ):
            raise TypeError(f"{transformation!r} is not a pass: it needs a str 'name' and a 'run(model)' method")
        self._steps.append(transformation)
        return transformation

    def register_group(
        self, passes: Iterable[ModelPass], name: str, *, until_fixed_point: bool = True, max_iterations: int = 10
    ) -> PassGroup:
        """Appends a :class:`PassGroup` of ``passes`` to the pipeline and returns it.

        :raises ValueError: when ``max_iterations`` is below 1.
        """
        if max_iterations < 1:
            raise ValueError(f"max_iterations must be at least 1, got {max_iterations}")
        members = tuple(passes)
        for member in members:
            if not isinstance(getattr(member, "name", None), str) or not callable(getattr(member, "run", None)):
                raise TypeError(f"{member!r} is not a pass: it needs a str 'name' and a 'run(model)' method")
        group = PassGroup(name, members, until_fixed_point, max_iterations)
        self._steps.append(group)
        return group

    def get_pass_config(self) -> PassConfig:
        """The configuration that enables and disables passes by name."""
        return self._config

    @property
    def pass_config(self) -> PassConfig:
        """The configuration that enables and disables passes by name."""
        return self._config

    @property
    def passes(self) -> list[ModelPass | PassGroup]:
        """The pipeline's steps, in order."""
        return list(self._steps)

    def run_passes(self, model: Model) -> bool:
        """Runs every enabled pass in order on ``model`` (in place) and fills :attr:`records`.

        :returns: True when some pass changed the model.
        :raises ModelValidationError: when a pass leaves an invalid model (names the pass).
        """
        self.records = []
        changed = False
        for step in self._steps:
            if isinstance(step, PassGroup):
                changed |= self._run_group(model, step)
            else:
                changed |= self._run_one(model, step, None, 0)
        return changed

    def _run_group(self, model: Model, group: PassGroup) -> bool:
        if self._config.is_disabled(group.name):
            self.records.append(PassRecord(group.name, False, skipped=True))
            return False
        changed = False
        rounds = group.max_iterations if group.until_fixed_point else 1
        for iteration in range(rounds):
            round_changed = False
            for member in group.passes:
                round_changed |= self._run_one(model, member, group.name, iteration)
            changed |= round_changed
            if not round_changed:
                break
        return changed

    def _run_one(self, model: Model, transformation: ModelPass, group: str | None, iteration: int) -> bool:
        name = transformation.name
        if self._config.is_disabled(name):
            self.records.append(PassRecord(name, False, group=group, iteration=iteration, skipped=True))
            return False
        before = {id(n): n for n in model.get_ops()}
        start = time.perf_counter()
        changed = bool(transformation.run(model))
        seconds = time.perf_counter() - start
        after = {id(n): n for n in model.get_ops()}
        if changed and self.validate:
            try:
                model.validate_nodes_and_infer_types()
            except ModelValidationError as exc:
                raise ModelValidationError(f"pass '{name}' left an invalid model: {exc}") from exc
        self.records.append(
            PassRecord(
                name,
                changed,
                removed=_names(n for k, n in before.items() if k not in after),
                added=_names(n for k, n in after.items() if k not in before),
                seconds=seconds,
                group=group,
                iteration=iteration,
            )
        )
        return changed

    def summary(self) -> str:
        """The records of the last run, one line per pass run."""
        lines = []
        for r in self.records:
            where = f"{r.group}[{r.iteration}]/" if r.group else ""
            if r.skipped:
                lines.append(f"{where}{r.name}: disabled")
                continue
            lines.append(
                f"{where}{r.name}: {'changed' if r.changed else 'unchanged'} "
                f"(-{len(r.removed)} +{len(r.added)} ops, {r.seconds * 1e3:.2f} ms)"
            )
        return "\n".join(lines)


def _names(nodes: Iterable[Node]) -> tuple[str, ...]:
    return tuple(sorted(n.friendly_name for n in nodes))
