"""A compiled blob whose model uses an extension's op, imported where that extension is missing: the
typed error of spec/generative.md (``UnknownOpTypeError``, naming the op and the distribution that
provides it), not a ``BlobFormatError`` (the blob is sound), on TEMPLATE, XLA and HETERO; with the
extension back, the same blob imports and computes."""

from __future__ import annotations

import json
from collections.abc import Callable

import numpy as np
import pytest

import hetero_sdk as hs
from hetero_sdk import Node, opset
from hetero_sdk.errors import BlobFormatError, UnknownOpTypeError
from hetero_sdk.extensions import Extension, remove_extensions
from hetero_sdk.hetero.plugin import HeteroPlugin
from hetero_sdk.plugin import pack_blob, unpack_blob
from template_plugin import TemplatePlugin

from .conftest import DATA, softsign, unary_op

xla = pytest.importorskip("hetero_sdk_jax")

Register = Callable[..., Extension]
DISTRIBUTION = "hetero-sdk-example-blob-ops"  # not installed: the error says to pip install it


def _extension() -> Extension:
    return Extension("blob_ext", ops=[unary_op("BlobExtSoftsign", lambda node, x: softsign(x))])


def _model(rows: int) -> hs.Model:
    x = opset.parameter([rows, 4], hs.Type.f32, name="x")
    y = Node("BlobExtSoftsign", [opset.relu(x).output(0)], {}, "y")
    return hs.Model([y], [x], name="m")


def _core() -> hs.Core:
    return hs.Core(plugins={"TEMPLATE": TemplatePlugin, "XLA": xla.XlaPlugin, "HETERO": HeteroPlugin}, autoload=False)


def _expected() -> np.ndarray:
    relu = np.maximum(DATA, 0)
    return relu / (1 + np.abs(relu))


def _assert_names_op_and_distribution(blob: bytes, device: str) -> None:
    with pytest.raises(UnknownOpTypeError) as info:
        _core().import_model(blob, device)
    assert not isinstance(info.value, BlobFormatError)
    assert "BlobExtSoftsign" in str(info.value) and f"pip install {DISTRIBUTION}" in str(info.value)


@pytest.mark.parametrize(("device", "rows"), [("TEMPLATE", 3), ("XLA", 3), ("XLA", -1), ("HETERO:XLA,TEMPLATE", 3)])
def test_a_blob_using_a_missing_extension_op_names_the_op_and_its_distribution(
    register: Register, device: str, rows: int
) -> None:
    register(_extension(), distribution=DISTRIBUTION)
    blob = _core().compile_model(_model(rows), device).export_model()
    remove_extensions(["blob_ext"])
    _assert_names_op_and_distribution(blob, device)
    register(_extension(), distribution=DISTRIBUTION)
    got = _core().import_model(blob, device)({"x": DATA})[0]
    np.testing.assert_allclose(got, _expected(), rtol=1e-6)


def test_an_xla_blob_without_the_extensions_field_still_names_them_from_its_graph(register: Register) -> None:
    """Blobs written before the header listed extension ops: a dynamic model's graph frame names them."""
    register(_extension(), distribution=DISTRIBUTION)
    frames = unpack_blob(_core().compile_model(_model(-1), "XLA").export_model(), "XLA")
    header = json.loads(frames["header"])
    assert header.pop("extensions") == [
        {"op": "BlobExtSoftsign", "extension": "blob_ext", "distribution": DISTRIBUTION}
    ]
    blob = pack_blob("XLA", {**frames, "header": json.dumps(header).encode()})
    remove_extensions(["blob_ext"])
    _assert_names_op_and_distribution(blob, "XLA")


def test_a_malformed_extensions_field_is_a_blob_format_error(register: Register) -> None:
    register(_extension(), distribution=DISTRIBUTION)
    frames = unpack_blob(_core().compile_model(_model(3), "XLA").export_model(), "XLA")
    header = {**json.loads(frames["header"]), "extensions": [{"op": 7}]}
    blob = pack_blob("XLA", {**frames, "header": json.dumps(header).encode()})
    with pytest.raises(BlobFormatError, match=r"XLA blob header field 'extensions' is \[\{'op': 7\}\]"):
        _core().import_model(blob, "XLA")
