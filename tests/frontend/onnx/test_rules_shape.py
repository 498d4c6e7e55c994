"""The shape and data-movement rules (Reshape, Squeeze, Slice, Split, Pad...) compute what ONNX Runtime
computes, with each opset version's own reading of the node (attributes that became inputs)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from onnx import helper, numpy_helper
from onnx_models import FEW, check, graph_model, node_model, value_info

import hetero_sdk as hs
from hetero_sdk.errors import ModelValidationError

F32, I64 = np.float32, np.int64
RNG = np.random.default_rng(11)


def _x(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(F32)


def _i(*values: int) -> np.ndarray:
    return np.array(values, I64)


def test_constant_values_of_each_attribute_kind() -> None:
    for attribute, value in (
        ("value", numpy_helper.from_array(_x(2, 3))),
        ("value_float", 1.5),
        ("value_floats", [1.0, 2.0]),
        ("value_int", 4),
        ("value_ints", [1, 2, 3]),
    ):
        model, feeds = node_model("Constant", {}, 13, **{attribute: value})
        check(model, feeds)


@pytest.mark.parametrize(("start", "end"), [(None, None), (1, None), (-2, None), (0, 2), (1, -1)])
def test_shape_with_start_and_end(start: int | None, end: int | None) -> None:
    attributes = {k: v for k, v in (("start", start), ("end", end)) if v is not None}
    model, feeds = node_model("Shape", {"x": _x(2, 3, 4, 5)}, 15 if attributes else 13, **attributes)
    check(model, feeds)


def test_size_counts_elements() -> None:
    model, feeds = node_model("Size", {"x": _x(2, 3, 4)}, 13)
    check(model, feeds, ("TEMPLATE", "XLA"))


@pytest.mark.parametrize(
    ("shape", "allowzero"), [([3, -1], 0), ([0, 4, 3], 0), ([-1], 0), ([2, 0, 3], 0), ([2, 12], 1)]
)
def test_reshape_with_special_zero_and_allowzero(shape: list[int], allowzero: int) -> None:
    model, feeds = node_model("Reshape", {"x": _x(2, 4, 3), "s": _i(*shape)}, 14, constants=["s"], allowzero=allowzero)
    check(model, feeds, ("TEMPLATE", "XLA"))


def test_reshape_with_a_runtime_shape() -> None:
    node = helper.make_node("Reshape", ["x", "s"], ["y"])
    model = graph_model(
        [node], [value_info("x", F32, [2, 4, 3]), value_info("s", I64, [2])], [value_info("y", F32, ["a", "b"])], 13
    )
    for shape in ((6, 4), (3, -1), (0, 12)):
        check(model, {"x": _x(2, 4, 3), "s": _i(*shape)})


@pytest.mark.parametrize("axis", [0, 1, 2, 3, -1, -3])
def test_flatten_at_each_axis(axis: int) -> None:
    model, feeds = node_model("Flatten", {"x": _x(2, 3, 4, 5)}, 13, axis=axis)
    check(model, feeds)


@pytest.mark.parametrize(("opset", "axes"), [(11, [1, -1]), (11, None), (13, [1, -1]), (13, None)])
def test_squeeze_reads_axes_from_the_attribute_before_13_and_the_input_after(
    opset: int, axes: list[int] | None
) -> None:
    x = _x(2, 1, 3, 1)
    if opset < 13:
        model, feeds = node_model("Squeeze", {"x": x}, opset, **({} if axes is None else {"axes": axes}))
    else:
        model, feeds = node_model(
            "Squeeze", {"x": x, "axes": None if axes is None else _i(*axes)}, opset, constants=["axes"]
        )
    want = check(model, feeds, ("TEMPLATE", "XLA"))
    assert want[0].shape == (2, 3)


@pytest.mark.parametrize("opset", [11, 13])
@pytest.mark.parametrize("axes", [[0], [-1], [0, 3], [1, -1]])
def test_unsqueeze_reads_axes_from_the_attribute_before_13_and_the_input_after(opset: int, axes: list[int]) -> None:
    if opset < 13:
        model, feeds = node_model("Unsqueeze", {"x": _x(2, 3)}, opset, axes=axes)
    else:
        model, feeds = node_model("Unsqueeze", {"x": _x(2, 3), "axes": _i(*axes)}, opset, constants=["axes"])
    check(model, feeds)


@pytest.mark.parametrize("perm", [None, [0, 2, 1], [2, 0, 1]])
def test_transpose_reverses_the_axes_by_default(perm: list[int] | None) -> None:
    model, feeds = node_model("Transpose", {"x": _x(2, 3, 4)}, 13, **({} if perm is None else {"perm": perm}))
    check(model, feeds, ("TEMPLATE", "XLA"))


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_concat_along_an_axis(axis: int) -> None:
    model, feeds = node_model("Concat", {"a": _x(2, 2, 2), "b": _x(2, 2, 2), "c": _x(2, 2, 2)}, 13, axis=axis)
    check(model, feeds, ("TEMPLATE", "XLA"))


@pytest.mark.parametrize(
    ("opset", "split"), [(11, None), (11, [1, 4, 1]), (13, None), (13, [2, 2, 2]), (18, [3, 1, 2])]
)
def test_split_lengths_from_the_attribute_before_13_and_the_input_after(opset: int, split: list[int] | None) -> None:
    x = _x(6, 4)
    if opset < 13:
        model, feeds = node_model("Split", {"x": x}, opset, outputs=3, **({} if split is None else {"split": split}))
    else:
        attrs = {"num_outputs": 3} if opset >= 18 and split is None else {}
        model, feeds = node_model(
            "Split",
            {"x": x, "split": None if split is None else _i(*split)},
            opset,
            outputs=3,
            constants=["split"],
            **attrs,
        )
    check(model, feeds, ("TEMPLATE", "XLA"))


def test_split_18_into_uneven_parts_makes_the_last_smaller() -> None:
    model, feeds = node_model("Split", {"x": _x(2, 7)}, 18, outputs=3, axis=-1, num_outputs=3)
    want = check(model, feeds)
    assert [w.shape[1] for w in want] == [3, 3, 1]


def test_slice_1_reads_starts_ends_axes_from_attributes() -> None:
    model, feeds = node_model("Slice", {"x": _x(4, 5, 6)}, 9, starts=[1, -4], ends=[3, 100], axes=[0, 2])
    check(model, feeds)
    model, feeds = node_model("Slice", {"x": _x(4, 5)}, 7, starts=[0, 1], ends=[2, -1])
    check(model, feeds)


@given(start=st.integers(-7, 7), end=st.integers(-8, 8), step=st.integers(-3, 3).filter(bool), axis=st.integers(-2, 1))
@FEW
def test_slice_10_reads_inputs_with_negative_steps_and_clamped_bounds(
    start: int, end: int, step: int, axis: int
) -> None:
    inputs = {"x": _x(6, 5), "starts": _i(start), "ends": _i(end), "axes": _i(axis), "steps": _i(step)}
    model, feeds = node_model("Slice", inputs, 13, constants=["starts", "ends", "axes", "steps"])
    check(model, feeds)


def test_slice_10_with_runtime_bounds_and_default_axes_and_steps() -> None:
    model, feeds = node_model("Slice", {"x": _x(5, 6), "starts": _i(1, 0), "ends": _i(4, -2)}, 10)
    # XLA compiles static shapes: it declines the Slice, which HETERO places on TEMPLATE
    check(model, feeds, ("TEMPLATE", "HETERO:XLA,TEMPLATE"))


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_gather_with_negative_indices(axis: int) -> None:
    indices = np.array([[0, -1], [1, 0]], I64)
    model, feeds = node_model("Gather", {"x": _x(3, 4, 2), "i": indices}, 13, axis=axis)
    check(model, feeds, ("TEMPLATE", "XLA"))


@pytest.mark.parametrize("shape", [[2, 1, 3], [3], [1, 1], [4, 2, 3]])
def test_expand_broadcasts_both_ways(shape: list[int]) -> None:
    model, feeds = node_model("Expand", {"x": _x(2, 1), "s": _i(*shape)}, 13, constants=["s"])
    check(model, feeds, ("TEMPLATE", "XLA"))


def test_tile_repeats_each_axis() -> None:
    model, feeds = node_model("Tile", {"x": _x(2, 3), "r": _i(2, 3)}, 13, constants=["r"])
    check(model, feeds, ("TEMPLATE", "XLA"))


def test_constant_of_shape_defaults_to_float_zero_and_takes_a_typed_value() -> None:
    model, feeds = node_model("ConstantOfShape", {"s": _i(2, 3)}, 9)
    check(model, feeds)
    value = numpy_helper.from_array(np.array([7], np.int32))
    model, feeds = node_model("ConstantOfShape", {"s": _i(3)}, 20, value=value)
    check(model, feeds)


@pytest.mark.parametrize(
    ("start", "limit", "delta", "dtype"), [(0, 10, 3, I64), (10, 0, -2, np.int32), (0.5, 3.0, 0.7, F32), (3, 3, 1, I64)]
)
def test_range_of_each_type_and_direction(start: float, limit: float, delta: float, dtype: type) -> None:
    inputs = {"a": np.array(start, dtype), "b": np.array(limit, dtype), "c": np.array(delta, dtype)}
    model, feeds = node_model("Range", inputs, 11)
    check(model, feeds)


@pytest.mark.parametrize("mode", ["constant", "reflect", "edge"])
def test_pad_2_reads_pads_and_value_from_attributes(mode: str) -> None:
    model, feeds = node_model("Pad", {"x": _x(3, 4)}, 7, pads=[1, 2, 0, 1], mode=mode, value=1.5)
    check(model, feeds)


@pytest.mark.parametrize("mode", ["constant", "reflect", "edge"])
@pytest.mark.parametrize("constant", [True, False])
def test_pad_11_reads_pads_and_value_from_inputs(mode: str, constant: bool) -> None:
    inputs = {
        "x": _x(3, 4, 5),
        "pads": _i(1, 0, 2, 0, 2, 1),
        "value": np.array(-2.0, F32) if mode == "constant" else None,
    }
    model, feeds = node_model("Pad", inputs, 13, constants=["pads", "value"] if constant else [], mode=mode)
    check(model, feeds, ("TEMPLATE", "XLA") if constant else ("TEMPLATE",))


def test_pad_18_pads_only_the_listed_axes() -> None:
    inputs = {"x": _x(2, 3, 4), "pads": _i(1, 2, 0, 3), "value": np.array(0.5, F32), "axes": _i(-1, 0)}
    model, feeds = node_model("Pad", inputs, 18, constants=["pads", "value", "axes"])
    check(model, feeds, ("TEMPLATE", "XLA"))


def test_pad_18_takes_pads_and_axes_given_at_run_time() -> None:
    feeds = {"x": _x(2, 3, 4), "pads": _i(1, 2, 0, 3), "axes": _i(-1, 0)}
    node = helper.make_node("Pad", ["x", "pads", "", "axes"], ["y"])
    inputs = [value_info(k, v.dtype, v.shape) for k, v in feeds.items()]
    model = graph_model([node], inputs, [value_info("y", F32, ["a", "b", "c"])], 18)
    # pads known only at run time decide the output shape: XLA leaves that case to other devices
    expected = np.pad(feeds["x"], [(2, 3), (0, 0), (1, 0)])
    check(model, feeds, ("TEMPLATE",), expected=[expected])


@pytest.mark.parametrize("constant", [True, False])
def test_pad_19_wrap_repeats_the_input_periodically(constant: bool) -> None:
    x = np.arange(12, dtype=np.int32).reshape(3, 4)
    pads = _i(4, -1, 2, 5)  # wraps past a whole period, and crops a column where the pad is negative
    model, feeds = node_model("Pad", {"x": x, "pads": pads}, 19, constants=["pads"] if constant else [], mode="wrap")
    expected = np.pad(x, [(4, 2), (0, 5)], mode="wrap")[:, 1:]
    check(model, feeds, ("TEMPLATE", "XLA") if constant else ("TEMPLATE",), expected=[expected])


def test_pad_11_without_a_value_pads_with_zeros_on_integers() -> None:
    x = np.arange(6, dtype=np.int32).reshape(2, 3)
    model, feeds = node_model("Pad", {"x": x, "pads": _i(0, 1, 1, 0)}, 11, constants=["pads"])
    check(model, feeds)


def test_non_zero_lists_indices_per_axis() -> None:
    x = np.array([[0, 1, 0], [2, 0, 3]], F32)
    model, feeds = node_model("NonZero", {"x": x}, 13)
    check(model, feeds)


def test_shape_subgraph_of_a_dynamic_input_runs_at_inference() -> None:
    """Shape -> Gather -> Concat -> Reshape with a dynamic batch: computed at run time, for each batch."""
    nodes = [
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("Gather", ["s", "zero"], ["batch"], axis=0),
        helper.make_node("Concat", ["batch", "minus_one"], ["target"], axis=0),
        helper.make_node("Reshape", ["x", "target"], ["y"]),
    ]
    model = graph_model(
        nodes,
        [value_info("x", F32, ["N", 3, 4])],
        [value_info("y", F32, ["N", 12])],
        13,
        {"zero": _i(0), "minus_one": _i(-1)},
    )
    for batch in (1, 3):
        check(model, {"x": _x(batch, 3, 4)}, ("TEMPLATE", "XLA"))


@pytest.mark.parametrize(("start", "end", "step"), [(-6, -6, -1), (-100, -100, -2), (-9, -10, -1)])
def test_slice_10_with_a_negative_step_clamps_a_start_below_minus_size_to_index_0(
    start: int, end: int, step: int
) -> None:
    """ONNX clamps such a start to 0 and takes index 0 (Python's slicing takes nothing)."""
    x = _x(6, 5)
    inputs = {"x": x, "starts": _i(start), "ends": _i(end), "axes": _i(1), "steps": _i(step)}
    model, feeds = node_model("Slice", inputs, 13, constants=["starts", "ends", "axes", "steps"])
    want = check(model, feeds, ("TEMPLATE", "XLA"))
    assert want[0].shape == (6, 1)


@FEW
@given(rows=st.integers(1, 5), cols=st.integers(1, 5), k=st.integers(-4, 4), upper=st.booleans())
def test_trilu_keeps_one_triangle_of_the_last_two_axes(rows: int, cols: int, k: int, upper: bool) -> None:
    x = np.random.default_rng(rows * 7 + cols).standard_normal((2, rows, cols)).astype(np.float32)
    model, feeds = node_model("Trilu", {"x": x, "k": np.array(k, np.int64)}, 14, upper=int(upper))
    expected = np.triu(x, k) if upper else np.tril(x, k)
    check(model, feeds, ("TEMPLATE", "XLA"), expected=[expected])


@FEW
@given(depth=st.integers(1, 5), axis=st.integers(-3, 2), seed=st.integers(0, 2**16))
def test_one_hot_marks_each_index_along_the_new_axis(depth: int, axis: int, seed: int) -> None:
    indices = np.random.default_rng(seed).integers(-depth, depth, (2, 3)).astype(np.int64)
    values = np.array([-1.0, 5.0], np.float32)
    model, feeds = node_model(
        "OneHot", {"i": indices, "d": np.array(depth, np.int64), "v": values}, 11, constants=["d", "v"], axis=axis
    )
    hot = np.moveaxis(np.eye(depth, dtype=np.float32)[np.where(indices < 0, indices + depth, indices)], -1, axis % 3)
    check(model, feeds, ("TEMPLATE", "XLA"), expected=[np.where(hot == 1, 5.0, -1.0).astype(np.float32)])


@pytest.mark.parametrize("k", [-2, 0, 1, 4])
def test_eye_like_puts_ones_on_the_kth_diagonal(k: int) -> None:
    model, feeds = node_model("EyeLike", {"x": np.zeros((3, 4), np.float32)}, 9, k=k)
    check(model, feeds, ("TEMPLATE", "XLA"), expected=[np.eye(3, 4, k, dtype=np.float32)])


def test_range_takes_one_element_vectors_as_its_scalars() -> None:
    # ONNX's AffineGrid function body passes [1]-shaped start, limit and delta
    node = helper.make_node("Range", ["start", "limit", "delta"], ["y"])
    feeds = {"start": np.array([1], np.int64), "limit": np.array([9], np.int64), "delta": np.array([3], np.int64)}
    inputs = [value_info(k, v.dtype, v.shape) for k, v in feeds.items()]
    model = graph_model([node], inputs, [value_info("y", np.int64, ["n"])], 17, full_check=False)
    check(model, feeds, ("TEMPLATE",), expected=[np.arange(1, 9, 3)])


@pytest.mark.parametrize(
    ("opset", "mode"), [(7, None), (11, "DCR"), (11, "CRD"), (13, None), (13, "CRD"), (21, "DCR"), (21, "CRD")]
)
def test_depth_to_space_in_each_mode_matches_onnxruntime(opset: int, mode: str | None) -> None:
    attrs = {"mode": mode} if mode else {}  # an attribute from opset 11 on, DCR by default
    model, feeds = node_model("DepthToSpace", {"x": _x(2, 12, 2, 3)}, opset, blocksize=2, **attrs)
    check(model, feeds, ("TEMPLATE", "XLA"))


@pytest.mark.parametrize("opset", [7, 13, 21])
@pytest.mark.parametrize("blocksize", [2, 3])
def test_space_to_depth_matches_onnxruntime(opset: int, blocksize: int) -> None:
    model, feeds = node_model("SpaceToDepth", {"x": _x(2, 3, 6, 12)}, opset, blocksize=blocksize)
    check(model, feeds, ("TEMPLATE", "XLA"))


def _space_to_depth(x: np.ndarray, b: int, mode: str) -> np.ndarray:
    """ONNX's definition of SpaceToDepth-28, in numpy."""
    n, c, h, w = x.shape
    blocks = x.reshape(n, c, h // b, b, w // b, b)
    order = [0, 3, 5, 1, 2, 4] if mode == "DCR" else [0, 1, 3, 5, 2, 4]
    return blocks.transpose(order).reshape(n, c * b * b, h // b, w // b)


@pytest.mark.parametrize("mode", ["DCR", "CRD"])
def test_space_to_depth_28_modes_and_depth_to_space_undo_it(mode: str) -> None:
    x = _x(1, 2, 4, 6)
    model, feeds = node_model("SpaceToDepth", {"x": x}, 28, blocksize=2, mode=mode)
    check(model, feeds, ("TEMPLATE", "XLA"), expected=[_space_to_depth(x, 2, mode)])
    model, feeds = node_model("DepthToSpace", {"x": _space_to_depth(x, 2, mode)}, 28, blocksize=2, mode=mode)
    check(model, feeds, ("TEMPLATE", "XLA"), expected=[x])


def test_depth_to_space_and_space_to_depth_with_dynamic_dims_match_onnxruntime() -> None:
    nodes = [
        helper.make_node("DepthToSpace", ["x"], ["d"], blocksize=2, mode="CRD"),
        helper.make_node("SpaceToDepth", ["x"], ["s"], blocksize=2),
    ]
    inputs = [value_info("x", F32, ["n", "c", "h", "w"])]
    outputs = [value_info("d", F32, ["n", None, None, None]), value_info("s", F32, ["n", None, None, None])]
    model = graph_model(nodes, inputs, outputs, 13)
    check(model, {"x": _x(2, 8, 4, 6)}, ("TEMPLATE", "XLA"))
    check(model, {"x": _x(1, 4, 2, 2)}, ("TEMPLATE", "XLA"))


def test_depth_to_space_with_channels_that_do_not_split_into_blocks_names_the_node() -> None:
    model, _ = node_model("DepthToSpace", {"x": _x(1, 6, 2, 2)}, 13, blocksize=2)
    model.graph.node[0].name = "d2s"
    with pytest.raises(ModelValidationError, match=r"d2s.*6 channels do not split into blocks of 2x2"):
        hs.convert_model(model)


@pytest.mark.parametrize(("op", "onnx_mode", "mode"), [
    ("DepthToSpace", "DCR", "blocks_first"), ("DepthToSpace", "CRD", "depth_first"),
    ("SpaceToDepth", "DCR", "blocks_first"), ("SpaceToDepth", "CRD", "depth_first"),
])  # fmt: skip
def test_depth_to_space_and_space_to_depth_become_the_ops_of_the_same_names(op: str, onnx_mode: str, mode: str) -> None:
    model, _ = node_model(op, {"x": _x(1, 4, 2, 2)}, 28, blocksize=2, mode=onnx_mode)
    nodes = [n for n in hs.convert_model(model).get_ops() if n.type_name not in ("Parameter", "Result")]
    assert [(n.type_name, n.attrs["mode"], n.attrs["block_size"]) for n in nodes] == [(op, mode, 2)]
