"""The exporter as users meet it: ``hs.save_model(model, "x.onnx")``, names and dynamic dims kept,
control flow, resizing and detection ops the conformance kit draws no cases of, the error listing what
cannot be exported, and a real model's round trip. Values are checked against ONNX Runtime running the
exported file."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx.reference import ReferenceEvaluator
from onnx_models import conv_relu_model

import hetero_sdk as hs
from hetero_sdk import opset
from hetero_sdk.errors import ModelFormatError, UnsupportedOperationError
from hetero_sdk.frontend.onnx_export import DEFAULT_OPSET, export_model
from hetero_sdk.reference import evaluate
from hetero_sdk.rt_info import DIM_NAMES

F32 = hs.Type.f32


def onnxruntime(proto: onnx.ModelProto, inputs: dict[str, np.ndarray]) -> list[np.ndarray]:
    session = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    return [np.asarray(v) for v in session.run(None, inputs)]


def assert_same_everywhere(model: hs.Model, inputs: dict[str, np.ndarray], rtol: float = 1e-5) -> None:
    """TEMPLATE, ONNX Runtime on the export, and TEMPLATE on the export read back agree."""
    want = [np.asarray(v) for v in evaluate(model, inputs)]
    proto = export_model(model)
    for got in (onnxruntime(proto, inputs), [np.asarray(v) for v in evaluate(hs.convert_model(proto), inputs)]):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert g.shape == w.shape and g.dtype == w.dtype
            np.testing.assert_allclose(g, w, rtol=rtol, atol=1e-6)


def tiny(batch: int = 2) -> hs.Model:
    x = opset.parameter([batch, 4], F32, name="x")
    w = opset.constant(np.arange(12, dtype=np.float32).reshape(4, 3), name="w")
    y = opset.relu(opset.matmul(x, w, name="mm"), name="act")
    return hs.Model([opset.result(y, name="y")], [x], name="tiny")


def test_save_model_writes_onnx_for_the_onnx_suffix(tmp_path: Path) -> None:
    x = np.linspace(-1, 1, 8, dtype=np.float32).reshape(2, 4)
    hs.save_model(tiny(), tmp_path / "deep" / "tiny.onnx")
    proto = onnx.load(str(tmp_path / "deep" / "tiny.onnx"))
    assert proto.opset_import[0].version == DEFAULT_OPSET
    np.testing.assert_allclose(onnxruntime(proto, {"x": x})[0], np.maximum(x @ np.arange(12).reshape(4, 3), 0))
    again = hs.Core().read_model(tmp_path / "deep" / "tiny.onnx")
    np.testing.assert_allclose(evaluate(again, {"x": x})[0], np.maximum(x @ np.arange(12).reshape(4, 3), 0))


def test_save_model_keeps_the_native_format_and_refuses_other_suffixes(tmp_path: Path) -> None:
    hs.save_model(tiny(), tmp_path / "tiny.json")
    assert (tmp_path / "tiny.bin").exists()
    with pytest.raises(ModelFormatError, match=r"\.json, \.onnx and \.xml"):
        hs.save_model(tiny(), tmp_path / "tiny.pb")
    with pytest.raises(ModelFormatError, match="opset"):
        hs.save_model(tiny(), tmp_path / "tiny.json", opset=18)


def test_opset_is_chosen_and_checked() -> None:
    assert export_model(tiny(), opset=18).opset_import[0].version == 18
    with pytest.raises(UnsupportedOperationError, match="opset 7"):
        export_model(tiny(), opset=7)


def test_gelu_before_opset_20_is_written_with_erf() -> None:
    x = opset.parameter([3, 5], F32, name="x")
    model = hs.Model([opset.gelu(x, name="g")], [x], name="gelu")
    proto = export_model(model, opset=18)
    assert "Gelu" not in {n.op_type for n in proto.graph.node}
    values = np.linspace(-3, 3, 15, dtype=np.float32).reshape(3, 5)
    np.testing.assert_allclose(onnxruntime(proto, {"x": values})[0], evaluate(model, {"x": values})[0], atol=1e-6)


def test_names_and_dynamic_dims_are_kept() -> None:
    x = opset.parameter([-1, 4, -1], F32, name="images")
    x.get_rt_info()[DIM_NAMES] = ["batch", None, None]
    y = opset.relu(x, name="act")
    y.output(0).set_names({"scores"})
    proto = export_model(hs.Model([y], [x], name="named"))
    graph = proto.graph
    dims = graph.input[0].type.tensor_type.shape.dim
    assert graph.input[0].name == "images" and graph.output[0].name == "scores"
    assert dims[0].dim_param == "batch" and dims[1].dim_value == 4 and dims[2].dim_param
    assert [n.name for n in graph.node] == ["act"]
    again = hs.convert_model(proto)
    assert again.get_parameters()[0].get_rt_info()[DIM_NAMES][0] == "batch"
    assert again.outputs[0].names == {"scores"}


def test_unexportable_nodes_are_all_listed() -> None:
    x = opset.parameter([2, 3, 4], F32, name="x")
    order = opset.parameter([3], hs.Type.i64, name="order")
    a = opset.transpose(x, order, name="moved")
    b = opset.pad(x, [1, 0, 0], [0, 0, 1], pad_mode="symmetric", name="mirrored")
    model = hs.Model([a, b], [x, order], name="bad")
    with pytest.raises(UnsupportedOperationError) as info:
        export_model(model)
    message = str(info.value)
    assert "2 node(s)" in message and "Transpose 'moved'" in message and "Pad 'mirrored'" in message


def test_a_parameter_given_back_and_a_constant_output_get_their_own_tensors() -> None:
    x = opset.parameter([2], F32, name="x")
    c = opset.constant(np.array([1.0, 2.0], np.float32), name="c")
    model = hs.Model([opset.result(x, name="same"), opset.result(c, name="fixed")], [x], name="passthrough")
    values = np.array([3.0, 4.0], np.float32)
    got = onnxruntime(export_model(model), {"x": values})
    np.testing.assert_array_equal(got[0], values)
    np.testing.assert_array_equal(got[1], [1.0, 2.0])


# -- ops the conformance kit draws no cases of -----------------------------------------------------------


def test_if_runs_the_branch_its_condition_takes() -> None:
    cond = opset.parameter([], hs.Type.boolean, name="cond")
    x = opset.parameter([2, 3], F32, name="x")
    tx = opset.parameter([2, 3], F32, name="tx")
    then_body = hs.Model([opset.multiply(tx, opset.constant(np.float32(2)))], [tx], name="then")
    ex = opset.parameter([2, 3], F32, name="ex")
    else_body = hs.Model([opset.negative(ex)], [ex], name="else")
    model = hs.Model([opset.if_op(cond, then_body, else_body, inputs=[x], name="branch")], [cond, x], name="if")
    values = np.arange(6, dtype=np.float32).reshape(2, 3)
    for flag in (True, False):
        assert_same_everywhere(model, {"cond": np.array(flag), "x": values})


def test_loop_carries_and_stacks_values() -> None:
    x = opset.parameter([3], F32, name="x")
    step = opset.parameter([3], F32, name="step")
    i = opset.parameter([], hs.Type.i64, name="i")
    c = opset.parameter([], hs.Type.boolean, name="c")
    acc = opset.parameter([3], F32, name="acc")
    inv = opset.parameter([3], F32, name="inv")
    total = opset.add(acc, inv)
    body = hs.Model([c, total, opset.multiply(total, opset.convert(i, F32))], [i, c, acc, inv], name="body")
    trips = opset.constant(np.int64(4))
    node = opset.loop(trips, opset.constant(np.bool_(True)), body, carried=[x], invariant=[step], name="loop")
    model = hs.Model([node.output(0), node.output(1)], [x, step], name="loop")
    assert_same_everywhere(model, {"x": np.ones(3, np.float32), "step": np.array([1, 2, 3], np.float32)})


def test_scan_runs_over_slices() -> None:
    xs = opset.parameter([4, 2], F32, name="xs")
    init = opset.parameter([2], F32, name="init")
    scale = opset.parameter([2], F32, name="scale")
    state = opset.parameter([2], F32, name="state")
    piece = opset.parameter([2], F32, name="piece")
    factor = opset.parameter([2], F32, name="factor")
    new = opset.add(state, opset.multiply(piece, factor))
    body = hs.Model([new, opset.relu(new)], [state, piece, factor], name="body")
    node = opset.scan(body, [init], [xs], invariant=[scale], name="scan")
    model = hs.Model([node.output(0), node.output(1)], [xs, init, scale], name="scan")
    rng = np.random.default_rng(0)
    inputs = {
        "xs": rng.standard_normal((4, 2)).astype(np.float32),
        "init": np.zeros(2, np.float32),
        "scale": np.array([1.0, -2.0], np.float32),
    }
    assert_same_everywhere(model, inputs)


@pytest.mark.parametrize(
    ("mode", "by", "transform"),
    [
        ("nearest", "scales", "asymmetric"),
        ("linear_onnx", "sizes", "half_pixel"),
        ("linear_onnx", "scales", "align_corners"),
        ("cubic", "scales", "half_pixel"),
    ],
)
def test_interpolate_becomes_resize(mode: str, by: str, transform: str) -> None:
    x = opset.parameter([1, 2, 4, 5], F32, name="x")
    values = [2.0, 1.5] if by == "scales" else [8, 7]
    target = opset.constant(np.array(values, np.float32 if by == "scales" else np.int64))
    y = opset.interpolate(
        x,
        target,
        mode=mode,
        shape_calculation_mode=by,
        coordinate_transformation_mode=transform,
        nearest_mode="floor",
        axes=opset.constant(np.array([2, 3], np.int64)),
        name="resize",
    )
    model = hs.Model([y], [x], name="resize")
    assert_same_everywhere(model, {"x": np.random.default_rng(1).standard_normal((1, 2, 4, 5)).astype(np.float32)})


@pytest.mark.parametrize(("mode", "padding"), [("bilinear", "zeros"), ("bicubic", "border"), ("nearest", "reflection")])
def test_grid_sample_round_trips(mode: str, padding: str) -> None:
    rng = np.random.default_rng(3)
    x, g = opset.parameter([1, 2, 4, 5], F32, name="x"), opset.parameter([1, 3, 2, 2], F32, name="g")
    model = hs.Model([opset.grid_sample(x, g, mode, padding, True, name="sample")], [x, g], name="grid")
    inputs = {"x": rng.standard_normal((1, 2, 4, 5)).astype(np.float32)}
    inputs["g"] = rng.uniform(-1.2, 1.2, (1, 3, 2, 2)).astype(np.float32)
    assert_same_everywhere(model, inputs)


@pytest.mark.parametrize("transform", ["half_pixel_symmetric", "tf_crop_and_resize"])
def test_resize_round_trips_with_its_onnx_attributes(transform: str) -> None:
    x = opset.parameter([1, 2, 4, 5], F32, name="x")
    roi = opset.constant(np.array([-0.1, 0.2, 0.8, 1.1], np.float32)) if transform == "tf_crop_and_resize" else None
    y = opset.resize(x, opset.constant(np.array([3, 4], np.int64)), roi, shape_calculation_mode="sizes", axes=[2, 3],
                     mode="cubic", coordinate_transformation_mode=transform, antialias=True, name="resize")  # fmt: skip
    model = hs.Model([y], [x], name="resize")
    assert_same_everywhere(model, {"x": np.random.default_rng(1).standard_normal((1, 2, 4, 5)).astype(np.float32)})


@pytest.mark.parametrize("descending", [False, True])
def test_non_zero_and_nms(descending: bool) -> None:
    data = opset.parameter([3, 4], F32, name="data")
    boxes = opset.parameter([1, 5, 4], F32, name="boxes")
    scores = opset.parameter([1, 2, 5], F32, name="scores")
    nms = opset.non_max_suppression(
        boxes,
        scores,
        opset.constant(np.int64(3)),
        opset.constant(np.float32(0.5)),
        opset.constant(np.float32(0.1)),
        sort_result_descending=descending,
        name="nms",
    )
    model = hs.Model(
        [opset.non_zero(data, name="nz"), nms.output(0), nms.output(1), nms.output(2)], [data, boxes, scores], "det"
    )
    rng = np.random.default_rng(2)
    corners = rng.uniform(0, 10, (1, 5, 2)).astype(np.float32)
    inputs = {
        "data": (rng.standard_normal((3, 4)) > 0).astype(np.float32),
        "boxes": np.concatenate([corners, corners + rng.uniform(1, 4, (1, 5, 2)).astype(np.float32)], axis=2),
        "scores": rng.uniform(0, 1, (1, 2, 5)).astype(np.float32),
    }
    assert_same_everywhere(model, inputs)


def test_a_real_model_round_trips() -> None:
    original, _ = conv_relu_model()
    model = hs.convert_model(original)
    exported = export_model(model)
    assert exported.graph.input[0].type.tensor_type.shape.dim[0].dim_param == "batch"
    x = np.random.default_rng(3).standard_normal((2, 3, 8, 8)).astype(np.float32)
    want = onnxruntime(original, {"x": x})[0]
    np.testing.assert_allclose(onnxruntime(exported, {"x": x})[0], want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(evaluate(hs.convert_model(exported), {"x": x})[0], want, rtol=1e-5, atol=1e-5)


def test_a_stateful_model_is_refused_naming_its_state_ops() -> None:
    x = opset.parameter([2], np.float32, name="x")
    read = opset.read_value(None, "acc", [2], hs.Type.f32, name="read")
    total = opset.add(read, x, name="sum")
    model = hs.Model([total], [x], "acc", sinks=[opset.assign(total, "acc", name="write")])
    with pytest.raises(UnsupportedOperationError, match="variables: acc; nodes ReadValue 'read', Assign 'write'"):
        export_model(model)


_BOUNDS = st.sampled_from([-(2**63), -100, -6, -5, -4, -1, 0, 1, 3, 4, 5, 6, 100, 2**63 - 1])


@settings(max_examples=40, deadline=None, derandomize=True, database=None)
@given(start=_BOUNDS, stop=_BOUNDS, step=st.sampled_from([-3, -2, -1, 1, 2]), known=st.booleans())
def test_slice_exports_pythons_clamping_for_every_bound(start: int, stop: int, step: int, known: bool) -> None:
    # a start below -dim with a negative step is empty in Python, where ONNX alone would clamp it to 0;
    # ONNX Runtime reads an end of INT64_MAX with a negative step as "through the first element"
    x = np.arange(5, dtype=np.float32)
    data = opset.parameter([5], F32, name="x")
    bounds = [np.array([v], np.int64) for v in (start, stop, step)]
    if known:
        ports = [opset.constant(v) for v in bounds]
        feeds = {"x": x}
    else:
        ports = [opset.parameter([1], hs.Type.i64, name=n) for n in ("start", "stop", "step")]
        feeds = {"x": x, "start": bounds[0], "stop": bounds[1], "step": bounds[2]}
    sliced = opset.slice(data, *ports)
    model = hs.Model([opset.result(sliced, name="y")], [data, *(p for p in ports if not known)], name="slice")
    proto = export_model(model)
    np.testing.assert_array_equal(onnxruntime(proto, feeds)[0], x[start:stop:step])
    np.testing.assert_array_equal(ReferenceEvaluator(proto).run(None, feeds)[0], x[start:stop:step])


@pytest.mark.parametrize(("begin", "end", "stride"), [(-10, -100, -1), (-6, 0, -2), (-5, -100, -1), (-10, 3, 1)])
def test_strided_slice_exports_pythons_clamping(begin: int, end: int, stride: int) -> None:
    x = np.arange(5, dtype=np.float32)
    data = opset.parameter([5], F32, name="x")
    for masks in ({}, {"new_axis_mask": [0, 1]}):
        extra = [[0], [0], [1]] if masks else [[], [], []]  # the new axis's own (unused) bounds
        bounds = [opset.constant(np.array([v, *more], np.int64)) for v, more in zip((begin, end, stride), extra)]
        sliced = opset.strided_slice(data, *bounds, begin_mask=[0, 0], end_mask=[0, 0], **masks)
        model = hs.Model([opset.result(sliced, name="y")], [data], name="strided")
        want = x[begin:end:stride] if not masks else x[begin:end:stride][:, None]
        np.testing.assert_array_equal(onnxruntime(export_model(model), {"x": x})[0], want)
