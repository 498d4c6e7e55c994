"""HETERO blobs whose checksums are valid and whose content is wrong (crafted, or written by a buggy
exporter) raise BlobFormatError naming the header field or frame, never another error."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import hetero_sdk as hs
from hetero_sdk import Model, Type, opset
from hetero_sdk.errors import BlobFormatError
from hetero_sdk.hetero.plugin import HeteroPlugin
from hetero_sdk.plugin import pack_blob, unpack_blob
from template_plugin import TemplatePlugin


def _core() -> hs.Core:
    return hs.Core(plugins={"TEMPLATE": TemplatePlugin, "HETERO": HeteroPlugin}, autoload=False)


def _frames() -> dict[str, bytes]:
    x = opset.parameter([2, 3], Type.f32, name="x")
    model = Model([opset.relu(x, name="r")], [x], name="m")
    return unpack_blob(_core().compile_model(model, "HETERO:TEMPLATE").export_model(), "HETERO")


def _import(frames: dict[str, bytes]) -> Any:
    return _core().import_model(pack_blob("HETERO", frames), "HETERO")


def _set(field: str, value: Any) -> Callable[[dict[str, Any]], None]:
    return lambda header: header.__setitem__(field, value)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (_set("config", None), "field 'config' is None, not a JSON object"),
        (lambda h: h["config"].update(PERF_COUNT="maybe"), "field 'config'.*'maybe'.*PERF_COUNT"),
        (lambda h: h["config"].update(FOO=1), "field 'config' holds 'FOO'"),
        (_set("submodels", {}), "field 'submodels' is {}"),
        (lambda h: h["submodels"][0].update(payload="pickle"), r"field 'submodels\[0\]'"),
        (lambda h: h["submodels"][0].update(inputs=[1]), r"field 'submodels\[0\]'"),
        (_set("cuts", [["nowhere", 0, [5]]]), r"field 'cuts\[0\]'"),
        (_set("inputs", "x:0"), "field 'inputs' is 'x:0'"),
        (_set("report", {"placement": 3}), "field 'report' is malformed"),
        (_set("outputs", ["nowhere:0"]), "'outputs'.*do not fit"),
    ],
)
def test_a_header_field_of_the_wrong_type_or_range_is_named(
    change: Callable[[dict[str, Any]], None], message: str
) -> None:
    frames = _frames()
    header = json.loads(frames["header"])
    change(header)
    with pytest.raises(BlobFormatError, match=message):
        _import({**frames, "header": json.dumps(header).encode()})


def test_a_header_that_is_not_an_object_or_not_json_is_named() -> None:
    frames = _frames()
    with pytest.raises(BlobFormatError, match="frame 'header' is a JSON list"):
        _import({**frames, "header": b"[1]"})
    with pytest.raises(BlobFormatError, match="frame 'header' is not JSON"):
        _import({**frames, "header": b"{"})


def test_a_bad_submodel_frame_is_named_with_its_device() -> None:
    frames = _frames()
    inner = unpack_blob(frames["submodel0"], "TEMPLATE")
    crafted = pack_blob("TEMPLATE", {**inner, "config": b'{"PERF_COUNT": "maybe"}'})
    with pytest.raises(BlobFormatError, match=r"frame 'submodel0' for TEMPLATE.*frame 'config'.*PERF_COUNT"):
        _import({**frames, "submodel0": crafted})


def test_a_valid_blob_still_imports_and_runs() -> None:
    imported = _import(_frames())
    np.testing.assert_array_equal(imported({"x": -np.ones((2, 3), np.float32)})[0], np.zeros((2, 3)))
