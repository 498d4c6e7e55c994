"""Reading ONNX files safely: the errors of the spec's table, external data kept inside the model's
folder, and no code run while loading."""

from __future__ import annotations

import builtins
import os
import pickle
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import helper
from onnx_models import conv_relu_model, graph_model, value_info

import hetero_sdk as hs
from hetero_sdk.errors import ModelFormatError, ModelValidationError, UnsupportedOperationError


def _conv_reference(x: np.ndarray, weights: dict[str, np.ndarray]) -> np.ndarray:
    """conv(pad 1) + bias, relu, global average pool, in plain numpy."""
    padded = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    windows = np.lib.stride_tricks.sliding_window_view(padded, (3, 3), axis=(2, 3))  # n, c, h, w, 3, 3
    conv = np.einsum("nchwij,ocij->nohw", windows, weights["w"]) + weights["b"][None, :, None, None]
    return np.maximum(conv, 0).mean(axis=(2, 3), keepdims=True)


def test_a_file_path_reads_and_runs_like_numpy(tmp_path: Path) -> None:
    model, weights = conv_relu_model()
    path = tmp_path / "conv.onnx"
    onnx.save(model, path)
    x = np.random.default_rng(1).standard_normal((2, 3, 8, 8)).astype(np.float32)
    compiled = hs.Core().compile_model(str(path), "TEMPLATE")
    np.testing.assert_allclose(compiled({"x": x})["y"], _conv_reference(x, weights), rtol=1e-5, atol=1e-6)


def test_truncated_file_is_a_model_format_error_naming_it(tmp_path: Path) -> None:
    model, _ = conv_relu_model()
    data = model.SerializeToString()
    path = tmp_path / "cut.onnx"
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(ModelFormatError, match=r"cut.onnx"):
        hs.Core().read_model(path)


@pytest.mark.parametrize("content", [b"", b"\x00\xff" * 40, b"not a model at all", b"\x08\x07"])
def test_bytes_that_are_not_onnx_are_refused(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "junk.onnx"
    path.write_bytes(content)
    with pytest.raises(ModelFormatError, match=r"junk.onnx"):
        hs.convert_model(path)


def test_a_missing_file_names_it(tmp_path: Path) -> None:
    with pytest.raises(ModelFormatError, match=r"nowhere.onnx"):
        hs.convert_model(tmp_path / "nowhere.onnx")


def test_a_graph_failing_onnx_checks_is_a_validation_error_naming_the_node() -> None:
    node = helper.make_node("Relu", ["ghost"], ["y"], name="reads_a_ghost")
    graph = helper.make_graph([node], "g", [value_info("x", np.float32, [2])], [value_info("y", np.float32, [2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    with pytest.raises(ModelValidationError, match="reads_a_ghost"):
        hs.convert_model(model.SerializeToString())


def test_every_unsupported_node_is_listed_at_once() -> None:
    nodes = [
        helper.make_node("RandomNormalLike", ["x"], ["d"], name="noise"),
        helper.make_node("FancyOp", ["x"], ["f"], name="vendor_op", domain="com.example"),
        helper.make_node("Relu", ["x"], ["r"], name="fine"),
    ]
    graph = helper.make_graph(
        nodes, "g", [value_info("x", np.float32, [3, 3])], [value_info(n, np.float32, [3, 3]) for n in ("d", "f", "r")]
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.example", 1)])
    with pytest.raises(UnsupportedOperationError) as caught:
        hs.convert_model(model)
    message = str(caught.value)
    assert "2 ONNX node(s)" in message
    assert "RandomNormalLike (domain ai.onnx, opset 17) node 'noise'" in message
    assert "FancyOp (domain com.example, opset 1) node 'vendor_op'" in message
    assert "'fine'" not in message


def test_ops_onnx_does_not_define_are_listed_with_the_others_before_onnxs_checker_runs() -> None:
    """onnx.checker stops at the first op it has no schema for; the listing names each of them and why."""
    nodes = [
        helper.make_node("NoSuchOp", ["x"], ["a"], name="invented"),
        helper.make_node("Col2Im", ["a", "s", "b"], ["c"], name="too_new"),  # ONNX has Col2Im from opset 18
        helper.make_node("RandomNormalLike", ["c"], ["y"], name="noise"),
    ]
    inputs = [value_info("x", np.float32, [2]), value_info("s", np.int64, [2]), value_info("b", np.int64, [2])]
    graph = helper.make_graph(nodes, "g", inputs, [value_info("y", np.float32, [2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    with pytest.raises(onnx.checker.ValidationError, match="No Op registered for NoSuchOp"):
        onnx.checker.check_model(model)
    with pytest.raises(UnsupportedOperationError) as caught:
        hs.convert_model(model)
    message = str(caught.value)
    assert "3 ONNX node(s)" in message
    assert "NoSuchOp (domain ai.onnx, opset 17: not an ONNX operator) node 'invented'" in message
    assert "Col2Im (domain ai.onnx, opset 17: ONNX defines Col2Im from opset 18 on) node 'too_new'" in message
    assert "RandomNormalLike (domain ai.onnx, opset 17) node 'noise'" in message
    assert "supported_ops()" in message


def test_a_call_of_a_model_local_function_is_translated_through_its_body() -> None:
    body = [helper.make_node("Neg", ["a"], ["n"]), helper.make_node("Relu", ["n"], ["b"])]
    function = helper.make_function("local", "NegRelu", ["a"], ["b"], body, [helper.make_opsetid("", 17)])
    graph = helper.make_graph(
        [helper.make_node("NegRelu", ["x"], ["y"], name="call", domain="local")], "g",
        [value_info("x", np.float32, [3])], [value_info("y", np.float32, [3])],
    )  # fmt: skip
    imports = [helper.make_opsetid("", 17), helper.make_opsetid("local", 1)]
    model = helper.make_model(graph, opset_imports=imports, functions=[function])
    got = hs.Core().compile_model(model, "TEMPLATE")({"x": np.array([-1.0, 0.5, 2.0], np.float32)})["y"]
    np.testing.assert_array_equal(got, [1.0, 0.0, 0.0])


@pytest.mark.parametrize(("domain", "newest"), [("", onnx.defs.onnx_opset_version()), ("ai.onnx.ml", None)])
def test_an_opset_newer_than_the_installed_onnx_knows_is_refused(domain: str, newest: int | None) -> None:
    newest = newest or onnx.defs.onnx_ml_opset_version()
    imports = [helper.make_opsetid(domain, newest + 1)] + ([helper.make_opsetid("", 17)] if domain else [])
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"], name="r")], "g", [value_info("x", np.float32, [2])],
        [value_info("y", np.float32, [2])],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=imports)
    shown = domain or "ai.onnx"
    with pytest.raises(
        UnsupportedOperationError, match=rf"{shown} opset {newest + 1}, newer than {newest}.*pip install"
    ):
        hs.convert_model(model)


@pytest.mark.parametrize("version", [2, 2**31, 2**40, 0, -3])
def test_an_opset_of_any_domain_onnx_defines_outside_its_versions_is_refused(version: int) -> None:
    """ai.onnx.preview.training has opset 1 only; 2**40 once reached ONNX's schema lookup as a TypeError."""
    node = helper.make_node(
        "Adagrad", ["r", "t", "x", "g", "h"], ["x2", "h2"], domain="ai.onnx.preview.training", name="ada"
    )
    graph = helper.make_graph(
        [node], "g", [value_info(n, np.float32, [1] if n in "xgh" else []) for n in "rtxgh"],
        [value_info("x2", np.float32, [1]), value_info("h2", np.float32, [1])],
    )  # fmt: skip
    imports = [helper.make_opsetid("", 17), helper.make_opsetid("ai.onnx.preview.training", version)]
    model = helper.make_model(graph, opset_imports=imports)
    with pytest.raises(UnsupportedOperationError, match=rf"ai\.onnx\.preview\.training opset {version}"):
        hs.convert_model(model)


def test_a_custom_domains_huge_opset_version_lists_its_node_as_untranslated() -> None:
    graph = helper.make_graph(
        [helper.make_node("Foo", ["x"], ["y"], domain="com.example", name="foo")], "g",
        [value_info("x", np.float32, [2])], [value_info("y", np.float32, [2])],
    )  # fmt: skip
    imports = [helper.make_opsetid("", 17), helper.make_opsetid("com.example", 2**40)]
    with pytest.raises(UnsupportedOperationError, match=r"Foo \(domain com.example, opset 1099511627776\) node 'foo'"):
        hs.convert_model(helper.make_model(graph, opset_imports=imports))


def test_the_newest_opset_the_installed_onnx_knows_is_read() -> None:
    newest = onnx.defs.onnx_opset_version()
    model = graph_model(
        [helper.make_node("Relu", ["x"], ["y"])], [value_info("x", np.float32, [2])],
        [value_info("y", np.float32, [2])], newest,
    )  # fmt: skip
    got = hs.Core().compile_model(model, "TEMPLATE")({"x": np.array([-1.0, 2.0], np.float32)})["y"]
    np.testing.assert_array_equal(got, [0.0, 2.0])


def test_an_opset_older_than_7_is_refused_with_the_upgrade_path() -> None:
    model = graph_model(
        [helper.make_node("Relu", ["x"], ["y"])],
        [value_info("x", np.float32, [2])],
        [value_info("y", np.float32, [2])],
        6,
    )
    with pytest.raises(UnsupportedOperationError, match="version_converter"):
        hs.convert_model(model)


# -- external data -------------------------------------------------------------------------------


def _save_with_external_data(model: onnx.ModelProto, folder: Path, location: str = "weights.bin") -> Path:
    path = folder / "model.onnx"
    onnx.save(
        model, path, save_as_external_data=True, all_tensors_to_one_file=True, location=location, size_threshold=0
    )
    return path


def test_external_data_beside_the_model_loads(tmp_path: Path) -> None:
    model, weights = conv_relu_model()
    path = _save_with_external_data(model, tmp_path)
    assert (tmp_path / "weights.bin").stat().st_size >= weights["w"].nbytes
    x = np.ones((1, 3, 8, 8), np.float32)
    out = hs.Core().compile_model(path, "TEMPLATE")({"x": x})["y"]
    np.testing.assert_allclose(out, _conv_reference(x, weights), rtol=1e-5, atol=1e-6)


def _point_external_data_at(path: Path, location: str) -> None:
    model = onnx.load(path, load_external_data=False)
    for tensor in model.graph.initializer:
        for entry in tensor.external_data:
            if entry.key == "location":
                entry.value = location
    onnx.save(model, path)


@pytest.mark.parametrize("location", ["../outside.bin", "sub/../../outside.bin", "/etc/passwd"])
def test_external_data_escaping_the_models_folder_is_refused(tmp_path: Path, location: str) -> None:
    folder = tmp_path / "model"
    folder.mkdir()
    path = _save_with_external_data(conv_relu_model()[0], folder)
    (tmp_path / "outside.bin").write_bytes((folder / "weights.bin").read_bytes())
    _point_external_data_at(path, location)
    with pytest.raises(ModelFormatError, match="outside the model's folder"):
        hs.convert_model(path)


def test_a_symlink_out_of_the_folder_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "model"
    folder.mkdir()
    path = _save_with_external_data(conv_relu_model()[0], folder)
    secret = tmp_path / "secret.bin"
    (folder / "weights.bin").rename(secret)
    os.symlink(secret, folder / "weights.bin")
    with pytest.raises(ModelFormatError, match="outside the model's folder"):
        hs.convert_model(path)


def test_missing_external_data_names_the_file(tmp_path: Path) -> None:
    path = _save_with_external_data(conv_relu_model()[0], tmp_path)
    (tmp_path / "weights.bin").unlink()
    with pytest.raises(ModelFormatError, match=r"weights.bin.* missing"):
        hs.convert_model(path)


def test_external_data_needs_a_path_not_bytes(tmp_path: Path) -> None:
    path = _save_with_external_data(conv_relu_model()[0], tmp_path)
    with pytest.raises(ModelFormatError, match=r"pass the .onnx file's path"):
        hs.convert_model(path.read_bytes())


def test_loading_runs_no_code(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    model, _ = conv_relu_model()
    model.doc_string = "__import__('os').system('touch pwned')"
    path = tmp_path / "m.onnx"
    onnx.save(model, path)

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("reading a model ran code")

    for name in ("eval", "exec", "compile"):
        monkeypatch.setattr(builtins, name, refuse)
    monkeypatch.setattr(pickle, "loads", refuse)
    monkeypatch.setattr(pickle, "load", refuse)
    converted = hs.convert_model(path)
    assert [p.friendly_name for p in converted.get_parameters()] == ["x"]
    assert not (tmp_path / "pwned").exists()
