"""OpenVINO IR for the fuzzer: the built seed models saved as IR (``model.xml`` + ``model.bin``), and
mutations of them: an attribute value of the XML replaced by an edge value (numbers, dims, offsets,
sizes, element types, names, empty), an element dropped, DOCTYPE and entity declarations, and
byte-level edits of the XML or of the ``.bin``."""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

from hypothesis import strategies as st

from hetero_sdk.conformance.fuzz.outcome import Case
from hetero_sdk.conformance.fuzz.seeds import built_seeds
from hetero_sdk.conformance.fuzz.strategies import EDGE_INTS, byte_edits
from hetero_sdk.frontend import read_model
from hetero_sdk.frontend.ir import save_ir

__all__ = ["IR_WEIGHTS", "ir_cases", "ir_seeds"]

IR_WEIGHTS = "model.bin"
"""The weights file's name beside ``model.xml`` in an IR case."""

_ATTRIBUTE = re.compile(rb'(\w[\w-]*)="([^"]*)"')
_ELEMENT = re.compile(rb"<(dim|port|edge|data|layer|input|output|rt_info)\b[^>]*/?>")
_VALUES = (
    *(str(v).encode() for v in EDGE_INTS),
    b"",
    b"?",
    b"-1",
    b"1..0",
    b"1,2,3,4,5,6,7,8",
    b"f32",
    b"u4",
    b"string",
    b"boolean",
    b"nan",
    b"1e308",
    b"true",
    b"opset99",
    b"Frobnicate",
    b"&#0;",
    b"\xc3\xa9",
)
_PROLOGUES = (
    b'<!DOCTYPE net [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;">]>',
    b'<!DOCTYPE net SYSTEM "http://example.invalid/net.dtd">',
    b'<!DOCTYPE net [<!ENTITY x SYSTEM "file:///etc/passwd">]>',
    b"<?xml-stylesheet href='x'?>",
)


def ir_seeds() -> list[tuple[str, bytes, bytes]]:
    """The built seed models saved as IR: (name, xml bytes, bin bytes)."""
    seeds = []
    with tempfile.TemporaryDirectory() as folder:
        for seed in built_seeds():
            path = Path(folder) / f"{seed.name}.xml"
            save_ir(read_model(seed.model.SerializeToString()), path)
            seeds.append((seed.name, path.read_bytes(), path.with_suffix(".bin").read_bytes()))
    return seeds


@st.composite
def _attribute_edit(draw: st.DrawFn, xml: bytes) -> tuple[bytes, str]:
    spans = [m.span(2) for m in _ATTRIBUTE.finditer(xml)]
    if not spans:
        return xml, "attr:none"
    start, end = draw(st.sampled_from(spans))
    value = draw(st.sampled_from(_VALUES))
    return xml[:start] + value + xml[end:], f"attr@{start}={value[:12]!r}"


@st.composite
def _element_drop(draw: st.DrawFn, xml: bytes) -> tuple[bytes, str]:
    spans = [m.span() for m in _ELEMENT.finditer(xml) if m.group().endswith(b"/>")]
    if not spans:
        return xml, "drop:none"
    start, end = draw(st.sampled_from(spans))
    return xml[:start] + xml[end:], f"drop@{start}"


@st.composite
def _prologue(draw: st.DrawFn, xml: bytes) -> tuple[bytes, str]:
    at = xml.find(b"<net")
    text = draw(st.sampled_from(_PROLOGUES))
    return xml[:at] + text + b"\n" + xml[at:], f"prologue:{text[:20]!r}"


@st.composite
def _ir_case(draw: st.DrawFn, seeds: tuple[tuple[str, bytes, bytes], ...]) -> Case:
    name, xml, weights = draw(st.sampled_from(seeds))
    how = draw(st.sampled_from(["attr", "attr", "attr", "drop", "prologue", "xml-bytes", "bin-bytes"]))
    if how == "attr":
        xml, label = draw(_attribute_edit(xml))
    elif how == "drop":
        xml, label = draw(_element_drop(xml))
    elif how == "prologue":
        xml, label = draw(_prologue(xml))
    elif how == "xml-bytes":
        xml, label = draw(byte_edits(xml))
    else:
        weights, label = draw(byte_edits(weights))
        label = f"bin {label}"
    return Case("ir", xml, files=((IR_WEIGHTS, weights),), label=f"{name} {label}")


def ir_cases(seeds: list[tuple[str, bytes, bytes]]) -> st.SearchStrategy[Case]:
    """IR files (``model.xml`` with ``model.bin`` beside it) with attribute, element and byte edits."""
    return _ir_case(tuple(seeds))
