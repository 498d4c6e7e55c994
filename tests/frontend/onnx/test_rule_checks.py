"""Attribute values ONNX forbids (a zero group, negative pads, a split into more parts than elements) are
refused while translating with a ModelValidationError naming the node, rather than failing deep inside a
kernel (ZeroDivisionError, MemoryError) or computing something ONNX Runtime would refuse."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import ModelProto, helper, numpy_helper
from onnx_models import check, value_info

import hetero_sdk as hs
from hetero_sdk.errors import ModelValidationError

F32, I64 = np.float32, np.int64


def _model(
    op_type: str,
    inputs: dict[str, tuple[type, list[int]]],
    outputs: int,
    opset: int,
    initializers: dict[str, np.ndarray] | None = None,
    rank: int = 1,
    **attributes: object,
) -> ModelProto:
    """A one-node model (its node named ``n``) without ONNX's shape inference, which refuses some of these;
    its outputs are float32 of rank ``rank``."""
    node = helper.make_node(op_type, [*inputs, *(initializers or {})], [f"y{i}" for i in range(outputs)],
                            name="n", **attributes)  # fmt: skip
    graph = helper.make_graph(
        [node],
        "g",
        [value_info(k, dtype, shape) for k, (dtype, shape) in inputs.items()],
        [value_info(f"y{i}", F32, [f"d{i}"] * rank) for i in range(outputs)],
        [numpy_helper.from_array(v, k) for k, v in (initializers or {}).items()],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)


@pytest.mark.parametrize("num_outputs", [0, -1, 2**31, 3])
def test_split_18_num_outputs_must_match_the_listed_outputs(num_outputs: int) -> None:
    model = _model("Split", {"x": (F32, [6])}, 2, 18, num_outputs=num_outputs)
    with pytest.raises(ModelValidationError, match=rf"Split 'n'.*num_outputs is {num_outputs} but the node lists 2"):
        hs.convert_model(model)


def test_split_18_into_parts_that_leave_the_last_negative_is_refused_as_onnxruntime_does() -> None:
    model = _model("Split", {"x": (F32, [7])}, 5, 18, num_outputs=5)
    with pytest.raises(ModelValidationError, match=r"Split 'n'.*5 outputs.*7 element\(s\).*negative length"):
        hs.convert_model(model)


def test_split_18_with_num_outputs_and_lengths_is_refused() -> None:
    model = _model("Split", {"x": (F32, [6])}, 2, 18, {"s": np.array([3, 3], I64)}, num_outputs=2)
    with pytest.raises(ModelValidationError, match=r"Split 'n'.*num_outputs and the split input are both given"):
        hs.convert_model(model)


def test_split_18_of_two_elements_into_three_gives_an_empty_last_part() -> None:
    model = _model("Split", {"x": (F32, [2])}, 3, 18, num_outputs=3)
    x = np.array([1.0, 2.0], F32)
    check(model, {"x": x}, expected=[x[:1], x[1:], x[2:]])


@pytest.mark.parametrize(("group", "problem"), [(0, "group is 0"), (-2, "group is -2"), (3, "group 3 does not divide")])
@pytest.mark.parametrize("op_type", ["Conv", "ConvTranspose"])
def test_conv_group_must_be_positive_and_divide_the_channels(op_type: str, group: int, problem: str) -> None:
    weights = {"w": np.ones((4, 1, 1, 1), F32)}
    model = _model(op_type, {"x": (F32, [1, 4, 3, 3])}, 1, 17, weights, rank=4, group=group)
    with pytest.raises(ModelValidationError, match=rf"{op_type} 'n'.*{problem}"):
        hs.convert_model(model)


@pytest.mark.parametrize(
    ("op_type", "attributes"),
    [
        ("Conv", {}),
        ("ConvTranspose", {}),
        ("MaxPool", {"kernel_shape": [1, 1]}),
        ("AveragePool", {"kernel_shape": [1, 1]}),
        ("LpPool", {"kernel_shape": [1, 1]}),
    ],
)
def test_negative_pads_are_refused_as_onnxruntime_refuses_them(op_type: str, attributes: dict[str, object]) -> None:
    weights = {"w": np.ones((1, 1, 1, 1), F32)} if op_type.startswith("Conv") else {}
    model = _model(op_type, {"x": (F32, [1, 1, 3, 3])}, 1, 17, weights, rank=4, pads=[-1, -1, 0, 0], **attributes)
    with pytest.raises(ModelValidationError, match=rf"{op_type} 'n'.*pads \[-1, -1, 0, 0\] are negative"):
        hs.convert_model(model)


def test_conv_with_zero_pads_and_a_dividing_group_still_computes_the_depthwise_product() -> None:
    x = np.arange(8, dtype=F32).reshape(1, 2, 2, 2)
    model = _model("Conv", {"x": (F32, [1, 2, 2, 2])}, 1, 17, {"w": np.array([2, 3], F32).reshape(2, 1, 1, 1)},
                   rank=4, group=2, pads=[0, 0, 0, 0])  # fmt: skip
    check(model, {"x": x}, expected=[x * np.array([2, 3], F32).reshape(1, 2, 1, 1)])


@pytest.mark.parametrize("depth", [0, -3])
def test_one_hot_with_a_constant_depth_below_1_is_refused(depth: int) -> None:
    constants = {"d": np.array(depth, I64), "v": np.array([0, 1], F32)}
    model = _model("OneHot", {"i": (I64, [2])}, 1, 11, constants, rank=2)
    with pytest.raises(ModelValidationError, match=rf"OneHot 'n'.*depth is {depth}"):
        hs.convert_model(model)
