"""Infer requests: tensors by name, index and port, checked shapes and types, results lookups."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import hetero_sdk as hs
from hetero_sdk.errors import InferenceError


@pytest.fixture
def compiled(core: hs.Core, two_io) -> hs.CompiledModel:
    return core.compile_model(two_io.model, "TEMPLATE")


@pytest.fixture
def ab() -> tuple[np.ndarray, np.ndarray]:
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    return a, np.full((2, 3), -1.5, np.float32)


def expected(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return a + b, a * b


def test_ports_keep_names_types_and_shapes_of_the_model(compiled: hs.CompiledModel) -> None:
    assert [p.any_name for p in compiled.inputs] == ["a", "b"]
    assert [p.any_name for p in compiled.outputs] == ["sum", "prod"]
    assert all(p.element_type == hs.Type.f32 and p.shape == (2, 3) for p in (*compiled.inputs, *compiled.outputs))
    assert compiled.input("b") == compiled.inputs[1] and compiled.output(1) == compiled.outputs[1]


@pytest.mark.parametrize("keys", ["names", "indices", "ports", "list", "tuple"])
def test_inputs_by_name_index_port_or_order_give_the_same_results(compiled: hs.CompiledModel, ab, keys: str) -> None:
    a, b = ab
    feeds: dict[str, Any] = {
        "names": {"a": a, "b": b},
        "indices": {0: a, 1: b},
        "ports": {compiled.inputs[0]: a, compiled.inputs[1]: b},
        "list": [a, b],
        "tuple": (a, b),
    }
    results = compiled.create_infer_request().infer(feeds[keys])
    want_sum, want_prod = expected(a, b)
    np.testing.assert_array_equal(results[0], want_sum)
    np.testing.assert_array_equal(results[1], want_prod)


def test_set_tensor_by_name_index_and_port_then_infer(compiled: hs.CompiledModel, ab) -> None:
    a, b = ab
    request = compiled.create_infer_request()
    request.set_tensor("a", a)
    request.set_input_tensor(1, b)
    assert request.get_tensor("a").data is a and request.get_input_tensor(1).data is b
    request.set_tensor(compiled.inputs[1], b * 2)
    assert request.get_tensor(compiled.inputs[1]).data[0, 0] == -3.0
    request.set_input_tensors({"a": a, 1: b})
    request.infer()
    np.testing.assert_array_equal(request.get_tensor("prod"), a * b)
    np.testing.assert_array_equal(request.get_output_tensor(0), a + b)


def test_results_look_up_by_index_name_and_port(compiled: hs.CompiledModel, ab) -> None:
    a, b = ab
    results = compiled(dict(a=a, b=b))
    want_sum, want_prod = expected(a, b)
    for key in (0, "sum", compiled.outputs[0], -2):
        np.testing.assert_array_equal(results[key], want_sum)
    for key in (1, "prod", compiled.outputs[1], -1):
        np.testing.assert_array_equal(results[key], want_prod)
    assert list(results) == compiled.outputs and len(results) == 2
    assert set(results.to_dict()) == {"sum", "prod"}
    np.testing.assert_array_equal(results.to_tuple()[1], want_prod)
    for missing in ("nope", 2, -3):
        with pytest.raises(KeyError):
            results[missing]


@pytest.mark.parametrize(
    ("feed", "message"),
    [
        ({"nope": "A", "b": "B"}, r"no input named 'nope'; the model's inputs: a, b$"),
        ({"bb": "A", "a": "A"}, r"no input named 'bb'; the model's inputs: a, b; did you mean b\?$"),
        ({"sum": "A"}, r"'sum' names an output, not an input"),
        ({5: "A"}, r"input index 5 does not exist; the model has 2 input\(s\)"),
        (["A"], r"the model has 2 input\(s\), 1 were given"),
        (["A", "B", "B"], r"the model has 2 input\(s\), 3 were given"),
        (["A", "A64"], r"input 'b' has element type float64; the model expects f32"),
        (["OBJ", "B"], r"input 'a': object is not a tensor"),
        ({"a": "A"}, r"input\(s\) \['b'\] were not set"),
        ({"a": "A64", "b": "B"}, r"input 'a' has element type float64; the model expects f32"),
        ({"a": "AT", "b": "B"}, r"input 'a' has shape \[3, 2\]; the model expects \[2,3\]"),
        ({"a": "OBJ", "b": "B"}, r"input 'a': object is not a tensor"),
    ],
)
def test_wrong_inputs_raise_inference_error_naming_the_input(
    compiled: hs.CompiledModel, ab, feed: Any, message: str
) -> None:
    a, b = ab
    values = {"A": a, "B": b, "A64": a.astype(np.float64), "AT": a.reshape(3, 2), "OBJ": object()}
    resolved = [values[v] for v in feed] if isinstance(feed, list) else {k: values[v] for k, v in feed.items()}
    request = compiled.create_infer_request()
    with pytest.raises(InferenceError, match=message):
        request.infer(resolved)
    assert not request.is_busy
    request.infer({"a": a, "b": b})  # the request stays usable


def test_wrong_keys_for_setters_raise_inference_error(compiled: hs.CompiledModel, ab) -> None:
    a, _ = ab
    request = compiled.create_infer_request()
    with pytest.raises(
        InferenceError, match=r"no input or output named 'x'; the model's inputs: a, b; its outputs: prod, sum$"
    ):
        request.set_tensor("x", a)
    with pytest.raises(InferenceError, match=r"no input named 'x'; the model's inputs: a, b$"):
        request.set_input_tensors({"x": a})
    with pytest.raises(InferenceError, match="input index 3 does not exist"):
        request.set_input_tensor(3, a)
    with pytest.raises(InferenceError, match="output index 2 does not exist"):
        request.set_output_tensor(2, np.empty((2, 3), np.float32))
    with pytest.raises(InferenceError, match="'sum' names an output"):
        request.set_input_tensors({"sum": a})
    with pytest.raises(InferenceError, match="no inference has completed"):
        _ = request.results


def test_python_scalars_and_lists_are_converted_to_the_input_type(compiled: hs.CompiledModel) -> None:
    results = compiled.create_infer_request().infer({"a": [[1, 2, 3], [4, 5, 6]], "b": np.ones((2, 3), np.float32)})
    np.testing.assert_array_equal(results["sum"], np.array([[2, 3, 4], [5, 6, 7]], np.float32))
    assert results["sum"].dtype == np.float32


def test_inference_does_not_modify_inputs(core: hs.Core, mlp, rng) -> None:
    compiled = core.compile_model(mlp.model, "TEMPLATE")
    (x,) = mlp.make_inputs(rng)
    before = x.copy()
    x.setflags(write=False)  # a kernel writing into it would raise
    result = compiled.create_infer_request().infer({"x": x})
    np.testing.assert_array_equal(x, before)
    np.testing.assert_allclose(result[0], mlp.expected([before])[0], rtol=1e-4, atol=1e-4)


def test_user_output_buffers_receive_the_results(compiled: hs.CompiledModel, ab) -> None:
    a, b = ab
    request = compiled.create_infer_request()
    sum_buffer = np.zeros((2, 3), np.float32)
    prod_buffer = np.zeros((2, 3), np.float32)
    request.set_output_tensor(0, sum_buffer)
    request.set_tensor("prod", prod_buffer)
    results = request.infer({"a": a, "b": b}, share_outputs=True)
    np.testing.assert_array_equal(sum_buffer, a + b)
    np.testing.assert_array_equal(prod_buffer, a * b)
    assert results[0] is sum_buffer and request.get_tensor("prod").data is prod_buffer
    request.infer({"a": b, "b": b})  # repeated infers reuse the same buffers
    np.testing.assert_array_equal(sum_buffer, b + b)


def read_only_buffer() -> np.ndarray:
    buffer = np.zeros((2, 3), np.float32)
    buffer.setflags(write=False)
    return buffer


@pytest.mark.parametrize(
    "buffer",
    [np.zeros((3, 2), np.float32), np.zeros((2, 3), np.float64), read_only_buffer(), [[0.0] * 3] * 2],
    ids=["shape", "dtype", "read-only", "list"],
)
def test_unfit_output_buffers_are_rejected(compiled: hs.CompiledModel, buffer: Any) -> None:
    with pytest.raises(InferenceError, match="output buffer for 'sum'"):
        compiled.create_infer_request().set_output_tensor(0, buffer)


def test_repeated_infers_without_output_buffers_give_fresh_correct_results(compiled: hs.CompiledModel, ab) -> None:
    a, b = ab
    request = compiled.create_infer_request()
    first = request.infer({"a": a, "b": b})[0].copy()
    second = request.infer({"a": a * 2, "b": b})[0]
    np.testing.assert_array_equal(first, a + b)
    np.testing.assert_array_equal(second, a * 2 + b)


def test_sync_infer_does_not_call_the_completion_callback(compiled: hs.CompiledModel, ab) -> None:
    calls: list[Any] = []
    request = compiled.create_infer_request()
    request.set_callback(calls.append, "data")
    request.infer(dict(zip("ab", ab)))
    compiled.infer_new_request(dict(zip("ab", ab)))
    assert calls == []


def test_requests_of_one_compiled_model_are_independent(compiled: hs.CompiledModel, ab) -> None:
    a, b = ab
    first, second = compiled.create_infer_request(), compiled.create_infer_request()
    first.infer({"a": a, "b": b})
    second.infer({"a": b, "b": b})
    np.testing.assert_array_equal(first.results["sum"], a + b)
    np.testing.assert_array_equal(second.results["sum"], b + b)
    assert first.compiled_model is compiled


def test_compiled_model_properties_name_the_model_and_requests(compiled: hs.CompiledModel) -> None:
    assert compiled.get_property("NETWORK_NAME") == "two_io"
    assert compiled.get_property("OPTIMAL_NUMBER_OF_INFER_REQUESTS") >= 1
    assert compiled.get_property("LOADED_FROM_CACHE") is False
    supported = compiled.get_property("SUPPORTED_PROPERTIES")
    assert {"NETWORK_NAME", "EXECUTION_DEVICES", "LOADED_FROM_CACHE", "PERF_COUNT"} <= set(supported)
    assert set(supported.values()) == {"RO"}
    with pytest.raises(KeyError, match="no property 'NOPE'"):
        compiled.get_property("NOPE")
    with pytest.raises(KeyError, match="read-only"):
        compiled.set_property({"PERF_COUNT": True})


def test_a_dynamic_input_checks_every_new_shape_and_dtype(core: hs.Core) -> None:
    """Arrays of changing shapes for a ``[?, 3]`` input: compatible ones run (again after another
    shape), an incompatible shape or a wrong dtype is refused even right after a shape that ran."""
    x = hs.opset.parameter(hs.PartialShape([-1, 3]), hs.Type.f32, name="x")
    model = hs.Model([hs.opset.multiply(x, np.float32(2))], [x])
    request = core.compile_model(model, "TEMPLATE").create_infer_request()
    for rows in (2, 2, 4, 2):
        value = np.arange(rows * 3, dtype=np.float32).reshape(rows, 3)
        np.testing.assert_array_equal(request.infer([value])[0], value * 2)
    with pytest.raises(InferenceError, match=r"input 'x' has shape \[2, 4\]; the model expects \[\?,3\]"):
        request.infer([np.zeros((2, 4), np.float32)])
    with pytest.raises(InferenceError, match="input 'x' has element type float64"):
        request.infer([np.zeros((2, 3), np.float64)])
    with pytest.raises(InferenceError, match=r"input 'x' has shape \[3\]"):
        request.infer({"x": np.zeros(3, np.float32)})
    np.testing.assert_array_equal(request.infer({"x": np.ones((2, 3), np.float32)})[0], np.full((2, 3), 2.0))
