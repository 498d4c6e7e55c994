"""Draws the SVG figures of the partitioning page (``python docs/img/draw_figures.py``).

The graphs and partitions are the ones the page's tested examples print; the SVGs are checked in.
"""

from __future__ import annotations

import math
from pathlib import Path

A, B = "#80b1d3", "#fdb462"
HERE = Path(__file__).resolve().parent
Point = tuple[int, int]
Group = tuple[int, int, int, int, str, int, int]


def _graph(
    ox: int,
    pos: dict[int, Point],
    edges: list[tuple[int, int]],
    colour: dict[int, str],
    groups: list[Group],
    title: str,
) -> list[str]:
    r = 17
    out = [f'<text x="{ox + 130}" y="20" text-anchor="middle" font-size="14" font-weight="bold">{title}</text>']
    for x0, y0, x1, y1, label, lx, ly in groups:
        out.append(
            f'<rect x="{ox + x0}" y="{y0}" width="{x1 - x0}" height="{y1 - y0}" rx="12" fill="none" '
            'stroke="#555" stroke-dasharray="5,4"/>'
        )
        out.append(f'<text x="{ox + lx}" y="{ly}" font-size="11" fill="#333">{label}</text>')
    for u, v in edges:
        (x0, y0), (x1, y1) = pos[u], pos[v]
        d = math.hypot(x1 - x0, y1 - y0)
        sx, sy = x0 + (x1 - x0) * r / d, y0 + (y1 - y0) * r / d
        ex, ey = x1 - (x1 - x0) * (r + 1) / d, y1 - (y1 - y0) * (r + 1) / d
        out.append(
            f'<line x1="{ox + sx:.1f}" y1="{sy:.1f}" x2="{ox + ex:.1f}" y2="{ey:.1f}" stroke="#444" '
            'stroke-width="1.5" marker-end="url(#arrow)"/>'
        )
    for n, (x, y) in pos.items():
        out.append(f'<circle cx="{ox + x}" cy="{y}" r="{r}" fill="{colour[n]}" stroke="#333"/>')
        out.append(f'<text x="{ox + x}" y="{y + 5}" text-anchor="middle" font-size="14">{n}</text>')
    return out


def _svg(width: int, height: int, body: list[str]) -> str:
    items = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif">',
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" '
        'orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" fill="#444"/></marker></defs>',
        f'<rect width="{width}" height="{height}" fill="white"/>',
        *body,
    ]
    for i, (colour, text) in enumerate(((A, "device A"), (B, "device B"))):
        x = 20 + 200 * i
        items.append(f'<circle cx="{x}" cy="{height - 14}" r="7" fill="{colour}" stroke="#333"/>')
        items.append(f'<text x="{x + 12}" y="{height - 9}" font-size="12">{text}</text>')
    return "\n".join([*items, "</svg>"]) + "\n"


def seeds_example() -> str:
    """The design documents' seven-node example, split by both algorithms."""
    pos = {1: (130, 50), 2: (130, 110), 3: (70, 180), 4: (190, 180), 5: (130, 250), 6: (130, 310), 7: (130, 370)}
    edges = [(1, 2), (2, 3), (2, 4), (3, 5), (4, 5), (5, 6), (6, 7)]
    colour = {n: A for n in pos} | {4: B}
    documented: list[Group] = [
        (100, 27, 160, 133, "A: [1, 2]", 165, 60),
        (45, 157, 160, 393, "A: [3, 5, 6, 7]", 20, 405),
        (167, 157, 213, 203, "B: [4]", 218, 185),
    ]
    default: list[Group] = [
        (45, 27, 160, 203, "A: [1, 2, 3]", 165, 60),
        (167, 157, 213, 203, "B: [4]", 218, 185),
        (105, 227, 160, 393, "A: [5, 6, 7]", 165, 300),
    ]
    body = _graph(0, pos, edges, colour, documented, "documented")
    return _svg(580, 440, body + _graph(290, pos, edges, colour, default, "default"))


def cycle() -> str:
    """The four-node case where the documented algorithm's subgraphs need each other."""
    pos = {0: (80, 60), 1: (180, 60), 2: (80, 170), 3: (180, 170)}
    edges = [(0, 2), (0, 3), (1, 2), (1, 3)]
    colour = {0: A, 3: A, 1: B, 2: B}
    body = _graph(0, pos, edges, colour, [], "documented")
    body.append(
        '<text x="130" y="225" text-anchor="middle" font-size="12">A = [0, 3], B = [1, 2]: A needs B, B needs A</text>'
    )
    body += _graph(290, pos, edges, colour, [], "default")
    body.append(
        '<text x="420" y="225" text-anchor="middle" font-size="12">A = [0], B = [1, 2], A = [3]: runs in order</text>'
    )
    return _svg(580, 265, body)


if __name__ == "__main__":
    (HERE / "seeds-example.svg").write_text(seeds_example())
    (HERE / "cycle.svg").write_text(cycle())
