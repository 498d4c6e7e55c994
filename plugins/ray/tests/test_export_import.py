"""A model compiled on RAY exports to a blob that imports on any RAY id, and runs the same."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("ray")

import hetero_sdk as hs
from hetero_sdk.errors import BlobFormatError
from ray_helpers import RAY_CONFIG, dense, dense_expected, inputs

from hetero_sdk_ray import RayCompiledModel


def test_export_import_round_trip_onto_another_actor(core: hs.Core) -> None:
    blob = core.compile_model(dense(), "RAY.0", RAY_CONFIG).export_model()
    imported = core.import_model(blob, "RAY.1")
    assert isinstance(imported, RayCompiledModel)
    assert imported.get_property("EXECUTION_DEVICES") == ["RAY.1"]
    assert [p.any_name for p in imported.inputs] == ["x"] and imported.outputs[0].any_name == "out"
    x = inputs(3)
    np.testing.assert_allclose(imported({"x": x})["out"], dense_expected(x), rtol=1e-5, atol=1e-6)


def test_a_split_model_exports_and_imports_through_hetero(core: hs.Core) -> None:
    model = dense()
    for op in model.get_ops():
        if op.type_name not in ("Parameter", "Constant", "Result"):
            op.get_rt_info()["affinity"] = "RAY.0" if op.friendly_name == "mm1" else "RAY.1"
    blob = core.compile_model(model, "HETERO:RAY.0,RAY.1", {"DEVICE_PROPERTIES": {"RAY": RAY_CONFIG}}).export_model()
    imported = core.import_model(blob, "HETERO")
    assert imported.get_property("EXECUTION_DEVICES") == ["RAY.0", "RAY.1"]
    x = inputs(4)
    np.testing.assert_allclose(imported({"x": x})[0], dense_expected(x), rtol=1e-5, atol=1e-6)


def test_foreign_and_corrupted_blobs_are_refused(core: hs.Core) -> None:
    template_blob = core.compile_model(dense(), "TEMPLATE").export_model()
    with pytest.raises(BlobFormatError, match="RAY"):
        core.import_model(template_blob, "RAY")
    blob = bytearray(core.compile_model(dense(), "RAY.0", RAY_CONFIG).export_model())
    blob[-5] ^= 0xFF
    with pytest.raises(BlobFormatError):
        core.import_model(bytes(blob), "RAY")
