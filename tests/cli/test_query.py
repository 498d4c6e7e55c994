"""``hetero-sdk query``: the placement report of a model on a device, as text, JSON and drawings."""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path

import pytest

import hetero_sdk as hs
from hetero_sdk.cli import query as query_module
from hetero_sdk.hetero.plugin import HeteroPlugin
from hetero_sdk.samples import get_sample
from template_plugin import TemplatePlugin

from .helpers import Invoke, assert_one_line_error, op_devices, parse_json
from .model_files import dense_relu, scored_boxes

BACKBONE_AND_HEADS = 19  # 3 x (conv, relu, pool) + box head (conv, reshape, transpose, tanh, multiply, add)
# + class head (conv, add, reshape, sigmoid)


def test_detection_sample_splits_nms_off_the_accelerator(invoke: Invoke) -> None:
    data = parse_json(invoke("query", "detection", "-d", "HETERO:ACCEL,TEMPLATE", "--json"))
    devices = op_devices(data)
    assert devices["nms"] == "TEMPLATE"
    assert data["rejected_by"] == {"nms": ["ACCEL"]}
    others = {op: device for op, device in devices.items() if op != "nms"}
    assert len(others) == BACKBONE_AND_HEADS and set(others.values()) == {"ACCEL"}
    assert [(s["device"], len(s["ops"])) for s in data["subgraphs"]] == [("ACCEL", 19), ("TEMPLATE", 1)]
    assert data["execution_devices"] == ["ACCEL.0", "TEMPLATE.0"]
    ops = {o["name"]: o for o in data["ops"]}
    assert ops["nms"] == {
        "name": "nms",
        "type": "NonMaxSuppression",
        "device": "TEMPLATE",
        "subgraph": 1,
        "rejected_by": ["ACCEL"],
    }
    assert ops["backbone0/conv"]["type"] == "Convolution" and ops["backbone0/conv"]["subgraph"] == 0


def test_query_reports_the_cut_tensors_and_their_bytes(invoke: Invoke) -> None:
    data = parse_json(invoke("query", "detection", "-d", "HETERO:ACCEL,TEMPLATE", "--json"))
    cuts = sorted((c["shape"], c["element_type"], c["bytes"], c["from"], c["to"]) for c in data["cuts"])
    # boxes [1, 64 anchors, 4] and scores [1, 3 classes, 64 anchors], f32, from subgraph 0 to 1
    assert cuts == [("[1,3,64]", "f32", 3 * 64 * 4, 0, [1]), ("[1,64,4]", "f32", 64 * 4 * 4, 0, [1])]
    assert data["transfer_bytes"] == 3 * 64 * 4 + 64 * 4 * 4


def test_query_text_names_each_op_its_device_and_the_fallback(invoke: Invoke) -> None:
    result = invoke("query", "detection", "-d", "HETERO:ACCEL,TEMPLATE")
    assert result.exit_code == 0, result.output
    rows = {line.split()[0]: line.split() for line in result.stdout.splitlines() if line.startswith("  ")}
    assert rows["nms"][1:] == ["NonMaxSuppression", "TEMPLATE", "1", "ACCEL"]
    assert rows["backbone1/pool"][1:] == ["MaxPool", "ACCEL", "0", "-"]
    assert "nms (rejected by ACCEL)" in result.stdout
    assert "1792 bytes cross per inference" in result.stdout


def test_query_a_saved_model_file_on_one_device(invoke: Invoke, tmp_path: Path) -> None:
    path = tmp_path / "mlp.json"
    hs.save_model(get_sample("mlp"), path)
    data = parse_json(invoke("query", str(path), "-d", "TEMPLATE", "--json"))
    assert data["model"]["source"] == str(path)
    assert data["model"]["inputs"] == [{"name": "x", "element_type": "f32", "shape": "[1,64]"}]
    assert set(op_devices(data).values()) == {"TEMPLATE.0"}
    assert sorted(op_devices(data)) == sorted(
        ["fc1/matmul", "fc1/add", "fc1/relu", "fc2/matmul", "fc2/add", "probabilities"]
    )
    assert data["cuts"] == [] and data["transfer_bytes"] == 0


def test_query_defaults_to_template_without_xla(invoke: Invoke) -> None:
    data = parse_json(invoke("query", "mlp", "--json"))
    assert data["device"] == "TEMPLATE"


def test_dot_file_labels_ops_with_device_and_subgraph(invoke: Invoke, tmp_path: Path) -> None:
    target = tmp_path / "split.dot"
    data = parse_json(invoke("query", "detection", "-d", "HETERO:ACCEL,TEMPLATE", "--dot", str(target), "--json"))
    assert data["files"] == [str(target)]
    text = target.read_text()
    assert text.startswith('digraph "detection"')
    assert 'nms\\nNonMaxSuppression\\nTEMPLATE #1"' in text
    assert 'backbone0/conv\\nConvolution\\nACCEL #0"' in text


def test_svg_without_graphviz_says_how_to_install_it(invoke: Invoke, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(query_module.shutil, "which", lambda name: None)
    result = invoke("query", "detection", "-d", "HETERO:ACCEL,TEMPLATE", "--svg", "out.svg")
    assert_one_line_error(result, "apt-get install graphviz", exit_code=2)


def test_svg_and_png_are_drawn_by_graphviz_dot(invoke: Invoke, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = tmp_path / "bin" / "dot"
    fake.parent.mkdir()
    fake.write_text(
        "#!/bin/sh\n# records its format argument, then copies the graph to the -o file\n"
        'echo "$1" > "$3.format"; cat > "$3"\n'
    )
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{fake.parent}{os.pathsep}{os.environ['PATH']}")
    svg, png = tmp_path / "split.svg", tmp_path / "split.png"
    result = invoke("query", "detection", "-d", "HETERO:ACCEL,TEMPLATE", "--svg", str(svg), "--png", str(png))
    assert result.exit_code == 0, result.output
    assert svg.read_text().startswith('digraph "detection"') and png.read_text().startswith("digraph")
    assert Path(f"{svg}.format").read_text().strip() == "-Tsvg"
    assert Path(f"{png}.format").read_text().strip() == "-Tpng"
    assert f"wrote {svg}" in result.stdout


# -- model files (-m) and the DOT picture coloured by device ---------------------------------------------


def _dot_nodes(text: str) -> dict[str, tuple[list[str], str]]:
    """``{node id: (label lines, fillcolor)}`` of a DOT file written by ``query --dot``."""
    found = re.findall(r'^\s*(\w+) \[label="((?:[^"\\]|\\.)*)", fillcolor="(#[0-9a-f]{6})"', text, re.MULTILINE)
    return {node: (label.split("\\n"), colour) for node, label, colour in found}


def test_query_an_onnx_model_with_m(invoke: Invoke, tmp_path: Path) -> None:
    path = scored_boxes(tmp_path / "boxes.onnx")
    data = parse_json(invoke("query", "-m", str(path), "-d", "HETERO:ACCEL,TEMPLATE", "--json"))
    assert data["model"]["source"] == str(path) and data["model"]["name"] == "scored_boxes"
    devices = op_devices(data)
    assert devices["nms"] == "TEMPLATE" and devices["boxes"] == devices["scores"] == "ACCEL"
    assert data["rejected_by"] == {"nms": ["ACCEL"]}
    text = invoke("query", "-m", str(path), "-d", "HETERO:ACCEL,TEMPLATE")
    rows = {line.split()[0]: line.split()[1:] for line in text.stdout.splitlines() if line.startswith("  ")}
    assert rows["nms"] == ["NonMaxSuppression", "TEMPLATE", "1", "ACCEL"]
    assert rows["boxes"] == ["Sigmoid", "ACCEL", "0", "-"]


def test_dot_holds_every_op_filled_with_its_device_colour(invoke: Invoke, tmp_path: Path) -> None:
    path, target = scored_boxes(tmp_path / "boxes.onnx"), tmp_path / "boxes.dot"
    data = parse_json(invoke("query", "-m", str(path), "-d", "HETERO:ACCEL,TEMPLATE", "--dot", str(target), "--json"))
    text = target.read_text()
    assert text.startswith('digraph "scored_boxes" {') and text.rstrip().endswith("}")
    nodes = _dot_nodes(text)
    legend = {label[0]: colour for node, (label, colour) in nodes.items() if node.startswith("legend")}
    assert set(legend) == {"ACCEL", "TEMPLATE"} and legend["ACCEL"] != legend["TEMPLATE"]
    ops = {label[0]: (label, colour) for node, (label, colour) in nodes.items() if not node.startswith("legend")}
    model = hs.convert_model(path)  # a second translation: only its Results' generated names differ
    named = sorted((n.friendly_name, n.type_name) for n in model.get_ordered_ops() if n.type_name != "Result")
    assert sorted((name, label[1]) for name, (label, _) in ops.items() if label[1] != "Result") == named
    assert [label[1] for label, _ in ops.values()].count("Result") == len(model.outputs)
    for op in data["ops"]:
        label, colour = ops[op["name"]]
        assert label == [op["name"], op["type"], f"{op['device']} #{op['subgraph']}"]
        assert colour == legend[op["device"]]
    assert ops["raw_boxes"][0] == ["raw_boxes", "Parameter", "f32[1,16,4]"]
    # the tensors HETERO moves between subgraphs are the labelled edges
    assert len(re.findall(r'-> \w+ \[label="[^"]+", color=', text)) == len(data["cuts"])


def test_dot_of_one_device_and_a_reshaped_onnx_model(invoke: Invoke, tmp_path: Path) -> None:
    path, target = dense_relu(tmp_path / "dense.onnx"), tmp_path / "dense.dot"
    result = invoke("query", "-m", str(path), "-shape", "x[4,3]", "-d", "TEMPLATE", "--dot", str(target))
    assert result.exit_code == 0, result.output
    assert f"wrote {target}" in result.stdout
    ops = {label[0]: (label, colour) for _, (label, colour) in _dot_nodes(target.read_text()).items()}
    assert ops["x"][0] == ["x", "Parameter", "f32[4,3]"]
    assert {ops[name][1] for name in ("dense/matmul", "dense/add", "dense/relu")} == {ops["TEMPLATE.0"][1]}
    assert "label=" not in "".join(line for line in target.read_text().splitlines() if "->" in line)  # no cuts


def test_load_config_splits_by_memory_and_query_shows_each_stage(invoke: Invoke, tmp_path: Path) -> None:
    core = hs.Core(plugins={"TEMPLATE": TemplatePlugin(num_devices=2), "HETERO": HeteroPlugin()}, autoload=False)
    weights = sum(n.attrs["value"].nbytes for n in get_sample("mlp").get_ops() if n.type_name == "Constant")
    budget = weights  # the weights fit, not with the activations too: two stages
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"HETERO": {
        "MODEL_DISTRIBUTION_POLICY": ["PIPELINE_PARALLEL"],
        "DEVICE_PROPERTIES": {d: {"DEVICE_TOTAL_MEM_SIZE": budget} for d in ("TEMPLATE.0", "TEMPLATE.1")},
    }}))  # fmt: skip
    result = invoke("query", "mlp", "-d", "HETERO:TEMPLATE.0,TEMPLATE.1", "-load_config", str(config), core=core)
    assert result.exit_code == 0, result.output
    stages = [line.split() for line in result.output.splitlines() if line.endswith("(budget)")]
    assert [s[1] for s in stages] == ["TEMPLATE.0", "TEMPLATE.1"]
    assert all(int(s[7]) <= budget for s in stages)  # MEMORY column within each device's budget


def test_load_config_rejects_a_file_that_is_not_properties_by_device(invoke: Invoke, tmp_path: Path) -> None:
    config = tmp_path / "config.json"
    config.write_text('["NUM_STREAMS"]')
    result = invoke("query", "mlp", "-d", "TEMPLATE", "-load_config", str(config))
    assert_one_line_error(result, 'expected {"DEVICE": {"PROPERTY": value}}', exit_code=2)
