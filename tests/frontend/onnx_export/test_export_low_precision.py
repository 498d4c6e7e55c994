"""Exporting the 8-, 4- and 2-bit element types: constants and inputs keep every code (ONNX packs the
4- and 2-bit ones), Convert to each computes in ONNX's reference evaluator what the SDK computes (and
the closed forms written here), and an opset older than a type is refused with the opset to use."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx.reference import ReferenceEvaluator

import hetero_sdk as hs
from hetero_sdk import opset
from hetero_sdk.errors import UnsupportedOperationError
from hetero_sdk.frontend.onnx import convert_onnx
from hetero_sdk.frontend.onnx_export import export_model

T = hs.Type
BITS = {T.f8e4m3: 8, T.f8e5m2: 8, T.f8e4m3fnuz: 8, T.f8e5m2fnuz: 8, T.f8e8m0: 8}
BITS |= {T.f4e2m1: 4, T.i4: 4, T.u4: 4, T.i2: 2, T.u2: 2}
ONNX_CODES = {
    T.f8e4m3: onnx.TensorProto.FLOAT8E4M3FN, T.f8e5m2: onnx.TensorProto.FLOAT8E5M2,
    T.f8e4m3fnuz: onnx.TensorProto.FLOAT8E4M3FNUZ, T.f8e5m2fnuz: onnx.TensorProto.FLOAT8E5M2FNUZ,
    T.f8e8m0: onnx.TensorProto.FLOAT8E8M0, T.f4e2m1: onnx.TensorProto.FLOAT4E2M1, T.i4: onnx.TensorProto.INT4,
    T.u4: onnx.TensorProto.UINT4, T.i2: onnx.TensorProto.INT2, T.u2: onnx.TensorProto.UINT2,
}  # fmt: skip
X = np.array([-9, -8.6, -3, -1.5, -0.5, 0, 0.5, 1.5, 2.9, 7.9, 8, 15.5, 16, 500, 1e6, np.inf, -np.inf], np.float32)


def _run(model: hs.Model, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    compiled = hs.Core().compile_model(model, "TEMPLATE")
    results = compiled(feeds)
    return [np.asarray(results[i]) for i in range(len(model.outputs))]


def _reference(proto: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    with np.errstate(all="ignore"):
        return [np.asarray(v) for v in ReferenceEvaluator(proto).run(None, feeds)]


@pytest.mark.parametrize("element_type", list(BITS))
def test_constants_and_inputs_keep_every_code(element_type: hs.Type) -> None:
    codes = np.arange(1 << BITS[element_type], dtype=np.uint8).view(element_type.numpy)
    x = opset.parameter([codes.size], element_type, name="x")
    c = opset.constant(codes, name="c")
    model = hs.Model([opset.concat([c, x], 0, name="both")], [x])
    proto = export_model(model, opset=25)
    assert proto.graph.input[0].type.tensor_type.elem_type == ONNX_CODES[element_type]
    assert proto.graph.initializer[0].data_type == ONNX_CODES[element_type]
    got = _reference(proto, {"x": codes})[0]
    assert got.dtype == element_type.numpy
    assert got.view(np.uint8).tolist() == 2 * codes.view(np.uint8).tolist()
    back = convert_onnx(proto)
    assert back.get_parameters()[0].get_output_element_type(0) is element_type
    assert _run(back, {"x": codes})[0].view(np.uint8).tolist() == 2 * codes.view(np.uint8).tolist()


@pytest.mark.parametrize("element_type", [T.f8e4m3, T.f8e5m2, T.f8e4m3fnuz, T.f8e5m2fnuz, T.f4e2m1])
def test_convert_to_narrow_floats_overflows_in_the_export_as_in_the_sdk(element_type: hs.Type) -> None:
    x = opset.parameter([X.size], T.f32, name="x")
    model = hs.Model([opset.convert(x, element_type, name="y")], [x])
    with np.errstate(all="ignore"):
        want = X.astype(element_type.numpy)  # ml_dtypes: to nearest even, past the range inf or NaN
    for got in (_reference(export_model(model, opset=25), {"x": X})[0], _run(model, {"x": X})[0]):
        np.testing.assert_array_equal(got.astype(np.float32), want.astype(np.float32))


@pytest.mark.parametrize(("element_type", "low", "high"), [(T.i4, -8, 7), (T.u4, 0, 15), (T.i2, -2, 1), (T.u2, 0, 3)])
def test_convert_to_narrow_integers_saturates_in_the_export_as_in_the_sdk(element_type, low, high) -> None:
    x = opset.parameter([X.size], T.f32, name="x")
    model = hs.Model([opset.convert(x, element_type, name="y")], [x])
    want = np.clip(np.trunc(np.clip(X, -1e9, 1e9)), low, high)
    for got in (_reference(export_model(model, opset=25), {"x": X})[0], _run(model, {"x": X})[0]):
        assert got.dtype == element_type.numpy
        np.testing.assert_array_equal(got.astype(np.int64), want.astype(np.int64))


def test_convert_to_i8_keeps_the_exact_bounds() -> None:
    x = opset.parameter([4], T.f32, name="x")
    model = hs.Model([opset.convert(x, T.i8, name="y")], [x])
    values = np.array([500.0, -500.0, 127.0, -128.0], np.float32)
    np.testing.assert_array_equal(_reference(export_model(model), {"x": values})[0], [127, -128, 127, -128])


@pytest.mark.parametrize(("element_type", "since"), [(T.f8e4m3, 19), (T.i4, 21), (T.f4e2m1, 23), (T.u2, 25)])
def test_an_opset_older_than_the_type_is_refused_with_the_opset_to_use(element_type: hs.Type, since: int) -> None:
    x = opset.parameter([2], T.f32, name="x")
    model = hs.Model([opset.convert(x, element_type, name="narrow")], [x])
    with pytest.raises(UnsupportedOperationError, match=f"Convert 'narrow'.*opset={since}"):
        export_model(model, opset=since - 1)
    export_model(model, opset=since)
