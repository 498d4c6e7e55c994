"""The Focus rewrite (:mod:`hetero_sdk_jax.focus_convolution`): strided slices of an image concatenated on the channels
(or a SpaceToDepth) then a convolution, as one strided convolution of the image. Checked against the Focus and the
convolution computed in numpy here, over channel counts, kernels, strides, pads, slice orders and slice spellings;
and left alone where anything else reads the slices or their concatenation, or they do not cover the image."""

from __future__ import annotations

import itertools
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hetero_sdk import Model, Node, opset
from hypothesis import given
from hypothesis import strategies as st
from xla_helpers import OPS, core, param, run_without_a_compiler

from hetero_sdk_jax.focus_convolution import FocusConvolution, focus_filters
from hetero_sdk_jax.transformations import transform_model


def _ints(values: list[int]) -> np.ndarray:
    return np.array(values, np.int64)


def _numpy_conv_nchw(x: np.ndarray, w: np.ndarray, strides: Any, pads: Any) -> np.ndarray:
    """``x`` ``[N, C, H, W]`` by ``w`` ``[O, C, KH, KW]`` in f64, one product per tap, ``[N, O, OH, OW]``."""
    padded = np.pad(x.astype(np.float64), [(0, 0), (0, 0), *pads])
    kh, kw = w.shape[2:]
    oh = (padded.shape[2] - kh) // strides[0] + 1
    ow = (padded.shape[3] - kw) // strides[1] + 1
    total = np.zeros((x.shape[0], w.shape[0], oh, ow))
    for i, j in itertools.product(range(kh), range(kw)):
        window = padded[
            :, :, i : i + (oh - 1) * strides[0] + 1 : strides[0], j : j + (ow - 1) * strides[1] + 1 : strides[1]
        ]
        total += np.einsum("nchw,oc->nohw", window, w[:, :, i, j].astype(np.float64))
    return total


def _slice(x: Any, dy: int, dx: int, block: int, spelling: str) -> Node:
    """``x[:, :, dy::block, dx::block]`` written as the exporters do: two chained Slices (ONNX's YOLOX), one Slice
    over both axes, or a StridedSlice."""
    big = np.iinfo(np.int64).max
    if spelling == "chained":
        rows = opset.slice(x, _ints([dy]), _ints([big]), _ints([block]), _ints([2]))
        return opset.slice(rows, _ints([dx]), _ints([big]), _ints([block]), _ints([3]))
    if spelling == "one":
        return opset.slice(x, _ints([dy, dx]), _ints([big, big]), _ints([block, block]), _ints([2, 3]))
    return opset.strided_slice(
        x, _ints([0, 0, dy, dx]), _ints([0, 0, 0, 0]), _ints([1, 1, block, block]), [1, 1, 0, 0], [1, 1, 1, 1]
    )


def _focus_model(
    x: np.ndarray, w: np.ndarray, offsets: list[tuple[int, int]], block: int, stride: int, pads: tuple[int, int],
    spelling: str, extra_reader: str = "",
) -> Model:  # fmt: skip
    px = param(x)
    parts = [_slice(px, dy, dx, block, spelling) for dy, dx in offsets]
    focus = opset.concat(parts, 1)
    conv = opset.convolution(focus, w, [stride, stride], [pads[0]] * 2, [pads[1]] * 2, [1, 1])
    outputs = [conv.output(0)]
    if extra_reader == "slice":
        outputs.append(opset.relu(parts[0]).output(0))
    if extra_reader == "concat":
        outputs.append(opset.relu(focus).output(0))
    return Model(outputs, [px], name="focus")


def _numpy_focus(x: np.ndarray, offsets: list[tuple[int, int]], block: int) -> np.ndarray:
    return np.concatenate([x[:, :, dy::block, dx::block] for dy, dx in offsets], axis=1)


def _types(model: Model) -> list[str]:
    transform_model(model)
    return [node.type_name for node in model.get_ordered_ops()]


@OPS
@given(data=st.data())
def test_the_rewritten_stem_matches_numpy(data: st.DataObject) -> None:
    block = data.draw(st.sampled_from([2, 2, 3]))
    channels, outputs = data.draw(st.integers(1, 4)), data.draw(st.integers(1, 20))
    kernel, stride = data.draw(st.integers(1, 3)), data.draw(st.integers(1, 2))
    pads = (data.draw(st.integers(0, 2)), data.draw(st.integers(0, 2)))
    offsets = data.draw(st.permutations(list(itertools.product(range(block), range(block)))))
    spelling = data.draw(st.sampled_from(["chained", "one", "strided"]))
    height, width = block * data.draw(st.integers(3, 8)), block * data.draw(st.integers(3, 11))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    x = rng.standard_normal((2, channels, height, width)).astype(np.float32)
    w = rng.standard_normal((outputs, channels * block * block, kernel, kernel)).astype(np.float32)
    model = _focus_model(x, w, offsets, block, stride, pads, spelling)
    types = _types(_focus_model(x, w, offsets, block, stride, pads, spelling))
    assert types.count("Convolution") == 1 and "Concat" not in types
    assert "Slice" not in types and "StridedSlice" not in types
    expected = _numpy_conv_nchw(_numpy_focus(x, offsets, block), w, (stride, stride), [(pads[0], pads[1])] * 2)
    for native in (True, False):
        got = np.asarray(core().compile_model(model, "XLA", {"XLA_NATIVE_KERNELS": native})([x])[0], np.float64)
        size = _numpy_conv_nchw(np.abs(_numpy_focus(x, offsets, block)), np.abs(w), (stride, stride), [pads] * 2)
        assert got.shape == expected.shape
        assert np.all(np.abs(got - expected) <= 1e-5 * size + 1e-5)


def test_the_filter_taps_land_where_the_focus_read_them() -> None:
    """YOLOX's order, 3x3 over the Focus: tap (a, b) of channel (slice s, c) moves to (2a + dy, 2b + dx) of c."""
    offsets = [(0, 0), (1, 0), (0, 1), (1, 1)]
    order = [(c, dy, dx) for dy, dx in offsets for c in range(3)]
    w = np.arange(2 * 12 * 3 * 3, dtype=np.float32).reshape(2, 12, 3, 3)
    new = focus_filters(w, 2, order, 3)
    assert new.shape == (2, 3, 6, 6)
    for o, k, a, b in itertools.product(range(2), range(12), range(3), range(3)):
        c, dy, dx = order[k]
        assert new[o, c, 2 * a + dy, 2 * b + dx] == w[o, k, a, b]


@pytest.mark.parametrize("mode", ["blocks_first", "depth_first"])
def test_a_space_to_depth_before_a_convolution_is_rewritten(mode: str) -> None:
    rng = np.random.default_rng(4)
    x = rng.standard_normal((1, 3, 12, 16)).astype(np.float32)
    w = rng.standard_normal((8, 12, 3, 3)).astype(np.float32)

    def model() -> Model:
        px = param(x)
        conv = opset.convolution(opset.space_to_depth(px, mode, 2), w, [1, 1], [1, 1], [1, 1], [1, 1])
        return Model([conv.output(0)], [px], name="s2d")

    types = _types(model())
    assert "SpaceToDepth" not in types and types.count("Convolution") == 1
    blocks = x.reshape(1, 3, 6, 2, 8, 2)
    moved = blocks.transpose(0, 3, 5, 1, 2, 4) if mode == "blocks_first" else blocks.transpose(0, 1, 3, 5, 2, 4)
    expected = _numpy_conv_nchw(moved.reshape(1, 12, 6, 8), w, (1, 1), [(1, 1), (1, 1)])
    got = np.asarray(core().compile_model(model(), "XLA")([x])[0])
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("reader", ["slice", "concat"])
def test_slices_or_a_focus_read_by_another_op_stay(reader: str) -> None:
    rng = np.random.default_rng(5)
    x = rng.standard_normal((1, 3, 8, 8)).astype(np.float32)
    w = rng.standard_normal((4, 12, 3, 3)).astype(np.float32)
    offsets = [(0, 0), (1, 0), (0, 1), (1, 1)]
    types = _types(_focus_model(x, w, offsets, 2, 1, (1, 1), "chained", reader))
    assert "Concat" in types and "Slice" in types
    model = _focus_model(x, w, offsets, 2, 1, (1, 1), "chained", reader)
    got = np.asarray(core().compile_model(model, "XLA")([x])[0])
    np.testing.assert_allclose(got, _numpy_conv_nchw(_numpy_focus(x, offsets, 2), w, (1, 1), [(1, 1)] * 2), atol=1e-4)


def test_slices_that_do_not_cover_the_image_stay() -> None:
    """Three of the four offsets, and an offset taken twice: not a Focus (the pass leaves them)."""
    x = np.zeros((1, 3, 8, 8), np.float32)
    for offsets in ([(0, 0), (1, 0), (0, 1)], [(0, 0), (1, 0), (0, 1), (0, 1)]):
        w = np.ones((4, 3 * len(offsets), 3, 3), np.float32)
        assert "Concat" in _types(_focus_model(x, w, offsets, 2, 1, (1, 1), "one"))


def test_a_dilated_convolution_stays() -> None:
    x = np.zeros((1, 3, 16, 16), np.float32)
    px = param(x)
    parts = [_slice(px, dy, dx, 2, "one") for dy, dx in [(0, 0), (1, 0), (0, 1), (1, 1)]]
    w = np.ones((4, 12, 3, 3), np.float32)
    conv = opset.convolution(opset.concat(parts, 1), w, [1, 1], [2, 2], [2, 2], [2, 2])
    assert "Concat" in _types(Model([conv.output(0)], [px], name="dilated"))
    assert FocusConvolution.name == "XlaFocusConvolution"


def test_without_the_stem_kernel_the_rewritten_convolution_runs_as_the_focus_and_xla_s_convolution() -> None:
    """XLA's convolution of a 3-channel image by a 6x6 kernel is ten times slower than the Focus and a 3x3
    convolution of 12 channels: with native kernels off the lowering computes the rewrite's inverse."""
    rng = np.random.default_rng(8)
    x = rng.standard_normal((1, 3, 16, 20)).astype(np.float32)
    w = rng.standard_normal((24, 12, 3, 3)).astype(np.float32)
    offsets = [(0, 0), (1, 0), (0, 1), (1, 1)]
    expected = _numpy_conv_nchw(_numpy_focus(x, offsets, 2), w, (1, 1), [(1, 1)] * 2)
    model = _focus_model(x, w, offsets, 2, 1, (1, 1), "chained")
    compiled: Any = core().compile_model(model, "XLA", {"XLA_NATIVE_KERNELS": False})
    np.testing.assert_allclose(np.asarray(compiled([x])[0]), expected, rtol=1e-5, atol=1e-4)
    text = compiled.jax_executable([list(x.shape)]).as_text()
    assert "size=3x3" in text and "size=6x6" not in text


_WITHOUT_COMPILER = textwrap.dedent(
    """
    import sys
    import numpy as np
    from test_focus_convolution import _focus_model
    from xla_helpers import core
    x, w = (np.load(path) for path in sys.argv[1:3])
    offsets = [(0, 0), (1, 0), (0, 1), (1, 1)]
    compiled = core().compile_model(_focus_model(x, w, offsets, 2, 1, (1, 1), "chained"), "XLA")
    np.save(sys.argv[3], np.asarray(compiled([x]).to_tuple()[0]))
    text = compiled.jax_executable([list(x.shape)]).as_text()
    print("CALLS KERNEL", "hetero_sdk_stem_conv" in text, "6x6", "size=6x6" in text)
    """
)


def test_without_a_compiler_the_stem_runs_as_the_focus_and_xla_s_convolution(tmp_path: Path) -> None:
    """A fresh process with no C++ compiler and an empty kernel cache: no stem kernel, the rewrite's inverse,
    numpy's values."""
    rng = np.random.default_rng(11)
    x = rng.standard_normal((1, 3, 16, 24)).astype(np.float32)
    w = rng.standard_normal((24, 12, 3, 3)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "w.npy", w)
    stdout = run_without_a_compiler(
        tmp_path, _WITHOUT_COMPILER, [tmp_path / name for name in ("x.npy", "w.npy", "got.npy")]
    )
    assert "CALLS KERNEL False 6x6 False" in stdout
    offsets = [(0, 0), (1, 0), (0, 1), (1, 1)]
    expected = _numpy_conv_nchw(_numpy_focus(x, offsets, 2), w, (1, 1), [(1, 1)] * 2)
    np.testing.assert_allclose(np.load(tmp_path / "got.npy"), expected, rtol=1e-5, atol=1e-4)
