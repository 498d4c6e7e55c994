"""An AUTO blob is the chosen device's blob behind a small header naming the device; importing it
re-imports on that device, without choosing again."""

from __future__ import annotations

import numpy as np
import pytest

from hetero_sdk.errors import BlobFormatError
from hetero_sdk.plugin import pack_blob, unpack_blob
from template_plugin import TemplatePlugin

from .devices import FakeDevice, make_core, matmul_tanh, numpy_matmul_tanh

X = np.random.default_rng(2).standard_normal((4, 8)).astype(np.float32)


def test_round_trip_on_the_chosen_device_after_the_switch() -> None:
    slow = FakeDevice("cuda", compile_delay=0.3)
    core = make_core(SLOW=slow, TEMPLATE=TemplatePlugin)
    compiled = core.compile_model(matmul_tanh(), "AUTO")
    blob = compiled.export_model()  # waits for SLOW: the blob is the chosen device's
    again = core.import_model(blob, "AUTO")
    assert again.get_property("EXECUTION_DEVICES") == ["SLOW.0"]
    assert again.get_property("NETWORK_NAME") == "matmul_tanh"
    assert slow.compiles == 1, "import compiled the model again"
    np.testing.assert_allclose(again({"x": X})["y"], numpy_matmul_tanh(X), rtol=1e-6, atol=1e-6)
    inner = unpack_blob(blob, "AUTO")
    assert b'"device": "SLOW"' in inner["header"]


def test_round_trip_of_a_hetero_split() -> None:
    core = make_core(ACCEL=lambda: FakeDevice("cuda", declines=("Tanh",)), TEMPLATE=TemplatePlugin)
    core.register_plugin(lambda: FakeDevice("numpy", declines=("MatMul",)), "MATH")
    compiled = core.compile_model(matmul_tanh(), "AUTO:ACCEL,MATH")
    again = core.import_model(compiled.export_model(), "AUTO")
    assert again.get_property("EXECUTION_DEVICES") == ["ACCEL.0", "MATH.0"]
    np.testing.assert_allclose(again({"x": X})["y"], numpy_matmul_tanh(X), rtol=1e-6, atol=1e-6)


def test_foreign_and_corrupted_blobs_raise_blob_format_error() -> None:
    core = make_core(TEMPLATE=TemplatePlugin)
    template_blob = core.compile_model(matmul_tanh(), "TEMPLATE").export_model()
    with pytest.raises(BlobFormatError, match="exported by device"):
        core.import_model(template_blob, "AUTO")
    blob = core.compile_model(matmul_tanh(), "AUTO").export_model()
    flipped = bytearray(blob)
    flipped[len(blob) // 2] ^= 0x5A
    with pytest.raises(BlobFormatError):
        core.import_model(bytes(flipped), "AUTO")
    with pytest.raises(BlobFormatError, match="newer"):
        core.import_model(pack_blob("AUTO", {"header": b'{"format": 9, "device": "TEMPLATE"}', "model": b""}), "AUTO")
    with pytest.raises(BlobFormatError, match="malformed"):
        core.import_model(pack_blob("AUTO", {"header": b"[]"}), "AUTO")
