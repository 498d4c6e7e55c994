"""make_stateful and make_stateless: KV-cache pairs become variables (found by name or given), bad pairs
are refused naming what exists, beam_idx gathers the cache rows, and the explicit form computes what the
explicit-cache model computes."""

from __future__ import annotations

import numpy as np
import pytest
from stateful_models import HEAD_DIM, HEADS, LAYERS, decoder, decoder_step, empty_cache

import hetero_sdk as hs
from hetero_sdk import Type, opset
from hetero_sdk.errors import ModelValidationError, PortNotFoundError
from hetero_sdk.reference import evaluate
from hetero_sdk.transformations import (
    BEAM_IDX,
    DeadCodeElimination,
    PassManager,
    common_optimizations,
    find_kv_cache_pairs,
    make_stateless,
)
from template_plugin import TemplatePlugin

CACHE = [f"past_key_values.{layer}.{kind}" for layer in range(LAYERS) for kind in ("key", "value")]


def test_pairs_are_found_by_their_export_names() -> None:
    assert find_kv_cache_pairs(decoder()) == {name: name.replace("past_key_values", "present") for name in CACHE}


def test_make_stateful_moves_the_pairs_into_variables_in_place() -> None:
    model = decoder()
    assert hs.make_stateful(model) is model
    assert [p.any_name for p in model.inputs] == ["input_ids"]
    assert [p.any_name for p in model.outputs] == ["logits"]
    assert [v.variable_id for v in model.get_variables()] == CACHE
    assert all(v.data_shape == hs.PartialShape([-1, HEADS, -1, HEAD_DIM]) for v in model.get_variables())
    names = {n.friendly_name: n.get_type_name() for n in model.get_ops()}
    assert names["past_key_values.0.key"] == "ReadValue"  # the state ops take the replaced nodes' names
    written = {s.attrs["variable_id"]: s.input_value(0).any_name for s in model.get_sinks()}
    assert written == {name: name.replace("past_key_values", "present") for name in CACHE}


def test_given_pairs_leave_the_others_alone() -> None:
    model = hs.make_stateful(decoder(), {"past_key_values.1.value": "present.1.value"})
    assert [v.variable_id for v in model.get_variables()] == ["past_key_values.1.value"]
    assert len(model.inputs) == 1 + 2 * LAYERS - 1 and len(model.outputs) == 1 + 2 * LAYERS - 1


@pytest.mark.parametrize(
    ("pairs", "match"),
    [
        ({"past.0.key": "present.0.key"}, r"no input named 'past\.0\.key'.*its inputs: input_ids, past_key_values"),
        ({"past_key_values.0.key": "present.9.key"}, r"no output named 'present\.9\.key'.*outputs: logits, present"),
    ],
)
def test_a_name_that_is_no_input_or_output_is_refused(pairs: dict[str, str], match: str) -> None:
    model = decoder()
    with pytest.raises(PortNotFoundError, match=match):
        hs.make_stateful(model, pairs)
    assert len(model.inputs) == 1 + 2 * LAYERS  # untouched


def test_a_pair_that_cannot_match_is_refused() -> None:
    with pytest.raises(ModelValidationError, match=r"input 'input_ids' .*cannot be fed by output 'logits'"):
        hs.make_stateful(decoder(), {"input_ids": "logits"})


def test_one_output_for_two_inputs_is_refused() -> None:
    pairs = {"past_key_values.0.key": "present.0.key", "past_key_values.1.key": "present.0.key"}
    with pytest.raises(ModelValidationError, match=r"output 'present\.0\.key' is in two pairs"):
        hs.make_stateful(decoder(), pairs)


def test_no_pairs_found_lists_the_inputs_and_outputs() -> None:
    x = opset.parameter([2], np.float32, name="x")
    with pytest.raises(ModelValidationError, match="its inputs: x; its outputs: y"):
        hs.make_stateful(hs.Model([opset.relu(x, name="y")], [x]))


def test_the_initial_cache_is_empty_with_the_batch_of_input_ids() -> None:
    form = make_stateless(hs.make_stateful(decoder()))
    assert form.init is not None and form.init_of == tuple(range(2 * LAYERS))
    ids = np.zeros((3, 5), np.int64)
    for value in evaluate(form.init, [ids]):
        assert value.shape == (3, HEADS, 0, HEAD_DIM) and value.dtype == np.float32


def test_the_explicit_form_computes_what_the_explicit_cache_model_computes() -> None:
    form = make_stateless(hs.make_stateful(decoder()))
    assert [p.any_name for p in form.model.inputs] == ["input_ids", *CACHE]
    assert [p.any_name for p in form.model.outputs] == [
        "logits",
        *(n.replace("past_key_values", "present") for n in CACHE),
    ]
    rng = np.random.default_rng(0)
    ids = rng.integers(0, 11, (2, 3))
    cache = [rng.standard_normal((2, HEADS, 4, HEAD_DIM)).astype(np.float32) for _ in CACHE]
    logits, present = decoder_step(ids, cache)
    got = evaluate(form.model, [ids, *cache])
    np.testing.assert_allclose(got[0], logits, rtol=1e-5, atol=1e-5)
    for mine, want in zip(got[1:], present):
        np.testing.assert_allclose(mine, want, rtol=1e-6)


def test_beam_idx_gathers_the_rows_of_every_variable() -> None:
    model = hs.make_stateful(decoder(), beam_idx=True)
    assert [p.any_name for p in model.inputs] == ["input_ids", BEAM_IDX]
    assert model.input(BEAM_IDX).element_type == Type.i32
    form = make_stateless(model)
    rng = np.random.default_rng(1)
    ids = rng.integers(0, 11, (3, 1))
    cache = [rng.standard_normal((3, HEADS, 2, HEAD_DIM)).astype(np.float32) for _ in CACHE]
    order = np.array([2, 0, 0], np.int32)
    got = evaluate(form.model, [ids, order, *cache])
    logits, present = decoder_step(ids, [c[order] for c in cache])
    np.testing.assert_allclose(got[0], logits, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got[1], present[0], rtol=1e-6)


def test_a_static_batch_without_other_inputs_starts_from_its_shape() -> None:
    past = opset.parameter([2, 3], np.float32, name="past_key_values.0.key")
    present = opset.add(past, 1.0, name="present.0.key")
    form = make_stateless(hs.make_stateful(hs.Model([present], [past])))
    assert form.model.inputs[0].any_name == "past_key_values.0.key"
    assert form.init is not None
    np.testing.assert_array_equal(evaluate(form.init, [])[0], np.zeros((2, 3), np.float32))


def test_an_empty_cache_before_the_first_step_matches_numpy() -> None:
    ids = np.array([[1, 2, 3]])
    logits, present = decoder_step(ids, empty_cache(1))
    got = evaluate(decoder(), [ids, *empty_cache(1)])
    np.testing.assert_allclose(got[0], logits, rtol=1e-5, atol=1e-5)
    assert got[1].shape == present[0].shape == (1, HEADS, 3, HEAD_DIM)


def test_the_common_passes_keep_the_sinks_and_the_variables() -> None:
    model = hs.make_stateful(decoder())
    variables = model.get_variables()
    manager = PassManager()
    manager.register_group([*common_optimizations(), DeadCodeElimination()], "CommonOptimizations")
    manager.run_passes(model)
    assert model.get_variables() == variables
    assert {s.attrs["variable_id"] for s in model.get_sinks()} == set(CACHE)
    ids = np.array([[1, 2]])
    form = make_stateless(model)
    logits, _ = decoder_step(ids, empty_cache(1))
    np.testing.assert_allclose(evaluate(form.model, [ids, *empty_cache(1)])[0], logits, rtol=1e-5, atol=1e-5)


def test_a_dimension_the_input_leaves_dynamic_is_taken_from_its_output() -> None:
    """onnxruntime-genai's builder names the cache's head size ``kv_cache_dim`` (dynamic): the variable
    has the head size the output knows, and starts as an empty cache of that width."""
    past = opset.parameter([1, HEADS, -1, -1], np.float32, name="past_key_values.0.key")
    new = opset.parameter([1, HEADS, -1, HEAD_DIM], np.float32, name="new")
    present = opset.concat([past, new], 2, name="present.0.key")
    model = hs.make_stateful(hs.Model([present], [past, new]))
    assert model.get_variables()[0].data_shape == hs.PartialShape([1, HEADS, -1, HEAD_DIM])
    core = hs.Core(plugins={"TEMPLATE": TemplatePlugin}, autoload=False)
    request = core.compile_model(model, "TEMPLATE").create_infer_request()
    rows = np.arange(HEADS * 2 * HEAD_DIM, dtype=np.float32).reshape(1, HEADS, 2, HEAD_DIM)
    request.infer({"new": rows})
    request.infer({"new": rows + 1})
    np.testing.assert_array_equal(request.query_state()[0].state, np.concatenate([rows, rows + 1], axis=2))
