"""Ops that move, pick or compare data carry strings: each ONNX model here runs on TEMPLATE (and on
HETERO:XLA,TEMPLATE) and is compared with onnx.reference."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import helper
from onnx.reference import ReferenceEvaluator

import hetero_sdk as hs

T = onnx.TensorProto
X = np.array([["a", "bé", ""], ["c", "d", "😀"]], object)


def model(nodes: list, inits: list, rank: int, outtype: int = T.STRING) -> onnx.ModelProto:
    """A model of ``nodes`` from ``x`` ([2, 3] strings) to ``y`` (rank ``rank``)."""
    g = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", T.STRING, [2, 3])],
        [helper.make_tensor_value_info("y", outtype, [f"d{i}" for i in range(rank)])],
        initializer=list(inits),
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)])


def run(m: onnx.ModelProto, x: np.ndarray = X, device: str = "TEMPLATE") -> str:
    """ "OK", or how the device's output differs from onnx.reference's."""
    expected = ReferenceEvaluator(m).run(None, {"x": x})[0]
    got = hs.Core().compile_model(hs.convert_model(m), device)({"x": x})[0]
    if expected.dtype.kind == "f" and np.array_equal(got, expected, equal_nan=True):
        return "OK"
    if got.shape == expected.shape and got.tolist() == expected.tolist():
        return "OK"
    return f"got {got.tolist()}, expected {expected.tolist()}"


def i64(name: str, values: list[int]) -> onnx.TensorProto:
    """A 1-D int64 initializer."""
    return helper.make_tensor(name, T.INT64, [len(values)], values)


CASES = {
    "Identity": ([helper.make_node("Identity", ["x"], ["y"])], [], 2),
    "Reshape": ([helper.make_node("Reshape", ["x", "s"], ["y"])], [i64("s", [3, 2])], 2),
    "Transpose": ([helper.make_node("Transpose", ["x"], ["y"])], [], 2),
    "Concat": ([helper.make_node("Concat", ["x", "x"], ["y"], axis=1)], [], 2),
    "Gather": ([helper.make_node("Gather", ["x", "i"], ["y"], axis=1)], [i64("i", [2, 0, 0])], 2),
    "Unsqueeze": ([helper.make_node("Unsqueeze", ["x", "a"], ["y"])], [i64("a", [0])], 3),
    "Squeeze": (
        [helper.make_node("Unsqueeze", ["x", "a"], ["t"]), helper.make_node("Squeeze", ["t", "a"], ["y"])],
        [i64("a", [0])],
        2,
    ),
    "Slice": ([helper.make_node("Slice", ["x", "st", "en"], ["y"])], [i64("st", [0, 1]), i64("en", [1, 3])], 2),
    "Flatten": ([helper.make_node("Flatten", ["x"], ["y"], axis=0)], [], 2),
    "Tile": ([helper.make_node("Tile", ["x", "r"], ["y"])], [i64("r", [2, 1])], 2),
    "Expand": ([helper.make_node("Expand", ["x", "s"], ["y"])], [i64("s", [2, 2, 3])], 3),
    "Where": (
        [helper.make_node("Where", ["c", "x", "x2"], ["y"])],
        [
            helper.make_tensor("c", T.BOOL, [3], [True, False, True]),
            helper.make_tensor("x2", T.STRING, [3], [b"z", b"w", b""]),
        ],
        2,
    ),
    "Split": ([helper.make_node("Split", ["x"], ["y", "y2"], axis=0, num_outputs=2)], [], 2),
    "Constant": (
        [
            helper.make_node("Constant", [], ["c"], value=helper.make_tensor("v", T.STRING, [3], [b"p", b"q", b"r"])),
            helper.make_node("StringConcat", ["x", "c"], ["y"]),
        ],
        [],
        2,
    ),
    "GatherElements": (
        [helper.make_node("GatherElements", ["x", "i"], ["y"], axis=1)],
        [helper.make_tensor("i", T.INT64, [2, 1], [1, 2])],
        2,
    ),
    "GatherND": (
        [helper.make_node("GatherND", ["x", "i"], ["y"])],
        [helper.make_tensor("i", T.INT64, [2, 2], [1, 2, 0, 1])],
        1,
    ),
    "Compress": (
        [helper.make_node("Compress", ["x", "c"], ["y"], axis=1)],
        [helper.make_tensor("c", T.BOOL, [3], [True, False, True])],
        2,
    ),
    "ScatterElements": (
        [helper.make_node("ScatterElements", ["x", "i", "u"], ["y"], axis=1)],
        [helper.make_tensor("i", T.INT64, [2, 1], [1, 2]), helper.make_tensor("u", T.STRING, [2, 1], [b"U", b"V"])],
        2,
    ),
    "Size": ([helper.make_node("Size", ["x"], ["y"])], [], 0, T.INT64),
    "Shape": ([helper.make_node("Shape", ["x"], ["y"])], [], 1, T.INT64),
    "Equal": ([helper.make_node("Equal", ["x", "x"], ["y"])], [], 2, T.BOOL),
    "Unique": ([helper.make_node("Unique", ["x"], ["y"])], [], 1),
    "Pad": (
        [helper.make_node("Pad", ["x", "p", "v"], ["y"])],
        [i64("p", [0, 1, 0, 0]), helper.make_tensor("v", T.STRING, [], [b"_"])],
        2,
    ),
}


@pytest.mark.parametrize("device", ["TEMPLATE", "HETERO:XLA,TEMPLATE"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_strings_are_carried_as_onnx_reference_carries_them(case: str, device: str) -> None:
    if device != "TEMPLATE":
        pytest.importorskip("hetero_sdk_jax", reason="the XLA plugin (plugins/jax) is not installed")
    nodes, initializers, rank, *out_type = CASES[case]
    assert run(model(nodes, initializers, rank, *out_type), device=device) == "OK"


@pytest.mark.parametrize(
    ("to", "values"),
    [
        (T.FLOAT, [["1.5", "-2", "1e3"], ["0.1", "NaN", "-INF"]]),
        (T.INT64, [["15", "-2", "7"], ["0", "9223372036854775807", "3"]]),
    ],
)
def test_cast_from_strings_as_onnx_reference_casts(to: int, values: list[list[str]]) -> None:
    nodes = [helper.make_node("Cast", ["x"], ["y"], to=to)]
    assert run(model(nodes, [], 2, to), np.array(values, object)) == "OK"


def test_cast_numbers_to_strings_and_back_as_onnx_reference_does() -> None:
    nodes = [helper.make_node("Cast", ["x"], ["f"], to=T.FLOAT), helper.make_node("Cast", ["f"], ["y"], to=T.STRING)]
    assert run(model(nodes, [], 2), np.array([["1.5", "-2", "1e3"], ["0.1", "NaN", "-INF"]], object)) == "OK"
