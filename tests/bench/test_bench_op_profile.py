"""bench/bench_op_profile.py's ONNX Runtime side: the kind it gives each ORT node from its op and input
shapes, and its parse of ORT's profiling trace on a small model whose kinds of node are known."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from bench_modules import load_bench_module
from onnx import TensorProto, helper, numpy_helper

pytest.importorskip("onnxruntime")
_saved = dict(os.environ)
profile = load_bench_module("bench_op_profile")  # (it sets the thread variables for its own process)
os.environ.clear()
os.environ.update(_saved)


@pytest.mark.parametrize(
    ("op_name", "shapes", "kind"),
    [
        ("Conv", [[1, 32, 40, 40], [64, 32, 1, 1], [64]], "matrix products"),
        ("FusedConv", [[1, 32, 40, 40], [64, 32, 3, 3], [64]], "convolutions"),
        ("Conv", [[1, 32, 40, 40], [32, 1, 3, 3], [32]], "depthwise"),
        ("Conv", [[1, 1, 48, 320], [16, 1, 3, 3], [16]], "convolutions"),  # one input channel, one group
        ("FusedMatMul", [[1, 120, 40], [1, 40, 120]], "matrix products"),
        ("Gemm", [[1, 480], [480, 10], [10]], "matrix products"),
        ("GlobalAveragePool", [[1, 480, 1, 80]], "reductions"),
        ("ReduceMean", [[1, 480, 1, 80], [1]], "reductions"),
        ("Softmax", [[1, 40, 6625]], "reductions"),
        ("ReorderInput", [[1, 16, 80, 80]], "element-wise and movement"),
        ("QuickGelu", [[1, 16, 80, 80]], "element-wise and movement"),
        ("Resize", [[1, 64, 20, 20], [], [4]], "element-wise and movement"),
    ],
)
def test_onnxruntime_nodes_get_the_kinds_openvino_s_get(op_name: str, shapes: list[list[int]], kind: str) -> None:
    assert profile.onnxruntime_kind(op_name, shapes) == kind


def _small_model() -> bytes:
    """x [1, 8, 12, 12] -> 3x3 conv -> depthwise 3x3 -> 1x1 conv -> relu -> global average pool."""
    rng = np.random.default_rng(0)
    weights = {
        "w3": rng.standard_normal((8, 8, 3, 3)),
        "wd": rng.standard_normal((8, 1, 3, 3)),
        "w1": rng.standard_normal((16, 8, 1, 1)),
    }
    nodes = [
        helper.make_node("Conv", ["x", "w3"], ["a"], name="full3x3", pads=[1, 1, 1, 1]),
        helper.make_node("Conv", ["a", "wd"], ["b"], name="depthwise3x3", pads=[1, 1, 1, 1], group=8),
        helper.make_node("Conv", ["b", "w1"], ["c"], name="pointwise"),
        helper.make_node("Relu", ["c"], ["d"], name="relu"),
        helper.make_node("GlobalAveragePool", ["d"], ["y"], name="pool"),
    ]
    graph = helper.make_graph(
        nodes,
        "small",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 12, 12])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16, 1, 1])],
        [numpy_helper.from_array(w.astype(np.float32), n) for n, w in weights.items()],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()


def test_the_onnxruntime_trace_is_read_into_timed_nodes_by_kind(tmp_path: Path) -> None:
    path = tmp_path / "small.onnx"
    path.write_bytes(_small_model())
    feeds = {"x": np.ones((1, 8, 12, 12), np.float32)}
    median, rows = profile.onnxruntime_profile(path, feeds, runs=4, percentile=20.0)
    assert median > 0
    kinds = profile.by_kind(rows)
    for kind in ("convolutions", "depthwise", "matrix products", "reductions"):
        assert kinds[kind] > 0, (kind, rows)
    assert kinds["other native kernels"] == 0
    assert all(not name.endswith("_kernel_time") and us >= 0 for name, (_, _, us) in rows.items())
    assert ("reductions", "GlobalAveragePool 1x16x1x1 <- 1x16x12x12") in {
        (kind, what) for kind, what, _ in rows.values()
    }
