"""MaxPool (opset8) and AvgPool (opset1): inference, and kernels against loops written here."""

from __future__ import annotations

import itertools
import math
import re

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hetero_sdk as hs
from hetero_sdk import opset
from hetero_sdk.errors import ModelValidationError
from hetero_sdk.reference import evaluate

FAST = settings(max_examples=40, deadline=None)
EXACT = {"INFERENCE_PRECISION_HINT": "f32"}  # OpenVINO CPU may otherwise compute in bf16


def run(node: hs.Node, params: list[hs.Node], *arrays: np.ndarray) -> list[np.ndarray]:
    """Evaluates every output of ``node`` with the reference kernels."""
    return evaluate(hs.Model(node.outputs(), params), list(arrays))


def geometry(case: dict) -> tuple[list[tuple[int, int]], list[int]]:
    """Per-axis pads and output sizes, from the spec's formulas."""
    pads, out = [], []
    for i, size in enumerate(case["x"].shape[2:]):
        k, s, d = case["kernel"][i], case["strides"][i], case["dilations"][i]
        extent = (k - 1) * d + 1
        if case["auto_pad"] == "explicit":
            begin, end = case["pads_begin"][i], case["pads_end"][i]
        elif case["auto_pad"] == "valid":
            begin = end = 0
        else:
            total = max((math.ceil(size / s) - 1) * s + extent - size, 0)
            begin = total // 2 if case["auto_pad"] == "same_upper" else total - total // 2
            end = total - begin
        rounding = math.ceil if case["rounding_type"] == "ceil" else math.floor
        pads.append((begin, end))
        out.append(rounding((size + begin + end - extent) / s) + 1)
    return pads, out


def window(case: dict, pads: list[tuple[int, int]], position: tuple[int, ...]) -> list[tuple[int, ...] | None]:
    """The input coordinates a window covers, in tap order; None for a tap in the padding or past it."""
    taps = []
    for tap in itertools.product(*map(range, case["kernel"])):
        where = tuple(position[i] * case["strides"][i] - pads[i][0] + tap[i] * case["dilations"][i]
                      for i in range(len(tap)))  # fmt: skip
        inside = all(0 <= w < size for w, size in zip(where, case["x"].shape[2:]))
        taps.append(where if inside else None)
    return taps


def naive_max_pool(case: dict) -> tuple[np.ndarray, np.ndarray]:
    x, axis = case["x"], case["axis"] % case["x"].ndim
    pads, out = geometry(case)
    lowest = float(ml_dtypes.finfo(x.dtype).min)
    values = np.empty((*x.shape[:2], *out), np.float64)
    indices = np.empty((*x.shape[:2], *out), np.int64)
    for b, c, *position in itertools.product(range(x.shape[0]), range(x.shape[1]), *map(range, out)):
        best, best_index = lowest, np.ravel_multi_index((b, c, *[0] * (x.ndim - 2)), x.shape)
        for where in window(case, pads, tuple(position)):
            if where is not None and x[(b, c, *where)] > best:  # the first maximum wins
                best, best_index = float(x[(b, c, *where)]), np.ravel_multi_index((b, c, *where), x.shape)
        values[(b, c, *position)] = best
        indices[(b, c, *position)] = best_index % math.prod(x.shape[axis:])
    return values, indices


def naive_avg_pool(case: dict) -> np.ndarray:
    x = case["x"]
    pads, out = geometry(case)
    pads_present = any(p for pair in pads for p in pair)
    result = np.empty((*x.shape[:2], *out), np.float64)
    for b, c, *position in itertools.product(range(x.shape[0]), range(x.shape[1]), *map(range, out)):
        inside = [w for w in window(case, pads, tuple(position)) if w is not None]
        total = sum(float(x[(b, c, *w)]) for w in inside)
        divisor = math.prod(case["kernel"]) if pads_present and not case["exclude_pad"] else len(inside)
        result[(b, c, *position)] = total / divisor if divisor else 0.0
    return result


@st.composite
def pool_cases(draw: st.DrawFn, dilations: bool = True, exclude_pad: bool = False) -> dict:
    n = draw(st.integers(1, 3))
    ints = lambda lo, hi: draw(st.lists(st.integers(lo, hi), min_size=n, max_size=n))  # noqa: E731
    kernel = ints(1, 3)
    case = dict(
        kernel=kernel, strides=ints(1, 3), dilations=ints(1, 2) if dilations else [1] * n,
        pads_begin=[draw(st.integers(0, k - 1 if exclude_pad else 2)) for k in kernel],
        pads_end=[draw(st.integers(0, k - 1 if exclude_pad else 2)) for k in kernel],
        auto_pad=draw(st.sampled_from(["explicit", "same_upper", "same_lower", "valid"])),
        rounding_type=draw(st.sampled_from(["floor", "ceil"])), axis=draw(st.integers(-n - 2, n + 1)),
        exclude_pad=exclude_pad,
    )  # fmt: skip
    sizes = [draw(st.integers((k - 1) * d + 1, 7)) for k, d in zip(kernel, case["dilations"])]
    shape = (draw(st.integers(1, 2)), draw(st.integers(1, 3)), *sizes)
    values = draw(st.lists(st.integers(-4, 4), min_size=math.prod(shape), max_size=math.prod(shape)))
    case["x"] = np.array(values, np.float32).reshape(shape)  # small integers: many ties
    return case


# -- values ---------------------------------------------------------------------------------------------


@FAST
@given(pool_cases())
def test_max_pool_matches_a_loop_over_windows(case: dict) -> None:
    x = case["x"]
    node = opset.max_pool(x, case["strides"], case["dilations"], case["pads_begin"], case["pads_end"], case["kernel"],
                          case["rounding_type"], case["auto_pad"], axis=case["axis"])  # fmt: skip
    values, indices = run(node, [])
    expected_values, expected_indices = naive_max_pool(case)
    assert values.shape == node.get_output_shape(0) == indices.shape == expected_values.shape
    np.testing.assert_array_equal(values, expected_values)
    np.testing.assert_array_equal(indices, expected_indices)
    assert indices.dtype == np.int64


@FAST
@given(pool_cases(dilations=False, exclude_pad=False) | pool_cases(dilations=False, exclude_pad=True))
def test_avg_pool_matches_a_loop_over_windows(case: dict) -> None:
    node = opset.avg_pool(case["x"], case["strides"], case["pads_begin"], case["pads_end"], case["kernel"],
                          case["exclude_pad"], case["rounding_type"], case["auto_pad"])  # fmt: skip
    (got,) = run(node, [])
    expected = naive_avg_pool(case)
    assert got.shape == node.get_output_shape(0) == expected.shape
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-6)


def test_max_pool_indices_count_from_the_axis() -> None:
    x = np.arange(2 * 2 * 4, dtype=np.float32).reshape(2, 2, 4)
    whole = opset.max_pool(x, [2], [1], [0], [0], [2])
    per_channel = opset.max_pool(x, [2], [1], [0], [0], [2], axis=2, index_element_type=hs.Type.i32)
    np.testing.assert_array_equal(run(whole, [])[1].reshape(-1), [1, 3, 5, 7, 9, 11, 13, 15])
    indices = run(per_channel, [])[1]
    np.testing.assert_array_equal(indices.reshape(-1), [1, 3] * 4)
    assert indices.dtype == np.int32


def test_max_pool_window_wholly_in_padding_gives_the_lowest_value() -> None:
    x = np.float16([[[1, 2, 3, 4, 5]]])
    values, indices = run(opset.max_pool(x, [2], [1], [1], [1], [2], "ceil"), [])  # 4 windows, the last in padding
    np.testing.assert_array_equal(values[0, 0], np.float16([1, 3, 5, np.finfo(np.float16).min]))
    np.testing.assert_array_equal(indices[0, 0], [0, 2, 4, 0])


@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16, np.int8, np.uint8, np.int32])
def test_pooling_keeps_the_element_type(dtype: type) -> None:
    x = np.array([[[1, 2, 5, 6, 9]]]).astype(dtype)
    values, _ = run(opset.max_pool(x, [2], [1], [0], [0], [2]), [])
    (mean,) = run(opset.avg_pool(x, [2], [0], [0], [2], exclude_pad=True), [])
    assert values.dtype == mean.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(values[0, 0].astype(np.float32), [2, 6])
    expected = [2, 6] if np.dtype(dtype).kind in "iu" else [1.5, 5.5]  # integers round half to even
    np.testing.assert_array_equal(mean[0, 0].astype(np.float32), expected)


def test_avg_pool_divisor_is_the_kernel_size_whenever_the_op_pads() -> None:
    x = np.float32([[[1, 2, 3, 4, 5]]])
    # windows [-1..1], [1..3], [3..5]: the last overhangs the padded input in ceil mode
    (included,) = run(opset.avg_pool(x, [2], [1], [0], [3], False, "ceil"), [])
    (excluded,) = run(opset.avg_pool(x, [2], [1], [0], [3], True, "ceil"), [])
    np.testing.assert_allclose(included[0, 0], [3 / 3, 9 / 3, 9 / 3])
    np.testing.assert_allclose(excluded[0, 0], [3 / 2, 9 / 3, 9 / 2])
    (unpadded,) = run(opset.avg_pool(x, [2], [0], [0], [2], False, "ceil"), [])
    np.testing.assert_allclose(unpadded[0, 0], [1.5, 3.5, 5.0])


@settings(max_examples=25, deadline=None)
@given(pool_cases(), st.booleans())
def test_pooling_agrees_with_openvino(case: dict, exclude_pad: bool) -> None:
    ov = pytest.importorskip("openvino")
    ops = pytest.importorskip("openvino.opset8")
    x = case["x"]
    param = ops.parameter(x.shape, np.float32)
    pads = (case["pads_begin"], case["pads_end"])
    ov_max = ops.max_pool(param, case["strides"], case["dilations"], *pads, case["kernel"], case["rounding_type"],
                          case["auto_pad"], "i64", case["axis"])  # fmt: skip
    exclude_pad = exclude_pad and all(p < k for p, k in zip(pads[0] + pads[1], case["kernel"] * 2))
    ov_avg = ops.avg_pool(param, case["strides"], *pads, case["kernel"], exclude_pad, case["rounding_type"],
                          case["auto_pad"])  # fmt: skip
    compiled = ov.Core().compile_model(ov.Model([*ov_max.outputs(), ov_avg.output(0)], [param]), "CPU", EXACT)
    theirs = compiled([x])
    ours = run(opset.max_pool(x, case["strides"], case["dilations"], *pads, case["kernel"], case["rounding_type"],
                              case["auto_pad"], axis=case["axis"]), [])  # fmt: skip
    ours += run(opset.avg_pool(x, case["strides"], *pads, case["kernel"], exclude_pad, case["rounding_type"],
                               case["auto_pad"]), [])  # fmt: skip
    np.testing.assert_array_equal(ours[0], theirs[0])
    np.testing.assert_array_equal(ours[1], theirs[1])
    # The CPU plugin divides 0 by 0 for a window without input elements; OpenVINO's reference gives 0.
    np.testing.assert_allclose(ours[2], np.nan_to_num(theirs[2], nan=0.0), rtol=1e-5, atol=1e-5)


# -- shape inference -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("shape", "kernel", "strides", "pads", "rounding_type", "auto_pad", "expected"),
    [
        ([1, 3, 32, 32], [2, 2], [2, 2], ([0, 0], [0, 0]), "floor", "explicit", [1, 3, 16, 16]),
        ([1, 3, 7, 7], [2, 2], [2, 2], ([0, 0], [0, 0]), "floor", "explicit", [1, 3, 3, 3]),
        ([1, 3, 7, 7], [2, 2], [2, 2], ([0, 0], [0, 0]), "ceil", "explicit", [1, 3, 4, 4]),
        ([1, 3, 5, 5], [2, 2], [2, 2], ([1, 1], [1, 1]), "ceil", "explicit", [1, 3, 4, 4]),
        ([1, 3, 7, 8], [3, 3], [2, 2], ([9, 9], [9, 9]), "floor", "same_upper", [1, 3, 4, 4]),
        ([1, 3, 6, 7], [1, 2], [4, 2], ([0, 0], [0, 0]), "ceil", "same_lower", [1, 3, 3, 4]),
        ([1, 3, 7, 7], [3, 3], [2, 2], ([1, 1], [1, 1]), "floor", "valid", [1, 3, 3, 3]),
        ([-1, 3, -1, 8], [2, 2], [2, 2], ([0, 0], [0, 0]), "floor", "explicit", [-1, 3, -1, 4]),
        ([2, -1, 9], [3], [3], ([0], [0]), "floor", "same_upper", [2, -1, 3]),
        ([1, 2, 4, 4, 4], [2, 2, 2], [2, 2, 2], ([0] * 3, [0] * 3), "floor", "explicit", [1, 2, 2, 2, 2]),
    ],
)
def test_pool_output_shapes(shape, kernel, strides, pads, rounding_type, auto_pad, expected) -> None:
    x = opset.parameter(shape)
    mp = opset.max_pool(x, strides, [1] * len(kernel), *pads, kernel, rounding_type, auto_pad)
    ap = opset.avg_pool(x, strides, *pads, kernel, False, rounding_type, auto_pad)
    assert mp.get_output_partial_shape(0) == mp.get_output_partial_shape(1) == ap.get_output_partial_shape(0)
    assert ap.get_output_partial_shape(0) == expected
    assert mp.get_output_element_type(1) is hs.Type.i64


def test_max_pool_dilations_widen_the_window() -> None:
    node = opset.max_pool(opset.parameter([1, 1, 9, 9]), [1, 1], [2, 3], [0, 0], [0, 0], [3, 3])
    assert node.get_output_partial_shape(0) == [1, 1, 5, 3]


# -- bad input ------------------------------------------------------------------------------------------


def _max(shape: list[int] | None = None, **attrs) -> hs.Node:
    args = dict(strides=[1, 1], dilations=[1, 1], pads_begin=[0, 0], pads_end=[0, 0], kernel_shape=[2, 2]) | attrs
    return opset.max_pool(opset.parameter(shape or [1, 1, 4, 4]), **args, name="pool")


def _avg(shape: list[int] | None = None, **attrs) -> hs.Node:
    args = dict(strides=[1, 1], pads_begin=[0, 0], pads_end=[0, 0], kernel_shape=[2, 2], exclude_pad=False) | attrs
    return opset.avg_pool(opset.parameter(shape or [1, 1, 4, 4]), **args, name="pool")


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: _max([4, 4]), "MaxPool 'pool': data has rank 2"),
        (lambda: _max(kernel_shape=[2]), "kernel_shape=[2] must have 2 values"),
        (lambda: _max(kernel_shape=[0, 2]), "kernel_shape=[0, 2] must hold positive integers"),
        (lambda: _max(strides=[1, 0]), "strides=[1, 0] must hold positive integers"),
        (lambda: _max(pads_begin=[-1, 0]), "pads_begin=[-1, 0] must hold non-negative integers"),
        (lambda: _max(rounding_type="round"), "rounding_type='round' is invalid"),
        (lambda: _max(auto_pad="same"), "auto_pad='same' is invalid"),
        (lambda: _max(index_element_type=hs.Type.f32), "index_element_type=<Type: f32> must be i32 or i64"),
        (lambda: _max(axis=4), "axis=4 must be an integer in [-4, 3]"),
        (lambda: _max(kernel_shape=[5, 2]), "dilated kernel (5) is larger than the padded input (4)"),
        (lambda: _max(dilations=[4, 1]), "dilated kernel (5) is larger than the padded input"),
        (lambda: _avg([1, 1, 4, 4], exclude_pad=True, pads_end=[0, 2]), "pads must be smaller than the kernel"),
        (lambda: _avg(exclude_pad=None), "exclude_pad=None must be a bool"),
        (lambda: _avg([3, 4]), "AvgPool 'pool': data has rank 2"),
    ],
)
def test_bad_pools_name_the_node(build, message: str) -> None:
    with pytest.raises(ModelValidationError, match=re.escape(message)) as info:
        build()
    assert "Pool 'pool'" in str(info.value)


def test_pools_reject_boolean_data() -> None:
    with pytest.raises(ModelValidationError, match="MaxPool 'pool': data has element type boolean"):
        opset.max_pool(opset.parameter([1, 1, 4], hs.Type.boolean), [1], [1], [0], [0], [2], name="pool")
