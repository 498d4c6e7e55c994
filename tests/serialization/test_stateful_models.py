"""Stateful models in the native format: sinks and variables survive a round trip (files and bytes),
and a stateless model is still written as format version 1, which older SDKs read."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import hetero_sdk as hs
from hetero_sdk import Type, opset
from hetero_sdk.errors import ModelFormatError
from hetero_sdk.serialization import model_from_bytes, model_to_bytes


def stateful() -> hs.Model:
    x = opset.parameter([1, 2], np.float32, name="x")
    read = opset.read_value(opset.multiply(x, 0.0, name="zeros"), "acc", [-1, 2], Type.f32, name="read")
    total = opset.add(read, x, name="sum")
    return hs.Model([total], [x], "acc", sinks=[opset.assign(total, "acc", name="write")])


def _same_structure(a: hs.Model, b: hs.Model) -> None:
    assert [(n.friendly_name, n.get_type_name(), n.attrs.keys()) for n in a.get_ops()] == [
        (n.friendly_name, n.get_type_name(), n.attrs.keys()) for n in b.get_ops()
    ]
    assert [s.friendly_name for s in a.get_sinks()] == [s.friendly_name for s in b.get_sinks()]
    assert a.get_variables() == b.get_variables()


def test_a_saved_stateful_model_reads_back_with_its_sinks(tmp_path: Path) -> None:
    model = stateful()
    hs.save_model(model, tmp_path / "m.json")
    document = json.loads((tmp_path / "m.json").read_text())
    assert document["version"] == 2 and document["sinks"] == ["write"]
    again = hs.Core(autoload=False).read_model(tmp_path / "m.json")
    _same_structure(model, again)
    read = next(n for n in again.get_ops() if n.get_type_name() == "ReadValue")
    assert read.attrs["variable_shape"] == hs.PartialShape([-1, 2]) and read.get_input_size() == 1


def test_model_bytes_keep_sinks() -> None:
    model = stateful()
    _same_structure(model, model_from_bytes(model_to_bytes(model)))


def test_a_stateless_model_is_written_as_version_1_without_sinks(tmp_path: Path) -> None:
    x = opset.parameter([2], np.float32, name="x")
    hs.save_model(hs.Model([opset.relu(x)], [x]), tmp_path / "m.json")
    document = json.loads((tmp_path / "m.json").read_text())
    assert document["version"] == 1 and "sinks" not in document


def test_a_sink_that_names_no_assign_is_a_format_error(tmp_path: Path) -> None:
    hs.save_model(stateful(), tmp_path / "m.json")
    document = json.loads((tmp_path / "m.json").read_text())
    document["sinks"] = ["sum"]
    (tmp_path / "m.json").write_text(json.dumps(document))
    with pytest.raises(ModelFormatError, match=r"sinks\[0\].*'sum' is a Add, not a Assign"):
        hs.Core(autoload=False).read_model(tmp_path / "m.json")


def test_a_file_without_its_sinks_says_the_variable_is_unwritten(tmp_path: Path) -> None:
    hs.save_model(stateful(), tmp_path / "m.json")
    document = json.loads((tmp_path / "m.json").read_text())
    del document["sinks"]
    (tmp_path / "m.json").write_text(json.dumps(document))
    with pytest.raises(ModelFormatError, match="'acc' are read by ReadValue 'read' but written by no Assign"):
        hs.Core(autoload=False).read_model(tmp_path / "m.json")
