"""The expected-failures file a plugin author checks in: one ``<check id or glob>  # reason`` per line.

A check id is the check's file and name, as the report and the terminal show it:
``test_ops.py::test_claimed_op_matches_template[Relu]``. In a pattern ``*`` and ``?`` are wildcards;
brackets are literal (they belong to parameter ids). Blank lines and lines starting with ``#`` are
ignored. Every line needs a reason.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

__all__ = ["XfailEntry", "check_id", "parse_xfails"]


@dataclass
class XfailEntry:
    """One line of the file.

    :ivar pattern: the check id or glob.
    :ivar reason: why the check is expected to fail.
    :ivar line: the line number, for messages.
    :ivar matched: how many checks it matched in this run.
    """

    pattern: str
    reason: str
    line: int
    matched: int = 0

    def __post_init__(self) -> None:
        parts = (re.escape(p) for p in re.split(r"([*?])", self.pattern))
        self._regex = re.compile("".join({"\\*": ".*", "\\?": "."}.get(p, p) for p in parts) + r"\Z")

    def matches(self, check: str, nodeid: str) -> bool:
        """True when the pattern names ``check`` (or the full pytest node id)."""
        return bool(self._regex.match(check) or self._regex.match(nodeid))


def parse_xfails(path: Path) -> list[XfailEntry]:
    """Reads an expected-failures file.

    :raises ValueError: naming the file and line of an entry without a reason.
    """
    entries = []
    for number, raw in enumerate(path.read_text().splitlines(), start=1):
        text = raw.strip()
        if not text or text.startswith("#"):
            continue
        pattern, hash_, reason = text.partition("#")
        if not hash_ or not reason.strip() or not pattern.strip():
            raise ValueError(f"{path}:{number}: {raw!r} needs a check id and a reason: '<check id or glob>  # reason'")
        entries.append(XfailEntry(pattern.strip(), reason.strip(), number))
    return entries


def check_id(nodeid: str) -> str:
    """The stable id of a check: its node id without the directories (``test_ops.py::test_x[Relu]``)."""
    path, sep, rest = nodeid.partition("::")
    return path.rsplit("/", 1)[-1] + sep + rest
