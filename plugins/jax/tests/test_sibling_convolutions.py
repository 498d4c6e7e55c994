"""XLA merges the 1x1 convolutions that read the same tensor (a CSP block's two branches) into one
convolution whose result it splits: fewer Convolutions in the runtime model, and each branch's values
as numpy computes the convolution, whatever the other branches do."""

from __future__ import annotations

import numpy as np
from hetero_sdk import Model, Type, opset
from hypothesis import given
from hypothesis import strategies as st
from xla_helpers import OPS, core


def _pointwise(x: np.ndarray, w: np.ndarray, stride: int) -> np.ndarray:
    """A 1x1 convolution of ``x`` ``[N, C, H, W]`` by ``w`` ``[O, C, 1, 1]`` at ``stride``."""
    return np.einsum("oc,nchw->nohw", w[:, :, 0, 0].astype(np.float64), x[:, :, ::stride, ::stride].astype(np.float64))


@OPS
@given(
    outputs=st.lists(st.integers(1, 6), min_size=2, max_size=4),
    strides=st.lists(st.sampled_from([1, 1, 2]), min_size=4, max_size=4),
    channels=st.integers(1, 5),
    seed=st.integers(0, 2**16),
)
def test_sibling_pointwise_convolutions_are_merged_with_the_same_values(
    outputs: list[int], strides: list[int], channels: int, seed: int
) -> None:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((2, channels, 5, 6)).astype(np.float32)
    filters = [rng.standard_normal((o, channels, 1, 1)).astype(np.float32) for o in outputs]
    px = opset.parameter(list(x.shape), Type.f32, name="x")
    branches = [
        opset.convolution(px, w, [s, s], [0, 0], [0, 0], [1, 1], name=f"conv{i}")
        for i, (w, s) in enumerate(zip(filters, strides))
    ]
    heads = [
        opset.relu(branches[0], name="y0"),
        *(opset.sigmoid(b, name=f"y{i}") for i, b in enumerate(branches[1:], 1)),
    ]
    compiled = core().compile_model(Model(heads, [px], name="csp"), "XLA")
    merged = {s: strides[: len(outputs)].count(s) for s in set(strides[: len(outputs)])}
    convolutions = [n for n in compiled.get_runtime_model().get_ops() if n.type_name == "Convolution"]
    assert len(convolutions) == len(merged)  # one per stride: the siblings of each geometry merged
    got = compiled({"x": x})
    for i, (w, s) in enumerate(zip(filters, strides)):
        full = _pointwise(x, w, s)
        want = np.maximum(full, 0) if i == 0 else 1 / (1 + np.exp(-full))
        np.testing.assert_allclose(got[f"y{i}"], want, rtol=1e-5, atol=1e-5)


def test_other_kernels_and_other_inputs_are_not_merged() -> None:
    rng = np.random.default_rng(1)
    x = rng.standard_normal((1, 3, 4, 4)).astype(np.float32)
    px = opset.parameter([1, 3, 4, 4], Type.f32, name="x")
    square = rng.standard_normal((2, 3, 3, 3)).astype(np.float32)
    single = rng.standard_normal((2, 3, 1, 1)).astype(np.float32)
    wide = opset.convolution(px, square, [1, 1], [1, 1], [1, 1], [1, 1], name="y0")  # a 3x3 kernel
    narrow = opset.convolution(px, single, [1, 1], [0, 0], [0, 0], [1, 1], name="y1")  # its only 1x1 sibling
    compiled = core().compile_model(Model([wide, narrow], [px], name="mixed"), "XLA")
    assert [n.type_name for n in compiled.get_runtime_model().get_ops()].count("VariadicSplit") == 0
    np.testing.assert_allclose(compiled({"x": x})["y1"], _pointwise(x, single, 1), rtol=1e-5, atol=1e-5)
