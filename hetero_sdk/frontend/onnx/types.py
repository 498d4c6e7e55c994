"""ONNX element types and tensors as the SDK's :class:`~hetero_sdk.Type` and numpy arrays."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Final

import numpy as np
import onnx
from onnx import helper, numpy_helper

from hetero_sdk.element_type import Type
from hetero_sdk.errors import ModelFormatError, ModelValidationError, UnsupportedOperationError

if TYPE_CHECKING:
    from hetero_sdk.frontend.onnx.external_data import ExternalData

__all__ = ["ELEMENT_TYPES", "element_type", "onnx_type_name", "tensor_value"]

ELEMENT_TYPES: Final[dict[int, Type]] = {
    onnx.TensorProto.FLOAT: Type.f32,
    onnx.TensorProto.FLOAT16: Type.f16,
    onnx.TensorProto.BFLOAT16: Type.bf16,
    onnx.TensorProto.DOUBLE: Type.f64,
    onnx.TensorProto.INT8: Type.i8,
    onnx.TensorProto.UINT8: Type.u8,
    onnx.TensorProto.INT16: Type.i16,
    onnx.TensorProto.UINT16: Type.u16,
    onnx.TensorProto.INT32: Type.i32,
    onnx.TensorProto.UINT32: Type.u32,
    onnx.TensorProto.INT64: Type.i64,
    onnx.TensorProto.UINT64: Type.u64,
    onnx.TensorProto.BOOL: Type.boolean,
    onnx.TensorProto.FLOAT8E4M3FN: Type.f8e4m3,
    onnx.TensorProto.FLOAT8E5M2: Type.f8e5m2,
    onnx.TensorProto.FLOAT8E4M3FNUZ: Type.f8e4m3fnuz,
    onnx.TensorProto.FLOAT8E5M2FNUZ: Type.f8e5m2fnuz,
    onnx.TensorProto.FLOAT8E8M0: Type.f8e8m0,
    onnx.TensorProto.FLOAT4E2M1: Type.f4e2m1,
    onnx.TensorProto.INT4: Type.i4,
    onnx.TensorProto.UINT4: Type.u4,
    onnx.TensorProto.INT2: Type.i2,
    onnx.TensorProto.UINT2: Type.u2,
    onnx.TensorProto.STRING: Type.string,
}
"""The ONNX element types the opset has, by their ``TensorProto`` code."""


def onnx_type_name(code: int) -> str:
    """ONNX's name of an element type code (``FLOAT``, ``INT64``...)."""
    try:
        return str(onnx.TensorProto.DataType.Name(code))
    except ValueError:
        return f"element type code {code}"


def element_type(code: int, where: str) -> Type:
    """The SDK type of ONNX element type ``code``.

    :param where: what has this type, for the error (``input 'x'``, ``Cast 'cast_3'``...).
    :raises UnsupportedOperationError: for a type the opset has no counterpart of (strings, uint16...).
    """
    try:
        return ELEMENT_TYPES[code]
    except KeyError:
        known = ", ".join(onnx_type_name(c) for c in ELEMENT_TYPES)
        raise UnsupportedOperationError(
            f"{where} has the ONNX element type {onnx_type_name(code)}, which hetero-sdk does not support; "
            f"supported: {known}"
        ) from None


def tensor_value(tensor: onnx.TensorProto, where: str, external: ExternalData | None = None) -> np.ndarray:
    """The numpy value of an ONNX tensor (an initializer or a ``value`` attribute), read-only; 4- and
    2-bit values, which ONNX packs several to a byte, unpacked one to an element; strings (UTF-8 in
    ONNX) as a ``string`` array (StringDType). A tensor kept in external data is a view of its
    memory-mapped file (``external``, the model's: :class:`~hetero_sdk.frontend.onnx.external_data.ExternalData`).

    :raises UnsupportedOperationError: for an element type the opset does not have.
    :raises ModelFormatError: for a tensor in external data without ``external``, or a malformed reference.
    :raises ModelValidationError: for a tensor whose data does not fill its declared shape and element
        type (too many or too few values or bytes, a negative dimension).
    """
    kind = element_type(tensor.data_type, where)
    if tensor.HasField("data_location") and tensor.data_location == onnx.TensorProto.EXTERNAL:
        if external is None:
            raise ModelFormatError(f"{where} keeps its data in an external file; read the model from its .onnx path")
        return external.array(tensor)
    _check_size(tensor, kind, where)
    if kind is Type.string:
        try:
            text = [s.decode("utf-8") for s in tensor.string_data]
        except UnicodeDecodeError as exc:
            raise ModelValidationError(f"{where}: string {exc.object!r} is not UTF-8") from None
        value = np.array(text, Type.string.numpy).reshape(tuple(tensor.dims))
        value.flags.writeable = False
        return value
    value = numpy_helper.to_array(tensor)
    value.flags.writeable = False
    return value


def _check_size(tensor: onnx.TensorProto, kind: Type, where: str) -> None:
    """Refuses a tensor whose stored data is not exactly what its dims and element type declare: the
    bytes of ``raw_data`` (sub-byte values packed), or the entries of the typed field ONNX keeps the
    type in (``float_data``, ``int32_data``..., sub-byte values packed a byte to an entry)."""
    dims = list(tensor.dims)
    if any(d < 0 for d in dims):
        raise ModelValidationError(f"{where}: field 'dims' {dims} holds a negative dimension")
    count = math.prod(dims)
    declared = f"its dims {dims} and element type {onnx_type_name(tensor.data_type)}"
    if tensor.HasField("raw_data"):
        needed = -(-count * kind.bitwidth // 8)
        found, unit, field = len(tensor.raw_data), "bytes", "raw_data"
    else:
        field = helper.tensor_dtype_to_field(tensor.data_type)
        per_entry = 8 // kind.bitwidth if kind.bitwidth < 8 else 1
        needed = -(-count // per_entry)
        found, unit = len(getattr(tensor, field)), "values"
    if found != needed:
        raise ModelValidationError(
            f"{where}: field '{field}' holds {found} {unit}, but {declared} take {needed}; "
            "the tensor's data and declared shape or type disagree (export the model again)"
        )
