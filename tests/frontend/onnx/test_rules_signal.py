"""DFT computes what numpy's FFT computes: forward and inverse, real and complex input, one-sided
spectra and their inverse, with dft_length cutting or zero-padding the signal, in opsets 17 and 20."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import helper
from onnx_models import check, node_model

import hetero_sdk as hs

F32, I64 = np.float32, np.int64
RNG = np.random.default_rng(4)


def _as_pairs(z: np.ndarray) -> np.ndarray:
    return np.stack([z.real, z.imag], -1).astype(F32)


@pytest.mark.parametrize("axis", [1, 2])
@pytest.mark.parametrize("complex_input", [False, True])
def test_dft_17_forward_and_inverse_along_an_axis(axis: int, complex_input: bool) -> None:
    z = RNG.standard_normal((2, 6, 5)) + (1j * RNG.standard_normal((2, 6, 5)) if complex_input else 0)
    x = _as_pairs(z) if complex_input else z.real[..., None].astype(F32)
    for inverse in (0, 1):
        expected = (np.fft.ifft if inverse else np.fft.fft)(z, axis=axis)
        model, feeds = node_model("DFT", {"x": x}, 17, axis=axis, inverse=inverse)
        check(model, feeds, ("TEMPLATE", "XLA"), rtol=1e-4, atol=1e-5, expected=[_as_pairs(expected)])


@pytest.mark.parametrize("length", [5, 8, 11])  # cut, as is, zero-padded (signals of 8)
def test_dft_one_sided_and_back_with_dft_length(length: int) -> None:
    signal = RNG.standard_normal((3, 8)).astype(F32)
    inputs = {"x": signal[..., None], "n": np.array(length, I64)}
    model, feeds = node_model("DFT", inputs, 17, constants=["n"], axis=1, onesided=1)
    spectrum = np.fft.rfft(signal, n=length, axis=1)
    check(model, feeds, ("TEMPLATE", "XLA"), rtol=1e-4, atol=1e-5, expected=[_as_pairs(spectrum)])
    inputs = {"x": _as_pairs(spectrum), "n": np.array(length, I64)}
    model, feeds = node_model("DFT", inputs, 17, constants=["n"], axis=1, onesided=1, inverse=1)
    back = np.fft.irfft(spectrum, n=length, axis=1)[..., None].astype(F32)
    check(model, feeds, ("TEMPLATE", "XLA"), rtol=1e-4, atol=1e-5, expected=[back])


def test_dft_20_takes_a_constant_axis_input_counting_the_component_dimension() -> None:
    z = RNG.standard_normal((4, 3, 2)) + 1j * RNG.standard_normal((4, 3, 2))
    model, feeds = node_model("DFT", {"x": _as_pairs(z), "": None, "axis": np.array(-3, I64)}, 20, constants=["axis"])
    check(model, feeds, ("TEMPLATE", "XLA"), rtol=1e-4, atol=1e-5, expected=[_as_pairs(np.fft.fft(z, axis=1))])


@pytest.mark.parametrize("axis", [0, 1, -3])
def test_dft_20_takes_its_axis_at_run_time(axis: int) -> None:
    x = np.random.default_rng(2).standard_normal((3, 4, 2)).astype(np.float32)
    node = helper.make_node("DFT", ["x", "", "axis"], ["y"], inverse=1)
    feeds = {"x": x, "axis": np.array(axis, np.int64)}
    inputs = [helper.make_tensor_value_info("x", 1, [3, 4, 2]), helper.make_tensor_value_info("axis", 7, [])]
    graph = helper.make_graph([node], "g", inputs, [helper.make_tensor_value_info("y", 1, [3, 4, 2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)], ir_version=9)
    spectrum = np.fft.ifft(x[..., 0] + 1j * x[..., 1], axis=axis % 3)
    expected = np.stack([spectrum.real, spectrum.imag], axis=-1).astype(np.float32)
    check(model, feeds, ("TEMPLATE", "XLA"), rtol=1e-4, atol=1e-5, expected=[expected])


def _dft_model(last: int | str, **attributes: int) -> onnx.ModelProto:
    node = helper.make_node("DFT", ["x"], ["y"], name="dft", axis=1, **attributes)
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [1, 4, 3, last])],
        [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, ["a", "b", "c", "d"])],
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


@pytest.mark.parametrize(
    ("last", "attributes", "message"),
    [
        (2, {"onesided": 1}, "onesided=1 takes a real signal; this input is complex"),
        (1, {"onesided": 1, "inverse": 1}, "inverse=1, onesided=1 takes a complex half spectrum; this input is real"),
        (3, {}, "the input's last dimension is 3; expected 1 .* or 2"),
    ],
)
def test_a_dft_whose_last_dimension_does_not_fit_is_refused_as_onnx_shape_inference_does(
    last: int, attributes: dict[str, int], message: str
) -> None:
    """A complex signal with onesided=1 once lost its imaginary part (fuzzing; ONNX Runtime refuses these)."""
    with pytest.raises(hs.errors.ModelValidationError, match=rf"DFT 'dft'.*{message}"):
        hs.convert_model(_dft_model(last, **attributes))


def test_a_dft_whose_real_or_complex_dimension_is_unknown_needs_it_given() -> None:
    """Read as real whatever it held at run time, a complex input was once transformed without its imaginary part."""
    with pytest.raises(hs.errors.UnsupportedOperationError, match=r"last dimension .* unknown while translating"):
        hs.convert_model(_dft_model("parts", onesided=1))
    x = np.random.default_rng(2).standard_normal((1, 4, 3, 1)).astype(np.float32)
    model = hs.convert_model(_dft_model("parts", onesided=1), {"x": [1, 4, 3, 1]})
    spectrum = np.fft.rfft(x[..., 0], axis=1)
    got = hs.Core().compile_model(model, "TEMPLATE")({"x": x})["y"]
    np.testing.assert_allclose(got, np.stack([spectrum.real, spectrum.imag], -1), rtol=1e-5, atol=1e-5)
