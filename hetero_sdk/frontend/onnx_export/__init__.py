"""The ONNX exporter: a :class:`~hetero_sdk.Model` of the opset written as an ONNX model, the inverse
of the ONNX frontend.

:func:`export_model` returns an ``onnx.ModelProto`` (for vendors whose runtime takes ONNX);
``hs.save_model(model, "model.onnx")`` writes one. Each op type is exported by a rule of the
``rules_*`` modules (one ONNX node, or a few where ONNX has no single counterpart); :func:`supported_ops`
lists them.
"""

from __future__ import annotations

import os
from pathlib import Path

import onnx
from onnx import helper

from hetero_sdk.element_type import Type
from hetero_sdk.errors import ModelFormatError, UnsupportedOperationError
from hetero_sdk.frontend.onnx_export import (  # noqa: F401  (each module registers its rules)
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
    rules_shape_manipulation,
    rules_signal,
    rules_slicing,
    rules_text,
)
from hetero_sdk.frontend.onnx_export.context import EXPORTERS
from hetero_sdk.frontend.onnx_export.exporter import GraphExporter
from hetero_sdk.graph.model import Model

__all__ = ["DEFAULT_OPSET", "MIN_EXPORT_OPSET", "export_model", "save_onnx", "supported_ops"]

DEFAULT_OPSET = min(21, onnx.defs.onnx_opset_version())
"""The ``ai.onnx`` opset written unless asked otherwise: 21, which ONNX Runtime runs from 1.18 on."""

MIN_EXPORT_OPSET = 18
"""The oldest opset written (reductions take their axes as inputs, Split its number of outputs)."""

PRODUCER = "hetero-sdk"


def export_model(model: Model, opset: int | None = None) -> onnx.ModelProto:
    """``model`` as an ONNX model, checked with ``onnx.checker``.

    Parameters and Results keep their tensor names as the graph's input and output names, nodes their
    friendly names (an op written as several ONNX nodes names the others ``name/OpType``); dynamic
    input dimensions become ``dim_param`` symbols (those read from a file kept, see
    :data:`hetero_sdk.rt_info.DIM_NAMES`); constants become initializers; If, Loop and Scan bodies
    become subgraphs.

    :param model: the model to export.
    :param opset: the ``ai.onnx`` opset version, from :data:`MIN_EXPORT_OPSET` to the newest the
        installed ``onnx`` knows; default :data:`DEFAULT_OPSET`.
    :returns: the ``onnx.ModelProto``; ``SerializeToString()`` gives the file's bytes.
    :raises UnsupportedOperationError: listing every node (bodies included) ONNX cannot express, each
        with its op type, friendly name and the reason; for an opset out of range; or for a stateful
        model (ReadValue and Assign: ONNX has no state).
    :raises ModelValidationError: when the model's structure is invalid.
    """
    version = DEFAULT_OPSET if opset is None else int(opset)
    newest = onnx.defs.onnx_opset_version()
    if not MIN_EXPORT_OPSET <= version <= newest:
        raise UnsupportedOperationError(
            f"cannot export to ONNX opset {version}; hetero-sdk writes opsets {MIN_EXPORT_OPSET} to {newest} "
            f"(the newest the installed onnx knows); the default is {DEFAULT_OPSET}"
        )
    model.validate()
    _refuse_state(model)
    _check_types(model, version)
    graph = GraphExporter(version).export(model)
    imports = [helper.make_opsetid("", version)]
    if any(node.domain == rules_text.ML_DOMAIN for node in graph.node):
        imports.append(helper.make_opsetid(rules_text.ML_DOMAIN, 4))
    proto = helper.make_model(
        graph, opset_imports=imports, producer_name=PRODUCER, ir_version=helper.find_min_ir_version_for(imports)
    )
    onnx.checker.check_model(proto)
    return proto


_TYPE_SINCE = {
    Type.f8e4m3: 19, Type.f8e5m2: 19, Type.f8e4m3fnuz: 19, Type.f8e5m2fnuz: 19, Type.i4: 21, Type.u4: 21,
    Type.f4e2m1: 23, Type.f8e8m0: 24, Type.i2: 25, Type.u2: 25,
}  # fmt: skip
"""The ONNX opset that introduced each element type newer than opset 18."""


def _refuse_state(model: Model) -> None:
    """Raises for a stateful model: ONNX graphs keep no state between runs."""
    state = [
        f"{n.type_name} '{n.friendly_name}'" for n in model.get_ordered_ops() if n.type_name in ("ReadValue", "Assign")
    ]
    if state:
        variables = ", ".join(v.variable_id for v in model.get_variables())
        raise UnsupportedOperationError(
            f"model '{model.friendly_name}' is stateful (variables: {variables}; nodes {', '.join(state)}) and ONNX "
            "has no state: ReadValue and Assign have no ONNX counterpart; export the model before "
            "hetero_sdk.make_stateful, with the state as inputs and outputs"
        )


def _check_types(model: Model, version: int) -> None:
    """Raises when a value of ``model`` has an element type that ONNX opset ``version`` lacks."""
    for node in model.get_ordered_ops():
        for index in range(node.get_output_size()):
            element_type = node.get_output_element_type(index)
            since = _TYPE_SINCE.get(element_type, 0)
            if since > version:
                raise UnsupportedOperationError(
                    f"{node.type_name} '{node.friendly_name}' gives {element_type.value} values, which ONNX has "
                    f"from opset {since}; export with opset={since} or newer"
                )


def save_onnx(model: Model, path: str | os.PathLike[str], opset: int | None = None) -> None:
    """Writes ``model`` as the ONNX file ``path`` (what ``hs.save_model(model, "x.onnx")`` does).

    Missing parent folders are created. Weights are stored inside the file, so a model must stay under
    protobuf's 2 GiB.

    :raises UnsupportedOperationError: as :func:`export_model`.
    :raises ModelFormatError: when the file cannot be written.
    """
    proto = export_model(model, opset)
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(proto.SerializeToString())
    except (OSError, ValueError) as exc:
        raise ModelFormatError(f"{path}: cannot write the ONNX model: {exc}") from exc


def supported_ops() -> list[str]:
    """The op types :func:`export_model` exports (besides Parameter, Constant and Result), sorted."""
    return sorted(EXPORTERS.names())
