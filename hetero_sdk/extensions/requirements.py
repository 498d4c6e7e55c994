"""The extension ops a compiled model uses, as a blob records them, and the check a device makes when it
imports such a blob: where an op's extension is missing, the typed error names the op and the
distribution that provides it (as reading a native file does), whatever the blob holds (a graph, or
only executables)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from hetero_sdk.errors import BlobFormatError, UnknownOpTypeError
from hetero_sdk.extensions.registered import load_installed, missing_op_hint, provider_of
from hetero_sdk.graph.model import Model
from hetero_sdk.graph.node import Node
from hetero_sdk.graph.op_def import OPS

__all__ = ["require_extension_ops", "used_extension_ops"]


def used_extension_ops(model: Model) -> list[dict[str, str]]:
    """``{"op", "extension", "distribution"}`` for each extension op type ``model`` uses (sub-graphs
    included), sorted by op type: what a blob records so that importing it where the extension is
    missing names what to install."""
    found: dict[str, dict[str, str]] = {}
    for node in _nodes(model):
        if node.type_name not in found and (provider := provider_of(node.type_name)) is not None:
            found[node.type_name] = {"op": node.type_name, **provider}
    return [found[op] for op in sorted(found)]


def _nodes(model: Model) -> Iterator[Node]:
    for node in model.get_ops():
        yield node
        for value in node.attrs.values():
            if isinstance(value, Model):
                yield from _nodes(value)


def require_extension_ops(entries: Any, source: str) -> None:
    """Checks that every op type ``entries`` (what :func:`used_extension_ops` gave, read back from a
    blob) names is defined, loading the installed extensions first when one is not.

    :param source: what holds the entries, for messages (``"XLA blob header field 'extensions'"``).
    :raises UnknownOpTypeError: naming the first op type nobody defines and the distribution (or
        extension) that provides it.
    :raises BlobFormatError: when ``entries`` is not a list of such entries.
    """
    if not isinstance(entries, list) or not all(
        isinstance(e, dict) and isinstance(e.get("op"), str) and all(isinstance(v, str) for v in e.values())
        for e in entries
    ):
        raise BlobFormatError(f"{source} is {str(entries)[:200]}, not a list of {{op, extension, distribution}}")
    for entry in entries:
        op_type = entry["op"]
        if op_type not in OPS:
            load_installed()
        if op_type not in OPS:
            hint = missing_op_hint(op_type, entry) or "add the extension that defines it before importing"
            raise UnknownOpTypeError(f"{source}: the compiled model uses op {op_type}, which nobody defines: {hint}")
