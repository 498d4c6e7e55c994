"""hs.Tensor, as ov.Tensor: a typed view sharing an array's memory, or new zeros of a type and shape;
numpy and infer requests take it wherever they take an array."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import hetero_sdk as hs
from hetero_sdk import opset
from template_plugin import TemplatePlugin


@given(hnp.arrays(st.sampled_from([np.float32, np.int64, np.uint8, np.bool_]), hnp.array_shapes(min_dims=0)))
def test_a_tensor_shares_its_array_and_describes_it(array: np.ndarray) -> None:
    tensor = hs.Tensor(array)
    assert tensor.data is array and np.asarray(tensor) is array
    assert tensor.shape == array.shape and tensor.get_shape() == array.shape
    assert tensor.element_type == hs.Type.of(array.dtype) == tensor.get_element_type()
    assert tensor.size == array.size == tensor.get_size()
    assert tensor.get_byte_size() == array.nbytes == tensor.byte_size


def test_writing_through_data_writes_the_array() -> None:
    array = np.zeros((2, 2), np.float32)
    hs.Tensor(array).data[1, 1] = 5
    assert array[1, 1] == 5


def test_a_tensor_of_a_type_and_shape_holds_zeros() -> None:
    tensor = hs.Tensor(hs.Type.f16, [2, 0, 3])
    assert tensor.data.dtype == np.float16 and tensor.shape == (2, 0, 3)
    assert hs.Tensor(np.int32, (3,)).element_type == hs.Type.i32
    assert not hs.Tensor(hs.Type.i64, [4]).data.any()


def test_a_type_needs_a_shape_and_an_array_takes_none() -> None:
    with pytest.raises(TypeError, match="needs a shape"):
        hs.Tensor(hs.Type.f32)
    with pytest.raises(TypeError, match="takes no shape"):
        hs.Tensor(np.zeros(2), [2])


def test_numpy_converts_on_request() -> None:
    tensor = hs.Tensor(np.arange(3, dtype=np.int32))
    converted = np.asarray(tensor, dtype=np.float64)
    assert converted.dtype == np.float64 and converted.tolist() == [0.0, 1.0, 2.0]
    assert np.array(tensor, copy=True) is not tensor.data


def test_requests_take_tensors_as_inputs_and_output_buffers() -> None:
    x = opset.parameter([3], np.float32, name="x")
    compiled = hs.Core(plugins={"TEMPLATE": TemplatePlugin}, autoload=False).compile_model(
        hs.Model([opset.relu(x, name="y")], [x]), "TEMPLATE"
    )
    request = compiled.create_infer_request()
    out = hs.Tensor(hs.Type.f32, [3])
    request.set_output_tensor(0, out)
    request.infer({"x": hs.Tensor(np.array([-1.0, 0.0, 2.0], np.float32))})
    assert out.data.tolist() == [0.0, 0.0, 2.0]
    with pytest.raises(hs.errors.InferenceError, match="has element type int64"):
        request.infer({"x": hs.Tensor(np.zeros(3, np.int64))})
