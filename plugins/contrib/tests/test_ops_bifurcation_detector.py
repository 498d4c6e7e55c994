"""com.microsoft BifurcationDetector against ONNX Runtime's CPU kernel and a plain-Python reading of its
documented meaning written here, on TEMPLATE and HETERO (XLA declines the data-dependent op, and HETERO
places it on TEMPLATE)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hetero_sdk.conformance.op_cases import strategy_for
from hetero_sdk.errors import HeteroSDKError
from hetero_sdk.reference import evaluate
from hypothesis import given, settings
from hypothesis import strategies as st
from ms_models import check, core, ms_model, run_ort, typed_model

from hetero_sdk_contrib.ops_bifurcation_detector import RECIPES

HOST_DEVICES = ("TEMPLATE", "HETERO:XLA,TEMPLATE")
I64 = {"tokens": np.int64, "suffix": np.int64}


def _expected(src: list[int], cur: list[int], prev: int, pred: list[int] | None, lo: int, hi: int) -> tuple:
    """The op's meaning, token by token (ONNX Runtime's contrib op documentation)."""
    tokens = list(cur)
    if pred is not None:
        keep = 0
        while keep < len(src) - prev and pred[keep] == src[prev + keep]:
            keep += 1
        tokens += pred[: keep + 1]
    index = -1
    for n in range(lo, hi + 1):
        if n > len(tokens):
            break
        gram = tokens[-n:]
        starts = [i for i in range(len(src) - n + 1) if src[i : i + n] == gram]
        if not starts:
            break
        index = starts[0] + n
        if index >= len(src):
            break
        if len(starts) > 1:
            index = -1
    return tokens, index


def _model(src: list[int], cur: list[int], prev: int, pred: list[int] | None, **attrs: Any) -> tuple:
    inputs = {
        "src": np.array(src, np.int64),
        "cur": np.array(cur, np.int64),
        "prev": np.array(prev, np.int64),
        "pred": None if pred is None else np.array(pred, np.int64),
    }
    return ms_model("BifurcationDetector", inputs, ("tokens", "suffix"), output_types=I64, **attrs)


CASES = [
    # src, cur, prev, pred, min, max
    ([1, 2, 3, 4, 5], [7, 8], 1, [2, 3, 9, 5, 6], 1, 3),  # predictions leave the source at the third
    ([1, 2, 3, 4, 5], [7, 8], 2, [3, 4, 5, 6], 1, 1),  # all agree: the trailing one is kept too
    ([1, 2, 1, 2, 3], [2], 0, [9, 2, 1, 2, 3, 4], 1, 2),  # the first differs: one kept; 9 never occurs
    ([1, 2, 1, 2, 3], [1, 2], 0, None, 1, 3),  # no predictions: "1 2" occurs twice, then "x 1 2" not
    ([4, 4, 4], [4], 3, [5], 1, 1),  # prev at the source's end: nothing to compare, one kept
    ([5, 6, 7, 8], [1, 6, 7], 0, None, 2, 3),  # "6 7" once, but "1 6 7" never: stops with 3
]


@pytest.mark.parametrize(("src", "cur", "prev", "pred", "lo", "hi"), CASES)
def test_bifurcation_detector_matches_onnx_runtime_and_its_meaning(
    src: list[int], cur: list[int], prev: int, pred: list[int] | None, lo: int, hi: int
) -> None:
    model, feeds = _model(src, cur, prev, pred, min_ngram_size=lo, max_ngram_size=hi)
    tokens, index = _expected(src, cur, prev, pred, lo, hi)
    ours = check(model, feeds, devices=HOST_DEVICES)  # ONNX Runtime's outputs, compared on each device
    assert ours[0].tolist() == tokens and ours[1].tolist() == index


@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_bifurcation_detector_matches_onnx_runtime_on_drawn_tokens(data: st.DataObject) -> None:
    vocabulary = data.draw(st.integers(1, 4))
    src = data.draw(st.lists(st.integers(0, vocabulary), min_size=1, max_size=8))
    prev = data.draw(st.integers(0, len(src)))
    pred = [*src[prev:], data.draw(st.integers(0, vocabulary))]
    if data.draw(st.booleans()):
        pred[data.draw(st.integers(0, len(pred) - 1))] = vocabulary + 1
    cur = data.draw(st.lists(st.integers(0, vocabulary), min_size=1, max_size=4))
    lo = data.draw(st.integers(1, 3))
    hi = lo + data.draw(st.integers(0, 2))
    model, feeds = _model(src, cur, prev, pred, min_ngram_size=lo, max_ngram_size=hi)
    want = run_ort(model, feeds)
    assert [w.tolist() for w in want] == list(_expected(src, cur, prev, pred, lo, hi))
    check(model, feeds, want, devices=("TEMPLATE",))


def test_xla_declines_it_and_hetero_places_it_on_template() -> None:
    model, feeds = _model([1, 2, 3], [1], 0, [1, 2, 3, 4])
    ours = check(model, feeds, devices=("TEMPLATE",))
    read = core().read_model(typed_model(model, ours))
    assert not core().query_model(read, "XLA")
    assert set(core().query_model(read, "HETERO:XLA,TEMPLATE").values()) == {"TEMPLATE"}
    assert ours[0].tolist() == [1, 1, 2, 3, 4]


def test_predictions_of_the_wrong_length_are_an_error_naming_the_node() -> None:
    model, feeds = _model([1, 2, 3], [1], 1, [2, 3])  # 3 + 1 - 1 = 3 predictions expected
    typed = typed_model(model, [np.zeros(2, np.int64), np.array(0, np.int64)])
    compiled = core().compile_model(typed, "TEMPLATE")
    with pytest.raises(HeteroSDKError, match=r"BifurcationDetector .*pred_tokens holds 2 tokens; expected 3"):
        compiled(feeds)


def test_the_recipe_cases_run_on_template_as_the_oracle_says() -> None:
    core()  # adds the extension
    strategy = strategy_for("BifurcationDetector")
    assert strategy is not None and "BifurcationDetector" in RECIPES

    @settings(max_examples=10, deadline=None)
    @given(case=strategy)
    def run(case: Any) -> None:
        want = evaluate(case.model, case.inputs)
        got = core().compile_model(case.model, "TEMPLATE")(case.inputs)
        for index, expected in enumerate(want):
            np.testing.assert_array_equal(np.asarray(got[index]), expected)

    run()
