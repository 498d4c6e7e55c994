"""Drawing helpers several recipe modules share: axes to reduce or normalize over, windows of convolutions and
pools, values without ties, and the data and integer constants of the movement, shape and slicing ops."""

from __future__ import annotations

import math

import numpy as np

from hetero_sdk import opset
from hetero_sdk.conformance.case_builder import F16, F32, I32, I64, Builder
from hetero_sdk.graph import Node


def draw_axes(b: Builder, rank: int, *, allow_negative: bool = True) -> list[int]:
    """A non-empty set of distinct axes of ``rank``, some possibly negative."""
    chosen = sorted({b.integer(0, rank - 1) for _ in range(b.integer(1, rank))})
    return [a - rank if allow_negative and b.integer(0, 3) == 0 else a for a in chosen]


def draw_window(b: Builder, spatial: int, max_kernel: int = 3) -> tuple[list[int], list[int], list[int]]:
    """A window's kernel, strides and dilations over ``spatial`` axes."""
    kernel = [b.integer(1, max_kernel) for _ in range(spatial)]
    strides = [b.integer(1, 2) for _ in range(spatial)]
    dilations = [b.integer(1, 2) for _ in range(spatial)]
    return kernel, strides, dilations


def draw_pads(b: Builder, kernel: list[int]) -> tuple[list[int], list[int]]:
    """Pads before and after, each smaller than the kernel."""
    return [b.integer(0, k - 1) for k in kernel], [b.integer(0, k - 1) for k in kernel]


def draw_sizes(b: Builder, kernel: list[int], dilations: list[int]) -> list[int]:
    """Spatial sizes at least as large as the dilated kernel (no empty windows)."""
    return [d * (k - 1) + 1 + b.integer(0, 3) for k, d in zip(kernel, dilations)]


def distinct_values(b: Builder, shape: list[int], dtype: np.dtype) -> np.ndarray:
    """Values without ties (argmax/argmin and sort orders are then unambiguous)."""
    size = math.prod(shape)
    return (b.rng.permutation(size).reshape(shape) * (4.0 / max(size, 1)) - 2).astype(dtype)


DATA_TYPES = (F32, I32, F16, np.int8, np.bool_)
"""The element types the movement, shape-manipulation and slicing recipes draw data of."""


def draw_data(b: Builder, shape: list[int]) -> np.ndarray:
    """Values of ``shape`` of one of :data:`DATA_TYPES`."""
    return b.values(shape, b.pick(DATA_TYPES), -9, 9)


def int_constant(b: Builder, values: list[int], name: str) -> Node:
    """A Constant of ``values``, i64 or i32."""
    return opset.constant(np.array(values, b.pick((I64, I32))), name=name)
