"""A small single-shot detector: conv backbone, box and class heads on a grid of anchors, then NMS."""

from __future__ import annotations

import numpy as np

from hetero_sdk import opset
from hetero_sdk.element_type import Type
from hetero_sdk.graph import Model, Node, Output

__all__ = ["detection_model"]

_STAGES = (8, 16, 32)
"""Output channels of the backbone stages; each halves the spatial size."""
_BOX_GAIN = 0.3
"""The box head starts small, as detectors initialise it, so offsets are not saturated."""
_CLASS_GAIN = 0.7
"""The class head's scale: scores spread over (0, 1) rather than crowding 0 and 1."""
_CLASS_PRIOR = -1.5
"""The class logits' bias: most anchors score below the threshold, as in a real detector."""


def detection_model(
    image_size: int = 64,
    num_classes: int = 3,
    max_boxes_per_class: int = 5,
    iou_threshold: float = 0.5,
    score_threshold: float = 0.25,
    seed: int = 0,
) -> Model:
    """Builds the detection sample.

    The backbone is three stages of ``Convolution`` (3x3, same padding) + ``Relu`` + ``MaxPool``
    (2x2), so the feature map is ``image_size / 8`` on a side, one anchor per cell. A 1x1 box head
    predicts four offsets per anchor (``tanh``, scaled to a quarter of a cell) added to the anchor's
    corners ``[y1, x1, y2, x2]`` in ``[0, 1]`` image coordinates; a 1x1 class head gives
    ``sigmoid`` scores. ``NonMaxSuppression`` (opset9, corner encoding, sorted by score) selects
    the detections. Weights are He-initialised from ``seed``, so every build is identical.

    :param image_size: the side of the square input image ``[1, 3, image_size, image_size]``;
        a multiple of 8.
    :param num_classes: the number of classes scored per anchor.
    :param max_boxes_per_class: NMS's ``max_output_boxes_per_class``.
    :param iou_threshold: NMS's ``iou_threshold``.
    :param score_threshold: NMS's ``score_threshold``.
    :param seed: the seed of the weights.
    :returns: a model with input ``image`` and outputs ``selected_indices`` ``[?, 3]`` i64,
        ``selected_scores`` ``[?, 3]`` f32 and ``valid_outputs`` ``[1]`` i64.
    :raises ValueError: when ``image_size`` is not a positive multiple of 8.
    """
    if image_size <= 0 or image_size % 8:
        raise ValueError(f"image_size must be a positive multiple of 8, not {image_size}")
    rng = np.random.default_rng(seed)
    image = opset.parameter([1, 3, image_size, image_size], Type.f32, name="image")
    features: Node | Output = image
    channels = 3
    for stage, width in enumerate(_STAGES):
        conv = _conv(rng, features, channels, width, 3, f"backbone{stage}/conv")
        relu = opset.relu(conv, name=f"backbone{stage}/relu")
        pool = opset.max_pool(relu, [2, 2], [1, 1], [0, 0], [0, 0], [2, 2], name=f"backbone{stage}/pool")
        features = pool.output(0)
        channels = width
    cells = image_size // 8
    anchors = cells * cells

    deltas = _conv(rng, features, channels, 4, 1, "box_head/conv", gain=_BOX_GAIN)
    deltas = opset.transpose(
        opset.reshape(deltas, _shape([1, 4, anchors], "box_head/flat_shape"), False, name="box_head/flatten"),
        _shape([0, 2, 1], "box_head/order"),
        name="box_head/transpose",
    )
    offsets = opset.multiply(
        opset.tanh(deltas, name="box_head/tanh"),
        opset.constant(np.float32(0.25 / cells), name="box_head/scale"),
        name="box_head/offsets",
    )
    boxes = opset.add(offsets, opset.constant(_anchor_boxes(cells), name="anchors"), name="boxes")

    logits = opset.add(
        _conv(rng, features, channels, num_classes, 1, "class_head/conv", gain=_CLASS_GAIN),
        opset.constant(np.float32(_CLASS_PRIOR), name="class_head/prior"),
        name="class_head/logits",
    )
    flat_shape = _shape([1, num_classes, anchors], "class_head/flat_shape")
    logits = opset.reshape(logits, flat_shape, special_zero=False, name="class_head/flatten")
    scores = opset.sigmoid(logits, name="scores")

    nms = opset.non_max_suppression(
        boxes,
        scores,
        opset.constant(np.int64(max_boxes_per_class), name="nms/max_boxes"),
        opset.constant(np.float32(iou_threshold), name="nms/iou_threshold"),
        opset.constant(np.float32(score_threshold), name="nms/score_threshold"),
        box_encoding="corner",
        sort_result_descending=True,
        output_type=Type.i64,
        name="nms",
    )
    results = []
    for index, name in enumerate(("selected_indices", "selected_scores", "valid_outputs")):
        nms.output(index).set_names({name})
        results.append(opset.result(nms.output(index), name=f"{name}/result"))
    return Model(results, [image], name="detection")


def _conv(
    rng: np.random.Generator, data: Node | Output, c_in: int, c_out: int, kernel: int, name: str, gain: float = 1.0
) -> Node:
    weights = rng.standard_normal((c_out, c_in, kernel, kernel)) * gain * np.sqrt(2.0 / (c_in * kernel * kernel))
    pad = kernel // 2
    return opset.convolution(
        data,
        opset.constant(weights.astype(np.float32), name=f"{name}/weights"),
        strides=[1, 1],
        pads_begin=[pad, pad],
        pads_end=[pad, pad],
        dilations=[1, 1],
        name=name,
    )


def _shape(values: list[int], name: str) -> Node:
    """A named i64 constant: every node of the sample has a stable name, so its bytes (and cache
    keys) are the same on every build."""
    return opset.constant(np.array(values, np.int64), name=name)


def _anchor_boxes(cells: int) -> np.ndarray:
    """One square anchor, two cells wide, centred on each cell: ``[1, cells * cells, 4]`` corners."""
    centres = (np.arange(cells, dtype=np.float32) + 0.5) / cells
    cy, cx = np.meshgrid(centres, centres, indexing="ij")
    half = np.float32(1.0 / cells)
    corners = np.stack([cy - half, cx - half, cy + half, cx + half], axis=-1)
    return corners.reshape(1, cells * cells, 4).astype(np.float32)
