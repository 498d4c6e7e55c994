"""The expected-failures file of a device: the node test cases it is known not to pass, one
``case_name  status  reason`` line each, sorted by name. ``status`` is ``failed``, ``unsupported`` or
``error``; the reason is the rest of the line. Blank lines and lines starting with ``#`` are ignored.

A run is judged against it (:func:`judge`): a case that does not pass and is not listed is a
*regression*; a listed case that passes is an *unexpected pass* (remove it from the file); a listed
case that still does not pass with another status is *changed*. :func:`updated` rewrites the file
from a run, deterministically.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from hetero_sdk.conformance.onnx_node.execute import STATUSES, CaseResult

__all__ = ["SHIPPED", "Expected", "ExpectedFileError", "Verdict", "judge", "parse", "read", "shipped_file", "updated"]

SHIPPED: Final = Path(__file__).resolve().parent / "expected"
"""The folder of the files shipped for the SDK's own devices (``TEMPLATE.txt``, ``XLA.txt``)."""

_FAILING = STATUSES[1:]


class ExpectedFileError(ValueError):
    """A malformed expected-failures file; the message names the file and line."""


@dataclass(frozen=True)
class Expected:
    """One line of the file: a case expected not to pass, how, and why."""

    case: str
    status: str
    reason: str


@dataclass
class Verdict:
    """A run judged against the file.

    :ivar regressions: cases not listed that did not pass.
    :ivar unexpected_passes: listed cases that passed.
    :ivar changed: listed cases that still do not pass, with another status (listed, now).
    """

    regressions: list[str] = field(default_factory=list)
    unexpected_passes: list[str] = field(default_factory=list)
    changed: dict[str, tuple[str, str]] = field(default_factory=dict)

    def ok(self, strict: bool = False) -> bool:
        """No regression (and, when ``strict``, no unexpected pass or changed status either)."""
        return not self.regressions and not (strict and (self.unexpected_passes or self.changed))


def shipped_file(device: str) -> Path | None:
    """The file shipped for ``device`` (its full device string: ``TEMPLATE``, ``XLA``), if there is one."""
    path = SHIPPED / f"{device}.txt"
    return path if device.replace("_", "").isalnum() and path.is_file() else None


def parse(text: str, source: str = "<text>") -> dict[str, Expected]:
    """The entries of a file's text, by case name.

    :raises ExpectedFileError: for a line without a status and reason, an unknown status, or a case
        listed twice.
    """
    entries: dict[str, Expected] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        parts = line.split(None, 2)
        where = f"{source}:{number}"
        if len(parts) < 3:
            raise ExpectedFileError(f"{where}: {raw!r} needs 'case_name  status  reason' (the reason is required)")
        case, status, reason = parts
        if status not in _FAILING:
            raise ExpectedFileError(f"{where}: status {status!r} of {case} is not one of {', '.join(_FAILING)}")
        if case in entries:
            raise ExpectedFileError(f"{where}: {case} is listed twice")
        entries[case] = Expected(case, status, reason.strip())
    return entries


def read(path: Path) -> dict[str, Expected]:
    """The entries of the file at ``path`` (see :func:`parse`)."""
    return parse(path.read_text(), str(path))


def judge(results: Mapping[str, CaseResult], expected: Mapping[str, Expected]) -> Verdict:
    """Compares a run (only the cases it ran) with the file."""
    verdict = Verdict()
    for name, result in sorted(results.items()):
        entry = expected.get(name)
        if result.status == "passed":
            if entry is not None:
                verdict.unexpected_passes.append(name)
        elif entry is None:
            verdict.regressions.append(name)
        elif entry.status != result.status:
            verdict.changed[name] = (entry.status, result.status)
    return verdict


def _first_line(reason: str) -> str:
    lines = [line.strip() for line in reason.strip().splitlines() if line.strip()]
    text = lines[0] if lines else "no reason given"
    return text if len(text) <= 200 else text[:197] + "..."


def updated(results: Mapping[str, CaseResult], expected: Mapping[str, Expected], header: Iterable[str] = ()) -> str:
    """The file's new text after a run: the run's cases that did not pass (a listed case's reason is
    kept while its status stays; otherwise the reason is the first line of the error), and the listed
    cases the run left out, as they were; sorted by name.

    :param header: comment lines (without ``#``) written first.
    """
    entries = {name: e for name, e in expected.items() if name not in results}
    for name, result in results.items():
        if result.status == "passed":
            continue
        old = expected.get(name)
        reason = old.reason if old is not None and old.status == result.status else _first_line(result.reason)
        entries[name] = Expected(name, result.status, reason)
    lines = [f"# {text}".rstrip() for text in header]
    lines += [f"{e.case}  {e.status}  {e.reason}" for _, e in sorted(entries.items())]
    return "\n".join(lines) + "\n"
