"""The translation of whole graphs: names as the spec fixes them, dynamic and symbolic dimensions,
sub-graphs (If folded or kept, captured outer tensors), input shapes given while converting, and the
round trip through the native format."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import helper
from onnx_models import check, conv_relu_model, graph_model, run_ort, value_info

import hetero_sdk as hs
from hetero_sdk import rt_info
from hetero_sdk.errors import ModelValidationError, UnsupportedOperationError


def _run(model: hs.Model, device: str, **inputs: np.ndarray) -> dict[str, np.ndarray]:
    results = hs.Core().compile_model(model, device)(inputs)
    return {port.any_name: results[port.any_name] for port in model.outputs}


def test_inputs_outputs_initializers_and_nodes_keep_their_onnx_names() -> None:
    model, _ = conv_relu_model()
    converted = hs.convert_model(model)
    assert [p.friendly_name for p in converted.get_parameters()] == ["x"]
    assert [o.any_name for o in converted.outputs] == ["y"]
    names = {n.friendly_name for n in converted.get_ops()}
    assert {"conv", "relu", "pool", "w", "b"} <= names


def test_empty_and_repeated_node_names_are_made_unique() -> None:
    nodes = [
        helper.make_node("Relu", ["x"], ["a"], name="same"),
        helper.make_node("Neg", ["a"], ["b"], name="same"),
        helper.make_node("Abs", ["b"], ["y"]),
    ]
    converted = hs.convert_model(
        graph_model(nodes, [value_info("x", np.float32, [3])], [value_info("y", np.float32, [3])], 17)
    )
    names = [n.friendly_name for n in converted.get_ops() if n.type_name not in ("Parameter", "Result")]
    assert len(names) == len(set(names)) == 3
    assert "same" in names and "Abs_2" in names
    x = np.array([-1.0, 2.0, -3.0], np.float32)
    np.testing.assert_array_equal(_run(converted, "TEMPLATE", x=x)["y"], np.abs(-np.maximum(x, 0)))


def test_an_input_given_back_and_one_tensor_under_two_output_names_keep_each_name() -> None:
    nodes = [
        helper.make_node("Identity", ["x"], ["x_again"]),
        helper.make_node("Relu", ["x"], ["r"]),
        helper.make_node("Identity", ["r"], ["r_alias"]),
    ]
    outputs = [value_info(n, np.float32, [2]) for n in ("x_again", "r", "r_alias")]
    converted = hs.convert_model(graph_model(nodes, [value_info("x", np.float32, [2])], outputs, 17))
    assert [o.any_name for o in converted.outputs] == ["x_again", "r", "r_alias"]
    x = np.array([-1.0, 2.0], np.float32)
    results = _run(converted, "TEMPLATE", x=x)
    np.testing.assert_array_equal(results["x_again"], x)
    np.testing.assert_array_equal(results["r"], [0.0, 2.0])
    np.testing.assert_array_equal(results["r_alias"], [0.0, 2.0])


def test_symbolic_and_unknown_dims_stay_dynamic_with_their_names() -> None:
    nodes = [helper.make_node("Relu", ["x"], ["y"])]
    model = graph_model(
        nodes, [value_info("x", np.float32, ["batch", None, 4])], [value_info("y", np.float32, ["batch", None, 4])], 17
    )
    converted = hs.convert_model(model)
    parameter = converted.get_parameters()[0]
    assert parameter.get_output_partial_shape(0) == hs.PartialShape([-1, -1, 4])
    assert parameter.get_rt_info()[rt_info.DIM_NAMES] == ["batch", None, None]
    for shape in [(1, 2, 4), (3, 5, 4)]:
        x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
        for device in ("TEMPLATE", "XLA"):
            np.testing.assert_array_equal(_run(converted, device, x=x)["y"], np.maximum(x, 0))


def test_an_input_with_an_initializer_is_a_constant() -> None:
    nodes = [helper.make_node("Add", ["x", "bias"], ["y"])]
    inputs = [value_info("x", np.float32, [2]), value_info("bias", np.float32, [2])]
    model = graph_model(
        nodes, inputs, [value_info("y", np.float32, [2])], 17, {"bias": np.array([10.0, 20.0], np.float32)}
    )
    converted = hs.convert_model(model)
    assert [p.friendly_name for p in converted.get_parameters()] == ["x"]
    np.testing.assert_array_equal(_run(converted, "TEMPLATE", x=np.ones(2, np.float32))["y"], [11.0, 21.0])


# -- If, captured tensors -----------------------------------------------------------------------


def _branch(name: str, op: str, output: str, rank: int = 1) -> onnx.GraphProto:
    node = helper.make_node(op, ["x"], [output], name=f"{name}_op")  # reads x from the enclosing graph
    return helper.make_graph([node], name, [], [value_info(output, np.float32, [None] * rank)])


def test_an_if_on_a_static_shape_is_replaced_by_its_branch() -> None:
    nodes = [
        helper.make_node("Shape", ["x"], ["shape"]),
        helper.make_node("Size", ["shape"], ["rank"]),
        helper.make_node("Equal", ["rank", "two"], ["is_matrix"]),
        helper.make_node(
            "If",
            ["is_matrix"],
            ["y"],
            then_branch=_branch("then", "Relu", "t", 2),
            else_branch=_branch("else", "Neg", "e", 2),
        ),
    ]
    model = graph_model(
        nodes,
        [value_info("x", np.float32, ["n", 3])],
        [value_info("y", np.float32, [None, 3])],
        17,
        {"two": np.array(2, np.int64)},
    )
    converted = hs.convert_model(model)
    assert "If" not in {n.type_name for n in converted.get_ops()}
    x = np.array([[-1.0, 2.0, -3.0]], np.float32)
    np.testing.assert_array_equal(_run(converted, "TEMPLATE", x=x)["y"], np.maximum(x, 0))


def _runtime_if_model() -> onnx.ModelProto:
    then_body = helper.make_graph(
        [helper.make_node("Mul", ["x", "scale"], ["t"])], "then", [], [value_info("t", np.float32, [None])]
    )
    nodes = [helper.make_node("If", ["flag"], ["y"], then_branch=then_body, else_branch=_branch("else", "Neg", "e"))]
    return graph_model(
        nodes,
        [value_info("flag", np.bool_, []), value_info("x", np.float32, ["n"])],
        [value_info("y", np.float32, ["n"])],
        17,
        {"scale": np.array(3.0, np.float32)},
    )


@pytest.mark.parametrize("device", ["TEMPLATE", "XLA", "HETERO:XLA,TEMPLATE"])
def test_an_if_on_a_value_runs_the_branch_the_value_picks(device: str) -> None:
    converted = hs.convert_model(_runtime_if_model())
    assert [n.type_name for n in converted.get_ops()].count("If") == 1
    compiled = hs.Core().compile_model(converted, device)
    x = np.array([1.0, -2.0], np.float32)
    np.testing.assert_array_equal(compiled({"flag": np.array(True), "x": x})["y"], 3 * x)
    np.testing.assert_array_equal(compiled({"flag": np.array(False), "x": x})["y"], -x)


def _rank_changing_if_model() -> onnx.ModelProto:
    """``y = squeeze(x, -1)`` when x's last dimension is 1, else ``relu(x)``: rank 1 or 2 by a dynamic shape."""
    squeeze = helper.make_graph(
        [helper.make_node("Squeeze", ["x", "last"], ["s"])], "then", [], [value_info("s", np.float32, [None])]
    )
    nodes = [
        helper.make_node("Shape", ["x"], ["shape"]),
        helper.make_node("Gather", ["shape", "last"], ["width"]),
        helper.make_node("Equal", ["width", "one"], ["is_one"]),
        helper.make_node("If", ["is_one"], ["y"], then_branch=squeeze, else_branch=_branch("else", "Relu", "e", 2)),
    ]
    initializers = {"last": np.array([-1], np.int64), "one": np.array([1], np.int64)}
    return graph_model(
        nodes,
        [value_info("x", np.float32, [4, "w"])],
        [value_info("y", np.float32, [None])],
        17,
        initializers,
        full_check=False,
    )


@pytest.mark.parametrize("device", ["TEMPLATE", "HETERO:XLA,TEMPLATE"])
def test_an_if_whose_branches_differ_in_rank_runs_at_run_time(device: str) -> None:
    model = _rank_changing_if_model()
    converted = hs.convert_model(model)
    assert not converted.outputs[0].partial_shape.rank_is_static
    assert str(converted.outputs[0].partial_shape) == "[...]"
    for width in (1, 3):
        x = np.arange(4 * width, dtype=np.float32).reshape(4, width) - 5
        got = _run(converted, device, x=x)["y"]
        expected = run_ort(model, {"x": x})[0]
        assert got.shape == expected.shape == ((4,) if width == 1 else (4, 3))
        np.testing.assert_array_equal(got, expected)


def test_an_if_whose_branches_differ_in_rank_is_declined_by_xla_and_folds_with_static_shapes() -> None:
    converted = hs.convert_model(_rank_changing_if_model())
    assert "If" not in hs.Core().query_model(converted, "XLA")
    with pytest.raises(UnsupportedOperationError, match=r"dynamic rank.*XLA traces static ranks.*HETERO:XLA,TEMPLATE"):
        hs.Core().compile_model(converted, "XLA")
    fixed = hs.convert_model(_rank_changing_if_model(), input={"x": [4, 1]})
    assert fixed.outputs[0].partial_shape == hs.PartialShape([4])
    x = np.arange(4, dtype=np.float32).reshape(4, 1)
    np.testing.assert_array_equal(_run(fixed, "XLA", x=x)["y"], x[:, 0])


def test_input_shapes_must_name_inputs_and_fit_the_file() -> None:
    model, _ = conv_relu_model()
    with pytest.raises(ModelValidationError, match="no input named z; the inputs: x"):
        hs.convert_model(model, input={"z": [1, 3, 8, 8]})
    with pytest.raises(ModelValidationError, match="does not fit"):
        hs.convert_model(model, input={"x": [1, 4, 8, 8]})
    fixed = hs.convert_model(model, input={"x": [2, 3, 8, 8]})
    assert fixed.get_parameters()[0].get_output_partial_shape(0) == hs.PartialShape([2, 3, 8, 8])


# -- reading and saving -------------------------------------------------------------------------


def test_read_model_takes_a_path_str_bytes_and_a_model_proto(tmp_path: Path) -> None:
    model, _ = conv_relu_model()
    path = tmp_path / "m.onnx"
    onnx.save(model, path)
    sniffed = tmp_path / "model_without_suffix"
    sniffed.write_bytes(model.SerializeToString())
    core = hs.Core()
    x = np.random.default_rng(2).standard_normal((1, 3, 8, 8)).astype(np.float32)
    outputs = [
        _run(core.read_model(source), "TEMPLATE", x=x)["y"]
        for source in (path, str(path), path.read_bytes(), model, sniffed)
    ]
    for out in outputs[1:]:
        np.testing.assert_array_equal(out, outputs[0])


def test_a_converted_model_saves_in_the_native_format_and_reads_back_identically(tmp_path: Path) -> None:
    converted = hs.convert_model(_runtime_if_model())
    hs.save_model(converted, tmp_path / "model.json")
    again = hs.Core().read_model(tmp_path / "model.json")
    assert [(n.type_name, n.friendly_name) for n in again.get_ops()] == [
        (n.type_name, n.friendly_name) for n in converted.get_ops()
    ]
    assert [o.any_name for o in again.outputs] == ["y"]
    x = np.array([0.5, -4.0], np.float32)
    for flag in (True, False):
        np.testing.assert_array_equal(
            _run(again, "TEMPLATE", flag=np.array(flag), x=x)["y"],
            _run(converted, "TEMPLATE", flag=np.array(flag), x=x)["y"],
        )


def test_loop_with_a_captured_tensor_counts_like_numpy() -> None:
    body = helper.make_graph(
        [
            helper.make_node("Identity", ["cond_in"], ["cond_out"]),
            helper.make_node("Add", ["acc_in", "step"], ["acc_out"]),  # step comes from the enclosing graph
            helper.make_node("Identity", ["acc_out"], ["history"]),
        ],
        "body",
        [
            value_info("i", np.int64, []),
            value_info("cond_in", np.bool_, []),
            value_info("acc_in", np.float32, [2]),
        ],
        [
            value_info("cond_out", np.bool_, []),
            value_info("acc_out", np.float32, [2]),
            value_info("history", np.float32, [2]),
        ],
    )
    nodes = [helper.make_node("Loop", ["trips", "", "start"], ["final", "all"], body=body)]
    model = graph_model(
        nodes,
        [value_info("trips", np.int64, []), value_info("start", np.float32, [2]), value_info("step", np.float32, [2])],
        [value_info("final", np.float32, [2]), value_info("all", np.float32, [None, 2])],
        17,
    )
    converted = hs.convert_model(model)
    start, step = np.array([1.0, 2.0], np.float32), np.array([0.5, -1.0], np.float32)
    results = _run(converted, "TEMPLATE", trips=np.array(3, np.int64), start=start, step=step)
    np.testing.assert_allclose(results["final"], start + 3 * step)
    np.testing.assert_allclose(results["all"], np.stack([start + k * step for k in (1, 2, 3)]))


def test_initializer_values_are_read_only_constants() -> None:
    add = helper.make_node("Add", ["x", "c"], ["y"])
    x, y = value_info("x", np.float32, [3]), value_info("y", np.float32, [3])
    model = graph_model([add], [x], [y], 17, {"c": np.arange(3, dtype=np.float32)})
    constant = next(n for n in hs.convert_model(model).get_ops() if n.type_name == "Constant")
    assert not constant.attrs["value"].flags.writeable


def _relu_model(elem_type: int, shape: list[int | str] | None) -> onnx.ModelProto:
    graph = helper.make_graph(
        [helper.make_node("Cast", ["x"], ["c"], to=onnx.TensorProto.INT64), helper.make_node("Relu", ["x"], ["y"])],
        "g",
        [value_info("x", np.float32, ["n", 2])],
        [value_info("c", np.int64, ["n", 2]), helper.make_tensor_value_info("y", elem_type, shape)],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_an_output_declared_of_another_element_type_than_its_node_gives_is_refused() -> None:
    """ONNX Runtime refuses the model too; it used to run, giving float32 where the file says int32."""
    with pytest.raises(ModelValidationError) as caught:
        hs.convert_model(_relu_model(onnx.TensorProto.INT32, ["n", 2]))
    message = str(caught.value)
    assert "graph output 'y' is declared INT32" in message
    assert "node 'Relu_1' (Relu) gives f32" in message


@pytest.mark.parametrize(
    ("elem_type", "shape"),
    [
        (onnx.TensorProto.FLOAT, ["n", 2]),
        (0, ["n", 2]),
        (onnx.TensorProto.FLOAT, [4, 3]),
        (onnx.TensorProto.FLOAT, ["m"]),
    ],
)
def test_outputs_of_the_right_or_unknown_type_keep_running_whatever_their_declared_shape(
    elem_type: int, shape: list[int | str] | None
) -> None:
    """A declared shape that differs from the translated one (here [4, 3] for [n, 2]) is left to the
    translated shape, as ONNX Runtime does (it warns and runs)."""
    x = np.array([[-1.0, 2.5]], np.float32)
    results = _run(hs.convert_model(_relu_model(elem_type, shape)), "TEMPLATE", x=x)
    np.testing.assert_array_equal(results["y"], [[0.0, 2.5]])
    np.testing.assert_array_equal(results["c"], [[-1, 2]])


def test_a_negative_input_dim_other_than_minus_1_is_dynamic_as_onnxruntime_reads_it() -> None:
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"])], "g", [value_info("x", np.float32, [-1, -5])],
        [value_info("y", np.float32, [-1, -5])],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    assert hs.convert_model(model).inputs[0].partial_shape == hs.PartialShape([-1, -1])
    x = np.array([[-1.0, 2.0, -3.0]], np.float32)
    check(model, {"x": x}, expected=[np.maximum(x, 0)])


def _initializer_model(tensor: onnx.TensorProto) -> onnx.ModelProto:
    """y = Identity(c), c the initializer ``tensor`` (not checked: the tensors here are malformed)."""
    graph = helper.make_graph(
        [helper.make_node("Identity", ["c"], ["y"])], "g", [],
        [helper.make_tensor_value_info("y", tensor.data_type, [f"d{i}" for i in range(len(tensor.dims))])],
        [tensor],
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _spoiled(change: str) -> onnx.TensorProto:
    tensor = onnx.numpy_helper.from_array(np.arange(6, dtype=np.float32).reshape(2, 3), "c")  # raw_data, 24 bytes
    if change == "dims":
        del tensor.dims[:]
        tensor.dims.extend([2])
    elif change == "scalar":
        del tensor.dims[:]
    elif change == "negative":
        del tensor.dims[:]
        tensor.dims.extend([-1, 6])
    elif change == "dtype":
        tensor.data_type = onnx.TensorProto.FLOAT8E8M0  # one byte a value: 24 bytes are 24 values, not 6
    elif change == "typed_field":
        tensor = onnx.TensorProto(name="c", data_type=onnx.TensorProto.FLOAT, dims=[2, 3], float_data=range(8))
    elif change == "packed":
        tensor = onnx.TensorProto(name="c", data_type=onnx.TensorProto.INT4, dims=[5], int32_data=[1, 2, 3, 4, 5, 6, 7])
    elif change == "strings":
        tensor = onnx.TensorProto(
            name="c", data_type=onnx.TensorProto.STRING, dims=[3], string_data=[b"a", b"b", b"c", b"d"]
        )
    return tensor


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ("dims", r"initializer 'c': field 'raw_data' holds 24 bytes, but its dims \[2\] and element type FLOAT take 8"),
        (
            "scalar",
            r"initializer 'c': field 'raw_data' holds 24 bytes, but its dims \[\] and element type FLOAT take 4",
        ),
        ("negative", r"Negative dimension value \(tensor name: c\)"),  # ONNX's checker, before ours
        (
            "dtype",
            r"initializer 'c': field 'raw_data' holds 24 bytes, but its dims \[2, 3\] and element type "
            r"FLOAT8E8M0 take 6",
        ),
        (
            "typed_field",
            r"initializer 'c': field 'float_data' holds 8 values, but its dims \[2, 3\] and element type FLOAT take 6",
        ),
        (
            "packed",
            r"initializer 'c': field 'int32_data' holds 7 values, but its dims \[5\] and element type INT4 take 3",
        ),
        (
            "strings",
            r"initializer 'c': field 'string_data' holds 4 values, but its dims \[3\] and element type STRING take 3",
        ),
    ],
)
def test_an_initializer_whose_data_disagrees_with_its_dims_or_type_is_refused(change: str, message: str) -> None:
    """Once numpy's reshape ValueError (fuzzing: dims or data_type mutated); ONNX Runtime refuses these too."""
    with pytest.raises(ModelValidationError, match=message):
        hs.convert_model(_initializer_model(_spoiled(change)))


@pytest.mark.parametrize(
    ("tensor", "expected"),
    [
        (helper.make_tensor("c", onnx.TensorProto.INT4, [3], [1, -2, 7]), np.array([1, -2, 7])),  # 2 packed entries
        (helper.make_tensor("c", onnx.TensorProto.BOOL, [2], [True, False]), np.array([True, False])),
        (helper.make_tensor("c", onnx.TensorProto.FLOAT16, [2], [0.5, -1.0]), np.array([0.5, -1.0])),
        (helper.make_tensor("c", onnx.TensorProto.INT64, [2, 0], []), np.zeros((2, 0))),
    ],
)
def test_initializers_whose_data_fills_their_dims_read_as_numpy_has_them(
    tensor: onnx.TensorProto, expected: np.ndarray
) -> None:
    got = hs.Core().compile_model(_initializer_model(tensor), "TEMPLATE")({})["y"]
    np.testing.assert_array_equal(np.asarray(got, np.float64), expected.astype(np.float64))
