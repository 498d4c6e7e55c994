"""TEMPLATE's blob format, both ways: the original model (native format) and the compile configuration,
in the SDK's checksummed frames."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from hetero_sdk import Model, Type
from hetero_sdk.errors import BlobFormatError
from hetero_sdk.plugin import model_from_frame, model_to_bytes, pack_blob, unpack_blob

__all__ = ["BLOB_FORMAT", "read_blob", "write_blob"]

BLOB_FORMAT = "TEMPLATE"
"""The format tag TEMPLATE blobs carry (the device they come from)."""


def write_blob(model: Model, config: Mapping[str, Any]) -> bytes:
    """The blob of a model compiled with ``config``."""
    stored = {k: (v.value if isinstance(v, Type) else v) for k, v in config.items()}
    return pack_blob(
        BLOB_FORMAT, {"config": json.dumps(stored, sort_keys=True).encode(), "model": model_to_bytes(model)}
    )


def read_blob(blob: bytes) -> tuple[Model, dict[str, Any]]:
    """The model and the compile configuration a blob holds.

    :raises BlobFormatError: for a blob of another device or format version, truncated or malformed.
    :raises UnknownOpTypeError: when the model uses an op whose extension is not installed, naming the op
        and the distribution that provides it.
    """
    frames = unpack_blob(blob, BLOB_FORMAT)
    if "model" not in frames or "config" not in frames:
        raise BlobFormatError(f"TEMPLATE blob lacks frame(s) {sorted({'model', 'config'} - set(frames))}")
    model = model_from_frame(frames["model"], "TEMPLATE blob")
    try:
        return model, json.loads(frames["config"])
    except ValueError as exc:
        raise BlobFormatError(f"TEMPLATE blob frame 'config' is not JSON: {exc}") from exc
