"""A stateful decoder split by layers over two RAY actors with PIPELINE_PARALLEL gives ONNX Runtime's
greedy tokens; each actor holds its layers' weights and caches, and only the hidden state (with the
rotary tables and the mask every layer reads) crosses between them."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("ray")
pytest.importorskip("onnxruntime", reason="ONNX Runtime is the reference of the tokens")

import hetero_sdk as hs
from ray_helpers import RAY_CONFIG

from hetero_sdk_ray.compiled_model import RayTensor

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "tests"))
from decoders import PATHS, ort_greedy

PROMPT = [5, 17, 300, 42, 7, 111, 256, 9]


def test_a_stateful_decoder_split_over_two_actors_gives_onnx_runtime_tokens(
    core: hs.Core, monkeypatch: pytest.MonkeyPatch
) -> None:
    # llama.onnx: embedding, 4 layers of 147,584 bytes, head of 131,072: two layers and an end per actor
    budget = {"DEVICE_TOTAL_MEM_SIZE": 500_000}
    config = {
        "MODEL_DISTRIBUTION_POLICY": {"PIPELINE_PARALLEL"},
        "DEVICE_PROPERTIES": {"RAY": RAY_CONFIG, "RAY.0": budget, "RAY.1": budget},
    }
    compiled = core.compile_model(hs.make_stateful(core.read_model(PATHS["llama"])), "HETERO:RAY.0,RAY.1", config)
    assert compiled.get_property("HETERO_NUMBER_OF_SUBMODELS") == 2
    assert compiled.get_property("EXECUTION_DEVICES") == ["RAY.0", "RAY.1"]
    runtime = compiled.get_runtime_model()
    placed = {op.friendly_name: op.get_rt_info().get("affinity") for op in runtime.get_ops()}
    users = runtime.consumers()
    for parameter in runtime.get_parameters():
        layer = re.fullmatch(r"past_key_values\.(\d)\.(key|value)", parameter.friendly_name)
        if layer:
            want = "RAY.0" if int(layer[1]) < 2 else "RAY.1"
            readers = {u.friendly_name: u.type_name for u, _ in users[parameter.output(0)]}
            # the exporter reads the past length from one layer's cache; HETERO reads that shape itself
            assert {placed[name] for name, kind in readers.items() if kind != "ShapeOf"} == {want}, parameter
            assert all(placed[name] is None for name, kind in readers.items() if kind == "ShapeOf"), readers
    for result in runtime.get_results():
        layer = re.search(r"present\.(\d)\.", ",".join(result.input_value(0).names))
        if layer:
            assert placed[result.input_value(0).node.friendly_name] == ("RAY.0" if int(layer[1]) < 2 else "RAY.1")
    for cut in compiled.placement_report().cuts:
        assert not re.search(r"past_key_values|present|Concat_\d+:0.*\[\?,2,\?,16\]", cut.tensor + cut.shape), cut

    fetched: list[tuple[int, ...]] = []  # what comes to the driver: the logits, never a cache
    fetch = RayTensor.__array__
    monkeypatch.setattr(RayTensor, "__array__", lambda t, *a, **k: fetched.append(t.shape) or fetch(t, *a, **k))
    n = 16
    request = compiled.create_infer_request()
    ids, total, tokens = np.array([PROMPT]), len(PROMPT), []
    for _ in range(n):
        logits = request.infer({"input_ids": ids, "attention_mask": np.ones((1, total), np.int64)})["logits"]
        tokens.append(int(logits[0, -1].argmax()))
        ids, total = np.array([[tokens[-1]]]), total + 1
    assert tokens == ort_greedy(PATHS["llama"], PROMPT, n)
    assert fetched == [(1, len(PROMPT), 512)] + [(1, 1, 512)] * (n - 1)
