"""``placement_dot``: DOT text that Graphviz reads whatever the op names hold."""

from __future__ import annotations

import numpy as np

import hetero_sdk as hs
from hetero_sdk import opset
from hetero_sdk.cli.dot import DEVICE_COLOURS, UNPLACED_COLOUR, device_colours, placement_dot
from hetero_sdk.hetero.report import PlacementReport


def _model() -> hs.Model:
    x = opset.parameter([2], np.float32, name="x")
    odd = opset.relu(x, name='say "hi"\\now')
    return hs.Model([opset.result(opset.negative(odd, name="neg"))], [x], name='m "1"')


def test_quotes_backslashes_and_line_breaks_are_escaped() -> None:
    report = PlacementReport(
        {'say "hi"\\now': ("A", 0), "neg": ("B", 1)}, subgraphs=[("A", ['say "hi"\\now']), ("B", ["neg"])]
    )
    text = placement_dot(_model(), report, title="line one\nline two")
    assert text.startswith('digraph "m \\"1\\"" {')
    assert '[label="say \\"hi\\"\\\\now\\nRelu\\nA #0", fillcolor="#80b1d3"]' in text
    assert 'graph [label="line one\\nline two"' in text
    assert '[label="f32[2]", color="#d62728", penwidth=2]' in text  # the cut A -> B
    assert f'[label="x\\nParameter\\nf32[2]", fillcolor="{UNPLACED_COLOUR}", shape=ellipse]' in text


def test_devices_take_colours_in_the_order_they_first_run() -> None:
    report = PlacementReport({"a": ("XLA", 0), "b": ("TEMPLATE", 1), "c": ("XLA", 2)})
    report.subgraphs = [("XLA", ["a"]), ("TEMPLATE", ["b"]), ("XLA", ["c"])]
    assert device_colours(report) == {"XLA": DEVICE_COLOURS[0], "TEMPLATE": DEVICE_COLOURS[1]}
