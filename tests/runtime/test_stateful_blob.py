"""Export and import of stateful compiled models: the blob keeps the variables and the device's own
blob, imports on the device it came from, and a malformed one is a BlobFormatError."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from stateful_models import accumulator, decoder, decoder_step, empty_cache

import hetero_sdk as hs
from hetero_sdk.blob import pack_blob, unpack_blob
from hetero_sdk.errors import BlobFormatError
from hetero_sdk.runtime.stateful import StatefulCompiledModel
from hetero_sdk.runtime.stateful_blob import STATEFUL_BLOB
from template_plugin import TemplatePlugin

hetero_sdk_jax = pytest.importorskip("hetero_sdk_jax", reason="the XLA plugin (plugins/jax) is not installed")
X = np.arange(6, dtype=np.float32).reshape(2, 3)


@pytest.fixture(scope="module")
def core() -> hs.Core:
    return hs.Core(plugins={"TEMPLATE": TemplatePlugin, "XLA": hetero_sdk_jax.XlaPlugin}, autoload=False)


@pytest.mark.parametrize("device", ["TEMPLATE", "XLA"])
def test_an_imported_stateful_model_keeps_its_variables(core: hs.Core, device: str) -> None:
    blob = core.compile_model(hs.make_stateful(decoder()), device).export_model()
    again = core.import_model(blob, device)
    assert isinstance(again, StatefulCompiledModel) and again.device_name.startswith(device)
    assert [p.any_name for p in again.inputs] == ["input_ids"] and [p.any_name for p in again.outputs] == ["logits"]
    request = again.create_infer_request()
    assert [s.name for s in request.query_state()][:2] == ["past_key_values.0.key", "past_key_values.0.value"]
    cache = empty_cache(1)
    for ids in (np.array([[1, 2, 3]]), np.array([[4]])):
        want, cache = decoder_step(ids, cache)
        np.testing.assert_allclose(request.infer({"input_ids": ids})["logits"], want, rtol=1e-5, atol=1e-5)


def test_a_stateful_blob_imports_only_on_its_device(core: hs.Core) -> None:
    blob = core.compile_model(accumulator(), "TEMPLATE").export_model()
    with pytest.raises(BlobFormatError, match="exported by device 'TEMPLATE'"):
        core.import_model(blob, "XLA")


def _repacked(blob: bytes, **frames: bytes) -> bytes:
    return pack_blob(STATEFUL_BLOB, {**unpack_blob(blob, STATEFUL_BLOB), **frames})


@pytest.mark.parametrize(
    ("header", "match"),
    [
        (b"{not json", "frame 'header' is not JSON"),
        (b"[]", "is a JSON list, not an object"),
        (json.dumps({"format": 1, "device": "TEMPLATE"}).encode(), "field 'variables' is None"),
        (json.dumps({"format": 9, "device": "TEMPLATE", "variables": []}).encode(), "format 9 is not 1"),
        (
            json.dumps({"format": 1, "device": "TEMPLATE", "variables": [{"id": "acc", "shape": [2, 3]}]}).encode(),
            r"variables\[0\] header field 'element_type'",
        ),
        (
            json.dumps({"format": 1, "device": "TEMPLATE", "variables": []}).encode(),
            r"lists variables \[\], its model has \['acc'\]",
        ),
    ],
)
def test_a_malformed_header_is_a_blob_format_error(core: hs.Core, header: bytes, match: str) -> None:
    blob = core.compile_model(accumulator(), "TEMPLATE").export_model()
    with pytest.raises(BlobFormatError, match=match):
        core.import_model(_repacked(blob, header=header), "TEMPLATE")


def test_a_missing_frame_or_a_corrupted_model_is_a_blob_format_error(core: hs.Core) -> None:
    blob = core.compile_model(accumulator(), "TEMPLATE").export_model()
    frames = unpack_blob(blob, STATEFUL_BLOB)
    del frames["device"]
    with pytest.raises(BlobFormatError, match=r"lacks frame\(s\) \['device'\]"):
        core.import_model(pack_blob(STATEFUL_BLOB, frames), "TEMPLATE")
    with pytest.raises(BlobFormatError, match="its model does not read"):
        core.import_model(_repacked(blob, model=b"HSDKMODL\x01"), "TEMPLATE")
    cut = bytearray(blob)
    cut[-1] ^= 0xFF
    with pytest.raises(BlobFormatError, match="checksum mismatch"):
        core.import_model(bytes(cut), "TEMPLATE")


def test_a_cached_compile_of_a_stateful_model_loads_the_device_s_blob(core: hs.Core, tmp_path: Path) -> None:
    model = hs.make_stateful(decoder())
    first = core.compile_model(model, "TEMPLATE", {"CACHE_DIR": str(tmp_path)})
    again = core.compile_model(model, "TEMPLATE", {"CACHE_DIR": str(tmp_path)})
    assert not first.get_property("LOADED_FROM_CACHE") and again.get_property("LOADED_FROM_CACHE")
    ids = np.array([[3, 1]])
    want, _ = decoder_step(ids, empty_cache(1))
    np.testing.assert_allclose(again.create_infer_request().infer([ids])[0], want, rtol=1e-5, atol=1e-5)
