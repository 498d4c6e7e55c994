"""Every op of the opset, exported to ONNX: ONNX Runtime running the exported model computes what
TEMPLATE computes on the same inputs, and the exported model read back by our own frontend too.

The cases are the conformance kit's (small models around one op, drawn by hypothesis over shapes,
attributes, element types and values). The ops that cannot be exported are listed with the reason."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnxruntime as ort
import pytest
from hypothesis import HealthCheck, assume, given, settings
from onnx.reference import ReferenceEvaluator

import hetero_sdk as hs
from hetero_sdk.conformance.compare import mismatches
from hetero_sdk.conformance.op_cases import OpCase, strategy_for
from hetero_sdk.errors import UnsupportedOperationError
from hetero_sdk.frontend.onnx_export import export_model, supported_ops
from hetero_sdk.ops import OPS, sdk_op_types
from hetero_sdk.reference import evaluate

CASES = settings(
    max_examples=12, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck)
)

NOT_EXPORTABLE: dict[str, str] = {}
"""Op types no ONNX model can express, with the reason (none: every op type has a rule)."""

PARTLY_EXPORTABLE = {
    "StridedSlice": "masks need constant begin, end and strides",
    "Gather": "batch_dims other than 0",
    "Pad": "pad_mode 'symmetric'",
    "Interpolate": "OpenVINO's 'linear' mode, the Pillow modes and nearest_mode 'simple'",
    "If": "branches of different ranks as a graph output (ONNX graph outputs need a rank)",
    "NonMaxSuppression": "Soft-NMS (soft_nms_sigma other than 0)",
    "Transpose": "a non-constant input_order",
    "AvgPool": "ceil rounding whose last window starts in the end padding (ONNX drops that window)",
    "MaxPool": "ceil rounding whose last window starts in the end padding (ONNX drops that window)",
    "BitwiseLeftShift": "signed integers (ONNX's BitShift shifts unsigned ones)",
    "BitwiseRightShift": "signed integers (ONNX's BitShift shifts unsigned ones)",
    "CumProd": "ONNX opsets before 26, where ONNX defines it",
    "BitCast": "ONNX opsets before 26, where ONNX defines it",
    "ReverseSequence": "batch and sequence axes other than 0 and 1 (ONNX's are)",
    "GridSample": "ONNX opsets before 16 (5-D data before 20)",
    "Resize": "ONNX opsets before 19, which lack its attributes",
    "Col2Im": "ONNX opsets before 18, where ONNX defines it",
    "DeformableConvolution": "bilinear_interpolation_pad=False (ONNX's DeformConv reads zeros past the edges), "
    "auto_pad same_* on dynamic spatial dims, ONNX opsets before 19",
    "STFT": "ONNX opsets before 17, where ONNX defines it; a frame_size or window length not static",
    "MelWeightMatrix": "ONNX opsets before 17, where ONNX defines it",
    "ROIAlign": "aligned_mode 'half_pixel_for_nn', which ONNX lacks",
    "DepthToSpace": "data of other than 4-D (ONNX's is [N, C, H, W] only)",
    "SpaceToDepth": "data of other than 4-D (ONNX's is [N, C, H, W] only); mode 'depth_first' before ONNX opset 28",
    "LRN": "windows over other axes than an NCHW tensor's channels, or of an even size (what ONNX Runtime runs)",
}
"""Op types exported for most attribute values; the others raise UnsupportedOperationError naming why."""

ORT_GAPS = ("NOT_IMPLEMENTED", "Could not find an implementation")
"""ONNX Runtime lacks kernels for some element types of some ops (f16 Erf, i32 Sin...): those cases
run on ONNX's reference evaluator instead, still an implementation independent of ours."""


def ort_departs(case: OpCase) -> bool:
    """Cases where ONNX Runtime 1.32 departs from the ONNX spec (found by the conformance kit's triage; ONNX's
    reference evaluator cannot run these either): a ``tf_crop_and_resize`` Resize to the image's own size
    ignores the crop, and StringSplit departs from Python's ``str.split``, which the kit's cases follow (it
    strips the whitespace left after the last of ``maxsplit`` splits, and splits empty strings otherwise)."""
    if case.op_type == "Resize":  # a crop to the image's own size: ONNX Runtime ignores the crop
        return case.attrs.get("transform") == "tf_crop_and_resize"
    if case.op_type != "StringSplit":
        return False
    limited = case.attrs.get("maxsplit") not in (None, -1)
    empty = any(np.any(np.asarray(v, dtype=object) == "") for v in case.inputs.values())
    return limited or empty


def compute_op_types() -> list[str]:
    return [t for t in sdk_op_types() if not OPS.get(t).structural]


def run_onnx(proto: Any, inputs: dict[str, np.ndarray]) -> list[np.ndarray]:
    """The exported model run by ONNX Runtime (or, where it lacks a kernel, ONNX's reference evaluator)."""
    feeds = {i.name: _strings_as_objects(inputs[i.name]) for i in proto.graph.input}
    try:
        session = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    except Exception as exc:
        if "Failed to construct locale" in str(exc):
            pytest.skip("ONNX Runtime's StringNormalizer needs the en_US.UTF-8 locale, which this machine lacks")
        if not any(gap in str(exc) for gap in ORT_GAPS):
            raise
        return [_objects_as_strings(np.asarray(v)) for v in ReferenceEvaluator(proto).run(None, feeds)]
    return [_objects_as_strings(np.asarray(v)) for v in session.run(None, feeds)]


def _strings_as_objects(value: np.ndarray) -> np.ndarray:
    """ONNX Runtime takes strings as object arrays of ``str``, not numpy's StringDType."""
    return value.astype(object) if value.dtype.kind in "TU" else value


def _objects_as_strings(value: np.ndarray) -> np.ndarray:
    """ONNX Runtime's string outputs (object arrays) as the SDK's ``string`` tensors."""
    return value.astype(hs.Type.string.numpy) if value.dtype == object or value.dtype.kind == "U" else value


def check(case: OpCase, got: list[np.ndarray], want: list[np.ndarray], what: str) -> None:
    problems = mismatches(got, want, case.rtol, case.atol)
    assert not problems, f"{what}: {case!r}\n" + "\n".join(problems)


def test_every_compute_op_has_a_rule_or_a_reason() -> None:
    exported = set(supported_ops())
    assert {t for t in compute_op_types() if t not in exported} == set(NOT_EXPORTABLE)


@pytest.mark.parametrize("op_type", compute_op_types())
def test_onnxruntime_on_the_export_computes_what_template_computes(op_type: str) -> None:
    strategy = strategy_for(op_type)
    if strategy is None:
        pytest.skip(f"the conformance kit has no cases of {op_type}; test_export_model.py exports it")
    if op_type in NOT_EXPORTABLE:
        pytest.skip(NOT_EXPORTABLE[op_type])

    @CASES
    @given(case=strategy)
    def run(case: OpCase) -> None:
        assume(not ort_departs(case))
        try:
            proto = export_model(case.model)
        except UnsupportedOperationError as exc:
            assert op_type in PARTLY_EXPORTABLE, f"{case!r}: {exc}"
            return
        want = [np.asarray(v) for v in evaluate(case.model, case.inputs)]
        check(case, run_onnx(proto, case.inputs), want, "ONNX Runtime on the export")
        again = hs.convert_model(proto)
        got = [np.asarray(v) for v in evaluate(again, case.inputs)]
        check(case, got, want, "the export read back by the frontend")

    run()
