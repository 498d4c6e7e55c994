"""How the CLI prints: rich tables and a progress bar on a terminal, plain aligned text when piped,
JSON with ``--json``. Commands build their output from these few pieces only."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import click

__all__ = ["Printer", "Progress", "emit_json", "progress", "status"]


def emit_json(data: Any) -> None:
    """Prints ``data`` as indented JSON on stdout (numpy scalars and other objects as strings)."""
    click.echo(json.dumps(data, indent=2, default=_jsonable))


def _jsonable(value: Any) -> Any:
    if hasattr(value, "item") and callable(value.item):
        return value.item()
    if hasattr(value, "tolist") and callable(value.tolist):
        return value.tolist()
    return str(value)


class Printer:
    """Human-readable output on stdout.

    :param fancy: rich output (colour, boxed tables); by default when stdout is a terminal.
    """

    def __init__(self, fancy: bool | None = None) -> None:
        self.fancy = sys.stdout.isatty() if fancy is None else fancy
        self._console: Any = None
        if self.fancy:
            from rich.console import Console

            self._console = Console(highlight=False)

    def heading(self, text: str) -> None:
        """A section title."""
        if self._console is not None:
            self._console.print(f"\n[bold cyan]{_escape(text)}[/]")
        else:
            click.echo(f"\n{text}")

    def line(self, text: str = "", style: str | None = None) -> None:
        """One line of text; ``style`` (a rich style such as ``"green"``) applies on a terminal only."""
        if self._console is not None:
            self._console.print(f"[{style}]{_escape(text)}[/]" if style else _escape(text))
        else:
            click.echo(text)

    def fields(self, pairs: Sequence[tuple[str, Any]], indent: int = 2) -> None:
        """``name  value`` lines with the values aligned."""
        if not pairs:
            return
        if self._console is not None:
            from rich.table import Table

            grid = Table.grid(padding=(0, 2))
            grid.add_column(style="bold")
            grid.add_column()
            for name, value in pairs:
                grid.add_row(_escape(name), _escape(str(value)))
            self._console.print(grid)
            return
        width = max(len(name) for name, _ in pairs)
        for name, value in pairs:
            click.echo((" " * indent + f"{name:<{width}}  {value}").rstrip())

    def table(self, columns: Sequence[str], rows: Sequence[Sequence[Any]], indent: int = 2) -> None:
        """A table with a header row; plain text aligns columns with two spaces between them."""
        cells = [[_cell(value) for value in row] for row in rows]
        if self._console is not None:
            from rich.table import Table

            table = Table(*columns, header_style="bold")
            for row in cells:
                table.add_row(*map(_escape, row))
            self._console.print(table)
            return
        widths = [max([len(c)] + [len(r[i]) for r in cells]) for i, c in enumerate(columns)]
        for row in [list(columns), *cells]:
            click.echo(" " * indent + "  ".join(v.ljust(w) for v, w in zip(row, widths)).rstrip())

    def verdict(self, ok: bool, text: str) -> None:
        """``PASS: text`` in green or ``FAIL: text`` in red."""
        word = "PASS" if ok else "FAIL"
        if self._console is not None:
            self._console.print(f"[bold {'green' if ok else 'red'}]{word}[/]: {_escape(text)}")
        else:
            click.echo(f"{word}: {text}")


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.3f}"
    if isinstance(value, (list, tuple)):
        return ", ".join(map(str, value)) or "-"
    return str(value)


def _escape(text: str) -> str:
    from rich.markup import escape

    return escape(text)


class Progress:
    """A progress bar that counts iterations or seconds; silent when stderr is not a terminal."""

    def __init__(self, bar: Any, task: Any, total: float, by_time: bool) -> None:
        self._bar = bar
        self._task = task
        self._total = total
        self._by_time = by_time
        self._started = time.perf_counter()

    def advance(self, iterations: int = 1) -> None:
        """Records finished iterations (the bar follows the clock when the run is time-limited)."""
        if self._bar is None:
            return
        if self._by_time:
            self._bar.update(self._task, completed=min(time.perf_counter() - self._started, self._total))
        else:
            self._bar.advance(self._task, iterations)


@contextmanager
def progress(description: str, total: float, by_time: bool, enabled: bool | None = None) -> Iterator[Progress]:
    """A :class:`Progress` over ``total`` iterations (or seconds when ``by_time``), drawn with rich on
    stderr while the block runs.

    :param enabled: draw the bar; by default when stderr is a terminal.
    """
    if not (sys.stderr.isatty() if enabled is None else enabled):
        yield Progress(None, None, total, by_time)
        return
    from rich.console import Console
    from rich.progress import BarColumn, TextColumn, TimeElapsedColumn
    from rich.progress import Progress as RichProgress

    columns = [TextColumn("{task.description}"), BarColumn(), TextColumn("{task.percentage:>3.0f}%")]
    with RichProgress(*columns, TimeElapsedColumn(), console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task(description, total=total)
        yield Progress(bar, task, total, by_time)


@contextmanager
def status(text: str) -> Iterator[None]:
    """A spinner with ``text`` on stderr while the block runs (compiling...), on a terminal only."""
    if not sys.stderr.isatty():
        yield
        return
    from rich.console import Console

    with Console(stderr=True).status(_escape(text)):
        yield
