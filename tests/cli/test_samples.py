"""The built-in sample models, recomputed here with plain numpy from their weights."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.lib.stride_tricks import sliding_window_view

import hetero_sdk as hs
from hetero_sdk.samples import SAMPLES, detection_model, get_sample
from hetero_sdk.serialization import model_to_bytes
from template_plugin import TemplatePlugin


def _constants(model: hs.Model) -> dict[str, np.ndarray]:
    return {n.friendly_name: n.get_attributes()["value"] for n in model.get_ops() if n.type_name == "Constant"}


def _run_on_template(model: hs.Model, x: np.ndarray) -> tuple[np.ndarray, ...]:
    core = hs.Core(plugins={"TEMPLATE": TemplatePlugin()}, autoload=False)
    return core.compile_model(model, "TEMPLATE")([x]).to_tuple()


def _conv_same(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    pad = w.shape[-1] // 2
    padded = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    windows = sliding_window_view(padded, w.shape[-2:], axis=(2, 3))
    return np.einsum("nchwij,ocij->nohw", windows, w.astype(np.float64))


def _pool2(x: np.ndarray) -> np.ndarray:
    n, c, h, w = x.shape
    return x.reshape(n, c, h // 2, 2, w // 2, 2).max(axis=(3, 5))


def _iou(a: np.ndarray, b: np.ndarray) -> float:
    ay1, ax1, ay2, ax2 = min(a[0], a[2]), min(a[1], a[3]), max(a[0], a[2]), max(a[1], a[3])
    by1, bx1, by2, bx2 = min(b[0], b[2]), min(b[1], b[3]), max(b[0], b[2]), max(b[1], b[3])
    inter = max(0.0, min(ay2, by2) - max(ay1, by1)) * max(0.0, min(ax2, bx2) - max(ax1, bx1))
    union = (ay2 - ay1) * (ax2 - ax1) + (by2 - by1) * (bx2 - bx1) - inter
    return inter / union if union > 0 else 0.0


def _greedy_nms(boxes: np.ndarray, scores: np.ndarray, keep: int, iou: float, threshold: float) -> list[tuple]:
    """(class, box, score) selected per class, then sorted by score descending."""
    chosen = []
    for c in range(scores.shape[0]):
        picked: list[int] = []
        for b in sorted(range(scores.shape[1]), key=lambda i: (-scores[c, i], i)):
            if scores[c, b] <= threshold or len(picked) == keep:
                break
            if all(_iou(boxes[b], boxes[p]) <= iou for p in picked):
                picked.append(b)
        chosen += [(c, b, scores[c, b]) for b in picked]
    return sorted(chosen, key=lambda t: (-t[2], t[0], t[1]))


def test_detection_sample_is_a_backbone_heads_and_nms_recomputed_in_numpy() -> None:
    model = get_sample("detection")
    weights = _constants(model)
    assert weights["box_head/scale"] == np.float32(0.25 / 8)
    x = np.random.default_rng(3).standard_normal((1, 3, 64, 64)).astype(np.float32)
    features = x.astype(np.float64)
    for stage in range(3):
        features = _pool2(np.maximum(_conv_same(features, weights[f"backbone{stage}/conv/weights"]), 0))
    assert features.shape == (1, 32, 8, 8)
    deltas = _conv_same(features, weights["box_head/conv/weights"]).reshape(1, 4, 64).transpose(0, 2, 1)
    rows, cols = np.divmod(np.arange(64), 8)
    cy, cx = (rows + 0.5) / 8, (cols + 0.5) / 8
    anchors = np.stack([cy - 1 / 8, cx - 1 / 8, cy + 1 / 8, cx + 1 / 8], axis=-1)
    boxes = (anchors + np.tanh(deltas[0]) * (0.25 / 8)).astype(np.float32)
    logits = _conv_same(features, weights["class_head/conv/weights"]) + weights["class_head/prior"]
    scores = (1 / (1 + np.exp(-logits.reshape(3, 64)))).astype(np.float32)

    expected = _greedy_nms(boxes, scores, keep=5, iou=0.5, threshold=0.25)
    indices, selected_scores, valid = _run_on_template(model, x)
    assert valid.tolist() == [len(expected)] and 0 < len(expected) <= 15
    assert indices.tolist() == [[0, c, b] for c, b, _ in expected]
    np.testing.assert_allclose(selected_scores[:, 2], [s for _, _, s in expected], rtol=1e-5)
    np.testing.assert_array_equal(selected_scores[:, :2], indices[:, :2].astype(np.float32))


def test_samples_are_byte_identical_on_every_build() -> None:
    for build in SAMPLES.values():
        assert model_to_bytes(build()) == model_to_bytes(build())


def test_detection_sample_seed_and_size() -> None:
    first = _constants(detection_model())
    other = _constants(detection_model(seed=1))
    assert not np.array_equal(first["backbone0/conv/weights"], other["backbone0/conv/weights"])
    assert detection_model(image_size=32).inputs[0].partial_shape.dims == (1, 3, 32, 32)
    with pytest.raises(ValueError, match="multiple of 8"):
        detection_model(image_size=60)


def test_mlp_sample_is_softmax_of_two_dense_layers() -> None:
    model = get_sample("mlp")
    w = _constants(model)
    x = np.random.default_rng(5).standard_normal((1, 64)).astype(np.float32)
    logits = np.maximum(x @ w["fc1/weights"] + w["fc1/bias"], 0) @ w["fc2/weights"] + w["fc2/bias"]
    expected = np.exp(logits - logits.max()) / np.exp(logits - logits.max()).sum()
    (probabilities,) = _run_on_template(model, x)
    np.testing.assert_allclose(probabilities, expected, rtol=1e-5, atol=1e-7)
    assert probabilities.shape == (1, 10)


def test_unknown_sample_lists_the_samples() -> None:
    assert sorted(SAMPLES) == ["detection", "mlp"]
    with pytest.raises(KeyError, match="no sample model 'resnet'; samples: detection, mlp"):
        get_sample("resnet")
