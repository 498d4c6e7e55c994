"""HETERO's blob format, both ways: a header (the split, the placement report, the configuration), the
original model, and one frame per submodel (the device's own export where it has one, else the
submodel in the native format), in the SDK's checksummed frames."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hetero_sdk.errors import BlobFormatError, ModelFormatError, UnsupportedOperationError
from hetero_sdk.graph import Model
from hetero_sdk.hetero.report import PlacementReport
from hetero_sdk.hetero.submodels import SplitModel
from hetero_sdk.plugin import pack_blob, unpack_blob
from hetero_sdk.runtime import CompiledModel
from hetero_sdk.serialization import model_from_bytes, model_to_bytes

__all__ = ["BLOB_FORMAT", "HeteroBlob", "read_blob", "write_blob"]

BLOB_FORMAT = "HETERO"
"""The format tag HETERO blobs carry."""


@dataclass(frozen=True)
class HeteroBlob:
    """What a HETERO blob holds.

    :ivar header: the split (inputs, outputs, submodel entries with device and ports, cuts), the
        configuration and the placement report, as JSON values.
    :ivar model: the original model.
    :ivar payloads: per submodel, its frame: a device blob (``payload == "device"``) or a model.
    """

    header: dict[str, Any]
    model: Model
    payloads: list[bytes]


def write_blob(
    model: Model,
    split: SplitModel,
    compiled: Sequence[CompiledModel],
    config: Mapping[str, Any],
    report: PlacementReport,
) -> bytes:
    """The blob of a HETERO compiled model."""
    frames: dict[str, bytes] = {}
    entries = []
    for sub, device_model in zip(split.submodels, compiled):
        try:
            frames[f"submodel{sub.index}"] = device_model.export_model()
            kind = "device"
        except UnsupportedOperationError:
            frames[f"submodel{sub.index}"] = model_to_bytes(sub.model)
            kind = "model"
        entries.append(
            {"device": device_model.device_name, "inputs": sub.inputs, "outputs": sub.outputs, "payload": kind}
        )
    header = {
        "model": model.friendly_name,
        "inputs": split.inputs,
        "outputs": split.outputs,
        "submodels": entries,
        "cuts": [[c.key, c.producer, list(c.consumers)] for c in split.cuts],
        "config": {k: v for k, v in config.items() if _is_json(v)},
        "report": report.to_dict(),
    }
    frames = {"header": json.dumps(header, sort_keys=True).encode(), "model": model_to_bytes(model), **frames}
    return pack_blob(BLOB_FORMAT, frames)


def read_blob(blob: bytes) -> HeteroBlob:
    """The parts of a HETERO blob.

    :raises BlobFormatError: for a blob of another device or format version, truncated or malformed.
    """
    frames = unpack_blob(blob, BLOB_FORMAT)
    try:
        header = json.loads(frames["header"])
        model = model_from_bytes(frames["model"], source="HETERO blob")
        payloads = [frames[f"submodel{i}"] for i in range(len(header["submodels"]))]
    except (KeyError, TypeError, ValueError, ModelFormatError) as exc:
        raise BlobFormatError(f"HETERO blob is malformed: {type(exc).__name__}: {exc}") from exc
    return HeteroBlob(header, model, payloads)


def _is_json(value: Any) -> bool:
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return False
    return True
