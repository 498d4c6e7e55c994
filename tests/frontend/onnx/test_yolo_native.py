"""YOLOv8n (``nudenet``'s 320n.onnx, 320x320) and a YOLOX-style detector (ddddocr's ``common_det.onnx``, 416x416),
whose 3x3 convolutions of 16 and more input channels run in the native conv2d kernel, whose 1x1 convolutions
run on the native GEMM kernel's in-place path, each with its bias and SiLU fused, and YOLOX's Focus and first
convolution as one 6x6 stride-2 convolution of the image in the native stem kernel, give ONNX Runtime's outputs on
XLA with native kernels on and off (YOLOv8n's DFL head as one ``XlaSoftmaxExpectation``; its 16->16 layers at
80x80 in the kernel's row tiles, its 16->32 stride-2 layer and YOLOX's 24->24 at 104x104 in the kernel too; the
channel Concats before 1x1 convolutions read in place by the GEMM's multi-operand form), and YOLOv8n's exported
blob (which calls that form) gives the same outputs imported.
The models are downloaded once with ``pip download``; offline these tests skip."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from bench_modules import load_bench_module

import hetero_sdk as hs

pytest.importorskip("onnxruntime")
jax_native = pytest.importorskip("hetero_sdk_jax.native")

real_models = load_bench_module("real_models")
FUSED_CONV2D = "hetero_sdk_conv2d_bias"
FUSED_GEMM = "hetero_sdk_gemm_f32_fused"
FEW_CHANNEL_LAYERS = {
    "yolov8n": {"f32[1,80,80,16]": 2, "f32[1,80,80,32]": 1},
    "yolox": {"f32[1,104,104,24]": 1},
}
"""Results of the models' 3x3 layers of 16-24 input channels the conv2d kernel takes, and how many of each."""
STEM = "hetero_sdk_stem_conv"
CONCAT_GEMM = "hetero_sdk_gemm_f32_fused_concat"
CONCATS_READ_IN_PLACE = {"yolov8n": 13, "yolox": 13}
"""The channel Concats before 1x1 convolutions whose parts the native GEMM reads in place (YOLOv8n's C2f blocks,
SPPF and neck; YOLOX's CSP blocks, SPP and neck): every Concat of each model but its heads' ones."""


def _compiled(key: str, native_kernels: bool) -> tuple[Any, Any, Any]:
    """The model of ``real_models.ISSUE_MODELS[key]`` compiled for XLA, its file and its feeds (a skip offline)."""
    if native_kernels and not (jax_native.available(FUSED_CONV2D) and jax_native.available(FUSED_GEMM)):
        pytest.skip("the native conv2d and GEMM kernels cannot be built here (no compiler or AVX-512F)")
    model = real_models.ISSUE_MODELS[key]
    try:
        path = real_models.fetch(model)
    except real_models.FetchError as exc:
        pytest.skip(str(exc))
    converted = real_models.read(model, path)
    return hs.Core().compile_model(converted, "XLA", {"XLA_NATIVE_KERNELS": native_kernels}), path, model.feeds


@pytest.mark.parametrize("native_kernels", [True, False])
@pytest.mark.parametrize("key", ["yolov8n", "yolox"])
def test_yolo_matches_onnx_runtime_with_and_without_the_native_kernels(key: str, native_kernels: bool) -> None:
    compiled, path, feeds = _compiled(key, native_kernels)
    results = compiled(feeds)
    program = compiled.jax_executable().as_text()
    assert (FUSED_CONV2D in program) is native_kernels
    assert (FUSED_GEMM in program) is native_kernels
    calls = [line for line in program.splitlines() if f'custom_call_target="{FUSED_CONV2D}"' in line]
    for result, count in FEW_CHANNEL_LAYERS[key].items():
        assert sum(f"= {result}{{3,2,1,0}} custom-call" in line for line in calls) == (count if native_kernels else 0)
    assert program.count(f'custom_call_target="{STEM}"') == int(native_kernels and key == "yolox")
    assert program.count(f'custom_call_target="{CONCAT_GEMM}"') == (CONCATS_READ_IN_PLACE[key] if native_kernels else 0)
    ops = compiled.get_runtime_model().get_ops()
    if key == "yolov8n":
        types = [n.type_name for n in ops]
        assert types.count("XlaSoftmaxExpectation") == 1 and "Softmax" not in types
    else:  # the Focus and its 3x3 convolution: one 6x6 stride-2 convolution of the image, its bias and SiLU
        stems = [n for n in ops if n.type_name == "XlaConvolution" and n.input_value(0).node.type_name == "Parameter"]
        assert len(stems) == 1 and stems[0].attrs["strides"] == [2, 2] and stems[0].attrs["activation"] == "silu"
        assert list(stems[0].input_value(1).partial_shape.to_shape())[1:] == [3, 6, 6]
    for name, value in real_models.onnx_runtime_outputs(path, feeds).items():
        scale = float(np.max(np.abs(value)))  # box coordinates reach a few hundred pixels
        np.testing.assert_allclose(results[name], value, rtol=1e-4, atol=1e-5 * max(scale, 1.0), err_msg=name)


def test_yolov8n_exported_with_the_native_kernels_runs_the_same_imported() -> None:
    compiled, _, feeds = _compiled("yolov8n", True)
    expected = list(compiled(feeds).values())
    imported: Any = hs.Core().import_model(compiled.export_model(), "XLA")
    got = list(imported(feeds).values())
    assert len(got) == len(expected)
    for value, reference in zip(got, expected):
        np.testing.assert_array_equal(value, reference)
