"""Split, VariadicSplit, Slice and spatial Reshapes of a convolution's result held channels-last (the
splits in hetero_sdk_jax.lowering.movement, the reshapes in .layout) give the graph's ``NC...`` values,
checked against numpy; a Reshape across the channels still gets them channels-first."""

from __future__ import annotations

import hetero_sdk as hs
import jax
import numpy as np
from hetero_sdk import opset
from hypothesis import given
from hypothesis import strategies as st
from xla_helpers import OPS, floats, param, run_xla

from hetero_sdk_jax.lowering import lower
from hetero_sdk_jax.lowering.movement import held_axis


def _pointwise(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """A 1x1 convolution, ``w`` ``[O, C, 1, 1]`` over ``x`` ``[N, C, H, W]``."""
    return np.einsum("oc,nchw->nohw", w[:, :, 0, 0].astype(np.float64), x.astype(np.float64))


def _held_conv(x: np.ndarray, w: np.ndarray, name: str = "conv") -> tuple[hs.Node, hs.Node]:
    """A Parameter for ``x`` and a 1x1 convolution of it (whose result XLA holds channels-last)."""
    px = param(x)
    return px, opset.convolution(px, w, [1, 1], [0, 0], [0, 0], [1, 1], name=name)


def test_held_axis_maps_every_graph_axis_to_where_it_lies_channels_last() -> None:
    assert [held_axis(a, 4) for a in range(4)] == [0, 3, 1, 2]
    assert [held_axis(a, 3) for a in (-3, -2, -1)] == [0, 2, 1]
    assert [held_axis(a, 5) for a in range(5)] == [0, 4, 1, 2, 3]


@OPS
@given(data=st.data(), axis=st.integers(-4, 3), cut=st.integers(0, 6), equal=st.booleans())
def test_splits_of_a_channels_last_result_along_any_axis(data: st.DataObject, axis: int, cut: int, equal: bool) -> None:
    """Each part, and each part consumed by an element-wise op and a channel Concat (a C2f block)."""
    x = data.draw(floats((2, 3, 4, 6), low=-2, high=2))
    w = data.draw(floats((6, 3, 1, 1), low=-2, high=2))
    px, conv = _held_conv(x, w)
    size = (2, 6, 4, 6)[axis % 4]
    if equal:
        split = opset.split(conv, np.int64(axis), 2)
        bounds = [(0, size // 2), (size // 2, size)]
    else:
        first = min(cut, size)
        split = opset.variadic_split(conv, np.int64(axis), np.array([first, -1], np.int64))
        bounds = [(0, first), (first, size)]
    parts = split.outputs()
    joined = opset.concat([opset.relu(parts[0]), opset.negative(parts[1]), conv], axis=axis)
    got = run_xla(hs.Model([*parts, joined], [px]), [x])
    full = _pointwise(x, w)
    expected = [np.take(full, np.arange(b, e), axis=axis % 4) for b, e in bounds]
    for value, want in zip(got, expected):
        np.testing.assert_allclose(value, want, rtol=1e-5, atol=1e-5)
    want_joined = np.concatenate([np.maximum(expected[0], 0), -expected[1], full], axis=axis % 4)
    np.testing.assert_allclose(got[2], want_joined, rtol=1e-5, atol=1e-5)


@OPS
@given(
    data=st.data(),
    axes=st.lists(st.integers(-4, 3), min_size=1, max_size=4, unique_by=lambda a: a % 4),
    given_axes=st.booleans(),
)
def test_slices_of_a_channels_last_result(data: st.DataObject, axes: list[int], given_axes: bool) -> None:
    """Start, stop and step (negative too) per axis; without the axes input the first axes in order."""
    x = data.draw(floats((1, 3, 5, 6), low=-2, high=2))
    w = data.draw(floats((4, 3, 1, 1), low=-2, high=2))
    px, conv = _held_conv(x, w)
    if not given_axes:
        axes = list(range(len(axes)))
    full_shape = (1, 4, 5, 6)
    starts, stops, steps = [], [], []
    for a in axes:
        size = full_shape[a % 4]
        step = data.draw(st.sampled_from([1, 2, 3, -1, -2]))
        starts.append(data.draw(st.integers(-size - 1, size + 1)))
        stops.append(data.draw(st.integers(-size - 1, size + 1)))
        steps.append(step)
    start, stop, step = (np.array(v, np.int64) for v in (starts, stops, steps))
    sliced = opset.slice(conv, start, stop, step, np.array(axes, np.int64) if given_axes else None)
    out = opset.add(sliced, np.float32(1))
    index = [slice(None)] * 4
    for a, b, e, s in zip(axes, starts, stops, steps):
        index[a % 4] = slice(b, e, s)
    expected = _pointwise(x, w)[tuple(index)] + 1
    (got,) = run_xla(hs.Model([out], [px]), [x])
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


@OPS
@given(data=st.data(), target=st.sampled_from([[2, 6, 20], [2, 6, 5, 4], [2, 6, 2, 2, 5], [0, 0, -1], [2, 6, 10, 2]]))
def test_reshapes_of_the_spatial_axes_of_a_channels_last_result(data: st.DataObject, target: list[int]) -> None:
    """Merged, split and regrouped spatial axes (``special_zero`` copies N and C), then an element-wise
    op and a Concat along the new last axis, as a detection head joins its levels."""
    x = data.draw(floats((2, 3, 4, 5), low=-2, high=2))
    w = data.draw(floats((6, 3, 1, 1), low=-2, high=2))
    px, conv = _held_conv(x, w)
    shaped = opset.reshape(opset.sigmoid(conv), np.array(target, np.int64), special_zero=True)
    joined = opset.concat([shaped, opset.negative(shaped)], axis=-1)
    got_shaped, got_joined = run_xla(hs.Model([shaped, joined], [px]), [x])
    full = 1 / (1 + np.exp(-_pointwise(x, w)))
    expected = full.reshape([full.shape[i] if d == 0 else d for i, d in enumerate(target)])
    np.testing.assert_allclose(got_shaped, expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got_joined, np.concatenate([expected, -expected], axis=-1), rtol=1e-5, atol=1e-6)


def test_reshapes_across_the_channels_take_the_values_channels_first() -> None:
    """A YOLOv8 DFL head splits the channels into groups ``[N, 4, 16, A]``; other Reshapes merge batch
    and channels or drop the channel axis: each needs the ``NCHW`` order of the values."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 3, 4, 5)).astype(np.float32)
    w = rng.standard_normal((8, 3, 1, 1)).astype(np.float32)
    px, conv = _held_conv(x, w)
    targets = [[2, 2, 4, 20], [16, 4, 5], [2, 160], [2, 4, 40], [1, 2, 8, 20]]
    outs = [opset.reshape(conv, np.array(t, np.int64), special_zero=False) for t in targets]
    got = run_xla(hs.Model(outs, [px]), [x])
    full = _pointwise(x, w)
    for value, target in zip(got, targets):
        np.testing.assert_allclose(value, full.reshape(target), rtol=1e-5, atol=1e-5)


def test_a_yolo_style_head_changes_layout_only_at_its_output() -> None:
    """Two levels' convolutions -> Reshape ``[N, C, H * W]`` -> Concat along the anchors -> Transpose to
    ``[N, anchors, C]``: no transpose between the convolutions and the output (the first convolutions,
    of few channels, read their input channels-first), and the values of numpy's head."""
    rng = np.random.default_rng(4)
    x = rng.standard_normal((1, 3, 4, 4)).astype(np.float32)
    w = rng.standard_normal((6, 3, 1, 1)).astype(np.float32)
    px = param(x)
    big = opset.convolution(px, w, [1, 1], [0, 0], [0, 0], [1, 1])
    small = opset.convolution(px, w, [2, 2], [0, 0], [0, 0], [1, 1])
    flat = [opset.reshape(level, np.array([0, 0, -1], np.int64), special_zero=True) for level in (big, small)]
    head = opset.transpose(opset.concat(flat, axis=2), np.array([0, 2, 1], np.int64))
    model = hs.Model([head], [px])
    full = _pointwise(x, w)
    expected = np.concatenate([full.reshape(1, 6, 16), full[:, :, ::2, ::2].reshape(1, 6, 4)], axis=2)
    np.testing.assert_allclose(run_xla(model, [x])[0], expected.transpose(0, 2, 1), rtol=1e-5, atol=1e-5)
    jaxpr = jax.make_jaxpr(lower(model))(x)
    transposes = [e for e in jaxpr.eqns if e.primitive.name == "transpose"]
    # one out of the held layout and the head's own, which XLA merges into none
    assert len(transposes) == 2
    assert all(e.outvars[0].aval.shape == (1, 20, 6) or e.outvars[0].aval.shape == (1, 6, 20) for e in transposes)


def test_a_slice_between_two_convolutions_stays_channels_last() -> None:
    """conv -> Slice (a spatial crop and every other channel) -> Relu -> conv: the values of numpy's,
    and no layout change inside the chain (one move out at the output; the first convolution, of few
    channels, reads its input channels-first)."""
    rng = np.random.default_rng(5)
    x = rng.standard_normal((1, 3, 6, 6)).astype(np.float32)
    w1 = rng.standard_normal((8, 3, 1, 1)).astype(np.float32)
    w2 = rng.standard_normal((5, 4, 1, 1)).astype(np.float32)
    px, conv = _held_conv(x, w1)
    start, stop, step = (np.array(v, np.int64) for v in ([0, 1, 1], [8, 5, -1], [2, 1, 1]))
    sliced = opset.slice(conv, start, stop, step, np.array([1, 2, 3], np.int64))
    out = opset.convolution(opset.relu(sliced), w2, [1, 1], [0, 0], [0, 0], [1, 1])
    model = hs.Model([out], [px])
    expected = _pointwise(np.maximum(_pointwise(x, w1)[:, 0:8:2, 1:5, 1:-1], 0).astype(np.float32), w2)
    np.testing.assert_allclose(run_xla(model, [x])[0], expected, rtol=1e-5, atol=1e-5)
    jaxpr = jax.make_jaxpr(lower(model))(x)
    assert len([e for e in jaxpr.eqns if e.primitive.name == "transpose"]) == 1
