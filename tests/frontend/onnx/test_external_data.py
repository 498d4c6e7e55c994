"""ONNX external data: every field of a reference checked in one place (a typed error naming the tensor
and the field), the weights read as views of the memory-mapped file (never copied), and results on
TEMPLATE and XLA equal to ONNX Runtime's on the mapped weights."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from hetero_sdk_jax import XlaPlugin
from hypothesis import given
from hypothesis import strategies as st
from memory_maps import mapping_of
from onnx import external_data_helper, helper, numpy_helper
from onnx_models import FEW, value_info

import hetero_sdk as hs
from hetero_sdk.errors import ModelFormatError
from template_plugin import TemplatePlugin

_RNG = np.random.default_rng(7)
WEIGHTS: dict[str, np.ndarray] = {
    "embedding": _RNG.standard_normal((300, 64)).astype(np.float32),  # 75 KiB: a weight on XLA too
    "w1": _RNG.standard_normal((64, 160)).astype(np.float32),  # 40 KiB: a constant baked into XLA's program
    "b1": _RNG.standard_normal(160).astype(np.float32),
    "w2": _RNG.standard_normal((160, 128)).astype(np.float32),  # 80 KiB
    "scale": _RNG.standard_normal(128).astype(np.float16),
}


def _decoder_like_model() -> onnx.ModelProto:
    """Embedding lookup, a two-layer MLP and an f16 scale: weights of several sizes and types."""
    nodes = [
        helper.make_node("Gather", ["embedding", "ids"], ["embedded"], name="embed"),
        helper.make_node("MatMul", ["embedded", "w1"], ["h"], name="fc1"),
        helper.make_node("Add", ["h", "b1"], ["hb"], name="bias1"),
        helper.make_node("Relu", ["hb"], ["r"], name="relu"),
        helper.make_node("MatMul", ["r", "w2"], ["o"], name="fc2"),
        helper.make_node("Cast", ["scale"], ["scale32"], to=onnx.TensorProto.FLOAT, name="widen"),
        helper.make_node("Mul", ["o", "scale32"], ["y"], name="scaled"),
    ]
    graph = helper.make_graph(
        nodes,
        "decoder_like",
        [value_info("ids", np.int64, [2, "seq"])],
        [value_info("y", np.float32, [2, "seq", 128])],
        [numpy_helper.from_array(value, name) for name, value in WEIGHTS.items()],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def _save(model: onnx.ModelProto, folder: Path, location: str = "model.onnx.data") -> Path:
    """``model`` written with every tensor in one external file beside it (ONNX's own writer)."""
    external_data_helper.convert_model_to_external_data(model, location=location, size_threshold=0)
    path = folder / "model.onnx"
    onnx.save_model(model, path)
    return path


def _edit_reference(path: Path, tensor: str, **fields: str) -> None:
    """Rewrites fields of ``tensor``'s external data reference in the saved model."""
    model = onnx.load(path, load_external_data=False)
    target = next(t for t in model.graph.initializer if t.name == tensor)
    entries = {entry.key: entry.value for entry in target.external_data}
    entries.update(fields)
    del target.external_data[:]
    for key, value in entries.items():
        target.external_data.add(key=key, value=value)
    onnx.save_model(model, path)


def _initializers(model: hs.Model) -> dict[str, np.ndarray]:
    """The values of the Constants that stand for the ONNX initializers (by their names)."""
    ops = model.get_ops()
    return {n.friendly_name: n.attrs["value"] for n in ops if n.type_name == "Constant" and n.friendly_name in WEIGHTS}


# -- the weights are views of the mapped file ---------------------------------------------------------


def test_constants_read_from_external_data_are_read_only_views_of_the_mapped_file(tmp_path: Path) -> None:
    path = _save(_decoder_like_model(), tmp_path)
    offsets = {
        t.name: int({e.key: e.value for e in t.external_data}.get("offset", 0))
        for t in onnx.load(path, load_external_data=False).graph.initializer
    }
    constants = _initializers(hs.convert_model(path))
    assert set(constants) == set(WEIGHTS)
    for name, value in constants.items():
        mapping = mapping_of(value)
        assert mapping is not None, f"{name} is not a view of a memory mapping"
        whole = np.frombuffer(mapping, np.uint8)
        assert np.shares_memory(value, whole)
        assert value.ctypes.data - whole.ctypes.data == offsets[name], f"{name} is not at its offset in the file"
        assert not value.flags.writeable
        np.testing.assert_array_equal(value, WEIGHTS[name])
        assert value.dtype == WEIGHTS[name].dtype


def test_inline_initializers_are_copied_once_and_read_only(tmp_path: Path) -> None:
    path = tmp_path / "inline.onnx"
    onnx.save_model(_decoder_like_model(), path)
    constants = _initializers(hs.convert_model(path))
    assert set(constants) == set(WEIGHTS)
    for name, value in constants.items():
        assert mapping_of(value) is None
        assert not value.flags.writeable
        np.testing.assert_array_equal(value, WEIGHTS[name])


@pytest.mark.parametrize("device", ["TEMPLATE", "XLA"])
def test_a_model_with_external_data_gives_onnx_runtimes_results(tmp_path: Path, device: str) -> None:
    path = _save(_decoder_like_model(), tmp_path)
    ids = np.array([[0, 5, 299], [17, 17, 3]], np.int64)
    expected = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(["y"], {"ids": ids})[0]
    by_hand = (np.maximum(WEIGHTS["embedding"][ids] @ WEIGHTS["w1"] + WEIGHTS["b1"], 0) @ WEIGHTS["w2"]) * WEIGHTS[
        "scale"
    ].astype(np.float32)
    np.testing.assert_allclose(expected, by_hand, rtol=1e-4, atol=1e-4)
    core = hs.Core(plugins={"TEMPLATE": TemplatePlugin, "XLA": XlaPlugin}, autoload=False)
    compiled = core.compile_model(core.read_model(path), device)
    # f32 sums of a different order (XLA's native GEMM blocks K) over outputs of magnitude ~100: 1e-6 of that
    tolerance = 1e-6 * float(np.abs(expected).max())
    np.testing.assert_allclose(compiled({"ids": ids})["y"], expected, rtol=1e-5, atol=tolerance)
    shorter = ids[:, :1]  # another sequence length: XLA compiles again, with the same weights
    np.testing.assert_allclose(compiled({"ids": shorter})["y"], expected[:, :1], rtol=1e-5, atol=tolerance)


# -- each malformed field is a typed error naming the tensor and the field ----------------------------


@pytest.mark.parametrize(
    ("fields", "named"),
    [
        ({"offset": "abc"}, "'offset' is 'abc', not a non-negative integer"),
        ({"offset": "-4"}, "'offset' is '-4', not a non-negative integer"),
        ({"offset": "-1"}, "'offset' is '-1', not a non-negative integer"),
        ({"offset": " 4"}, "'offset' is ' 4', not a non-negative integer"),
        ({"length": "abc"}, "'length' is 'abc', not a non-negative integer"),
        ({"length": "-1"}, "'length' is '-1', not a non-negative integer"),
        ({"length": "1e3"}, "'length' is '1e3', not a non-negative integer"),
        ({"location": "model\x00.onnx.data"}, "'location' 'model\\\\x00.onnx.data' holds a NUL byte"),
        ({"location": "../model.onnx.data"}, "'location' names the file '../model.onnx.data', which is outside"),
        ({"location": ""}, "has no 'location' field"),
        ({"location": "x" * 5000}, "cannot be (resolved|read)"),
        ({"location": "sub"}, "the external data file 'sub' is missing"),
        ({"length": "4"}, "'length' is 4 bytes, but the tensor's declared shape \\[64, 160\\] and type take 40960"),
        ({"offset": "999999999"}, "reads bytes 999999999 to 1000040959 \\(fields 'offset' and 'length'\\)"),
    ],
)
def test_a_malformed_external_data_field_is_a_model_format_error_naming_tensor_and_field(
    tmp_path: Path, fields: dict[str, str], named: str
) -> None:
    path = _save(_decoder_like_model(), tmp_path)
    _edit_reference(path, "w1", **fields)
    with pytest.raises(ModelFormatError, match=rf"model.onnx: tensor 'w1': .*{named}"):
        hs.convert_model(path)


def test_a_length_beyond_the_file_is_refused(tmp_path: Path) -> None:
    path = _save(_decoder_like_model(), tmp_path)
    data = tmp_path / "model.onnx.data"
    data.write_bytes(data.read_bytes()[:-100])  # the last tensor loses its end
    last = max(
        onnx.load(path, load_external_data=False).graph.initializer,
        key=lambda t: int({e.key: e.value for e in t.external_data}.get("offset", 0)),
    )
    with pytest.raises(ModelFormatError, match=rf"tensor '{last.name}': external data .* the file is truncated"):
        hs.convert_model(path)


def test_a_reference_without_length_reads_the_declared_size(tmp_path: Path) -> None:
    path = _save(_decoder_like_model(), tmp_path)
    model = onnx.load(path, load_external_data=False)
    target = next(t for t in model.graph.initializer if t.name == "w2")
    kept = [(e.key, e.value) for e in target.external_data if e.key != "length"]
    del target.external_data[:]
    for key, value in kept:
        target.external_data.add(key=key, value=value)
    onnx.save_model(model, path)
    converted = hs.convert_model(path)
    value = next(n.attrs["value"] for n in converted.get_ops() if n.friendly_name == "w2")
    np.testing.assert_array_equal(value, WEIGHTS["w2"])


def test_a_negative_dimension_of_an_external_tensor_is_refused(tmp_path: Path) -> None:
    path = _save(_decoder_like_model(), tmp_path)
    model = onnx.load(path, load_external_data=False)
    next(t for t in model.graph.initializer if t.name == "b1").dims[0] = -160
    onnx.save_model(model, path)
    with pytest.raises(ModelFormatError, match=r"tensor 'b1': field 'dims' \[-160\] holds a negative dimension"):
        hs.convert_model(path)


def test_onnxs_checker_still_runs_on_a_model_with_external_data(tmp_path: Path) -> None:
    model = _decoder_like_model()
    model.graph.node[2].input[0] = "ghost"  # the bias Add reads a tensor nothing gives
    path = _save(model, tmp_path)
    with pytest.raises(hs.errors.HeteroSDKError, match="ghost"):
        hs.convert_model(path)


@FEW
@given(
    field=st.sampled_from(["offset", "length", "location"]),
    text=st.one_of(st.text(max_size=12), st.integers(-(2**70), 2**70).map(str)),
)
def test_any_field_text_gives_the_bytes_it_names_or_a_model_format_error(
    tmp_path_factory: pytest.TempPathFactory, field: str, text: str
) -> None:
    folder = tmp_path_factory.mktemp("fuzzed")
    path = _save(_decoder_like_model(), folder)
    original = onnx.load(path, load_external_data=False)
    _edit_reference(path, "w2", **{field: text})
    try:
        model = hs.convert_model(path)
    except ModelFormatError as error:
        assert ("tensor 'w2'" in str(error) and f"'{field}'" in str(error)) or "missing" in str(error)
        return
    value = _initializers(model)["w2"]  # accepted: then it is the declared bytes at the offset in the file
    entries = {e.key: e.value for t in original.graph.initializer if t.name == "w2" for e in t.external_data}
    entries[field] = text
    data = (folder / entries["location"]).read_bytes()
    start = int(entries["offset"])
    expected = np.frombuffer(data[start : start + WEIGHTS["w2"].nbytes], np.float32).reshape(WEIGHTS["w2"].shape)
    np.testing.assert_array_equal(value, expected)
