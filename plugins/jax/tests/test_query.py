"""``query_model`` claims what XLA compiles: static ops, folded shape subgraphs, never data-dependent shapes."""

from __future__ import annotations

import numpy as np
from hetero_sdk import Model, Type, opset
from xla_helpers import core, run_xla


def _detection_model() -> Model:
    image = opset.parameter([1, 3, 8, 8], Type.f32, name="image")
    features = opset.relu(
        opset.convolution(image, np.ones((4, 3, 3, 3), np.float32), [2, 2], [1, 1], [1, 1], [1, 1], name="conv"),
        name="relu",
    )
    flat = opset.reshape(
        features,
        opset.concat(
            [
                opset.constant(np.array([1, -1], np.int64), name="lead"),
                opset.constant(np.array([4], np.int64), name="four"),
            ],
            0,
            name="pattern",
        ),
        special_zero=False,
        name="flat",
    )
    boxes = opset.sigmoid(flat, name="boxes")
    scores = opset.reshape(
        opset.reduce_mean(flat, [2], keep_dims=False, name="mean"), [1, 1, -1], special_zero=False, name="scores"
    )
    nms = opset.non_max_suppression(boxes, scores, np.array(5, np.int64), np.float32(0.5), name="nms")
    picked = opset.gather(
        opset.reshape(boxes, [-1, 4], special_zero=False, name="rows"),
        opset.gather(nms.output(0), [2], 1, name="box_index"),
        0,
        name="picked",
    )
    return Model([picked, scores], [image], name="detector")


def test_query_claims_static_ops_but_not_nms_or_what_follows_it() -> None:
    model = _detection_model()
    claimed = core().query_model(model, "XLA")
    assert {"image", "conv", "relu", "flat", "pattern", "lead", "four", "boxes", "mean", "scores"} <= set(claimed)
    assert not {"nms", "box_index", "picked"} & set(claimed)
    assert set(claimed.values()) == {"XLA"}
    results = [r.friendly_name for r in model.get_results()]
    assert results[1] in claimed and results[0] not in claimed


def test_query_does_not_change_the_model_and_names_the_device_id_when_asked() -> None:
    model = _detection_model()
    before = [(n.friendly_name, n.type_name, dict(n.get_rt_info())) for n in model.get_ops()]
    claimed = core().query_model(model, "XLA.0")
    assert set(claimed.values()) == {"XLA.0"}
    assert [(n.friendly_name, n.type_name, dict(n.get_rt_info())) for n in model.get_ops()] == before


def test_query_claims_everything_of_a_model_it_runs_fully_and_compiles_it() -> None:
    x = opset.parameter([2, 3, 4], Type.f32, name="x")
    shape = opset.shape_of(x, name="shape")
    rest = opset.constant(np.array([-1], np.int64), name="rest")
    target = opset.concat([opset.gather(shape, [0], 0, name="batch"), rest], 0, name="target")
    flat = opset.reshape(x, target, special_zero=False, name="flat")
    model = Model([opset.softmax(flat, 1, name="softmax")], [x], name="full")
    claimed = core().query_model(model, "XLA")
    assert set(claimed) == {n.friendly_name for n in model.get_ops()}
    assert run_xla(model, [np.ones((2, 3, 4), np.float32)])[0].shape == (2, 12)


def test_query_claims_models_with_dynamic_input_dimensions() -> None:
    x = opset.parameter([-1, 4], Type.f32, name="x")
    model = Model([opset.relu(opset.matmul(x, np.eye(4, dtype=np.float32), name="mm"), name="relu")], [x])
    assert {"x", "mm", "relu"} <= set(core().query_model(model, "XLA"))


def test_query_claims_shape_operands_given_as_inputs_but_not_computed_from_data_shapes() -> None:
    x = opset.parameter([2, 3], Type.f32, name="x")
    k = opset.parameter([], Type.i64, name="k")
    found = opset.non_zero(x, name="found")
    topk = opset.topk(x, k, 1, "max", "value", name="topk")  # k is compiled in, per value
    count = opset.gather(opset.shape_of(found, name="found_shape"), np.int64(1), 0, name="count")
    capped = opset.topk(x, opset.minimum(count, np.int64(3), name="cap"), 1, "max", "value", name="capped")
    model = Model([topk.output(0), capped.output(0)], [x, k])
    claimed = core().query_model(model, "XLA")
    assert "topk" in claimed and "k" in claimed
    assert not {"found", "capped"} & set(claimed)
