"""OpenVINO IR written by OpenVINO itself (``ov.save_model``) read here and run on every device against
OpenVINO's CPU at f32, and IR written here read by OpenVINO with equal results."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from bench_modules import load_bench_module
from hypothesis import given, settings
from hypothesis import strategies as st

import hetero_sdk as hs
from hetero_sdk import opset

ov = pytest.importorskip("openvino")
ov_ops = pytest.importorskip("openvino.opset13")

EXACT = {"INFERENCE_PRECISION_HINT": "f32", "DYNAMIC_QUANTIZATION_GROUP_SIZE": "0"}
"""OpenVINO's CPU at f32, without quantizing activations on the fly for compressed weights."""
DEVICES = ["TEMPLATE", "XLA", "HETERO:XLA,TEMPLATE"]
RTOL, ATOL = 1e-4, 1e-4
real_models = load_bench_module("real_models")
VISION = sorted(k for k in real_models.MODELS if k != "silero-vad")  # OpenVINO's ONNX frontend refuses Silero's If


def openvino_outputs(model: Any, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    """OpenVINO's CPU results at f32: the reference."""
    compiled = ov.Core().compile_model(model, "CPU", EXACT)
    result = compiled(feeds)
    return [np.asarray(result[out]) for out in compiled.outputs]


def save_openvino_ir(source: Any, folder: Path, compress: bool) -> Path:
    path = folder / "m.xml"
    ov.save_model(
        ov.convert_model(source) if not isinstance(source, ov.Model) else source, path, compress_to_fp16=compress
    )
    return path


def fetch(key: str) -> Any:
    model = real_models.MODELS[key]
    try:
        return model, real_models.fetch(model)
    except real_models.FetchError as exc:
        pytest.skip(str(exc))


@pytest.mark.parametrize(
    ("key", "device", "compress"),
    [(k, d, False) for k in VISION for d in DEVICES] + [(k, "TEMPLATE", True) for k in VISION],
)
def test_real_model_saved_by_openvino_matches_openvino_cpu(
    key: str, device: str, compress: bool, tmp_path: Path
) -> None:
    model, onnx_path = fetch(key)
    ov_model = ov.convert_model(onnx_path)
    if model.input_shapes:
        ov_model.reshape(model.input_shapes)
    path = save_openvino_ir(ov_model, tmp_path, compress)
    expected = openvino_outputs(ov.Core().read_model(path), model.feeds)
    ours = hs.Core().read_model(path)
    compiled = hs.Core().compile_model(ours, device)
    results = compiled(model.feeds)
    for i, value in enumerate(expected):
        np.testing.assert_allclose(results[i], value, rtol=RTOL, atol=ATOL, err_msg=f"output {i}")


def _attention_model() -> Any:
    q = ov_ops.parameter([1, 2, -1, 8], np.float32, name="q")
    k = ov_ops.parameter([1, 2, -1, 8], np.float32, name="k")
    v = ov_ops.parameter([1, 2, -1, 8], np.float32, name="v")
    mask = ov_ops.parameter([1, 1, -1, -1], np.float32, name="mask")
    causal = ov_ops.scaled_dot_product_attention(q, k, v, causal=True)
    masked = ov_ops.scaled_dot_product_attention(q, k, v, mask, ov_ops.constant(np.float32(0.3)))
    return ov.Model([causal, masked], [q, k, v, mask], "attention")


def _quantized_model() -> Any:
    """NNCF's forms: FakeQuantize on the activations, u8/i4 weights with a zero point and a scale."""
    x = ov_ops.parameter([-1, 6], np.float32, name="x")
    low, high = ov_ops.constant(np.float32(-1.0)), ov_ops.constant(np.float32(1.5))
    fq = ov_ops.fake_quantize(x, low, high, low, high, 256)
    w8 = ov_ops.constant(np.arange(24, dtype=np.uint8).reshape(4, 6) * 9, dtype=ov.Type.u8)
    dequantized = ov_ops.multiply(
        ov_ops.subtract(
            ov_ops.convert(w8, "f32"), ov_ops.convert(ov_ops.constant(np.full((4, 1), 100, np.uint8)), "f32")
        ),
        ov_ops.constant(np.full((4, 1), 0.01, np.float32)),
    )
    w4 = ov_ops.constant(np.array([[-8, -3, 0, 1, 5, 7]] * 3, np.int8), dtype=ov.Type.i4)
    scaled4 = ov_ops.multiply(ov_ops.convert(w4, "f32"), ov_ops.constant(np.float32(0.25)))
    y = ov_ops.matmul(fq, dequantized, False, True)
    z = ov_ops.matmul(fq, scaled4, False, True)
    hard = ov_ops.hard_sigmoid(y, ov_ops.constant(np.float32(0.2)), ov_ops.constant(np.float32(0.5)))
    return ov.Model([hard, z, ov_ops.is_nan(z)], [x], "quantized")


BUILT = {"attention": _attention_model, "quantized": _quantized_model}


def _feeds(key: str, rng: np.random.Generator, length: int) -> dict[str, np.ndarray]:
    if key == "attention":
        q, k, v = (rng.standard_normal((1, 2, length, 8)).astype(np.float32) for _ in range(3))
        return {"q": q, "k": k, "v": v, "mask": rng.standard_normal((1, 1, length, length)).astype(np.float32)}
    return {"x": (rng.standard_normal((length, 6)) * 2).astype(np.float32)}


@pytest.mark.parametrize("compress", [False, True])
@pytest.mark.parametrize("key", sorted(BUILT))
@pytest.mark.parametrize("device", DEVICES)
def test_built_model_saved_by_openvino_matches_openvino_cpu(
    key: str, device: str, compress: bool, tmp_path: Path
) -> None:
    path = save_openvino_ir(BUILT[key](), tmp_path, compress)
    feeds = _feeds(key, np.random.default_rng(0), 5)
    expected = openvino_outputs(ov.Core().read_model(path), feeds)
    results = hs.Core().compile_model(hs.Core().read_model(path), device)(feeds)
    for i, value in enumerate(expected):
        np.testing.assert_allclose(results[i], value, rtol=RTOL, atol=ATOL, err_msg=f"output {i}")


@settings(max_examples=10, deadline=None)
@given(length=st.integers(1, 7), seed=st.integers(0, 2**32 - 1))
def test_attention_and_quantization_on_template_match_openvino_for_any_length(length: int, seed: int) -> None:
    import tempfile

    for key, build in BUILT.items():
        with tempfile.TemporaryDirectory() as folder:
            path = save_openvino_ir(build(), Path(folder), False)
            feeds = _feeds(key, np.random.default_rng(seed), length)
            expected = openvino_outputs(ov.Core().read_model(path), feeds)
            results = hs.Core().compile_model(hs.Core().read_model(path), "TEMPLATE")(feeds)
        for i, value in enumerate(expected):
            np.testing.assert_allclose(results[i], value, rtol=RTOL, atol=ATOL, err_msg=f"{key} output {i}")


def test_ir_saved_here_loads_in_openvino_and_computes_the_same(tmp_path: Path) -> None:
    x = opset.parameter([-1, 3, 8, 8], np.float32, name="image")
    w = np.random.default_rng(1).standard_normal((4, 3, 3, 3)).astype(np.float32)
    conv = opset.convolution(x, w, [1, 1], [1, 1], [1, 1], [1, 1], name="conv")
    pooled = opset.max_pool(opset.relu(conv), [2, 2], [1, 1], [0, 0], [0, 0], [2, 2], name="pool")
    out = opset.softmax(opset.reshape(pooled.output(0), [0, -1], True), 1, name="probs")
    model = hs.Model([out], [x], "tiny")
    model.get_rt_info()["framework"] = {"name": "hetero-sdk"}
    path = tmp_path / "tiny.xml"
    hs.save_model(model, path)
    feeds = {"image": np.random.default_rng(2).standard_normal((2, 3, 8, 8)).astype(np.float32)}
    expected = openvino_outputs(ov.Core().read_model(path), feeds)
    independent = _numpy_tiny(feeds["image"], w)
    np.testing.assert_allclose(expected[0], independent, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(hs.Core().compile_model(model, "TEMPLATE")(feeds)[0], expected[0], rtol=RTOL, atol=ATOL)


def _numpy_tiny(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    padded = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    windows = np.lib.stride_tricks.sliding_window_view(padded, (3, 3), axis=(2, 3))
    conv = np.maximum(np.einsum("nchwij,ocij->nohw", windows, w), 0)
    pooled = conv.reshape(2, 4, 4, 2, 4, 2).max(axis=(3, 5)).reshape(2, -1)
    e = np.exp(pooled - pooled.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


@pytest.mark.parametrize("key", VISION)
def test_real_model_read_here_and_saved_here_reads_back_equal_and_runs_in_openvino_unchanged(
    key: str, tmp_path: Path
) -> None:
    model, onnx_path = fetch(key)
    ov_model = ov.convert_model(onnx_path)
    if model.input_shapes:
        ov_model.reshape(model.input_shapes)
    path = save_openvino_ir(ov_model, tmp_path, False)
    expected = openvino_outputs(ov.Core().read_model(path), model.feeds)
    first = hs.Core().read_model(path)
    hs.save_model(first, tmp_path / "again.xml")
    second = hs.Core().read_model(tmp_path / "again.xml")
    for a, b in zip(first.get_ordered_ops(), second.get_ordered_ops(), strict=True):
        assert (a.friendly_name, a.type_name, a.get_rt_info()) == (b.friendly_name, b.type_name, b.get_rt_info())
        for pa, pb in zip(a.outputs(), b.outputs(), strict=True):
            assert (pa.element_type, pa.partial_shape, pa.get_names()) == (
                pb.element_type,
                pb.partial_shape,
                pb.get_names(),
            )
    assert second.get_rt_info() == first.get_rt_info()
    again = ov.Core().read_model(tmp_path / "again.xml")
    assert [sorted(p.get_names()) for p in again.inputs] == [sorted(p.get_names()) for p in ov_model.inputs]
    for i, value in enumerate(openvino_outputs(again, model.feeds)):
        np.testing.assert_allclose(value, expected[i], rtol=RTOL, atol=ATOL, err_msg=f"output {i}")


def test_layouts_and_dynamic_dims_set_in_openvino_survive_a_save_here(tmp_path: Path) -> None:
    x = ov_ops.parameter([-1, 3, -1, -1], np.float32, name="image")
    x.set_layout(ov.Layout("NCHW"))
    model = ov.Model([ov_ops.relu(x)], [x], "layout")
    model.set_rt_info("hetero-sdk test", ["framework", "name"])
    ov.save_model(model, tmp_path / "m.xml")
    ours = hs.Core().read_model(tmp_path / "m.xml")
    assert ours.get_parameters()[0].get_output_partial_shape(0) == [-1, 3, -1, -1]
    hs.save_model(ours, tmp_path / "again.xml")
    again = ov.Core().read_model(tmp_path / "again.xml")
    assert again.inputs[0].get_node().get_layout() == ov.Layout("NCHW")
    assert again.inputs[0].get_partial_shape() == ov.PartialShape([-1, 3, -1, -1])
    assert again.get_rt_info(["framework", "name"]).astype(str) == "hetero-sdk test"


OLDER = {
    "MaxPool-1": lambda x: pytest.importorskip("openvino.opset1").max_pool(x, [1, 1], [0, 0], [0, 0], [2, 2]),
    "SoftMax-1": lambda x: pytest.importorskip("openvino.opset1").softmax(x, 1),
    "Gather-7": lambda x: pytest.importorskip("openvino.opset7").gather(x, ov_ops.constant(np.array([2, 0])), 1),
    "Gather-1": lambda x: pytest.importorskip("openvino.opset1").gather(
        x, ov_ops.constant(np.array([1])), ov_ops.constant(np.int64(2))
    ),
    "TopK-3": lambda x: pytest.importorskip("openvino.opset3").topk(x, ov_ops.constant(np.int64(2)), 1, "max", "value"),
    "HSwish-4": lambda x: ov_ops.hswish(x),
    "Gelu-2": lambda x: pytest.importorskip("openvino.opset2").gelu(x),
}


@pytest.mark.parametrize("key", sorted(OLDER))
def test_older_op_versions_with_a_subset_of_the_semantics_read_and_match(key: str, tmp_path: Path) -> None:
    x = ov_ops.parameter([2, 3, 4, 4], np.float32, name="x")
    node = OLDER[key](x)
    ov.save_model(ov.Model([node.output(0)], [x], "older"), tmp_path / "m.xml")
    feeds = {"x": np.random.default_rng(3).standard_normal((2, 3, 4, 4)).astype(np.float32)}
    expected = openvino_outputs(ov.Core().read_model(tmp_path / "m.xml"), feeds)
    got = hs.Core().compile_model(hs.Core().read_model(tmp_path / "m.xml"), "TEMPLATE")(feeds)
    np.testing.assert_allclose(got[0], expected[0], rtol=RTOL, atol=ATOL)


def test_a_version_with_other_semantics_is_refused_naming_the_layer(tmp_path: Path) -> None:
    opset1 = pytest.importorskip("openvino.opset1")
    x = ov_ops.parameter([1, 3, 4, 4], np.float32, name="x")
    interpolate = opset1.interpolate(x, ov_ops.constant(np.array([8, 8])), {"axes": [2, 3], "mode": "nearest"})
    interpolate.set_friendly_name("upsample")
    ov.save_model(ov.Model([interpolate], [x]), tmp_path / "m.xml")
    with pytest.raises(hs.errors.ModelFormatError, match=r"'upsample', Interpolate opset1\).*opset11"):
        hs.Core().read_model(tmp_path / "m.xml")


DECODERS = Path(__file__).resolve().parents[2] / "data" / "decoders"


def _decoder_feeds(model: Any, past: int = 3, new: int = 4) -> dict[str, np.ndarray]:
    """A step with ``past`` cached positions and ``new`` tokens: random ids and caches, a full mask."""
    rng = np.random.default_rng(0)
    feeds: dict[str, np.ndarray] = {}
    for port in model.inputs:
        name = port.any_name
        if name == "input_ids":
            feeds[name] = rng.integers(0, 50, (1, new)).astype(np.int64)
        elif name == "attention_mask":
            feeds[name] = np.ones((1, past + new), np.int64)
        elif name == "position_ids":
            feeds[name] = np.arange(past, past + new, dtype=np.int64)[None]
        else:  # a cache: [batch, heads, past, head size]
            dims = [1, port.partial_shape[1].get_length(), past, port.partial_shape[3].get_length()]
            feeds[name] = rng.standard_normal(dims).astype(np.float32)
    return feeds


@pytest.mark.parametrize(
    ("name", "device"),
    [("gpt2", d) for d in DEVICES] + [("llama", "TEMPLATE"), ("qwen2", "TEMPLATE")],
)
def test_decoder_saved_by_openvino_matches_openvino_cpu(name: str, device: str, tmp_path: Path) -> None:
    path = save_openvino_ir(DECODERS / f"{name}.onnx", tmp_path, False)
    ov_model = ov.Core().read_model(path)
    feeds = _decoder_feeds(ov_model)
    expected = openvino_outputs(ov_model, feeds)
    results = hs.Core().compile_model(hs.Core().read_model(path), device)(feeds)
    for i, value in enumerate(expected):
        np.testing.assert_allclose(results[i], value, rtol=RTOL, atol=ATOL, err_msg=f"output {i}")


def _mlp() -> Any:
    rng = np.random.default_rng(4)
    x = ov_ops.parameter([-1, 64], np.float32, name="x")
    w1, w2 = (rng.standard_normal(s).astype(np.float32) for s in ((128, 64), (32, 128)))
    hidden = ov_ops.relu(ov_ops.matmul(x, ov_ops.constant(w1), False, True))
    return ov.Model([ov_ops.matmul(hidden, ov_ops.constant(w2), False, True)], [x], "mlp")


NNCF_MODES = ["INT8_ASYM", "INT8_SYM", "INT4_SYM", "INT4_ASYM", "QUANTIZE"]


@pytest.mark.parametrize("mode", NNCF_MODES)
@pytest.mark.parametrize("device", ["TEMPLATE", "XLA"])
def test_models_compressed_or_quantized_by_nncf_match_openvino_cpu(mode: str, device: str, tmp_path: Path) -> None:
    nncf = pytest.importorskip("nncf")
    rng = np.random.default_rng(5)
    if mode == "QUANTIZE":
        data = nncf.Dataset([rng.standard_normal((2, 64)).astype(np.float32) for _ in range(4)])
        model = nncf.quantize(_mlp(), data, subset_size=4)
    else:
        grouped = {} if mode.startswith("INT8") else {"ratio": 1.0, "group_size": 32, "all_layers": True}
        model = nncf.compress_weights(_mlp(), mode=getattr(nncf.CompressWeightsMode, mode), **grouped)
    path = save_openvino_ir(model, tmp_path, False)
    written = path.read_text()
    expected_types = {"INT8_ASYM": "u8", "INT8_SYM": "i8", "INT4_SYM": "i4", "INT4_ASYM": "u4", "QUANTIZE": "i8"}
    assert f'element_type="{expected_types[mode]}"' in written
    assert mode != "QUANTIZE" or 'type="FakeQuantize"' in written
    feeds = {"x": rng.standard_normal((3, 64)).astype(np.float32)}
    expected = openvino_outputs(ov.Core().read_model(path), feeds)
    results = hs.Core().compile_model(hs.Core().read_model(path), device)(feeds)
    np.testing.assert_allclose(results[0], expected[0], rtol=RTOL, atol=ATOL)
