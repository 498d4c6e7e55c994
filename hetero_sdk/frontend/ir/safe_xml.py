"""The IR's XML parsed safely: the standard library's expat with every DOCTYPE refused, so no entity
can be declared (no expansion, no "billion laughs") and no external reference or network access can
happen; the tree is built with :class:`xml.etree.ElementTree.TreeBuilder`."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import Any, NoReturn
from xml.parsers import expat

from hetero_sdk.errors import ModelFormatError

__all__ = ["parse_xml"]


class _Refused(Exception):
    """A construct the IR never needs and a safe parser refuses."""


def _refuse(what: str) -> Any:
    def handler(*_args: Any) -> NoReturn:
        raise _Refused(what)

    return handler


def parse_xml(data: bytes, source: str) -> ET.Element:
    """The root element of ``data``.

    :raises ModelFormatError: for malformed XML (naming line and column), a DOCTYPE, an entity
        declaration, an external entity reference or a processing instruction.
    """
    builder = ET.TreeBuilder()
    parser = expat.ParserCreate()
    parser.StartDoctypeDeclHandler = _refuse("a DOCTYPE (IR files have none; entities are refused)")
    parser.EntityDeclHandler = _refuse("an entity declaration")
    parser.UnparsedEntityDeclHandler = _refuse("an unparsed entity declaration")
    parser.ExternalEntityRefHandler = _refuse("an external entity reference")
    parser.ProcessingInstructionHandler = _refuse("a processing instruction")
    parser.StartElementHandler = builder.start
    parser.EndElementHandler = builder.end
    parser.CharacterDataHandler = builder.data
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
    try:
        parser.Parse(data, True)
    except _Refused as exc:
        where = f"line {parser.CurrentLineNumber}, column {parser.CurrentColumnNumber}"
        raise ModelFormatError(f"{source}: {where}: {exc} is refused; OpenVINO IR is plain XML") from None
    except expat.ExpatError as exc:
        raise ModelFormatError(
            f"{source}: line {exc.lineno}, column {exc.offset}: malformed XML: {expat.ErrorString(exc.code)}"
        ) from None
    return builder.close()
