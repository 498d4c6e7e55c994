"""The benchmark models compare like with like: the hetero-sdk graph, its numpy forward pass, its ONNX
export on ONNX Runtime and its OpenVINO build compute the same values, and each matches a reference
written here (loops over kernel taps and heads rather than the bench's vectorised numpy)."""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from bench_modules import load_bench_module
from hypothesis import given, settings
from hypothesis import strategies as st

import hetero_sdk as hs
from hetero_sdk.frontend.onnx_export import export_model
from hetero_sdk.hetero.plugin import HeteroPlugin
from template_plugin import TemplatePlugin

models = load_bench_module("models")
timing = load_bench_module("timing")

TINY: dict[str, Callable[[], Any]] = {
    "mlp": lambda: models.mlp(batch=2, features=8, hidden=16, layers=3, classes=4),
    "cnn": lambda: models.small_cnn(image=16, channels=(4, 6, 8), classes=3),
    "transformer": lambda: models.transformer_block(seq=6, d_model=8, heads=2, ffn=16),
}
RTOL, ATOL = 1e-4, 1e-5


@pytest.fixture(scope="module")
def core() -> hs.Core:
    return hs.Core(plugins={"TEMPLATE": TemplatePlugin(num_devices=2), "HETERO": HeteroPlugin()}, autoload=False)


def _constants(bench_model: Any) -> dict[str, np.ndarray]:
    model = bench_model.build()
    constants = [n for n in model.get_ops() if n.type_name == "Constant"]
    return {n.friendly_name: np.asarray(n.get_attributes()["value"]) for n in constants}


def _softmax(x: np.ndarray, axis: int) -> np.ndarray:
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _mlp_reference(c: dict[str, np.ndarray], x: np.ndarray, layers: int) -> np.ndarray:
    h = x.astype(np.float64)
    for i in range(1, layers + 2):
        h = h @ c[f"fc{i}/weights"] + c[f"fc{i}/bias"]
        h = np.where(h > 0, h, 0.0) if i <= layers else h
    return _softmax(h, 1)


def _cnn_reference(c: dict[str, np.ndarray], x: np.ndarray, stages: int) -> np.ndarray:
    h = x.astype(np.float64)
    for s in range(1, stages + 1):
        w, (_, _, rows, cols) = c[f"conv{s}/weights"], h.shape
        padded = np.pad(h, ((0, 0), (0, 0), (1, 1), (1, 1)))
        out = np.zeros((1, w.shape[0], rows, cols))
        for i in range(3):
            for j in range(3):
                out += np.einsum("nchw,oc->nohw", padded[:, :, i : i + rows, j : j + cols], w[:, :, i, j])
        h = np.maximum(out + c[f"conv{s}/bias"], 0)
        h = np.maximum.reduce([h[:, :, a::2, b::2] for a in (0, 1) for b in (0, 1)])
    return h.reshape(1, -1) @ c["head/weights"] + c["head/bias"]


def _transformer_reference(c: dict[str, np.ndarray], x: np.ndarray, heads: int) -> np.ndarray:
    def norm(v: np.ndarray, stage: str) -> np.ndarray:
        z = (v - v.mean(-1, keepdims=True)) / np.sqrt(v.var(-1, keepdims=True) + 1e-5)
        return z * c[f"{stage}/gamma"] + c[f"{stage}/beta"]

    def dense(v: np.ndarray, prefix: str) -> np.ndarray:
        return v @ c[f"{prefix}/weights"] + c[f"{prefix}/bias"]

    x = x[0].astype(np.float64)
    h = norm(x, "attn_norm")
    q, k, v = (dense(h, f"attention/{p}") for p in "qkv")
    width = x.shape[1] // heads
    context = np.zeros_like(x)
    for head in range(heads):
        cols = slice(head * width, (head + 1) * width)
        context[:, cols] = _softmax(q[:, cols] @ k[:, cols].T / math.sqrt(width), 1) @ v[:, cols]
    r = x + dense(context, "attention/out")
    u = dense(norm(r, "mlp_norm"), "mlp/up")
    gelu = 0.5 * u * (1 + np.tanh(math.sqrt(2 / math.pi) * (u + 0.044715 * u**3)))
    return (r + dense(gelu, "mlp/down"))[np.newaxis]


def _reference(name: str, bench_model: Any, x: np.ndarray) -> np.ndarray:
    c = _constants(bench_model)
    if name == "mlp":
        return _mlp_reference(c, x, 3)
    if name == "cnn":
        return _cnn_reference(c, x, 3)
    return _transformer_reference(c, x, 2)


@pytest.mark.parametrize("name", list(TINY))
def test_numpy_forward_matches_reference_written_here(name: str) -> None:
    bench_model = TINY[name]()
    x = bench_model.sample_input()
    np.testing.assert_allclose(bench_model.numpy(x), _reference(name, bench_model, x), rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("name", list(TINY))
def test_template_computes_what_numpy_computes(name: str, core: hs.Core) -> None:
    bench_model = TINY[name]()
    x = bench_model.sample_input(seed=3)
    result = core.compile_model(bench_model.build(), "TEMPLATE")({"x": x})[0]
    np.testing.assert_allclose(result, _reference(name, bench_model, x), rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("name", list(TINY))
def test_onnx_export_on_onnxruntime_computes_what_numpy_computes(name: str) -> None:
    ort = pytest.importorskip("onnxruntime")
    pytest.importorskip("onnx")
    bench_model = TINY[name]()
    x = bench_model.sample_input(seed=4)
    proto = export_model(bench_model.build())
    session = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    np.testing.assert_allclose(session.run(None, {"x": x})[0], _reference(name, bench_model, x), rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("name", list(TINY))
def test_openvino_build_computes_what_numpy_computes(name: str) -> None:
    ov = pytest.importorskip("openvino")
    bench_model = TINY[name]()
    x = bench_model.sample_input(seed=5)
    compiled = ov.Core().compile_model(bench_model.build_openvino(), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    np.testing.assert_allclose(compiled({"x": x})[0], _reference(name, bench_model, x), rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("name", list(TINY))
@pytest.mark.parametrize("parts", [1, 2, 4])
def test_stage_splits_give_that_many_submodels_and_the_same_values(name: str, parts: int, core: hs.Core) -> None:
    bench_model = TINY[name]()
    x = bench_model.sample_input(seed=6)
    model = bench_model.build()
    models.set_affinities(model, models.stage_devices(bench_model.stages, ["TEMPLATE.0", "TEMPLATE.1"], parts))
    compiled = core.compile_model(model, "HETERO:TEMPLATE.0,TEMPLATE.1")
    assert compiled.get_property("HETERO_NUMBER_OF_SUBMODELS") == parts
    np.testing.assert_allclose(compiled({"x": x})[0], _reference(name, bench_model, x), rtol=RTOL, atol=ATOL)


def test_openvino_hetero_splits_over_a_second_cpu_plugin() -> None:
    ov = pytest.importorskip("openvino")
    library = sorted(Path(ov.__file__).parent.glob("libs/*openvino_intel_cpu_plugin*"))
    if not library:
        pytest.skip("no CPU plugin library in the openvino package")
    bench_model = TINY["transformer"]()
    x = bench_model.sample_input(seed=7)
    core = ov.Core()
    core.register_plugin(str(library[0]), "CPU2")
    model = bench_model.build_openvino()
    models.set_affinities(model, models.stage_devices(bench_model.stages, ["CPU", "CPU2"], 4))
    compiled = core.compile_model(model, "HETERO:CPU,CPU2", {"INFERENCE_PRECISION_HINT": "f32"})
    assert compiled.get_property("HETERO_NUMBER_OF_SUBMODELS") == 4
    np.testing.assert_allclose(compiled({"x": x})[0], _reference("transformer", bench_model, x), rtol=RTOL, atol=ATOL)


def test_stage_devices_cuts_contiguous_runs_alternating_devices() -> None:
    stages = ["a", "b", "c", "d", "e"]
    assert models.stage_devices(stages, ["X", "Y"], 1) == dict.fromkeys(stages, "X")
    assert models.stage_devices(stages, ["X", "Y"], 2) == {"a": "X", "b": "X", "c": "X", "d": "Y", "e": "Y"}
    assert models.stage_devices(stages, ["X", "Y"], 5) == {"a": "X", "b": "Y", "c": "X", "d": "Y", "e": "X"}
    with pytest.raises(ValueError, match=r"1\.\.5"):
        models.stage_devices(stages, ["X", "Y"], 6)


def test_set_affinities_names_an_op_outside_every_stage() -> None:
    model = TINY["mlp"]().build()
    with pytest.raises(ValueError, match=r"'fc2/.*' has no stage"):
        models.set_affinities(model, {"fc1": "X", "fc3": "X", "fc4": "X"})


@pytest.mark.parametrize(
    ("build", "message"),
    [(lambda: models.small_cnn(image=12), "image 12"), (lambda: models.transformer_block(d_model=10), "heads 4")],
)
def test_builders_reject_sizes_that_do_not_divide(build: Callable[[], Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        build()


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(-1e6, 1e6), min_size=1, max_size=50), st.floats(0, 100))
def test_percentile_is_numpys_linear_percentile(values: list[float], q: float) -> None:
    assert timing.percentile(values, q) == pytest.approx(float(np.percentile(values, q)), rel=1e-9, abs=1e-6)


def test_measure_times_each_candidate_runs_times_after_warmup() -> None:
    calls = {"a": 0, "b": 0}

    def bump(key: str) -> Callable[[], None]:
        return lambda: calls.__setitem__(key, calls[key] + 1)

    times = timing.measure({"a": bump("a"), "b": bump("b")}, runs=25, warmup=3, block=10)
    assert {k: len(v) for k, v in times.items()} == {"a": 25, "b": 25}
    assert calls == {"a": 3 + 25 + 3, "b": 3 + 25 + 3}  # one untimed switch-in call per round of 10


@pytest.mark.parametrize("name", sorted(TINY))
def test_networks_built_from_the_opset_survive_save_and_read_with_equal_values(name: str, tmp_path: Path) -> None:
    from hetero_sdk.reference import evaluate

    bench_model = TINY[name]()
    model = bench_model.build()
    hs.save_model(model, tmp_path / f"{name}.json")
    again = hs.Core(autoload=False).read_model(tmp_path / f"{name}.json")
    x = bench_model.sample_input()
    np.testing.assert_array_equal(evaluate(again, [x])[0], evaluate(model, [x])[0])
    np.testing.assert_allclose(evaluate(again, [x])[0], bench_model.numpy(x), rtol=RTOL, atol=ATOL)


def test_the_detection_head_with_nms_survives_save_and_read(tmp_path: Path) -> None:
    from hetero_sdk.reference import evaluate
    from hetero_sdk.samples import detection_model

    model = detection_model()
    hs.save_model(model, tmp_path / "detection.json")
    again = hs.Core(autoload=False).read_model(tmp_path / "detection.json")
    rng = np.random.default_rng(3)
    inputs = [rng.standard_normal(p.output(0).shape).astype(np.float32) for p in model.get_parameters()]
    for got, want in zip(evaluate(again, inputs), evaluate(model, inputs)):
        np.testing.assert_array_equal(got, want)
    assert any(n.type_name == "NonMaxSuppression" for n in again.get_ops())
