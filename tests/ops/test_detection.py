"""TopK, NonZero and NonMaxSuppression: inference, reference kernels against expectations written here."""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import hetero_sdk as hs
from hetero_sdk import opset
from hetero_sdk.errors import ModelValidationError
from hetero_sdk.ops import OPS
from hetero_sdk.reference import evaluate

FAST = settings(max_examples=40, deadline=None)


def run(node: hs.Node, params: list[hs.Node], *arrays: np.ndarray) -> list[np.ndarray]:
    """Evaluates every output of ``node`` with the reference kernels."""
    return evaluate(hs.Model(node.outputs(), params), list(arrays))


def expected_topk(x: np.ndarray, k: int, axis: int, mode: str, sort: str) -> tuple[np.ndarray, np.ndarray]:
    """TopK one slice at a time with Python's sorted: ties keep input order (the stable result)."""
    moved = np.moveaxis(x, axis, -1)
    values = np.empty((*moved.shape[:-1], k), x.dtype)
    indices = np.empty((*moved.shape[:-1], k), np.int64)
    for where in np.ndindex(moved.shape[:-1]):
        row = [float(v) for v in moved[where]]
        sign = -1 if mode == "max" else 1
        chosen = sorted(range(len(row)), key=lambda i: (sign * row[i], i))[:k]
        if sort == "index":
            chosen.sort()
        indices[where] = chosen
        values[where] = moved[where][chosen]
    return np.moveaxis(values, -1, axis), np.moveaxis(indices, -1, axis)


# -- TopK ------------------------------------------------------------------------------------------


@st.composite
def topk_cases(draw: st.DrawFn) -> tuple[np.ndarray, int, int]:
    dtype = draw(
        st.sampled_from([np.float32, np.float16, ml_dtypes.bfloat16, np.float64, np.int32, np.int64, np.uint8])
    )
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=6))
    x = draw(hnp.arrays(np.int8, shape, elements=st.integers(0, 4))).astype(dtype)  # small range: many ties
    axis = draw(st.integers(-len(shape), len(shape) - 1))
    k = draw(st.integers(0, shape[axis]))
    return x, axis, k


@FAST
@given(
    topk_cases(), st.sampled_from(["max", "min"]), st.sampled_from(["value", "index"]), st.sampled_from(["i32", "i64"])
)
def test_stable_topk_matches_a_stable_sort(case: tuple[np.ndarray, int, int], mode: str, sort: str, itype: str) -> None:
    x, axis, k = case
    data = opset.parameter(x.shape, x.dtype, name="data")
    node = opset.topk(data, k, axis, mode, sort, index_element_type=itype, stable=True)
    values, indices = run(node, [data], x)
    want_values, want_indices = expected_topk(x, k, axis, mode, sort)
    assert node.get_output_partial_shape(0) == list(want_values.shape)
    assert values.dtype == x.dtype and indices.dtype == np.dtype(itype.replace("i", "int"))
    np.testing.assert_array_equal(indices, want_indices)
    np.testing.assert_array_equal(values, want_values)


@FAST
@given(topk_cases(), st.sampled_from(["max", "min"]))
def test_unstable_topk_selects_extreme_values_at_their_indices(case: tuple[np.ndarray, int, int], mode: str) -> None:
    x, axis, k = case
    data = opset.parameter(x.shape, x.dtype, name="data")
    values, indices = run(opset.topk(data, k, axis, mode, "value"), [data], x)
    want_values, _ = expected_topk(x, k, axis, mode, "value")
    np.testing.assert_array_equal(values, want_values)
    np.testing.assert_array_equal(np.take_along_axis(x, indices.astype(np.int64), axis), values)
    rows = np.moveaxis(indices, axis, -1).reshape(-1, k) if k else []
    assert all(len(set(row)) == k for row in np.asarray(rows).tolist())


def test_topk_spec_example_min_sorted_by_index() -> None:
    x = np.array([5, 3, 1, 2, 5, 5], np.float32)
    data = opset.parameter([6], hs.Type.f32, name="data")
    values, indices = run(opset.topk(data, 4, 0, "min", "index", stable=True), [data], x)
    np.testing.assert_array_equal(values, [5, 3, 1, 2])
    np.testing.assert_array_equal(indices, [0, 1, 2, 3])


def test_topk_infers_k_from_a_constant_and_dynamic_k_otherwise() -> None:
    data = opset.parameter([2, 7, 3], hs.Type.f32, name="data")
    node = opset.topk(data, np.int32(4), -2, "max", "value")
    assert node.get_output_partial_shape(0) == [2, 4, 3]
    assert node.get_output_element_type(1) is hs.Type.i32
    k = opset.parameter([], hs.Type.i64, name="k")
    dynamic = opset.topk(data, k, 1, "min", "none", index_element_type=hs.Type.i64)
    assert dynamic.get_output_partial_shape(1) == [2, -1, 3]
    assert dynamic.get_output_element_type(1) is hs.Type.i64
    x = np.arange(42, dtype=np.float32).reshape(2, 7, 3)
    values, indices = run(dynamic, [data, k], x, np.array(2, np.int64))
    np.testing.assert_array_equal(indices, np.broadcast_to(np.array([0, 1])[None, :, None], (2, 2, 3)))
    np.testing.assert_array_equal(values, x[:, :2])


@pytest.mark.parametrize(
    ("k", "kwargs", "message"),
    [
        (9, {}, "exceeds dimension"),
        (-1, {}, "k must be >= 0"),
        (np.array([2]), {}, "k must be a scalar"),
        (np.float32(2), {}, "k has element type f32"),
        (2, {"axis": 3}, "axis 3 is out of range"),
        (2, {"mode": "largest"}, "attribute mode='largest'"),
        (2, {"sort": "ascending"}, "attribute sort='ascending'"),
        (2, {"index_element_type": hs.Type.f32}, "index_element_type"),
    ],
)
def test_topk_rejects_malformed_nodes(k: object, kwargs: dict[str, object], message: str) -> None:
    data = opset.parameter([2, 5], hs.Type.f32, name="data")
    args = {"axis": 1, "mode": "max", "sort": "value", **kwargs}
    with pytest.raises(ModelValidationError, match=rf"TopK 'bad'.*{message}"):
        opset.topk(data, k, name="bad", **args)  # type: ignore[arg-type]


def test_topk_rejects_boolean_data_and_scalars() -> None:
    with pytest.raises(ModelValidationError, match=r"TopK 'b'.*data has element type boolean"):
        opset.topk(opset.parameter([3], hs.Type.boolean), 1, 0, "max", "value", name="b")
    with pytest.raises(
        ModelValidationError, match=r"TopK 's'.*axis 0 is out of range for rank 0; a scalar has no axis"
    ):
        opset.topk(opset.parameter([], hs.Type.f32), 1, 0, "max", "value", name="s")


# -- NonZero ---------------------------------------------------------------------------------------


@FAST
@given(
    hnp.arrays(np.int8, hnp.array_shapes(min_dims=1, max_dims=4, min_side=0, max_side=5), elements=st.integers(0, 2)),
    st.sampled_from([np.float32, np.int32, np.int64, np.uint8, np.bool_, np.float16, ml_dtypes.bfloat16]),
    st.sampled_from(["i32", "i64"]),
)
def test_non_zero_lists_indices_in_row_major_order(raw: np.ndarray, dtype: type, output_type: str) -> None:
    x = raw.astype(dtype)
    data = opset.parameter(x.shape, x.dtype, name="data")
    node = opset.non_zero(data, output_type)
    (out,) = run(node, [data], x)
    want = np.array(np.nonzero(x)).reshape(x.ndim, -1)
    assert out.dtype == np.dtype(output_type.replace("i", "int"))
    np.testing.assert_array_equal(out, want)
    assert node.get_output_partial_shape(0).compatible(out.shape)


def test_non_zero_shapes() -> None:
    assert opset.non_zero(opset.parameter([2, 3])).get_output_partial_shape(0) == [2, -1]
    assert opset.non_zero(opset.parameter([2, 0, 3])).get_output_partial_shape(0) == [3, 0]
    scalar = opset.parameter([], hs.Type.f32, name="s")
    node = opset.non_zero(scalar)
    assert node.get_output_partial_shape(0) == [1, -1]
    assert run(node, [scalar], np.array(2.5, np.float32))[0].tolist() == [[0]]
    assert run(node, [scalar], np.array(0.0, np.float32))[0].shape == (1, 0)
    assert OPS.get("NonZero").data_dependent


def test_non_zero_rejects_a_float_output_type() -> None:
    with pytest.raises(ModelValidationError, match=r"NonZero 'nz'.*output_type"):
        opset.non_zero(opset.parameter([2]), hs.Type.f32, name="nz")


# -- NonMaxSuppression -------------------------------------------------------------------------------

# The ONNX NonMaxSuppression test boxes: two clusters of three overlapping boxes, and a lone box.
CORNER_BOXES = [[0, 0, 1, 1], [0, 0.1, 1, 1.1], [0, -0.1, 1, 0.9], [0, 10, 1, 11], [0, 10.1, 1, 11.1], [0, 100, 1, 101]]
CENTER_BOXES = [
    [0.5, 0.5, 1, 1],
    [0.5, 0.6, 1, 1],
    [0.5, 0.4, 1, 1],
    [0.5, 10.5, 1, 1],
    [0.5, 10.6, 1, 1],
    [0.5, 100.5, 1, 1],
]
SCORES = [0.9, 0.75, 0.6, 0.95, 0.5, 0.3]


def nms(boxes: np.ndarray, scores: np.ndarray, *thresholds: object, **attrs: object) -> list[np.ndarray]:
    b = opset.parameter(boxes.shape, boxes.dtype, name="boxes")
    s = opset.parameter(scores.shape, scores.dtype, name="scores")
    return run(opset.non_max_suppression(b, s, *thresholds, **attrs), [b, s], boxes, scores)  # type: ignore[arg-type]


@pytest.mark.parametrize(("boxes", "encoding"), [(CORNER_BOXES, "corner"), (CENTER_BOXES, "center")])
def test_nms_keeps_the_best_box_of_each_cluster(boxes: list[list[float]], encoding: str) -> None:
    b = np.array([boxes], np.float32)
    s = np.array([[SCORES]], np.float32)
    indices, scores, valid = nms(b, s, 3, 0.5, 0.0, box_encoding=encoding)
    assert indices.tolist() == [[0, 0, 3], [0, 0, 0], [0, 0, 5]]
    np.testing.assert_allclose(scores, [[0, 0, 0.95], [0, 0, 0.9], [0, 0, 0.3]], rtol=1e-6)
    assert valid.tolist() == [3]


def test_nms_accepts_any_diagonal_pair_of_corners() -> None:
    flipped = np.array([[[y2, x2, y1, x1] for y1, x1, y2, x2 in CORNER_BOXES]], np.float32)
    indices, _, _ = nms(flipped, np.array([[SCORES]], np.float32), 3, 0.5, 0.0)
    assert indices[:, 2].tolist() == [3, 0, 5]


def test_nms_limits_boxes_per_class_and_drops_scores_at_the_threshold() -> None:
    b, s = np.array([CORNER_BOXES], np.float32), np.array([[SCORES]], np.float32)
    assert nms(b, s, 2, 0.5, 0.0)[0][:, 2].tolist() == [3, 0]
    assert nms(b, s, 10, 0.5, 0.3)[0][:, 2].tolist() == [3, 0]  # 0.3 is not above 0.3
    assert nms(b, s, 10, 1.0, 0.0)[0][:, 2].tolist() == [3, 0, 1, 2, 4, 5]  # nothing overlaps above 1
    assert nms(b, s)[2].tolist() == [0]  # max_output_boxes_per_class defaults to 0


def test_soft_nms_decays_overlapping_scores() -> None:
    boxes = np.array([[[0, 0, 2, 2], [0, 1, 2, 3], [5, 5, 6, 6]]], np.float32)  # IoU(0, 1) = 2 / 6
    scores = np.array([[[0.9, 0.8, 0.1]]], np.float32)
    indices, selected, valid = nms(boxes, scores, 10, 0.0, 0.0, 0.5)
    decayed = 0.8 * math.exp(-0.5 * (1 / 3) ** 2 / 0.5)
    assert indices.tolist() == [[0, 0, 0], [0, 0, 1], [0, 0, 2]]
    np.testing.assert_allclose(selected[:, 2], [0.9, decayed, 0.1], rtol=1e-6)
    assert valid.tolist() == [3]
    indices, _, _ = nms(boxes, scores, 10, 0.0, 0.75, 0.5)  # the decayed score falls below the threshold
    assert indices[:, 2].tolist() == [0]


def test_nms_orders_across_batches_and_classes_or_per_class() -> None:
    boxes = np.array([[[0, 0, 1, 1], [0, 2, 1, 3]], [[0, 0, 1, 1], [0, 2, 1, 3]]], np.float32)
    scores = np.array([[[0.2, 0.7], [0.9, 0.1]], [[0.8, 0.3], [0.7, 0.6]]], np.float32)
    by_score, _, _ = nms(boxes, scores, 5, 0.5, 0.0)
    assert by_score.tolist() == [[0, 1, 0], [1, 0, 0], [0, 0, 1], [1, 1, 0], [1, 1, 1], [1, 0, 1], [0, 0, 0], [0, 1, 1]]
    grouped, _, _ = nms(boxes, scores, 5, 0.5, 0.0, sort_result_descending=False, output_type="i32")
    assert grouped.dtype == np.int32
    assert grouped.tolist() == [[0, 0, 1], [0, 0, 0], [0, 1, 0], [0, 1, 1], [1, 0, 0], [1, 0, 1], [1, 1, 0], [1, 1, 1]]


def brute_force_nms(
    boxes: np.ndarray, scores: np.ndarray, limit: int, iou_threshold: float, score_threshold: float, sigma: float
) -> list[tuple[int, int, int, float]]:
    """The greedy NMS of the spec, one box at a time in plain Python (corner boxes, sorted output)."""

    def iou(a: list[float], b: list[float]) -> float:
        ay1, ay2, ax1, ax2 = min(a[0], a[2]), max(a[0], a[2]), min(a[1], a[3]), max(a[1], a[3])
        by1, by2, bx1, bx2 = min(b[0], b[2]), max(b[0], b[2]), min(b[1], b[3]), max(b[1], b[3])
        area_a, area_b = (ay2 - ay1) * (ax2 - ax1), (by2 - by1) * (bx2 - bx1)
        if area_a <= 0 or area_b <= 0:
            return 0.0
        inter = max(min(ay2, by2) - max(ay1, by1), 0) * max(min(ax2, bx2) - max(ax1, bx1), 0)
        return inter / (area_a + area_b - inter)

    out = []
    for batch in range(scores.shape[0]):
        for cls in range(scores.shape[1]):
            pool = {i: float(s) for i, s in enumerate(scores[batch, cls]) if s > score_threshold}
            kept: list[int] = []
            while pool and len(kept) < limit:
                best = max(pool, key=lambda i: (pool[i], -i))
                out.append((batch, cls, best, pool.pop(best)))
                kept.append(best)
                for i in list(pool):
                    overlap = iou(boxes[batch, best].tolist(), boxes[batch, i].tolist())
                    if sigma > 0:
                        pool[i] *= math.exp(-0.5 * overlap * overlap / sigma)
                        if pool[i] <= score_threshold:
                            del pool[i]
                    elif overlap > iou_threshold:
                        del pool[i]
    return sorted(out, key=lambda r: (-r[3], r[0], r[1], r[2]))


@FAST
@given(
    st.integers(1, 2),
    st.integers(1, 3),
    st.integers(1, 8),
    st.integers(0, 6),
    st.floats(0, 1),
    st.floats(0, 0.5),
    st.sampled_from([0.0, 0.3, 1.0]),
    st.integers(0, 2**32 - 1),
)
def test_nms_matches_brute_force_greedy_selection(
    batches: int, classes: int, count: int, limit: int, iou_t: float, score_t: float, sigma: float, seed: int
) -> None:
    rng = np.random.default_rng(seed)
    boxes = rng.uniform(0, 4, (batches, count, 4)).astype(np.float32)
    scores = rng.uniform(0, 1, (batches, classes, count)).astype(np.float32)
    indices, selected, valid = nms(boxes, scores, limit, np.float32(iou_t), np.float32(score_t), np.float32(sigma))
    want = brute_force_nms(
        boxes.astype(np.float64), scores, limit, float(np.float32(iou_t)), float(np.float32(score_t)), sigma
    )
    assert indices.tolist() == [[b, c, i] for b, c, i, _ in want]
    np.testing.assert_allclose(selected, np.array([[b, c, s] for b, c, _, s in want]).reshape(-1, 3), rtol=1e-5)
    assert valid.tolist() == [len(want)]


def test_nms_output_types_and_shapes() -> None:
    b = opset.parameter([2, 10, 4], hs.Type.f16, name="b")
    s = opset.parameter([2, 3, 10], hs.Type.f16, name="s")
    node = opset.non_max_suppression(b, s, 5, output_type="i32")
    assert node.get_input_size() == 3
    assert [node.get_output_element_type(i) for i in range(3)] == [hs.Type.i32, hs.Type.f32, hs.Type.i32]
    assert [node.get_output_partial_shape(i) for i in range(3)] == [[-1, 3], [-1, 3], [1]]
    assert opset.non_max_suppression(b, s, soft_nms_sigma=0.5).get_input_size() == 6
    assert OPS.get("NonMaxSuppression").data_dependent


@pytest.mark.parametrize(
    ("boxes", "scores", "extra", "attrs", "message"),
    [
        ([2, 10], [2, 1, 10], (), {}, "boxes has rank 2"),
        ([2, 10, 5], [2, 1, 10], (), {}, r"boxes must have shape \[num_batches, num_boxes, 4\]"),
        ([2, 10, 4], [3, 1, 10], (), {}, "num_batches"),
        ([2, 10, 4], [2, 1, 9], (), {}, "num_boxes"),
        ([2, 10, 4], [2, 1, 10], (np.float32(3),), {}, "max_output_boxes_per_class has element type f32"),
        ([2, 10, 4], [2, 1, 10], (3, np.int64(1)), {}, "iou_threshold has element type i64"),
        ([2, 10, 4], [2, 1, 10], (3, 0.5, np.zeros(2, np.float32)), {}, "score_threshold must be a scalar"),
        ([2, 10, 4], [2, 1, 10], (), {"box_encoding": "xyxy"}, "box_encoding"),
        ([2, 10, 4], [2, 1, 10], (), {"output_type": "f32"}, "output_type"),
    ],
)
def test_nms_rejects_malformed_nodes(
    boxes: list[int], scores: list[int], extra: tuple[object, ...], attrs: dict[str, object], message: str
) -> None:
    b, s = opset.parameter(boxes, hs.Type.f32), opset.parameter(scores, hs.Type.f32)
    with pytest.raises(ModelValidationError, match=rf"NonMaxSuppression 'bad'.*{message}"):
        opset.non_max_suppression(b, s, *extra, name="bad", **attrs)  # type: ignore[arg-type]


def test_nms_rejects_integer_boxes() -> None:
    with pytest.raises(ModelValidationError, match=r"NonMaxSuppression 'bad'.*boxes has element type i32"):
        opset.non_max_suppression(opset.parameter([1, 2, 4], hs.Type.i32), opset.parameter([1, 1, 2]), name="bad")


def _unique_by_hand(items: list, sort: bool) -> tuple[list, list[int], list[int], list[int]]:
    """Unique's four outputs for a list of hashable items, written out with a dict."""
    first: dict = {}
    for i, item in enumerate(items):
        first.setdefault(item, i)
    order = sorted(first) if sort else list(first)
    position = {item: p for p, item in enumerate(order)}
    counts = [sum(1 for item in items if item == u) for u in order]
    return order, [first[u] for u in order], [position[item] for item in items], counts


@settings(max_examples=25, deadline=None)
@given(rank=st.integers(1, 3), sort=st.booleans(), use_axis=st.booleans(), seed=st.integers(0, 2**16))
def test_unique_finds_distinct_elements_or_slices(rank: int, sort: bool, use_axis: bool, seed: int) -> None:
    rng = np.random.default_rng(seed)
    shape = [int(d) for d in rng.integers(1, 4, rank)]
    x = rng.integers(-1, 2, shape).astype(np.float32)
    axis = int(rng.integers(-rank, rank)) if use_axis else None
    if axis is None:
        items = [float(v) for v in x.reshape(-1)]
    else:
        items = [tuple(np.take(x, i, axis=axis).reshape(-1).tolist()) for i in range(shape[axis])]
    order, first, inverse, counts = _unique_by_hand(items, sort)
    if axis is None:
        values = np.array(order, np.float32)
    else:
        values = np.stack([np.take(x, first_at, axis=axis) for first_at in first], axis=axis)
    px = opset.parameter(shape, hs.Type.f32, name="x")
    node = opset.unique(px, axis, sort, hs.Type.i32, hs.Type.i64, name="u")
    model = hs.Model([node.output(i) for i in range(4)], [px])
    got = list(hs.Core().compile_model(model, "TEMPLATE").create_infer_request().infer({"x": x}).values())
    np.testing.assert_array_equal(got[0], values)
    assert [got[1].tolist(), got[2].tolist(), got[3].tolist()] == [first, inverse, counts]
    assert [g.dtype for g in got[1:]] == [np.int32, np.int32, np.int64]


def test_unique_infers_what_it_can_and_names_a_bad_axis() -> None:
    px = opset.parameter([2, 3], hs.Type.f32, name="x")
    node = opset.unique(px, 1)
    assert [str(node.get_output_partial_shape(i)) for i in range(4)] == ["[2,?]", "[?]", "[3]", "[?]"]
    flat = opset.unique(px, sorted=False)
    assert str(flat.get_output_partial_shape(2)) == "[6]"
    with pytest.raises(ModelValidationError, match=r"Unique 'u': axis 2 is out of range for rank 2"):
        opset.unique(px, 2, name="u")
