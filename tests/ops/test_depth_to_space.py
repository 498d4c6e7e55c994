"""DepthToSpace and SpaceToDepth (OpenVINO opset 1) compute what OpenVINO computes, for spatial ranks 1 to
3, both modes and several block sizes, on the reference evaluator and on TEMPLATE and XLA; their shapes,
dynamic dims included; and their typed errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ov_reference import run_openvino, run_ours

from hetero_sdk import opset
from hetero_sdk.errors import ModelValidationError

F32 = np.float32
OPS = {"depth_to_space": opset.depth_to_space, "space_to_depth": opset.space_to_depth}


@st.composite
def cases(draw: st.DrawFn) -> dict[str, Any]:
    op = draw(st.sampled_from(sorted(OPS)))
    rank = draw(st.integers(3, 5))
    block = draw(st.integers(1, 3 if rank < 5 else 2))
    spatial = [draw(st.integers(1, 3)) for _ in range(rank - 2)]
    channels = draw(st.integers(1, 2))
    if op == "depth_to_space":
        shape = [draw(st.integers(1, 2)), channels * block ** (rank - 2), *spatial]
    else:
        shape = [draw(st.integers(1, 2)), channels, *(d * block for d in spatial)]
    x = np.random.default_rng(draw(st.integers(0, 999))).standard_normal(shape).astype(F32)
    return {"op": op, "x": x, "mode": draw(st.sampled_from(["blocks_first", "depth_first"])), "block": block}


def ours(case: dict[str, Any], device: str = "") -> np.ndarray:
    return run_ours(lambda x: OPS[case["op"]](x, case["mode"], case["block"]), [case["x"]], device=device)


def theirs(case: dict[str, Any]) -> np.ndarray:
    o1 = pytest.importorskip("openvino.opset1")
    return run_openvino(lambda x: getattr(o1, case["op"])(x, case["mode"], case["block"]), [case["x"]])


@settings(max_examples=80, deadline=None)
@given(case=cases())
def test_matches_openvino(case: dict[str, Any]) -> None:
    np.testing.assert_array_equal(ours(case), theirs(case))


@pytest.mark.parametrize("device", ["TEMPLATE", "XLA"])
@settings(max_examples=6, deadline=None)
@given(case=cases())
def test_matches_openvino_on_devices(device: str, case: dict[str, Any]) -> None:
    if device == "XLA":
        pytest.importorskip("hetero_sdk_jax")
    np.testing.assert_array_equal(ours(case, device), theirs(case))


@pytest.mark.parametrize("mode", ["blocks_first", "depth_first"])
def test_the_two_are_inverses(mode: str) -> None:
    x = np.arange(2 * 8 * 2 * 3 * 2, dtype=F32).reshape(2, 8, 2, 3, 2)
    down = run_ours(lambda p: opset.depth_to_space(p, mode, 2), [x])
    assert down.shape == (2, 1, 4, 6, 4)
    assert np.array_equal(run_ours(lambda p: opset.space_to_depth(p, mode, 2), [down]), x)


def test_shapes_keep_dynamic_dims() -> None:
    d2s = opset.depth_to_space(opset.parameter([-1, 18, -1, 4], F32), "depth_first", 3)
    assert d2s.get_output_partial_shape(0) == [-1, 2, -1, 12]
    s2d = opset.space_to_depth(opset.parameter([1, -1, 6, -1, 3], F32), "blocks_first", 3)
    assert s2d.get_output_partial_shape(0) == [1, -1, 2, -1, 1]


def test_channels_not_a_multiple_of_the_blocks_are_a_typed_error_naming_the_node() -> None:
    with pytest.raises(ModelValidationError, match=r"d2s.*block_size\*\*2 = 4"):
        opset.depth_to_space(opset.parameter([1, 6, 2, 2], F32), "blocks_first", 2, name="d2s")


def test_a_spatial_dim_not_a_multiple_of_the_block_is_a_typed_error_naming_the_node() -> None:
    with pytest.raises(ModelValidationError, match=r"s2d.*spatial dimension 3"):
        opset.space_to_depth(opset.parameter([1, 1, 4, 5], F32), "depth_first", 2, name="s2d")


def test_bad_attributes_and_ranks_are_typed_errors() -> None:
    with pytest.raises(ModelValidationError, match="mode"):
        opset.depth_to_space(opset.parameter([1, 4, 2], F32), "columns_first", 2)
    with pytest.raises(ModelValidationError, match="block_size"):
        opset.space_to_depth(opset.parameter([1, 4, 2], F32), "blocks_first", 0)
    with pytest.raises(ModelValidationError, match="spatial"):
        opset.depth_to_space(opset.parameter([4, 4], F32), "blocks_first", 2)
