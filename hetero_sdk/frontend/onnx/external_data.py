"""ONNX tensors kept in external data files: every reference checked in one place, and read as
read-only views of the memory-mapped file, so that weights are never copied on the host.

An ONNX tensor stored outside the model (``data_location = EXTERNAL``) names its file and byte range
in ``external_data`` entries: ``location`` (a path relative to the model's folder), ``offset`` and
``length`` (decimal byte counts, both optional). :meth:`ExternalData.check` refuses, with a
:class:`~hetero_sdk.errors.ModelFormatError` naming the tensor and the field, a location that is
empty, holds a NUL byte, or leaves the model's folder (absolute, ``..``, a symlink out), a missing
file, an offset or length that is not a non-negative integer, a range past the end of the file, and
a length other than the tensor's declared size. :meth:`ExternalData.array` then returns the
tensor's bytes in place, as a numpy array whose memory is the file's mapping.
"""

from __future__ import annotations

import math
import mmap
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx

from hetero_sdk.element_type import Type
from hetero_sdk.errors import ModelFormatError
from hetero_sdk.frontend.onnx.types import ELEMENT_TYPES

__all__ = ["ExternalData", "ExternalReference", "uses_external_data"]

_DECIMAL = re.compile(r"[0-9]+")
"""What ``offset`` and ``length`` hold: ASCII digits only (no sign, no spaces)."""


def uses_external_data(tensor: onnx.TensorProto) -> bool:
    """Whether ``tensor`` keeps its values in an external file (``data_location = EXTERNAL``)."""
    return tensor.HasField("data_location") and tensor.data_location == onnx.TensorProto.EXTERNAL


@dataclass(frozen=True)
class ExternalReference:
    """Where one tensor's bytes lie, checked: a file inside the model's folder and a byte range in it."""

    path: Path
    offset: int
    length: int


class ExternalData:
    """The external data of one ONNX model: references checked against the model's folder, each file
    mapped once (read-only) and shared by the tensors that lie in it.

    :param folder: the model's folder (resolved); every file must lie inside it.
    :param source: how messages name the model (its path).
    """

    def __init__(self, folder: Path, source: str) -> None:
        self.folder = folder
        self.source = source
        self._maps: dict[Path, mmap.mmap | None] = {}  # None for an empty file (which cannot be mapped)

    def check(self, tensor: onnx.TensorProto) -> ExternalReference:
        """The checked reference of ``tensor``'s external data, its file mapped.

        :raises ModelFormatError: naming the tensor and the field that is wrong (see the module).
        """
        if tensor.data_type == onnx.TensorProto.STRING:
            raise self._error(tensor, "a string tensor cannot keep its values in external data; export the model again")
        if any(d < 0 for d in tensor.dims):
            raise self._error(tensor, f"field 'dims' {list(tensor.dims)} holds a negative dimension")
        fields = {entry.key: entry.value for entry in tensor.external_data}
        location = fields.get("location", "")
        path = self._resolve(tensor, location)
        offset = self._count(tensor, fields, "offset")
        length = self._count(tensor, fields, "length")
        size = self._file_size(path)
        needed = _declared_bytes(tensor)
        if needed is not None and length is not None and length != needed:
            raise self._error(
                tensor,
                f"external data field 'length' is {length} bytes, but the tensor's declared shape "
                f"{list(tensor.dims)} and type take {needed} bytes; the file does not belong to this model",
            )
        length = length if length is not None else needed if needed is not None else size - (offset or 0)
        start = offset or 0
        if start + length > size:
            raise self._error(
                tensor,
                f"external data '{location}' has {size} bytes, but the tensor reads bytes {start} to {start + length} "
                "(fields 'offset' and 'length'); the file is truncated",
            )
        return ExternalReference(path, start, length)

    def array(self, tensor: onnx.TensorProto) -> np.ndarray:
        """``tensor``'s values, read-only, as a view of the mapped file (a copy only where ONNX packs
        several values to a byte, as for 4-bit types, or on a big-endian host).

        :raises ModelFormatError: as :meth:`check`.
        """
        reference = self.check(tensor)
        mapped = self._maps[reference.path]
        data = memoryview(mapped)[reference.offset : reference.offset + reference.length] if mapped else b""
        element = _element(tensor)
        if element is None or element.bitwidth < 8 or sys.byteorder != "little":
            inline = onnx.TensorProto()
            inline.CopyFrom(tensor)
            inline.ClearField("external_data")
            inline.data_location = onnx.TensorProto.DEFAULT
            inline.raw_data = bytes(data)
            value = onnx.numpy_helper.to_array(inline)
        else:
            value = np.frombuffer(data, element.numpy).reshape(tuple(tensor.dims))
        value.flags.writeable = False
        return value

    # -- the checks --------------------------------------------------------------------------------

    def _resolve(self, tensor: onnx.TensorProto, location: str) -> Path:
        if not location:
            raise self._error(tensor, "external data has no 'location' field; export the model again")
        if "\x00" in location:
            raise self._error(
                tensor, f"external data field 'location' {location!r} holds a NUL byte, which no file name has"
            )
        relative = Path(location)
        try:
            target = (self.folder / relative).resolve()
        except (OSError, RuntimeError) as exc:  # a symlink loop, a name too long for the system
            raise self._error(
                tensor, f"external data field 'location' {location!r} cannot be resolved: {exc}"
            ) from None
        if relative.is_absolute() or ".." in relative.parts or not target.is_relative_to(self.folder):
            raise self._error(
                tensor,
                f"external data field 'location' names the file '{location}', which is outside the model's "
                f"folder {self.folder}; external data must lie beside the model",
            )
        if target not in self._maps:
            try:
                if not target.is_file():
                    raise self._error(
                        tensor,
                        f"the external data file '{location}' is missing from {self.folder}; copy it beside the model",
                    )
                self._maps[target] = _map(target)
            except OSError as exc:
                raise self._error(tensor, f"the external data file '{location}' cannot be read: {exc}") from None
        return target

    def _count(self, tensor: onnx.TensorProto, fields: dict[str, str], name: str) -> int | None:
        text = fields.get(name)
        if text is None:
            return None
        if not _DECIMAL.fullmatch(text):
            raise self._error(
                tensor, f"external data field '{name}' is {text!r}, not a non-negative integer (a byte count)"
            )
        return int(text)

    def _file_size(self, path: Path) -> int:
        mapped = self._maps[path]
        return len(mapped) if mapped is not None else 0

    def _error(self, tensor: onnx.TensorProto, detail: str) -> ModelFormatError:
        return ModelFormatError(f"{self.source}: tensor '{tensor.name}': {detail}")


def _map(path: Path) -> mmap.mmap | None:
    """``path`` mapped read-only (None for an empty file); the mapping outlives the file descriptor."""
    with path.open("rb") as file:
        if path.stat().st_size == 0:
            return None
        return mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ)


def _element(tensor: onnx.TensorProto) -> Type | None:
    return ELEMENT_TYPES.get(tensor.data_type)


def _declared_bytes(tensor: onnx.TensorProto) -> int | None:
    """The bytes ``tensor``'s shape and element type take in ONNX's raw layout (sub-byte values packed),
    None for an element type the opset lacks."""
    element = _element(tensor)
    if element is None:
        return None
    return -(-math.prod(tensor.dims) * element.bitwidth // 8)
