"""TopK on XLA matches the reference; NonZero, NonMaxSuppression and Unique run on XLA only when folded."""

from __future__ import annotations

import numpy as np
import pytest
from hetero_sdk import Model, Type, opset
from hetero_sdk.errors import UnsupportedOperationError
from hypothesis import given
from hypothesis import strategies as st
from xla_helpers import OPS, check_against_reference, core, floats, ints, many_ops, param, run_xla, shapes, single_op


@OPS
@given(
    data=st.data(),
    shape=shapes(min_dims=1, max_dims=3, max_side=6),
    dtype=st.sampled_from([np.float32, np.int32, np.uint8]),
)
def test_topk_modes_and_sorts_keep_lower_indices_first_on_ties(
    data: st.DataObject, shape: tuple[int, ...], dtype: type
) -> None:
    x = data.draw(floats(shape, dtype, -2, 2).map(np.round) if dtype == np.float32 else ints(shape, dtype, 0, 3))
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    k = data.draw(st.integers(0, shape[axis]))
    px = param(x)
    variants = [("max", "value", Type.i32), ("min", "value", Type.i64), ("max", "index", Type.i32)]
    variants += [("min", "index", Type.i32), ("max", "none", Type.i64)]
    nodes = [
        opset.topk(px, np.array(k, np.int64), axis, mode, sort, index_type, name=f"{mode}_{sort}")
        for mode, sort, index_type in variants
    ]
    check_against_reference(many_ops(nodes, [px]), [x])


def test_topk_closed_form() -> None:
    x = np.array([[1.0, 3.0, 3.0, 2.0]], np.float32)
    px = param(x)
    values, indices = run_xla(single_op(opset.topk(px, np.array(2, np.int32), 1, "max", "value"), [px]), [x])
    np.testing.assert_array_equal(values, [[3.0, 3.0]])
    np.testing.assert_array_equal(indices, [[1, 2]])


def _nms_model() -> Model:
    boxes = opset.parameter([1, 4, 4], Type.f32, name="boxes")
    scores = opset.parameter([1, 1, 4], Type.f32, name="scores")
    nms = opset.non_max_suppression(boxes, scores, np.array(3, np.int64), np.float32(0.5), np.float32(0.0), name="nms")
    return Model([nms.output(0)], [boxes, scores], name="nms")


def test_data_dependent_ops_are_rejected_with_the_reason() -> None:
    with pytest.raises(
        UnsupportedOperationError, match=r"NonMaxSuppression 'nms' \(its output shape depends on input values\)"
    ):
        core().compile_model(_nms_model(), "XLA")
    x = opset.parameter([4], Type.f32, name="x")
    with pytest.raises(UnsupportedOperationError, match="NonZero"):
        core().compile_model(Model([opset.non_zero(x)], [x]), "XLA")
    with pytest.raises(UnsupportedOperationError, match=r"Unique 'u' \(its output shape depends on input values\)"):
        core().compile_model(Model([opset.unique(x, name="u").output(0)], [x]), "XLA")


def test_data_dependent_ops_on_constants_fold_while_tracing() -> None:
    x = np.array([3.0, 0.0, 1.0], np.float32)
    px = param(x)
    nonzero = opset.non_zero(np.array([[0, 1], [2, 0]], np.float32), Type.i32, name="nonzero")
    scaled = opset.multiply(px, opset.convert(opset.reduce_sum(nonzero, [0, 1]), Type.f32), name="scaled")
    got = check_against_reference(many_ops([nonzero, scaled], [px]), [x])
    np.testing.assert_array_equal(got[0], [[0, 1], [1, 0]])
    np.testing.assert_array_equal(got[1], x * 2)


@OPS
@given(data=st.data(), mode=st.sampled_from(["avg", "max"]), aligned=st.sampled_from(["asymmetric", "half_pixel"]))
def test_roi_align(data: st.DataObject, mode: str, aligned: str) -> None:
    x = data.draw(floats((2, 2, 5, 6), np.float32, -3, 3))
    corners = data.draw(floats((3, 2), np.float32, -1, 5))
    rois = np.concatenate([corners, corners + data.draw(floats((3, 2), np.float32, 0, 4))], axis=1)
    batch = np.array([data.draw(st.integers(0, 1)) for _ in range(3)], np.int64)
    px, pr = param(x), param(rois, "rois")
    node = opset.roi_align(px, pr, opset.constant(batch), 2, 3, data.draw(st.integers(1, 3)), 0.75, mode, aligned)
    check_against_reference(single_op(node, [px, pr]), [x, rois], rtol=1e-4, atol=1e-4)
