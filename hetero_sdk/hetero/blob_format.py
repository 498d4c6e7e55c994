"""HETERO's blob format, both ways: a header (the split, the placement report, the configuration), the
original model, and one frame per submodel (the device's own export where it has one, else the
submodel in the native format), in the SDK's checksummed frames."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hetero_sdk.errors import BlobFormatError, UnsupportedOperationError
from hetero_sdk.graph import Model
from hetero_sdk.hetero.report import PlacementReport
from hetero_sdk.hetero.submodels import SplitModel
from hetero_sdk.plugin import check_header_fields, pack_blob, unpack_blob
from hetero_sdk.runtime import CompiledModel
from hetero_sdk.serialization import model_from_frame, model_to_bytes

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
    :raises UnknownOpTypeError: when the model uses an op whose extension is not installed, naming the op
        and the distribution that provides it.
    """
    frames = unpack_blob(blob, BLOB_FORMAT)
    for name in ("header", "model"):
        if name not in frames:
            raise BlobFormatError(f"HETERO blob lacks its {name!r} frame; export the model again")
    try:
        header = json.loads(frames["header"])
    except ValueError as exc:
        raise BlobFormatError(f"HETERO blob frame 'header' is not JSON: {exc}") from exc
    _check_header(header)
    for i in range(len(header["submodels"])):
        if f"submodel{i}" not in frames:
            raise BlobFormatError(f"HETERO blob lacks frame 'submodel{i}' named in its header")
    model = model_from_frame(frames["model"], "HETERO blob")
    return HeteroBlob(header, model, [frames[f"submodel{i}"] for i in range(len(header["submodels"]))])


def _check_header(header: Any) -> None:
    """Checks the type of every header field and that the cuts name existing submodels.

    :raises BlobFormatError: naming the field and what it holds.
    """
    check_header_fields(header, _FIELDS, "HETERO blob")
    for field in ("inputs", "outputs"):
        if not _strings(header[field]):
            raise BlobFormatError(f"HETERO blob header field {field!r} is {header[field]!r:.200}, not tensor names")
    count = len(header["submodels"])
    for i, entry in enumerate(header["submodels"]):
        if (
            not isinstance(entry, dict)
            or not isinstance(entry.get("device"), str)
            or not _strings(entry.get("inputs"))
            or not _strings(entry.get("outputs"))
            or entry.get("payload") not in ("device", "model")
        ):
            raise BlobFormatError(
                f"HETERO blob header field 'submodels[{i}]' is {entry!r:.200}, not a submodel "
                "(device, inputs, outputs, payload 'device' or 'model')"
            )
    inputs = {key for entry in header["submodels"] for key in entry["inputs"]}
    for i, cut in enumerate(header["cuts"]):
        if (
            not isinstance(cut, list)
            or len(cut) != 3
            or cut[0] not in inputs
            or not _index(cut[1], count)
            or not isinstance(cut[2], list)
            or not all(_index(c, count) for c in cut[2])
        ):
            raise BlobFormatError(
                f"HETERO blob header field 'cuts[{i}]' is {cut!r:.200}, not [tensor, producer, consumers] "
                f"naming a submodel input and submodels 0 to {count - 1}"
            )


_FIELDS: dict[str, type] = {
    "model": str,
    "inputs": list,
    "outputs": list,
    "submodels": list,
    "cuts": list,
    "config": dict,
    "report": dict,
}


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _index(value: Any, count: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < count


def _is_json(value: Any) -> bool:
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return False
    return True
