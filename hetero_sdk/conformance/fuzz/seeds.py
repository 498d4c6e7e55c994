"""The models the fuzzer mutates: ONNX's node tests (from the conformance kit's cache of them) and
small models built here, as ONNX, as the native format, and as exported blobs."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from hetero_sdk.conformance.onnx_node.cases import ensure_cache, load_case
from hetero_sdk.core import Core
from hetero_sdk.frontend import read_model
from hetero_sdk.serialization import model_to_bytes

__all__ = ["CI_NODE_TESTS", "OnnxSeed", "blob_seeds", "built_seeds", "native_seeds", "node_test_seeds"]

CI_NODE_TESTS = (
    "test_abs", "test_add_bcast", "test_argmax_keepdims_example", "test_averagepool_2d_strides",
    "test_cast_FLOAT_to_DOUBLE", "test_compress_0", "test_concat_2d_axis_0", "test_conv_with_strides_padding",
    "test_cumsum_1d", "test_depthtospace_example", "test_einsum_batch_matmul", "test_flatten_axis1",
    "test_gather_0", "test_gemm_all_attributes", "test_hardmax_axis_1", "test_lrn", "test_matmul_2d",
    "test_maxpool_2d_pads", "test_pow", "test_reduce_sum_keepdims_example", "test_relu",
    "test_resize_upsample_scales_nearest", "test_slice", "test_softmax_axis_1", "test_split_equal_parts_1d_opset18",
    "test_tile", "test_top_k", "test_transpose_all_permutations_0", "test_where_example", "test_scan9_sum",
    "test_dft", "test_loop11", "test_tfidfvectorizer_tf_batch_onlybigrams_skip0", "test_layer_normalization_2d_axis0",
)  # fmt: skip
"""The node tests the CI fuzz test starts from: ops with attributes, windows, indices, control flow."""


@dataclass(frozen=True)
class OnnxSeed:
    """An ONNX model to mutate, and where it came from."""

    name: str
    model: onnx.ModelProto


def node_test_seeds(names: Sequence[str] | None = None) -> list[OnnxSeed]:
    """ONNX's node tests (all, or those of ``names`` that this onnx has); each also as a variant whose
    first input is an initializer holding the test's data (so that weights, and external data, are
    fuzzed too)."""
    index = ensure_cache()
    chosen = sorted(index) if names is None else [n for n in names if n in index]
    seeds = []
    for name in chosen:
        case = load_case(name)
        seeds.append(OnnxSeed(name, case.model))
        first = case.data_sets[0][0][0] if case.data_sets and case.data_sets[0][0] else None
        if isinstance(first, np.ndarray) and first.dtype != object and case.model.graph.input:
            seeds.append(OnnxSeed(f"{name}+initializer", _input_as_initializer(case.model, first)))
    return seeds


def _input_as_initializer(model: onnx.ModelProto, value: np.ndarray) -> onnx.ModelProto:
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    graph_input = copy.graph.input[0]
    copy.graph.initializer.append(numpy_helper.from_array(value, graph_input.name))
    del copy.graph.input[0]
    return copy


def built_seeds() -> list[OnnxSeed]:
    """Small models built here: a dense layer with weights (MatMul, Add, Relu) and a convolution with
    a bias, both with initializers large enough for external data."""
    rng = np.random.default_rng(0)
    w = numpy_helper.from_array(rng.standard_normal((8, 4)).astype(np.float32), "w")
    b = numpy_helper.from_array(rng.standard_normal(4).astype(np.float32), "b")
    dense = helper.make_graph(
        [
            helper.make_node("MatMul", ["x", "w"], ["mm"], name="mm"),
            helper.make_node("Add", ["mm", "b"], ["sum"], name="add"),
            helper.make_node("Relu", ["sum"], ["y"], name="act"),
        ],
        "dense",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 4])],
        [w, b],
    )
    k = numpy_helper.from_array(rng.standard_normal((2, 3, 3, 3)).astype(np.float32), "k")
    kb = numpy_helper.from_array(rng.standard_normal(2).astype(np.float32), "kb")
    conv = helper.make_graph(
        [
            helper.make_node("Conv", ["x", "k", "kb"], ["c"], name="conv", pads=[1, 1, 1, 1], strides=[2, 2]),
            helper.make_node("MaxPool", ["c"], ["y"], name="pool", kernel_shape=[2, 2], strides=[1, 1]),
        ],
        "conv",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2, 3, 3])],
        [k, kb],
    )
    opset = [helper.make_opsetid("", 17)]
    return [
        OnnxSeed("built_dense", helper.make_model(dense, opset_imports=opset, ir_version=8)),
        OnnxSeed("built_conv", helper.make_model(conv, opset_imports=opset, ir_version=8)),
    ]


def native_seeds() -> list[tuple[str, bytes]]:
    """The built models in the native format (:func:`~hetero_sdk.serialization.model_to_bytes`)."""
    return [(seed.name, model_to_bytes(read_model(seed.model.SerializeToString()))) for seed in built_seeds()]


def blob_seeds(core: Core | None = None) -> list[tuple[str, bytes]]:
    """The built dense model compiled and exported on TEMPLATE, and on XLA and ``HETERO:XLA,TEMPLATE``
    where XLA is available, as (device, blob)."""
    core = core or Core()
    model = read_model(built_seeds()[0].model.SerializeToString())
    model.reshape({"x": [2, 8]})
    devices = ["TEMPLATE", "HETERO:TEMPLATE"]
    if "XLA" in {d.split(".")[0] for d in core.available_devices}:
        devices += ["XLA", "HETERO:XLA,TEMPLATE"]
    return [(device, core.compile_model(model, device).export_model()) for device in devices]
