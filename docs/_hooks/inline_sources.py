"""The code the pages quote, kept equal to the source files, so that a page reads unbuilt (on GitHub, in
an editor) and cannot drift from the code it explains.

A fenced block right after ``<!-- source: PATH:SECTION -->`` is the SECTION region of PATH: the lines
between ``# --8<-- [start:SECTION]`` and ``# --8<-- [end:SECTION]``, blank lines at either end left
out. A block after ``<!-- source: PATH -->`` quotes PATH verbatim (any excerpt of it).

``python docs/_hooks/inline_sources.py`` rewrites every SECTION block of the pages from the sources;
``tests/docs/test_docs.py`` fails when a page differs from what this would write.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"

_MARKER = re.compile(r"^<!-- source: (?P<path>[^\s:]+):(?P<section>[\w-]+) -->$")


def region(path: str, section: str) -> str:
    """The SECTION region of the file at ``path`` (relative to the repository root), ending in a newline.

    :raises ValueError: when the file has no such region.
    """
    lines = (ROOT / path).read_text().splitlines()
    starts = [i for i, line in enumerate(lines) if line.strip().endswith(f"--8<-- [start:{section}]")]
    ends = [i for i, line in enumerate(lines) if line.strip().endswith(f"--8<-- [end:{section}]")]
    if len(starts) != 1 or len(ends) != 1 or ends[0] < starts[0]:
        raise ValueError(f"{path} has no single [start:{section}] ... [end:{section}] region")
    body = lines[starts[0] + 1 : ends[0]]
    while body and not body[0].strip():
        body.pop(0)
    while body and not body[-1].strip():
        body.pop()
    return "\n".join(body) + "\n"


def refresh(text: str) -> str:
    """``text`` (a page) with each block after a ``<!-- source: PATH:SECTION -->`` marker replaced by
    the region it names."""
    lines = text.splitlines(keepends=True)
    out: list[str] = []
    i = 0
    while i < len(lines):
        out.append(lines[i])
        match = _MARKER.match(lines[i].strip())
        i += 1
        if match is None:
            continue
        while i < len(lines) and not lines[i].strip():
            out.append(lines[i])
            i += 1
        if i >= len(lines) or not lines[i].startswith("```"):
            raise ValueError(f"no fenced block after {lines[i - 1].strip()}")
        out.append(lines[i])
        end = next(j for j in range(i + 1, len(lines)) if lines[j].strip() == "```")
        out.append(region(match["path"], match["section"]))
        out.append(lines[end])
        i = end + 1
    return "".join(out)


def pages() -> list[Path]:
    """Every Markdown page of the site."""
    return sorted(p for p in DOCS.rglob("*.md") if "_hooks" not in p.parts)


def main() -> int:
    """Rewrites the pages whose quoted regions changed; prints their names."""
    for page in pages():
        text = page.read_text()
        fresh = refresh(text)
        if fresh != text:
            page.write_text(fresh)
            print(f"updated {page.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
