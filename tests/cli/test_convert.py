"""``hetero-sdk convert``: any model the SDK reads, saved in the native format (as OpenVINO's ovc), reads
back and computes the same; its mistakes are one line."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import hetero_sdk as hs
from hetero_sdk.samples import get_sample

from .helpers import Invoke, assert_one_line_error, parse_json
from .model_files import dense_relu, dense_relu_numpy, with_unknown_op


def test_converted_onnx_model_reads_back_and_computes_what_numpy_does(
    invoke: Invoke, accel_core: hs.Core, tmp_path: Path
) -> None:
    source = dense_relu(tmp_path / "dense.onnx")
    target = tmp_path / "out" / "dense.json"
    result = invoke("convert", str(source), "-o", str(target))
    assert result.exit_code == 0, result.output
    assert f"wrote {target} and {target.with_suffix('.bin')}" in result.stdout
    assert target.with_suffix(".bin").is_file()
    model = accel_core.read_model(target)
    assert [(p.any_name, str(p.partial_shape)) for p in model.inputs] == [("x", "[?,3]")]  # still dynamic
    x = np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32)
    got = accel_core.compile_model(model, "TEMPLATE")({"x": x})["y"]
    np.testing.assert_allclose(got, dense_relu_numpy(x), rtol=1e-6, atol=1e-6)


def test_default_output_is_the_input_stem_with_json_beside_it(invoke: Invoke, tmp_path: Path) -> None:
    source = dense_relu(tmp_path / "dense.onnx")
    data = parse_json(invoke("convert", str(source), "--json"))
    assert data["files"] == [str(tmp_path / "dense.json"), str(tmp_path / "dense.bin")]
    assert (tmp_path / "dense.json").is_file() and (tmp_path / "dense.bin").is_file()
    assert data["source"] == str(source) and data["inputs"] == [{"name": "x", "element_type": "f32", "shape": "[?,3]"}]


def test_input_shape_fixes_the_saved_shapes(invoke: Invoke, accel_core: hs.Core, tmp_path: Path) -> None:
    source = dense_relu(tmp_path / "dense.onnx")
    for option, text in (("-shape", "[7,3]"), ("--input-shape", "x[7,3]")):
        target = tmp_path / f"fixed{option}.json"
        data = parse_json(invoke("convert", str(source), option, text, "-o", str(target), "--json"))
        assert data["shape"] == {"x": "[7,3]"}
        model = accel_core.read_model(target)
        assert [str(p.partial_shape) for p in model.inputs] == ["[7,3]"]
        assert [str(p.partial_shape) for p in model.outputs] == ["[7,4]"]


def test_output_without_a_suffix_gets_json_and_another_suffix_is_refused(invoke: Invoke, tmp_path: Path) -> None:
    source = dense_relu(tmp_path / "dense.onnx")
    data = parse_json(invoke("convert", str(source), "-o", str(tmp_path / "plain"), "--json"))
    assert data["files"] == [str(tmp_path / "plain.json"), str(tmp_path / "plain.bin")]
    result = invoke("convert", str(source), "-o", str(tmp_path / "model.pb"))
    assert_one_line_error(result, "-o", "name the output model.json", exit_code=2)
    assert not (tmp_path / "model.pb").exists()


def test_an_xml_output_is_openvino_ir_that_openvino_runs(invoke: Invoke, tmp_path: Path) -> None:
    ov = pytest.importorskip("openvino")
    source = dense_relu(tmp_path / "dense.onnx")
    target = tmp_path / "dense.xml"
    result = invoke("convert", str(source), "-o", str(target))
    assert result.exit_code == 0, result.output
    assert target.read_text().lstrip().startswith("<?xml") and target.with_suffix(".bin").is_file()
    x = np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32)
    compiled = ov.Core().compile_model(ov.Core().read_model(target), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    np.testing.assert_allclose(compiled({"x": x})["y"], dense_relu_numpy(x), rtol=1e-5, atol=1e-6)


def test_a_sample_converts_and_a_native_file_is_not_overwritten(
    invoke: Invoke, accel_core: hs.Core, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    result = invoke("convert", "mlp")
    assert result.exit_code == 0, result.output
    saved = accel_core.read_model(tmp_path / "mlp.json")
    x = np.random.default_rng(1).standard_normal((1, 64)).astype(np.float32)
    expected = accel_core.compile_model(get_sample("mlp"), "TEMPLATE")({"x": x})
    np.testing.assert_array_equal(accel_core.compile_model(saved, "TEMPLATE")({"x": x}).to_tuple()[0], expected[0])
    again = invoke("convert", "mlp.json")
    assert_one_line_error(again, "already in the native format", "pass -o", exit_code=2)


def test_missing_unreadable_and_untranslatable_models_are_one_line(invoke: Invoke, tmp_path: Path) -> None:
    assert_one_line_error(
        invoke("convert", str(tmp_path / "absent.onnx")), "FileNotFoundError", "absent.onnx", exit_code=1
    )
    garbage = tmp_path / "garbage.onnx"
    garbage.write_bytes(b"\x08\x07not a protobuf at all")
    assert_one_line_error(invoke("convert", str(garbage)), "ModelFormatError", "garbage.onnx", exit_code=1)
    unknown = with_unknown_op(tmp_path / "unknown.onnx")
    result = invoke("convert", str(unknown))
    assert_one_line_error(result, "UnsupportedOperationError", "Frobnicate", "Glorp", exit_code=1)
    assert not (tmp_path / "unknown.json").exists()


def test_an_existing_output_is_refused_unless_forced(invoke: Invoke, tmp_path: Path) -> None:
    source = dense_relu(tmp_path / "dense.onnx")
    target = tmp_path / "dense.json"
    target.write_text("keep me")
    result = invoke("convert", str(source), "-o", str(target))
    assert_one_line_error(result, "PathExistsError", f"{target} already exists", "-f/--force", exit_code=1)
    assert target.read_text() == "keep me" and not target.with_suffix(".bin").exists()
    target.unlink()
    target.with_suffix(".bin").write_bytes(b"old weights")  # the weights beside it count too
    result = invoke("convert", str(source), "-o", str(target))
    assert_one_line_error(result, f"{target.with_suffix('.bin')} already exists", exit_code=1)
    assert not target.exists()
    for flag in ("-f", "--force"):
        assert parse_json(invoke("convert", str(source), "-o", str(target), flag, "--json"))["files"] == [
            str(target),
            str(target.with_suffix(".bin")),
        ]
    assert hs.Core(autoload=False).read_model(target).friendly_name == "dense_relu"
    result = invoke("convert", str(source), "-o", str(target))
    assert_one_line_error(result, f"{target} and {target.with_suffix('.bin')} already exist", exit_code=1)


def test_every_command_counts_the_ops_that_compute_and_convert_says_so(
    invoke: Invoke, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """mlp: x, four constants (two weights, two biases), six ops that compute (two MatMul, two Add,
    Relu, Softmax) and one result."""
    monkeypatch.chdir(tmp_path)
    wording = "6 ops (12 nodes including constants, parameters and results)"
    converted = invoke("convert", "mlp")
    assert converted.exit_code == 0, converted.output
    assert f"graph    {wording}" in converted.stdout
    benchmark = invoke("benchmark", "mlp", "-d", "TEMPLATE", "-niter", "1")
    assert benchmark.exit_code == 0, benchmark.output
    assert wording in benchmark.stdout and "6 ops in 1 subgraph(s)" in benchmark.stdout
    query = invoke("query", "mlp", "-d", "TEMPLATE")
    assert "6 ops in 1 subgraph(s)" in query.stdout
    data = parse_json(invoke("query", "mlp", "-d", "TEMPLATE", "--json"))
    assert (data["model"]["ops"], data["model"]["nodes"]) == (6, 12) and len(data["ops"]) == 6
    assert parse_json(invoke("convert", "mlp", "-o", "again.json", "--json"))["ops"] == 6
