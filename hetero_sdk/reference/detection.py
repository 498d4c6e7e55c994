"""Reference kernels of the sorting and detection ops."""

from __future__ import annotations

import numpy as np

from hetero_sdk.graph.node import Node
from hetero_sdk.reference.registry import kernel


@kernel("TopK")
def topk(node: Node, data: np.ndarray, k: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    axis = node.attrs["axis"] % data.ndim
    count = int(k)
    moved = np.moveaxis(data, axis, -1)
    size = moved.shape[-1]
    if count > size:
        raise ValueError(f"TopK '{node.friendly_name}': k={count} exceeds the axis dimension ({size})")
    if node.attrs["mode"] == "min":
        order = np.argsort(moved, axis=-1, kind="stable")
    else:  # stable descending: sort the reversed slice ascending, then reverse back
        order = size - 1 - np.flip(np.argsort(np.flip(moved, -1), axis=-1, kind="stable"), -1)
    indices = order[..., :count]
    if node.attrs["sort"] == "index":
        indices = np.sort(indices, axis=-1)
    values = np.take_along_axis(moved, indices, -1)
    return np.moveaxis(values, -1, axis), np.moveaxis(indices, -1, axis)


@kernel("NonZero")
def non_zero(node: Node, data: np.ndarray) -> np.ndarray:
    flat = np.atleast_1d(data)
    return np.stack(np.nonzero(flat)) if flat.size else np.zeros((flat.ndim, 0), np.int64)


def _corners(boxes: np.ndarray, encoding: str) -> np.ndarray:
    """``[..., 4]`` boxes as ``(y_min, x_min, y_max, x_max)``."""
    if encoding == "center":
        xc, yc, w, h = np.moveaxis(boxes, -1, 0)
        boxes = np.stack([yc - h / 2, xc - w / 2, yc + h / 2, xc + w / 2], -1)
    y1, x1, y2, x2 = np.moveaxis(boxes, -1, 0)
    return np.stack([np.minimum(y1, y2), np.minimum(x1, x2), np.maximum(y1, y2), np.maximum(x1, x2)], -1)


def _iou(box: np.ndarray, others: np.ndarray) -> np.ndarray:
    area = (box[2] - box[0]) * (box[3] - box[1])
    areas = (others[:, 2] - others[:, 0]) * (others[:, 3] - others[:, 1])
    height = np.maximum(np.minimum(box[2], others[:, 2]) - np.maximum(box[0], others[:, 0]), 0)
    width = np.maximum(np.minimum(box[3], others[:, 3]) - np.maximum(box[1], others[:, 1]), 0)
    inter = height * width
    with np.errstate(invalid="ignore", divide="ignore"):
        iou = inter / (area + areas - inter)
    return np.where((area <= 0) | (areas <= 0), 0.0, iou)


def _scalar(value: np.ndarray | None, default: float) -> float:
    return default if value is None else float(np.asarray(value).reshape(-1)[0])


def _select(
    boxes: np.ndarray, scores: np.ndarray, limit: int, iou_threshold: float, score_threshold: float, sigma: float
) -> list[tuple[float, int]]:
    """Greedy selection for one batch and class: ``(score, box index)`` in selection order."""
    current = scores.astype(np.float64)
    alive = current > score_threshold
    picked: list[tuple[float, int]] = []
    while len(picked) < limit and alive.any():
        candidates = np.flatnonzero(alive)
        best = int(candidates[np.argmax(current[candidates])])  # first maximum: lowest index on ties
        alive[best] = False
        picked.append((float(current[best]), best))
        rest = np.flatnonzero(alive)
        iou = _iou(boxes[best], boxes[rest])
        if sigma > 0:
            current[rest] *= np.exp(-0.5 * iou * iou / sigma)
            alive[rest] = current[rest] > score_threshold
        else:
            alive[rest] = iou <= iou_threshold
    return picked


@kernel("NonMaxSuppression")
def non_max_suppression(
    node: Node,
    boxes: np.ndarray,
    scores: np.ndarray,
    max_output_boxes_per_class: np.ndarray | None = None,
    iou_threshold: np.ndarray | None = None,
    score_threshold: np.ndarray | None = None,
    soft_nms_sigma: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    limit = max(int(_scalar(max_output_boxes_per_class, 0)), 0)
    iou_limit = _scalar(iou_threshold, 0.0)
    score_limit = _scalar(score_threshold, 0.0)
    sigma = _scalar(soft_nms_sigma, 0.0)
    corners = _corners(boxes.astype(np.float64), node.attrs["box_encoding"])
    rows: list[tuple[float, int, int, int]] = []
    for batch in range(scores.shape[0]):
        for cls in range(scores.shape[1]):
            picked = _select(corners[batch], scores[batch, cls], limit, iou_limit, score_limit, sigma)
            rows.extend((score, batch, cls, box) for score, box in picked)
    if node.attrs["sort_result_descending"]:
        rows.sort(key=lambda row: (-row[0], row[1], row[2], row[3]))
    indices = np.array([[b, c, i] for _, b, c, i in rows], np.int64).reshape(-1, 3)
    selected_scores = np.array([[b, c, s] for s, b, c, _ in rows], np.float64).reshape(-1, 3)
    return indices, selected_scores, np.array([len(rows)], np.int64)


@kernel("Unique")
def unique(node: Node, data: np.ndarray, *axis: np.ndarray) -> tuple[np.ndarray, ...]:
    at = int(axis[0].reshape(-1)[0]) % data.ndim if axis else None
    source = data if at is not None else data.reshape(-1)
    values, first, inverse, counts = np.unique(
        source, return_index=True, return_inverse=True, return_counts=True, axis=at, equal_nan=False
    )
    inverse = inverse.reshape(-1)
    if not node.attrs["sorted"]:  # the order of first occurrence
        order = np.argsort(first, kind="stable")
        position = np.empty_like(order)
        position[order] = np.arange(order.size)
        values, first, counts, inverse = (
            np.take(values, order, axis=at or 0),
            first[order],
            counts[order],
            position[inverse],
        )
    return values, first, inverse, counts
