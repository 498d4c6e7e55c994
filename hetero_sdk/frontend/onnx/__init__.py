"""The ONNX frontend: an ONNX model (a file, its bytes or an ``onnx.ModelProto``) translated into a
:class:`~hetero_sdk.Model` of the opset, as OpenVINO's ONNX frontend does.

Every op type and opset version the installed ``onnx`` knows, from opset 7 on, is translated by the
rules in :data:`~hetero_sdk.frontend.onnx.rules.RULES`; :func:`supported_ops` lists them.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

import onnx
import onnx.inliner

from hetero_sdk.errors import UnsupportedOperationError
from hetero_sdk.extensions import load_installed, onnx_rules
from hetero_sdk.frontend.input_spec import InputSpec
from hetero_sdk.frontend.onnx import (  # noqa: F401  (each module registers its rules)
    rules_basic,
    rules_control_flow,
    rules_convolution,
    rules_cumulative,
    rules_detection,
    rules_elementwise,
    rules_image,
    rules_indexing,
    rules_linear_algebra,
    rules_movement,
    rules_normalization,
    rules_pooling,
    rules_quantization,
    rules_recurrent,
    rules_reduction,
    rules_sequence,
    rules_shape_manipulation,
    rules_signal,
    rules_slicing,
    rules_text,
    rules_training,
)
from hetero_sdk.frontend.onnx.loader import check_proto, load_proto
from hetero_sdk.frontend.onnx.rules import RULES
from hetero_sdk.frontend.onnx.support import refuse_unsupported
from hetero_sdk.frontend.onnx.translator import GraphTranslator
from hetero_sdk.graph.model import Model
from hetero_sdk.shape import PartialShape
from hetero_sdk.transformations.freeze_inputs import simplify_frozen

__all__ = ["MIN_OPSET", "convert_onnx", "is_onnx", "supported_ops"]

MIN_OPSET = 7
"""The oldest ``ai.onnx`` opset version read (older models: upgrade with ``onnx.version_converter``)."""


def convert_onnx(
    model: str | os.PathLike[str] | bytes | onnx.ModelProto,
    input_shapes: Mapping[str, PartialShape | Sequence[int]] | Sequence[InputSpec] | None = None,
) -> Model:
    """Reads an ONNX model into a Model of the opset.

    :param model: a path to a ``.onnx`` file (external data beside it), the file's bytes, or a
        ``ModelProto``.
    :param input_shapes: shapes for some inputs (by name), used instead of the file's while
        translating: what is static then folds, and an ``If`` whose branches give different ranks
        can be resolved. Or what ``convert_model``'s ``input=`` sets (:class:`InputSpec`: shapes,
        element types, and values that freeze inputs: those inputs become constants while translating,
        so an ``If`` they decide translates only the branch it takes, and the model is folded).
    :raises ModelFormatError: for an unreadable, truncated or corrupted file, a name that is not UTF-8
        text, or external data missing or outside the model's folder.
    :raises ModelValidationError: for a graph that fails ONNX's checks, a node a rule rejects, an
        attribute outside its domain, or a declared size that would take more work than a limit of
        :mod:`hetero_sdk.graph.limits` allows (checked before that work starts).
    :raises UnsupportedOperationError: listing every node no rule translates (op type, domain, opset
        version and node name; checked before ONNX's checker, so that an op ONNX does not define is
        listed too), or an opset older than :data:`MIN_OPSET` or newer than the installed ``onnx`` knows.
    """
    loaded = load_proto(model)
    proto = loaded.proto
    versions = {entry.domain: entry.version for entry in proto.opset_import}
    _check_opsets(versions, loaded.source)
    refuse_unsupported(proto.graph, versions, loaded.source, {(f.domain, f.name) for f in proto.functions})
    check_proto(loaded)
    if proto.functions:  # their bodies' ops, now in the graph, are checked as the graph's were
        proto = onnx.inliner.inline_local_functions(proto)
        refuse_unsupported(proto.graph, versions, loaded.source)
    specs = (
        [InputSpec(name, PartialShape.of(shape)) for name, shape in input_shapes.items()]
        if isinstance(input_shapes, Mapping)
        else list(input_shapes or ())
    )
    converted = GraphTranslator(versions, loaded.source, specs, loaded.external).translate(proto)
    if any(spec.value is not None for spec in specs):
        simplify_frozen(converted)
    return converted


def _check_opsets(versions: Mapping[str, int], source: str) -> None:
    """Refuses an ``ai.onnx`` opset older than :data:`MIN_OPSET`, and an opset of a domain ONNX defines
    (``ai.onnx``, ``ai.onnx.ml``, ``ai.onnx.preview.training``...) outside the versions the installed
    ``onnx`` knows (their ops and changes are unknown to it and to the rules)."""
    default = versions.get("", versions.get("ai.onnx"))
    if default is not None and default < MIN_OPSET:
        raise UnsupportedOperationError(
            f"{source}: ONNX opset {default} is older than {MIN_OPSET}, the oldest hetero-sdk reads; "
            f"upgrade it with onnx.version_converter.convert_version(model, {MIN_OPSET})"
        )
    for domain, (oldest, known) in onnx.defs.C.schema_version_map().items():
        version = default if domain == "" else versions.get(domain)
        name = domain or "ai.onnx"
        if version is not None and version < oldest:
            raise UnsupportedOperationError(
                f"{source}: the model imports {name} opset {version}; {name} opsets start at {oldest}"
            )
        if version is not None and version > known:
            raise UnsupportedOperationError(
                f"{source}: the model imports {name} opset {version}, newer than {known}, the newest the installed "
                f"onnx {onnx.__version__} knows; install an onnx that knows opset {version} "
                f"(pip install -U onnx), or, where the model uses nothing newer, convert it with "
                f"onnx.version_converter.convert_version(model, {known})"
            )


def is_onnx(data: bytes) -> bool:
    """Whether ``data`` parses as an ONNX model with a graph (the content check of :func:`read_model`)."""
    proto = onnx.ModelProto()
    try:
        proto.ParseFromString(data)
    except Exception:
        return False
    return proto.HasField("graph") and proto.ir_version > 0


def supported_ops() -> dict[str, list[int]]:
    """Each translated ONNX op type (``domain:Op`` outside ``ai.onnx``) with the opset versions its
    rules start at, installed extensions' rules included."""
    found = {name: [r.since for r in rules] for name, rules in RULES.items()}
    load_installed()
    for rule in onnx_rules():
        key = rule.op_type if rule.domain in ("", "ai.onnx") else f"{rule.domain}:{rule.op_type}"
        found.setdefault(key, []).append(rule.since)
    return {name: sorted(set(versions)) for name, versions in found.items()}  # a replacing rule may repeat one
