"""The combined Silero VAD model (``silero_vad.onnx`` of the ``silero-vad`` wheel: one ``If`` on the sample
rate chooses the 16 kHz or the 8 kHz network) run as its users run it: chunks of audio in a stream, the
LSTM state each chunk gives (``stateN``) fed back as the next chunk's ``state``, against ONNX Runtime
doing the same. The wheel is fetched once into the model cache (see ``bench/real_models.py``); without
network access these tests skip.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from bench_modules import load_bench_module

import hetero_sdk as hs
from hetero_sdk.errors import ModelValidationError, UnsupportedOperationError

ort = pytest.importorskip("onnxruntime")

real_models = load_bench_module("real_models")
COMBINED = real_models.RealModel("silero-vad==6.2.3", "silero_vad/data/silero_vad.onnx", {}, kind="speech, If on sr")
CHUNKS = 6
ATOL = 1e-4


@pytest.fixture(scope="module")
def path() -> Path:
    try:
        return real_models.fetch(COMBINED)  # type: ignore[no-any-return]
    except real_models.FetchError as exc:
        pytest.skip(str(exc))


def _audio(samples: int, rate: int) -> np.ndarray:
    """Noise, then a voiced sound (a 120 Hz pulse train with a wavering pitch) from a third of the way in."""
    rng = np.random.default_rng(rate)
    t = np.arange(CHUNKS * samples) / rate
    phase = np.cumsum(2 * np.pi * (120 + 30 * np.sin(2 * np.pi * 3 * t)) / rate)
    voice = sum(np.sin(k * phase) / k for k in range(1, 30)) * (0.5 + 0.5 * np.sin(2 * np.pi * 4 * t))
    audio = 0.3 * voice * (t > t[-1] / 3) + 0.01 * rng.standard_normal(t.shape)
    return audio.astype(np.float32).reshape(CHUNKS, 1, samples)


def _ort_stream(path: Path, chunks: np.ndarray, rate: int) -> list[dict[str, np.ndarray]]:
    """ONNX Runtime's outputs over the stream (the reference); checks that the carried state matters."""
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    zeros = np.zeros((2, 1, 128), np.float32)
    state = zeros
    steps = []
    for chunk in chunks:
        output, state = session.run(["output", "stateN"], {"input": chunk, "state": state, "sr": np.array(rate)})
        steps.append({"output": output, "stateN": state})
    _, fresh = session.run(["output", "stateN"], {"input": chunks[-1], "state": zeros, "sr": np.array(rate)})
    assert np.abs(fresh - steps[-1]["stateN"]).max() > 100 * ATOL, "a device dropping the state must fail the test"
    return steps


def _stream(compiled: Any, chunks: np.ndarray, feeds: dict[str, np.ndarray]) -> list[dict[str, np.ndarray]]:
    request = compiled.create_infer_request()
    state = np.zeros((2, 1, 128), np.float32)
    steps = []
    for chunk in chunks:
        results = request.infer({"input": chunk, "state": state, **feeds})
        state = np.array(results["stateN"])
        steps.append({"output": np.array(results["output"]), "stateN": state})
    return steps


def _assert_streams_match(got: list[dict[str, np.ndarray]], expected: list[dict[str, np.ndarray]]) -> None:
    assert len(got) == len(expected) == CHUNKS
    for index, (mine, reference) in enumerate(zip(got, expected)):
        for name in ("output", "stateN"):
            np.testing.assert_allclose(mine[name], reference[name], rtol=0, atol=ATOL, err_msg=f"chunk {index} {name}")


def test_combined_model_frozen_at_16_khz_streams_on_xla_as_onnx_runtime_does(path: Path) -> None:
    model = hs.convert_model(path, input={"input": [1, 512], "state": [2, 1, 128], "sr": np.array(16000)})
    assert [port.any_name for port in model.inputs] == ["input", "state"]
    assert "If" not in {node.get_type_name() for node in model.get_ops()}
    chunks = _audio(512, 16000)
    compiled = hs.Core().compile_model(model, "XLA")
    _assert_streams_match(_stream(compiled, chunks, {}), _ort_stream(path, chunks, 16000))


def test_combined_model_frozen_at_16_khz_without_shapes_splits_between_xla_and_template(path: Path) -> None:
    # the chunk length stays dynamic: the Ifs on it inside keep dynamic ranks, which go to TEMPLATE
    model = hs.convert_model(path, input={"sr": np.array(16000)})
    core = hs.Core()
    assert set(core.query_model(model, "HETERO:XLA,TEMPLATE").values()) == {"XLA", "TEMPLATE"}
    chunks = _audio(512, 16000)
    compiled = core.compile_model(model, "HETERO:XLA,TEMPLATE")
    _assert_streams_match(_stream(compiled, chunks, {}), _ort_stream(path, chunks, 16000))


def test_combined_model_frozen_in_openvino_text_form_streams_on_template(path: Path) -> None:
    model = hs.convert_model(path, input="input[1,512],state[2,1,128],sr->16000")
    chunks = _audio(512, 16000)
    compiled = hs.Core().compile_model(model, "TEMPLATE")
    _assert_streams_match(_stream(compiled, chunks, {}), _ort_stream(path, chunks, 16000))


@pytest.mark.parametrize(("rate", "samples"), [(16000, 512), (8000, 256)])
def test_combined_model_unfrozen_streams_on_template_choosing_its_branch_at_run_time(
    path: Path, rate: int, samples: int
) -> None:
    # read as the file declares it: the If on sr stays, and the Ifs on the chunk's length inside give
    # values of dynamic rank, which TEMPLATE runs as they come
    model = hs.convert_model(path)
    assert [port.any_name for port in model.inputs] == ["input", "state", "sr"]
    assert str(model.output("stateN").partial_shape) == "[...]"
    chunks = _audio(samples, rate)
    compiled = hs.Core().compile_model(model, "TEMPLATE")
    _assert_streams_match(_stream(compiled, chunks, {"sr": np.array(rate)}), _ort_stream(path, chunks, rate))


def test_combined_model_unfrozen_goes_to_template_under_hetero_and_xla_says_why(path: Path) -> None:
    model = hs.convert_model(path)
    core = hs.Core()
    assert "If_0" not in core.query_model(model, "XLA")
    with pytest.raises(UnsupportedOperationError, match=r"dynamic rank.*freeze the input that decides the If"):
        core.compile_model(model, "XLA")
    chunks = _audio(512, 16000)
    compiled = core.compile_model(model, "HETERO:XLA,TEMPLATE")
    _assert_streams_match(_stream(compiled, chunks, {"sr": np.array(16000)}), _ort_stream(path, chunks, 16000))


@pytest.mark.parametrize("rate", [8000, 16000])
def test_combined_model_with_static_shapes_keeps_the_if_on_sr(path: Path, rate: int) -> None:
    # 256-sample chunks are what both branches take: every shape is static, the If on sr runs per request
    model = hs.convert_model(path, input={"input": [1, 256], "state": [2, 1, 128]})
    assert "If" in {node.get_type_name() for node in model.get_ops()}
    assert model.output("stateN").partial_shape == hs.PartialShape([2, 1, 128])
    chunks = _audio(256, rate)
    compiled = hs.Core().compile_model(model, "TEMPLATE")
    _assert_streams_match(_stream(compiled, chunks, {"sr": np.array(rate)}), _ort_stream(path, chunks, rate))


def test_combined_model_at_512_samples_unfrozen_names_the_branch_that_cannot_take_them(path: Path) -> None:
    # the 8 kHz network cannot take 512-sample chunks (its LSTM would get rank 5): freeze sr instead
    with pytest.raises(ModelValidationError, match="else_branch"):
        hs.convert_model(path, input={"input": [1, 512], "state": [2, 1, 128]})
