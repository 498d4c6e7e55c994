"""The native model format: a readable JSON graph beside a binary weights file, as OpenVINO's ``.xml`` + ``.bin``.

``save_model(model, "model.json")`` writes ``model.json`` (format name and version, the model's name and
rt_info, the nodes in topological order with their types, attributes, inputs, tensor names and rt_info)
and ``model.bin`` (every array attribute, 64-byte aligned, each with a crc32 and the whole with a
sha256). ``read_model("model.json")`` reads both back exactly. ``model_to_bytes`` and
``model_from_bytes`` do the same with one byte string, for exported blobs (``model_from_frame`` reads
such a frame of a blob, reporting a defect as the blob's).

Reading never runs code from the files: no pickle, no eval, no imports named by the file. Every defect
(truncation, corruption, a newer format version, malformed JSON, a missing weights file, a dangling
reference, an invalid graph) raises :class:`~hetero_sdk.errors.ModelFormatError` naming the file, the
place and what to do; an unknown op type raises :class:`~hetero_sdk.errors.UnknownOpTypeError`, which
is both an ``UnsupportedOperationError`` (as the error table has it) and a ``ModelFormatError``. The
layout is described in :mod:`hetero_sdk.serialization.schema`, :mod:`~hetero_sdk.serialization.values`
and :mod:`~hetero_sdk.serialization.container`.
"""

from hetero_sdk.serialization.reader import model_from_bytes, model_from_frame, read_model
from hetero_sdk.serialization.schema import FORMAT_NAME, FORMAT_VERSION
from hetero_sdk.serialization.writer import model_to_bytes, save_model

__all__ = [
    "FORMAT_NAME",
    "FORMAT_VERSION",
    "model_from_bytes",
    "model_from_frame",
    "model_to_bytes",
    "read_model",
    "save_model",
]
