"""TEMPLATE blobs whose checksums are valid and whose content is wrong (crafted, or written by a buggy
exporter) raise BlobFormatError naming the frame, never a property error of the caller's."""

from __future__ import annotations

import json

import numpy as np
import pytest

import hetero_sdk as hs
from hetero_sdk import Model, Type, opset
from hetero_sdk.errors import BlobFormatError
from hetero_sdk.plugin import pack_blob, unpack_blob
from template_plugin import TemplatePlugin


def _core() -> hs.Core:
    return hs.Core(plugins={"TEMPLATE": TemplatePlugin}, autoload=False)


def _frames() -> dict[str, bytes]:
    x = opset.parameter([2, 3], Type.f32, name="x")
    model = Model([opset.relu(x, name="r")], [x], name="m")
    return unpack_blob(_core().compile_model(model, "TEMPLATE").export_model(), "TEMPLATE")


@pytest.mark.parametrize(
    ("config", "message"),
    [
        (None, "frame 'config' is NoneType, not a JSON object"),
        ([1], "frame 'config' is list"),
        ({"PERF_COUNT": "maybe"}, "frame 'config'.*'maybe' is not a valid value for PERF_COUNT"),
        ({"PERFORMANCE_HINT": "BOGUS"}, "frame 'config'.*PERFORMANCE_HINT"),
        ({"FOO": 1}, "frame 'config'.*unsupported property 'FOO'"),
        ({"FULL_DEVICE_NAME": "x"}, "frame 'config'.*read-only"),
    ],
)
def test_a_config_frame_the_device_rejects_is_a_blob_format_error(config: object, message: str) -> None:
    frames = _frames()
    stored = json.loads(frames["config"])
    crafted = config if not isinstance(config, dict) else {**stored, **config}
    blob = pack_blob("TEMPLATE", {**frames, "config": json.dumps(crafted).encode()})
    with pytest.raises(BlobFormatError, match=message):
        _core().import_model(blob, "TEMPLATE")


def test_a_valid_blob_still_imports_and_the_callers_properties_still_apply() -> None:
    blob = pack_blob("TEMPLATE", _frames())
    imported = _core().import_model(blob, "TEMPLATE", {"PERF_COUNT": True})
    assert imported.get_property("PERF_COUNT") is True
    np.testing.assert_array_equal(imported({"x": -np.ones((2, 3), np.float32)})[0], np.zeros((2, 3)))
