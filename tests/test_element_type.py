"""Element types: each one's numpy dtype, its kind, and a trip through a model on every shipped device."""

from __future__ import annotations

import numpy as np
import pytest

import hetero_sdk as hs
from hetero_sdk import opset

INTEGERS = {
    hs.Type.i8: np.int8, hs.Type.u8: np.uint8, hs.Type.i16: np.int16, hs.Type.u16: np.uint16,
    hs.Type.i32: np.int32, hs.Type.u32: np.uint32, hs.Type.i64: np.int64, hs.Type.u64: np.uint64,
}  # fmt: skip


@pytest.mark.parametrize(("element_type", "dtype"), INTEGERS.items())
def test_every_integer_type_maps_to_its_numpy_dtype_and_back(element_type: hs.Type, dtype: type) -> None:
    assert element_type.numpy == np.dtype(dtype)
    assert hs.Type.of(dtype) is element_type
    assert element_type.is_integral and not element_type.is_real
    assert element_type.is_signed == np.issubdtype(dtype, np.signedinteger)
    assert element_type.bitwidth == np.dtype(dtype).itemsize * 8


@pytest.mark.parametrize("device", ["TEMPLATE", "XLA"])
@pytest.mark.parametrize("element_type", list(INTEGERS))
def test_integers_keep_their_full_range_through_a_model(device: str, element_type: hs.Type) -> None:
    info = np.iinfo(element_type.numpy)
    x = opset.parameter([4], element_type, name="x")
    y = opset.maximum(opset.add(x, opset.constant(np.array(0, element_type.numpy))), x, name="y")
    values = np.array([info.min, info.max, 0, 1], element_type.numpy)
    result = hs.Core().compile_model(hs.Model([y], [x]), device)({"x": values})["y"]
    assert result.dtype == element_type.numpy
    np.testing.assert_array_equal(result, values)
