"""Export and import: StableHLO in a checksummed blob, no re-tracing on import, BlobFormatError on bad blobs."""

from __future__ import annotations

import json

import hetero_sdk as hs
import numpy as np
import pytest
from hetero_sdk import Model, Type, opset
from hetero_sdk.errors import BlobFormatError, InferenceError, PropertyValueError
from hetero_sdk.plugin import pack_blob, unpack_blob
from hetero_sdk.reference import evaluate
from xla_helpers import core

from hetero_sdk_jax import XlaPlugin, compiled_model


def _model() -> Model:
    rng = np.random.default_rng(0)
    x = opset.parameter([2, 6], Type.f32, name="x")
    idx = opset.parameter([2], Type.i64, name="idx")
    y = opset.gelu(opset.matmul(x, rng.standard_normal((6, 4)).astype(np.float32), name="mm"), name="y")
    picked = opset.gather(y, idx, 0, name="picked")
    return Model([opset.result(y, name="out_y"), opset.result(picked, name="out_picked")], [x, idx], name="exported")


def _inputs() -> list[np.ndarray]:
    return [np.linspace(-1, 1, 12, dtype=np.float32).reshape(2, 6), np.array([1, 0], np.int64)]


def test_export_then_import_keeps_ports_and_results_without_tracing_again(monkeypatch: pytest.MonkeyPatch) -> None:
    compiled = core().compile_model(_model(), "XLA")
    blob = compiled.export_model()

    def no_tracing(*_: object) -> None:
        raise AssertionError("import must not lower the graph again")

    monkeypatch.setattr(compiled_model, "lower", no_tracing)
    imported = core().import_model(blob, "XLA")
    for got, want in zip(imported.inputs + imported.outputs, compiled.inputs + compiled.outputs):
        assert (got.names, got.element_type, got.partial_shape, got.node.friendly_name) == (
            want.names, want.element_type, want.partial_shape, want.node.friendly_name,
        )  # fmt: skip
    for got, want in zip(imported(_inputs()).to_tuple(), evaluate(_model(), _inputs())):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    assert imported.get_property("LOADED_FROM_CACHE") is False
    assert imported.get_property("NETWORK_NAME") == "exported"
    assert imported.export_model()  # an imported model exports again


def test_blob_header_describes_the_model() -> None:
    blob = core().compile_model(_model(), "XLA", {"PERF_COUNT": True}).export_model()
    frames = unpack_blob(blob, "XLA")
    header = json.loads(frames["header"])
    assert header["model"] == "exported" and header["x64"] is True and header["platform"] == "cpu"
    assert [p["names"] for p in header["inputs"]] == [["x"], ["idx"]]
    assert header["outputs"][1] == {"names": ["picked"], "friendly_name": "out_picked", "type": "f32", "shape": [2, 4]}
    assert header["config"]["PERF_COUNT"] is True
    assert set(frames) == {"header", "executable.0"}


def test_import_keeps_the_compile_configuration_and_takes_new_runtime_settings() -> None:
    blob = (
        core().compile_model(_model(), "XLA", {"PERF_COUNT": True, "INFERENCE_PRECISION_HINT": "bf16"}).export_model()
    )
    imported = core().import_model(blob, "XLA", {"PERFORMANCE_HINT": "THROUGHPUT"})
    assert imported.get_property("PERF_COUNT") is True
    assert imported.get_property("INFERENCE_PRECISION_HINT") == Type.bf16
    assert imported.get_property("PERFORMANCE_HINT") == "THROUGHPUT"
    with pytest.raises(PropertyValueError, match="INFERENCE_PRECISION_HINT"):
        core().import_model(blob, "XLA", {"INFERENCE_PRECISION_HINT": "f32"})


def test_dynamic_models_carry_their_graph_and_every_compiled_shape() -> None:
    x = opset.parameter([-1, 3], Type.f32, name="x")
    model = Model([opset.reduce_sum(opset.exp(x), [1], name="total")], [x], name="dyn")
    compiled = core().compile_model(model, "XLA")
    for rows in (1, 2):
        compiled([np.ones((rows, 3), np.float32)])
    frames = unpack_blob(compiled.export_model(), "XLA")
    assert {"header", "model", "executable.0", "executable.1"} == set(frames)
    imported = core().import_model(compiled.export_model(), "XLA")
    for rows in (1, 2, 5):  # 5 was never compiled: the graph in the blob compiles it
        np.testing.assert_allclose(imported([np.zeros((rows, 3), np.float32)])[0], np.full(rows, 3.0))


def test_a_static_blob_without_graph_rejects_other_shapes() -> None:
    compiled = core().compile_model(_model(), "XLA")
    imported = core().import_model(compiled.export_model(), "XLA")
    with pytest.raises(InferenceError, match="shape"):
        imported([np.zeros((3, 6), np.float32), np.zeros(2, np.int64)])


@pytest.mark.parametrize("where", ["first byte", "header", "executable", "last byte"])
def test_corrupted_blobs_raise_blob_format_errors(where: str) -> None:
    blob = bytearray(core().compile_model(_model(), "XLA").export_model())
    offset = {
        "first byte": 0,
        "header": blob.find(b'"format"'),
        "executable": len(blob) // 2,
        "last byte": len(blob) - 1,
    }[where]
    blob[offset] ^= 0xFF
    with pytest.raises(BlobFormatError):
        core().import_model(bytes(blob), "XLA")


def test_truncated_foreign_and_forged_blobs_raise_blob_format_errors() -> None:
    blob = core().compile_model(_model(), "XLA").export_model()
    with pytest.raises(BlobFormatError, match="truncated"):
        core().import_model(blob[: len(blob) // 3], "XLA")
    template = hs.Core(autoload=False)
    from template_plugin import TemplatePlugin

    template.register_plugin(TemplatePlugin, "TEMPLATE")
    with pytest.raises(BlobFormatError, match="XLA"):
        template.import_model(blob, "TEMPLATE")
    frames = unpack_blob(blob, "XLA")
    header = json.loads(frames["header"])
    for change, message in (
        ({"platform": "tpu"}, "platform 'tpu'"),
        ({"format": 99}, "newer"),
        ({"inputs": 5}, "field 'inputs' is 5, not a JSON array"),
        ({"executables": [{"frame": "executable.0", "input_shapes": [[3, 6], [2]]}]}, "no executable"),
    ):
        forged = dict(frames, header=json.dumps({**header, **change}).encode())
        with pytest.raises(BlobFormatError, match=message):
            core().import_model(pack_blob("XLA", forged), "XLA")
    garbage = dict(frames, **{"executable.0": b"\x00not stablehlo" * 10})
    with pytest.raises(BlobFormatError, match=r"executable\.0"):
        core().import_model(pack_blob("XLA", garbage), "XLA")
    with pytest.raises(BlobFormatError, match="header"):
        core().import_model(pack_blob("XLA", {"executable.0": frames["executable.0"]}), "XLA")


def test_cache_dir_loads_the_second_compile_from_the_cache(tmp_path) -> None:
    local = hs.Core(plugins={"XLA": XlaPlugin}, autoload=False)
    local.set_property({"CACHE_DIR": str(tmp_path)})
    model = _model()
    first = local.compile_model(model, "XLA")
    second = local.compile_model(model, "XLA")
    assert first.get_property("LOADED_FROM_CACHE") is False
    assert second.get_property("LOADED_FROM_CACHE") is True
    for a, b in zip(first(_inputs()).to_tuple(), second(_inputs()).to_tuple()):
        np.testing.assert_array_equal(a, b)
