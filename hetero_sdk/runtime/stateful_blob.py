"""The blob of a stateful compiled model: a :mod:`hetero_sdk.blob` container packed for the pseudo-device
``STATEFUL`` with three frames: ``header`` (JSON: the format, the device and the variables), ``model``
(the stateful model in the native format's bytes) and ``device`` (the device's own blob of the
explicit form). ``Core.import_model`` recognises it by that device name, whatever device it is
imported on. Nothing in it is executed.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from hetero_sdk.blob import blob_device, check_header_fields, pack_blob, unpack_blob
from hetero_sdk.element_type import Type
from hetero_sdk.errors import BlobFormatError
from hetero_sdk.graph.variables import Variable
from hetero_sdk.shape import PartialShape

__all__ = ["STATEFUL_BLOB", "is_stateful_blob", "pack_stateful", "unpack_stateful"]

STATEFUL_BLOB = "STATEFUL"
"""The device name the container of a stateful blob is packed for."""

_FORMAT = 1
_WHERE = "stateful blob"


def is_stateful_blob(blob: bytes | bytearray | memoryview) -> bool:
    """True when ``blob`` is a stateful compiled model's export."""
    return blob_device(blob) == STATEFUL_BLOB


def pack_stateful(model: bytes, variables: Sequence[Variable], device: str, inner: bytes) -> bytes:
    """The stateful blob of a model's bytes, its variables, and the device's blob of its explicit form."""
    header = {
        "format": _FORMAT,
        "device": device,
        "variables": [
            {"id": v.variable_id, "shape": list(v.data_shape.dims), "element_type": v.data_type.value}
            for v in variables
        ],
    }
    return pack_blob(STATEFUL_BLOB, {"header": json.dumps(header).encode(), "model": model, "device": inner})


def unpack_stateful(blob: bytes) -> tuple[list[Variable], bytes, bytes]:
    """The variables, the model's bytes and the device's blob of a stateful blob.

    :raises BlobFormatError: for a blob that is truncated or corrupted, lacks a frame, or whose header
        is malformed (naming the field).
    """
    frames = unpack_blob(blob, STATEFUL_BLOB)
    missing = [f for f in ("header", "model", "device") if f not in frames]
    if missing:
        raise BlobFormatError(f"{_WHERE} lacks frame(s) {missing}; export the model again")
    try:
        parsed = json.loads(frames["header"].decode())
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise BlobFormatError(f"{_WHERE} frame 'header' is not JSON: {exc}") from None
    header = check_header_fields(parsed, {"format": int, "device": str, "variables": list}, _WHERE)
    if header["format"] != _FORMAT:
        raise BlobFormatError(f"{_WHERE} format {header['format']!r:.20} is not {_FORMAT}; export the model again")
    return [_variable(entry, i) for i, entry in enumerate(header["variables"])], frames["model"], frames["device"]


def _variable(entry: object, index: int) -> Variable:
    where = f"{_WHERE} header variables[{index}]"
    fields = check_header_fields(entry, {"id": str, "shape": list, "element_type": str}, where)
    try:
        return Variable(fields["id"], PartialShape.of(fields["shape"]), Type.of(fields["element_type"]))
    except (TypeError, ValueError) as exc:
        raise BlobFormatError(f"{where}: {exc}") from None
