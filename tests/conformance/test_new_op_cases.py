"""The kit's cases of control flow, data-dependent shapes and text compute what the op means: their key
cases against numpy written here (and ONNX Runtime for NonMaxSuppression), and the drawn cases build
valid models whose output shapes vary with the values."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

from hetero_sdk.conformance.op_cases import key_cases, strategy_for
from hetero_sdk.reference import evaluate


def _key(op_type: str, **attrs: object) -> tuple:
    case = next(c for c in key_cases(op_type) if all(c.attrs.get(k) == v for k, v in attrs.items()))
    return case, evaluate(case.model, case.inputs)


@pytest.mark.parametrize("cond", [True, False])
def test_if_key_cases_take_each_branch(cond: bool) -> None:
    case, (got,) = _key("If", cond=cond)
    x, y = case.inputs["x"], case.inputs["y"]
    np.testing.assert_allclose(got, x + y if cond else x - y, rtol=1e-6)
    assert case.inputs["cond"].shape == ()  # an input: the branch is chosen at run time


def test_loop_counted_by_an_input_multiplies_and_stacks() -> None:
    case, (final, stacked) = _key("Loop", trip_count=3)
    x = case.inputs["x"]
    np.testing.assert_allclose(final, 6 * x, rtol=1e-6)  # x * 1 * 2 * 3
    np.testing.assert_allclose(stacked, [x + 1, 2 * x + 2, 6 * x + 3], rtol=1e-6)


def test_loop_without_a_limit_ends_on_its_condition() -> None:
    case, (final, stacked) = _key("Loop", trip_count=-1)
    x = case.inputs["x"]
    np.testing.assert_allclose(final, x + 6, rtol=1e-6)  # + 1, + 2, + 3, then i + 1 < 3 fails
    np.testing.assert_allclose(stacked, [x, x + 1, x + 3], rtol=1e-6)


def test_scan_key_case_reads_and_stacks_backwards_along_axis_1() -> None:
    case, (state, stacked) = _key("Scan", direction=1)
    x = case.inputs["x"]
    total, want = np.zeros(2, np.float32), np.zeros_like(x)
    for t in reversed(range(x.shape[1])):
        total = total + x[:, t]
        want[:, t] = total * x[:, t]  # stacked backwards: iteration k lands at L - 1 - k
    np.testing.assert_allclose(state, x.sum(axis=1), rtol=1e-6)
    np.testing.assert_allclose(stacked, want, rtol=1e-6)


def test_non_zero_key_case_is_numpy_s_row_major_order() -> None:
    case, (got,) = _key("NonZero")
    np.testing.assert_array_equal(got, np.stack(np.nonzero(case.inputs["x"])))


def test_nms_key_case_selects_what_onnx_runtime_selects() -> None:
    from hetero_sdk.conformance.triage import run_onnxruntime

    pytest.importorskip("onnxruntime")
    case, (indices, scores, valid) = _key("NonMaxSuppression")
    (ort_indices,) = run_onnxruntime(case.model, case.inputs)[:1]
    assert sorted(map(tuple, indices.tolist())) == sorted(map(tuple, ort_indices.tolist()))
    assert valid.tolist() == [len(indices)]
    picked = case.inputs["scores"][indices[:, 0], indices[:, 1], indices[:, 2]]
    np.testing.assert_allclose(scores[:, 2], picked)
    assert list(scores[:, 2]) == sorted(scores[:, 2], reverse=True)  # sort_result_descending


def test_integer_divide_key_case_floors_mixed_signs() -> None:
    case = next(c for c in key_cases("Divide") if c.inputs["a"].dtype == np.int32)
    a, b = case.inputs["a"], case.inputs["b"]
    (got,) = evaluate(case.model, case.inputs)
    np.testing.assert_array_equal(got, np.floor_divide(a, b))
    assert np.any(np.floor_divide(a, b) != np.trunc(a / b)), "the case must tell floor from truncation"


def test_every_derived_op_has_a_key_case_per_element_type() -> None:
    types = {c.inputs["a"].dtype.name for c in key_cases("Add")}
    assert types == {"float32", "float16", "int32"}


def test_string_split_key_cases_split_as_python_does() -> None:
    for case in key_cases("StringSplit"):
        parts, counts = evaluate(case.model, case.inputs)
        delimiter = case.attrs["delimiter"] or None
        want = [s.split(delimiter, case.attrs["maxsplit"]) for s in case.inputs["x"].tolist()]
        assert counts.tolist() == [len(w) for w in want]
        assert [p[: len(w)] for p, w in zip(parts.tolist(), want)] == want


def test_resize_and_interpolate_key_cases_cover_every_mode_and_transform() -> None:
    from hetero_sdk.ops.image import COORDINATE_TRANSFORMATION_MODES, MODES
    from hetero_sdk.ops.image_resize import RESIZE_MODES, RESIZE_TRANSFORMS

    resize = {(c.attrs["mode"], c.attrs["transform"]) for c in key_cases("Resize")}
    assert resize >= {(m, t) for m in RESIZE_MODES for t in RESIZE_TRANSFORMS}
    interpolate = {(c.attrs["mode"], c.attrs["transform"]) for c in key_cases("Interpolate")}
    assert interpolate >= {(m, t) for m in MODES for t in COORDINATE_TRANSFORMATION_MODES}


@pytest.mark.parametrize("op_type", ["NonZero", "NonMaxSuppression", "Unique", "StringNormalizer", "Loop"])
def test_data_dependent_cases_give_output_shapes_that_the_values_decide(op_type: str) -> None:
    """Cases with the same input shapes give outputs of different shapes: the values decide them."""
    seen: dict[tuple[tuple[int, ...], ...], set[tuple[int, ...]]] = {}

    @settings(max_examples=60, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(strategy_for(op_type))
    def draw(case) -> None:
        if op_type == "Loop" and not case.attrs["scanned"]:
            return
        out = evaluate(case.model, case.inputs)[-1 if op_type == "Loop" else 0]
        signature = tuple(v.shape for v in case.inputs.values())
        seen.setdefault(signature, set()).add(out.shape)

    draw()
    assert any(len(shapes) > 1 for shapes in seen.values()), seen
