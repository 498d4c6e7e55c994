"""Which nodes of an ONNX graph translate: a rule of the op type and opset version (or an ONNX function
body) and, for a domain ONNX defines, ONNX's schema of the op at that version; an op type ONNX does
not define at all is read in the default domain where a rule (the SDK's or an extension's) translates
it, as ONNX Runtime registers some there (``SimplifiedLayerNormalization``). Listed before ONNX's
checker runs, so that every unsupported node is named in one error."""

from __future__ import annotations

import functools
from collections.abc import Collection, Mapping

import onnx

from hetero_sdk.errors import UnsupportedOperationError
from hetero_sdk.extensions import missing_op_hint
from hetero_sdk.frontend.onnx.functions import has_function
from hetero_sdk.frontend.onnx.rules import find_rule

__all__ = ["refuse_unsupported", "unsupported_nodes"]


def refuse_unsupported(
    graph: onnx.GraphProto,
    versions: Mapping[str, int],
    source: str,
    local_functions: Collection[tuple[str, str]] = (),
) -> None:
    """Raises for the nodes of ``graph`` that no rule translates, all of them in one message.

    :param versions: the opset version of each domain (``""`` for ``ai.onnx``).
    :param local_functions: ``(domain, name)`` of the model's own functions, whose calls count as
        translated (their bodies are checked once inlined).
    :raises UnsupportedOperationError: naming each node's op type, domain, opset version and name.
    """
    missing = unsupported_nodes(graph, {("" if d == "ai.onnx" else d): v for d, v in versions.items()}, local_functions)
    if missing:
        raise UnsupportedOperationError(
            f"{source}: {len(missing)} ONNX node(s) have no translation: {'; '.join(missing)}; "
            "hetero_sdk.frontend.onnx.supported_ops() lists the op types and opset versions that translate"
        )


def unsupported_nodes(
    graph: onnx.GraphProto, versions: Mapping[str, int], local_functions: Collection[tuple[str, str]] = ()
) -> list[str]:
    """Every node of ``graph`` and its sub-graphs that no rule translates, described for the error: an
    op of a domain ONNX defines counts only where ONNX has a schema for it at the imported version."""
    found = []
    for index, node in enumerate(graph.node):
        domain = "" if node.domain in ("", "ai.onnx") else node.domain
        version = versions.get(domain)
        where = f"domain {node.domain or 'ai.onnx'}, opset {version if version is not None else 'not imported'}"
        why = None if version is None else _no_schema(node.op_type, version, domain)
        if (
            why == _NOT_ONNX
            and version is not None
            and domain == ""
            and find_rule("", node.op_type, version) is not None
        ):
            why = None  # an op ONNX Runtime registers in the default domain, which a rule translates
        if (node.domain, node.op_type) not in local_functions and (
            version is None
            or why is not None
            or (find_rule(domain, node.op_type, version) is None and not has_function(node.op_type, version, domain))
        ):
            why = why or missing_op_hint(node.op_type, domain=domain)  # an extension's domain: what to install
            where += f": {why}" if why else ""
            found.append(f"{node.op_type} ({where}) node '{node.name or f'{node.op_type}_{index}'}'")
        for attribute in node.attribute:
            if attribute.HasField("g"):
                found += unsupported_nodes(attribute.g, versions, local_functions)
            for body in attribute.graphs:
                found += unsupported_nodes(body, versions, local_functions)
    return found


@functools.cache
def _onnx_domains() -> frozenset[str]:
    return frozenset(s.domain for s in onnx.defs.get_all_schemas())


def _no_schema(op_type: str, version: int, domain: str) -> str | None:
    """Why ONNX has no ``op_type`` at opset ``version`` of ``domain``, or None where it has one (or where
    ONNX defines nothing of ``domain``: other domains' ops are only ours to translate)."""
    if domain not in _onnx_domains() or onnx.defs.has(op_type, version, domain):
        return None
    history = onnx.defs.get_all_schemas_with_history()
    since = [s.since_version for s in history if (s.name, s.domain) == (op_type, domain)]
    return f"ONNX defines {op_type} from opset {min(since)} on" if since else _NOT_ONNX


_NOT_ONNX = "not an ONNX operator"
"""Why :func:`_no_schema` refuses an op type ONNX does not define at any version."""
