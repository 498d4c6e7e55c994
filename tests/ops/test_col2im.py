"""Col2Im: shape inference, typed errors, and the reference kernel against a per-element scatter loop
written here (1-D to 3-D blocks, with strides, dilations and pads)."""

from __future__ import annotations

import math
from itertools import product

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hetero_sdk as hs
from hetero_sdk import opset
from hetero_sdk.errors import ModelValidationError
from hetero_sdk.reference import evaluate

F32, I64 = np.float32, np.int64


def loop_col2im(
    x: np.ndarray, image: list[int], block: list[int], dil: list[int], pads: list[int], strides: list[int]
) -> np.ndarray:
    """Each column entry added where its block element falls: the definition, one element at a time."""
    rank = len(image)
    begins, ends = pads[:rank], pads[rank:]
    padded = [i + b + e for i, b, e in zip(image, begins, ends)]
    counts = [(p - (d * (k - 1) + 1)) // s + 1 for p, d, k, s in zip(padded, dil, block, strides)]
    n, ck, _ = x.shape
    c = ck // math.prod(block)
    out = np.zeros((n, c, *padded), np.float64)
    for b, ch in product(range(n), range(c)):
        for k_index, offsets in enumerate(product(*(range(k) for k in block))):
            for l_index, origin in enumerate(product(*(range(m) for m in counts))):
                where = tuple(o * s + f * d for o, s, f, d in zip(origin, strides, offsets, dil))
                out[(b, ch, *where)] += x[b, ch * math.prod(block) + k_index, l_index]
    return out[(slice(None), slice(None), *(slice(b, b + i) for b, i in zip(begins, image)))]


def run(x: np.ndarray, image: list[int], block: list[int], **attrs: object) -> np.ndarray:
    data = opset.parameter(x.shape, x.dtype, name="x")
    node = opset.col2im(data, np.array(image, I64), np.array(block, I64), **attrs)  # type: ignore[arg-type]
    (out,) = evaluate(hs.Model([node], [data]), [x])
    assert node.get_output_partial_shape(0) == list(out.shape)
    return out


def test_shape_is_batch_channels_and_the_image() -> None:
    node = opset.col2im(opset.parameter([2, 12, 6], F32), np.array([3, 4], I64), np.array([2, 2], I64))
    assert node.get_output_partial_shape(0) == [2, 3, 3, 4]


def test_a_block_count_that_does_not_fit_the_image_is_a_typed_error() -> None:
    with pytest.raises(ModelValidationError, match="blocks"):
        opset.col2im(opset.parameter([1, 4, 5], F32), np.array([3, 3], I64), np.array([2, 2], I64))


@settings(max_examples=40, deadline=None)
@given(data=st.data(), rank=st.integers(1, 3))
def test_matches_a_scatter_loop(data: st.DataObject, rank: int) -> None:
    block = [data.draw(st.integers(1, 3)) for _ in range(rank)]
    dil = [data.draw(st.integers(1, 2)) for _ in range(rank)]
    strides = [data.draw(st.integers(1, 3)) for _ in range(rank)]
    pads = [data.draw(st.integers(0, 1)) for _ in range(2 * rank)]
    image = [data.draw(st.integers(d * (k - 1) + 1, 6)) for d, k in zip(dil, block)]
    counts = [(i + pads[a] + pads[rank + a] - (d * (k - 1) + 1)) // s + 1
              for a, (i, d, k, s) in enumerate(zip(image, dil, block, strides))]  # fmt: skip
    x = (
        np.random.default_rng(data.draw(st.integers(0, 99)))
        .standard_normal((2, 2 * math.prod(block), math.prod(counts)))
        .astype(F32)
    )
    got = run(x, image, block, dilations=dil, pads=pads, strides=strides)
    np.testing.assert_allclose(got, loop_col2im(x, image, block, dil, pads, strides), rtol=1e-5, atol=1e-5)
