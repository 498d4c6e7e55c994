"""What ORT claims: an op the public ONNX exporter writes (:data:`TABLE`) and ONNX Runtime loads (:class:`Prober`).

Each compute op is probed alone: a model of just that op (its Constant inputs kept, its other inputs
as Parameters of the same type and shape) is exported and opened in a session. A probe's answer is
cached by the op's type, attributes, input types and shapes and constant values, so a model's repeated
ops, and the next query of the same model, cost nothing.
"""

from __future__ import annotations

import hashlib
import sys
import threading

import numpy as np
from hetero_sdk import Model, Node, Type, opset
from hetero_sdk.plugin import Limit, SupportTable, constant_value
from hetero_sdk.plugin import onnx_exportable_ops as supported_ops

from hetero_sdk_ort.session import onnx_bytes, open_session

__all__ = ["TABLE", "UNSUPPORTED_TYPES", "Prober", "probe_cache_size"]

UNSUPPORTED_TYPES = frozenset({Type.bf16})
"""Element types ORT leaves to other devices: ONNX Runtime takes no bfloat16 numpy arrays."""

_TYPES = set(Type) - UNSUPPORTED_TYPES

_TRANSPOSED_A_TIMES_VECTOR = Limit(
    "transpose_a and a 1-D B (ONNX Runtime 1.32's Transpose+MatMul fusion computes it wrong)",
    lambda node: not (node.attrs["transpose_a"] and node.input_value(0).partial_shape.rank != 1
                      and node.input_value(1).partial_shape.rank == 1),
)  # fmt: skip
"""Found by the conformance kit's MatMul key case: the exported Transpose -> MatMul is right (ONNX
Runtime computes it right with graph optimizations off), the fused FusedMatMul is not."""

_INTERPOLATE_AS_THE_REFERENCE = Limit(
    "the pillow modes, and antialias with cubic or linear_onnx (exported as ONNX Resize, which ONNX Runtime "
    "1.32 computes otherwise than the SDK's reference)",
    lambda node: not (node.attrs["mode"].endswith("_pillow")
                      or (node.attrs["antialias"] and node.attrs["mode"] in ("cubic", "linear_onnx"))),
)  # fmt: skip
_INTERPOLATE_NOT_EMPTY = Limit(
    "an output axis of length 0 (ONNX Runtime refuses the scale 0 the exporter writes for it)",
    lambda node: 0 not in node.get_output_partial_shape(0).dims,
)
"""Found by the conformance kit's Interpolate cases, whose triage said "the reference and ONNX Runtime
differ, and the device agrees with ONNX Runtime": an SDK (exporter) question, declined here meanwhile."""

_LOOP_COUNT_KNOWN = Limit(
    "a trip count that is not a non-negative constant (OpenVINO's -1 means no limit, ONNX Runtime runs no "
    "iteration for it, and the exporter passes the value on)",
    lambda node: (count := constant_value(node.input_value(0))) is not None and int(count.reshape(-1)[0]) >= 0,
)
"""Found by the conformance kit's Loop cases (their triage: "the reference and ONNX Runtime differ")."""

_SPLIT_ON_WHITESPACE = Limit(
    "a delimiter or a maxsplit (ONNX Runtime splits an empty string into no parts where Python's str.split, "
    "ONNX's definition and the SDK's reference, gives one, and keeps leading whitespace when maxsplit is set)",
    lambda node: node.attrs["delimiter"] == "" and node.attrs["maxsplit"] < 0,
)
"""Found by the conformance kit's StringSplit cases."""

_CROP_CHANGES_SIZE = Limit(
    "tf_crop_and_resize to an axis's own length (ONNX Runtime copies the image then, ignoring the crop)",
    lambda node: (
        node.attrs["coordinate_transformation_mode"] != "tf_crop_and_resize"
        or all(
            node.get_output_partial_shape(0)[axis] != node.input_value(0).partial_shape[axis]
            for axis in node.attrs["axes"]
        )
    ),
)
"""Found by the conformance kit's thorough profile, then by a Resize key case."""

TABLE = (
    SupportTable("ORT")
    .add(supported_ops(), element_types=_TYPES)
    .add("MatMul", element_types=_TYPES, limits=[_TRANSPOSED_A_TIMES_VECTOR])
    .add("Interpolate", element_types=_TYPES, limits=[_INTERPOLATE_AS_THE_REFERENCE, _INTERPOLATE_NOT_EMPTY])
    .add("Loop", element_types=_TYPES, limits=[_LOOP_COUNT_KNOWN])
    .add("Resize", element_types=_TYPES, limits=[_CROP_CHANGES_SIZE])
    .add("StringSplit", element_types=_TYPES, limits=[_SPLIT_ON_WHITESPACE])
)
"""ORT's supported ops: those the public ONNX exporter writes, on every element type but bfloat16, with
MatMul's one known wrong case, the Interpolate modes ONNX Runtime computes otherwise, Loops whose trip count
may be -1, crops to an axis's own length and StringSplit with a delimiter or a maxsplit declined."""

_cache: dict[tuple[object, ...], str | None] = {}
_lock = threading.Lock()


class Prober:
    """The in-context check of :meth:`TABLE.query <hetero_sdk.plugin.SupportTable.query>` on ``model``:
    why ONNX Runtime does not load an op as the exporter writes it, or None when it does.

    Probes rewire ops of a private clone of ``model``, made on the first probe the cache cannot answer.
    """

    def __init__(self, model: Model) -> None:
        self._model = model
        self._clone: dict[str, Node] | None = None

    def __call__(self, node: Node) -> str | None:
        key = _signature(node)
        with _lock:
            if key in _cache:
                return _cache[key]
        if self._clone is None:
            self._clone = {n.friendly_name: n for n in self._model.clone().get_ops()}
        try:
            open_session(onnx_bytes(_alone(self._clone[node.friendly_name])), threads=1)
            answer = None
        except Exception as exc:  # an export refused or a kernel ONNX Runtime lacks: not ORT's to run
            first = (str(exc).strip().splitlines() or [""])[0][:200]
            answer = f"ONNX Runtime does not load it as exported ({type(exc).__name__}: {first})"
        with _lock:
            _cache[key] = answer
        return answer


def probe_cache_size() -> int:
    """How many op signatures have been probed."""
    return len(_cache)


def _alone(node: Node) -> Model:
    parameters = []
    for index, source in enumerate(node.input_values()):
        if source.node.get_type_name() == "Constant":
            continue
        parameter = opset.parameter(list(source.partial_shape), source.element_type, name=f"probe_input_{index}")
        node.set_input(index, parameter.output(0))
        parameters.append(parameter)
    results = [opset.result(port, name=f"probe_output_{i}") for i, port in enumerate(node.outputs())]
    return Model(results, parameters, name=f"probe_{node.get_type_name()}")


def _signature(node: Node) -> tuple[object, ...]:
    inputs = []
    for source in node.input_values():
        entry: list[object] = [source.element_type.value, tuple(source.partial_shape)]
        if source.node.get_type_name() == "Constant":
            value = np.ascontiguousarray(source.node.get_attributes()["value"])
            entry.append(hashlib.sha256(value.tobytes()).hexdigest())
        inputs.append(tuple(entry))
    with np.printoptions(threshold=sys.maxsize):  # an abbreviated array would make two ops look alike
        attributes = repr(sorted(node.get_attributes().items()))
    return node.get_type_name(), attributes, tuple(inputs)
