"""Whole models fused by ONNX Runtime's transformer optimizer (``onnxruntime.transformers.optimizer``) from
exported random BERT and GPT-2 (tests/data/README.md says how): their SkipLayerNormalization, BiasGelu and
FastGelu, read and run on TEMPLATE, XLA and HETERO against ONNX Runtime."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from ms_models import DEVICES, run_ort, run_sdk

DATA = Path(__file__).parent / "data"


@pytest.mark.parametrize(
    "name, fused",
    [("bert_optimized.onnx", {"SkipLayerNormalization", "BiasGelu"}),
     ("gpt2_optimized.onnx", {"SkipLayerNormalization", "FastGelu"})],
)  # fmt: skip
def test_optimized_transformer_matches_onnx_runtime(name: str, fused: set[str]) -> None:
    model = onnx.load(DATA / name)
    assert fused <= {n.op_type for n in model.graph.node if n.domain == "com.microsoft"}
    rng = np.random.default_rng(len(name))
    batch, sequence = 2, 6
    feeds = {"input_ids": rng.integers(0, 64, (batch, sequence)).astype(np.int64),
             "attention_mask": np.array([[1] * sequence, [1] * (sequence - 2) + [0, 0]], np.int64)}  # fmt: skip
    if any(i.name == "token_type_ids" for i in model.graph.input):
        feeds["token_type_ids"] = rng.integers(0, 2, (batch, sequence)).astype(np.int64)
    want = run_ort(model, feeds)
    for device in DEVICES:
        for got, reference in zip(run_sdk(model, feeds, device), want):
            np.testing.assert_allclose(got, reference, rtol=1e-4, atol=1e-4, err_msg=device)
