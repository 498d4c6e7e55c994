"""XLA computes stride-1 "same" max pools of one tensor with growing windows (YOLOX's SPP block: 5x5, 9x9, 13x13)
as a chain of the smallest: the runtime model's larger pools read the smaller pools' results, and every result is
the max pool written in numpy here (NaN and -inf never win, padding never wins); pools of another kind stay."""

from __future__ import annotations

from typing import Any

import numpy as np
from hetero_sdk import Model, Type, opset
from hypothesis import given
from hypothesis import strategies as st
from xla_helpers import OPS, core

_LOWEST = np.finfo(np.float32).min


def _max_pool(x: np.ndarray, kernel: tuple[int, int]) -> np.ndarray:
    """A stride-1 max pool of ``x`` ``[N, C, H, W]`` padded by half a window: the largest value that is not NaN,
    at least the type's lowest."""
    clean = np.where(np.isnan(x), _LOWEST, np.maximum(x, _LOWEST))
    kh, kw = kernel
    padded = np.pad(clean, ((0, 0), (0, 0), (kh // 2, kh // 2), (kw // 2, kw // 2)), constant_values=_LOWEST)
    windows = np.lib.stride_tricks.sliding_window_view(padded, kernel, axis=(2, 3))
    return windows.max(axis=(-2, -1))


def _pool(x: Any, kernel: tuple[int, int], stride: int = 1, pads: tuple[int, int] | None = None, name: str = "") -> Any:
    half = [k // 2 for k in kernel] if pads is None else list(pads)
    return opset.max_pool(x, [stride] * 2, [1, 1], half, half, list(kernel), name=name or None)


def _pool_inputs(compiled: Any) -> list[tuple[list[int], str]]:
    """Each runtime MaxPool's kernel and the type of what it reads, sorted."""
    ops = compiled.get_runtime_model().get_ops()
    return sorted(
        (list(n.attrs["kernel_shape"]), str(n.input_value(0).node.type_name)) for n in ops if n.type_name == "MaxPool"
    )


@OPS
@given(
    kernels=st.sampled_from([((5, 5), (9, 9), (13, 13)), ((3, 3), (5, 5)), ((3, 5), (7, 9)), ((1, 3), (3, 3))]),
    size=st.integers(2, 15),
    special=st.sampled_from(["none", "nan", "-inf", "ties"]),
    seed=st.integers(0, 2**16),
)
def test_growing_same_pools_of_one_tensor_become_a_chain(
    kernels: tuple[tuple[int, int], ...], size: int, special: str, seed: int
) -> None:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((1, 3, size, size + 1)).astype(np.float32)
    if special == "ties":
        x = np.round(x)
    elif special != "none":
        x[rng.random(x.shape) < 0.3] = np.nan if special == "nan" else -np.inf
    p = opset.parameter(list(x.shape), Type.f32, name="x")
    pools = [_pool(p, k, name=f"pool{i}").output(0) for i, k in enumerate(kernels)]
    spp = opset.concat([p, *pools], 1, name="y")
    compiled = core().compile_model(Model([spp], [p], name="spp"), "XLA")
    assert [kind for _, kind in _pool_inputs(compiled)].count("Parameter") == 1  # the rest read pools
    want = np.concatenate([x, *(_max_pool(x, k) for k in kernels)], axis=1)
    np.testing.assert_array_equal(compiled({"x": x})["y"], want)


def test_pools_with_indices_strides_even_or_uneven_windows_stay() -> None:
    rng = np.random.default_rng(3)
    x = rng.standard_normal((1, 2, 9, 9)).astype(np.float32)
    p = opset.parameter(list(x.shape), Type.f32, name="x")
    base = _pool(p, (3, 3), name="base")
    with_indices = _pool(p, (7, 7), name="with_indices")
    outputs = [
        base.output(0),
        with_indices.output(0),
        with_indices.output(1),  # its indices are read: the pool stays on x
        _pool(p, (5, 5), stride=2, name="strided").output(0),
        _pool(p, (5, 5), pads=(1, 1), name="uneven").output(0),
        opset.max_pool(p, [1, 1], [1, 1], [2, 2], [1, 1], [4, 4], name="even").output(0),
    ]
    compiled = core().compile_model(Model(outputs, [p], name="kept"), "XLA")
    assert _pool_inputs(compiled) == [
        ([3, 3], "Parameter"), ([4, 4], "Parameter"), ([5, 5], "Parameter"), ([5, 5], "Parameter"),
        ([7, 7], "Parameter"),
    ]  # fmt: skip
    got = compiled([x])
    np.testing.assert_array_equal(got[0], _max_pool(x, (3, 3)))
    np.testing.assert_array_equal(got[1], _max_pool(x, (7, 7)))
    np.testing.assert_array_equal(got[3], _max_pool(x, (5, 5))[:, :, ::2, ::2])
