"""Case recipes of the detection ops whose output shapes depend on the input values: NonZero (one column
per non-zero element) and NonMaxSuppression (one row per selected box). Their results are compared
shape first, then value by value, as every other case's.

NonMaxSuppression's cases keep away from ties a device may break either way: scores are distinct, and
the IoU and score thresholds are moved away from every IoU and score the case holds."""

from __future__ import annotations

import numpy as np

from hetero_sdk import opset
from hetero_sdk.conformance.case_builder import F16, F32, I32, I64, Builder, OpCase, key_case, recipe

_NONZERO_TYPES = (F32, I32, np.int8, np.bool_, F16)


@recipe("NonZero")
def _non_zero(b: Builder, op_type: str) -> OpCase:
    shape = b.shape(0, 3)
    dtype = b.pick(_NONZERO_TYPES)
    density = b.pick((0.5, 0.0, 1.0, 0.2))
    data = np.where(b.rng.random(shape) < density, b.values(shape, dtype, 1, 3), 0).astype(dtype)
    output_type = b.pick((I64, I32))
    node = opset.non_zero(b.input(data, "x"), output_type, name="op")
    return b.case(op_type, node, "exact", output_type=np.dtype(output_type).name, density=density)


@key_case("NonZero")
def _non_zero_of_a_matrix_with_negatives_and_an_empty_row() -> OpCase:
    """Row-major order over a 3-D tensor holding negative values and a row of zeros."""
    b = Builder.fixed(8)
    data = np.array([[[0, -1, 2], [0, 0, 0]], [[3, 0, 0], [0, 0, -4]]], np.float32)
    node = opset.non_zero(b.input(data, "x"), I64, name="op")
    return b.case("NonZero", node, "exact", output_type="int64", density=4 / 12)


def _iou(boxes: np.ndarray, center: bool) -> np.ndarray:
    """Pairwise IoU of ``[n, 4]`` boxes (corners in either order, or centers and sizes)."""
    if center:
        cx, cy, w, h = boxes.T
        y1, x1, y2, x2 = cy - h / 2, cx - w / 2, cy + h / 2, cx + w / 2
    else:
        y1, x1, y2, x2 = (np.minimum(boxes[:, 0], boxes[:, 2]), np.minimum(boxes[:, 1], boxes[:, 3]),
                          np.maximum(boxes[:, 0], boxes[:, 2]), np.maximum(boxes[:, 1], boxes[:, 3]))  # fmt: skip
    area = (y2 - y1) * (x2 - x1)
    inter_h = np.clip(np.minimum(y2[:, None], y2[None]) - np.maximum(y1[:, None], y1[None]), 0, None)
    inter_w = np.clip(np.minimum(x2[:, None], x2[None]) - np.maximum(x1[:, None], x1[None]), 0, None)
    inter = inter_h * inter_w
    union = area[:, None] + area[None] - inter
    return np.where(union > 0, inter / np.where(union > 0, union, 1), 0)


def _away(value: float, taken: np.ndarray, gap: float = 0.02) -> float:
    """``value``, or the closest point in [0, 1] at least ``gap`` from every value of ``taken``."""
    points = np.asarray(taken, np.float64).reshape(-1)
    for candidate in sorted(np.linspace(0.0, 1.0, 401), key=lambda c: abs(c - value)):
        if not points.size or np.min(np.abs(points - candidate)) >= gap:
            return float(candidate)
    return value


@recipe("NonMaxSuppression")
def _nms(b: Builder, op_type: str) -> OpCase:
    batches, classes, count = b.integer(1, 2), b.integer(1, 2), b.integer(1, 6)
    center = b.flag()
    corners = b.values([batches, count, 2], F32, 0, 4)
    sizes = b.values([batches, count, 2], F32, 0.5, 3)
    if center:
        boxes = np.concatenate([corners, sizes], -1)
    else:
        second = corners + sizes * np.where(b.rng.random([batches, count, 2]) < 0.2, -1, 1)  # some flipped
        boxes = np.concatenate([corners, second], -1)
    boxes = boxes.astype(F32)
    scores = (b.rng.permutation(batches * classes * count).reshape(batches, classes, count) + 1.0) / (
        batches * classes * count + 1
    )
    scores = scores.astype(F32)
    ious = np.concatenate([_iou(boxes[i], center).reshape(-1) for i in range(batches)])
    iou_threshold = _away(b.pick((0.5, 0.3, 0.7, 0.0)), ious)
    score_threshold = _away(b.pick((0.0, 0.2, 0.5)), scores)
    sigma = b.pick((0.0, 0.0, 0.5))
    most = b.integer(0, 5)
    sort = b.flag()
    output_type = b.pick((I64, I32))
    node = opset.non_max_suppression(
        b.input(boxes, "boxes"), b.input(scores, "scores"), opset.constant(np.array(most, I64)),
        opset.constant(np.array(iou_threshold, F32)), opset.constant(np.array(score_threshold, F32)),
        opset.constant(np.array(sigma, F32)) if sigma else None, "center" if center else "corner", sort, output_type,
        name="op",
    )  # fmt: skip
    attrs = {"max_boxes": most, "iou": iou_threshold, "score": score_threshold, "sigma": sigma, "sorted": sort}
    return b.case(op_type, node.outputs(), "transcendental", 1, center=center, **attrs)


@key_case("NonMaxSuppression")
def _nms_two_classes_overlapping_boxes() -> OpCase:
    """Two batches, two classes, overlapping boxes: a suppressed box, a box under the score threshold, and
    the result sorted by score across batches and classes."""
    b = Builder.fixed(9)
    boxes = np.array([[[0, 0, 2, 2], [0.1, 0.1, 2.1, 2.1], [3, 3, 4, 4], [0, 3, 1, 5]]] * 2, F32)
    boxes[1] = boxes[1][::-1]
    scores = np.array(
        [[[0.9, 0.8, 0.3, 0.05], [0.2, 0.7, 0.6, 0.4]], [[0.55, 0.25, 0.85, 0.45], [0.1, 0.35, 0.15, 0.65]]]
    )
    node = opset.non_max_suppression(
        b.input(boxes, "boxes"), b.input(scores.astype(F32), "scores"), opset.constant(np.array(3, I64)),
        opset.constant(np.array(0.5, F32)), opset.constant(np.array(0.1, F32)), None, "corner", True, I64,
        name="op",
    )  # fmt: skip
    attrs = {"max_boxes": 3, "iou": 0.5, "score": 0.1, "sigma": 0.0, "sorted": True}
    return b.case("NonMaxSuppression", node.outputs(), "transcendental", 1, center=False, **attrs)
