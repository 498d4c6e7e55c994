"""with_fixed_capacity_cache: a decoder whose cache grows by Concat and whose positions and causal
mask read the past length from the cache's shape, rewritten to write into buffers of fixed capacity,
gives the attention a numpy decoder written here gives, step by step; so does one whose cache an op
writes in place (``OpDef.caches``), the op defined here."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hetero_sdk as hs
from hetero_sdk import opset
from hetero_sdk.errors import ModelValidationError
from hetero_sdk.graph import Node
from hetero_sdk.graph.op_def import InPlaceCache, Input, OpDef, OutputSpec
from hetero_sdk.ops.folding import constant_value
from hetero_sdk.reference import evaluate
from hetero_sdk.transformations.fixed_capacity_cache import PAST_LENGTH, check_fixed_capacity, with_fixed_capacity_cache

VOCAB, DIM, POSITIONS = 11, 4, 64
rng = np.random.default_rng(7)
EMBED = rng.standard_normal((VOCAB, DIM)).astype(np.float32)
POSITION_TABLE = rng.standard_normal((POSITIONS, DIM)).astype(np.float32)
PAIRS = {"past": "present"}


def _decoder(start_positions_at_past: bool = False) -> hs.Model:
    """One attention layer in the exporters' style: ``present = Concat(past, new)``, positions from the
    past length read by ShapeOf, a causal mask from ``Range(0, past + new)``, the attention mask read at
    the key positions."""
    ids = opset.parameter([1, -1], hs.Type.i64, name="input_ids")
    mask = opset.parameter([1, -1], hs.Type.i64, name="attention_mask")
    past = opset.parameter([1, -1, DIM], name="past")
    zero, one = np.int64(0), np.int64(1)
    past_len = opset.squeeze(opset.slice(opset.shape_of(past), [1], [2], [1]), [0])
    seq = opset.squeeze(opset.slice(opset.shape_of(ids), [1], [2], [1]), [0])
    total = opset.add(past_len, seq)
    if start_positions_at_past:
        positions = opset.range(past_len, total, one, hs.Type.i64)
    else:
        positions = opset.add(opset.range(zero, seq, one, hs.Type.i64), past_len)
    x = opset.gather(EMBED, ids, 0)
    new = opset.add(x, opset.gather(POSITION_TABLE, positions, 0))
    present = opset.concat([past, new], 1, name="grow")
    present.output(0).set_names({"present"})
    keys = opset.range(zero, total, one, hs.Type.i64)
    causal = opset.less_equal(opset.unsqueeze(keys, [0]), opset.unsqueeze(positions, [1]))
    allowed = opset.logical_and(causal, opset.not_equal(opset.gather(mask, keys, 1), zero))
    scores = opset.matmul(new, present, transpose_b=True)
    masked = opset.select(allowed, scores, np.float32(-1e30))
    attended = opset.matmul(opset.softmax(masked, -1), present, name="attended")
    attended.output(0).set_names({"attended"})
    return hs.Model([attended, present], [ids, mask, past])


def _numpy_step(ids: np.ndarray, past: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    p = past.shape[1]
    positions = p + np.arange(ids.shape[1])
    new = EMBED[ids] + POSITION_TABLE[positions]
    present = np.concatenate([past, new], axis=1)
    scores = new @ present.transpose(0, 2, 1)
    allowed = np.arange(present.shape[1])[None, :] <= positions[:, None]
    scores = np.where(allowed, scores, -np.inf)
    weights = np.exp(scores - scores.max(-1, keepdims=True))
    return (weights / weights.sum(-1, keepdims=True)) @ present, present


@pytest.mark.parametrize("start_positions_at_past", [False, True], ids=["range_plus_past", "range_from_past"])
@given(prompt=st.integers(1, 6), steps=st.integers(1, 5), capacity_slack=st.integers(0, 4))
@settings(max_examples=6, deadline=None)
def test_rewritten_decoder_gives_the_attention_of_a_growing_cache(
    start_positions_at_past: bool, prompt: int, steps: int, capacity_slack: int
) -> None:
    fixed = with_fixed_capacity_cache(_decoder(start_positions_at_past), PAIRS)
    assert fixed.axes == {"past": 1} and fixed.padded_inputs == ["attention_mask"]
    capacity = prompt + steps + capacity_slack
    ids = np.random.default_rng(prompt).integers(0, VOCAB, (1, prompt))
    buffer = np.zeros((1, capacity, DIM), np.float32)
    past = np.zeros((1, 0, DIM), np.float32)
    for _ in range(steps):
        expected, past = _numpy_step(ids, past)
        filled = past.shape[1] - ids.shape[1]
        mask = np.zeros((1, capacity), np.int64)
        mask[:, : past.shape[1]] = 1
        attended, buffer = evaluate(
            fixed.model, {"input_ids": ids, "attention_mask": mask, "past": buffer, PAST_LENGTH: np.int64(filled)}
        )
        np.testing.assert_allclose(attended, expected, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(buffer[:, : past.shape[1]], past, rtol=1e-6)
        assert buffer.shape == (1, capacity, DIM)
        ids = np.array([[int(attended[0, -1].argmax()) % VOCAB]])


def test_the_past_length_never_decides_a_shape() -> None:
    """Every shape of the rewritten model follows from input shapes: on XLA one executable serves
    every step of a generation."""
    fixed = with_fixed_capacity_cache(_decoder(True), PAIRS)
    core = hs.Core()
    compiled = core.compile_model(fixed.model, "TEMPLATE")
    for filled in (0, 3, 7):
        inputs = {
            "input_ids": np.array([[1]]),
            "attention_mask": np.ones((1, 8), np.int64),
            "past": np.zeros((1, 8, DIM), np.float32),
            PAST_LENGTH: np.int64(filled),
        }
        assert compiled(inputs)["present"].shape == (1, 8, DIM)
    for node in fixed.model.get_ops():
        for index, source in enumerate(node.input_values()):
            spec = node.op.input_spec(index)
            if spec is not None and spec.decides_shape:
                assert PAST_LENGTH not in _ancestor_names(source), node


def _ancestor_names(output: hs.graph.Output) -> set[str]:
    """The nodes whose values ``output``'s value depends on (a ShapeOf reads no value)."""
    seen, stack, names = set(), [output.node], set()
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        names.add(node.friendly_name)
        if node.type_name != "ShapeOf":
            stack.extend(v.node for v in node.input_values())
    return names


def test_a_cache_that_does_not_grow_by_concat_is_refused_naming_it() -> None:
    x = opset.parameter([1, -1, DIM], name="past")
    doubled = opset.multiply(x, np.float32(2), name="doubled")
    doubled.output(0).set_names({"present"})
    with pytest.raises(ModelValidationError, match=r"'present' is not Concat\('past', new\).*Multiply 'doubled'"):
        with_fixed_capacity_cache(hs.Model([doubled], [x]), PAIRS)


def test_the_model_given_is_left_unchanged() -> None:
    model = _decoder()
    before = [n.type_name for n in model.get_ops()]
    with_fixed_capacity_cache(model, PAIRS)
    assert [n.type_name for n in model.get_ops()] == before
    assert [p.any_name for p in model.inputs] == ["input_ids", "attention_mask", "past"]


def test_the_capacity_comes_from_the_attention_mask_so_only_its_scatter_reads_a_buffer() -> None:
    """The past length is read from one layer's cache but every layer uses it: with the capacity taken
    from the (padded) attention mask, a model split by layers (HETERO) reads each buffer only where its
    layer writes it."""
    fixed = with_fixed_capacity_cache(_decoder(True), PAIRS)
    (past,) = (p for p in fixed.model.get_parameters() if p.friendly_name == "past")
    readers = [user.type_name for user, _ in fixed.model.consumers()[past.output(0)]]
    assert readers == ["ScatterElementsUpdate"]
    masks = [p for p in fixed.model.get_parameters() if p.friendly_name == "attention_mask"]
    assert "ShapeOf" in {user.type_name for user, _ in fixed.model.consumers()[masks[0].output(0)]}


def _unmasked_decoder() -> hs.Model:
    """Attention over the whole cache, no causal mask: rows past the filled ones would change it."""
    ids = opset.parameter([1, -1], hs.Type.i64, name="input_ids")
    past = opset.parameter([1, -1, DIM], name="past")
    new = opset.gather(EMBED, ids, 0)
    present = opset.concat([past, new], 1, name="grow")
    present.output(0).set_names({"present"})
    attended = opset.matmul(opset.softmax(opset.matmul(new, present, transpose_b=True), -1), present)
    attended.output(0).set_names({"attended"})
    return hs.Model([attended, present], [ids, past])


def test_the_check_passes_a_masked_decoder_and_refuses_one_that_reads_unfilled_rows() -> None:
    masked = _decoder()
    check_fixed_capacity(masked, with_fixed_capacity_cache(masked, PAIRS))
    unmasked = _unmasked_decoder()
    with pytest.raises(ModelValidationError, match=r"output 'attended' .* reads past the filled rows"):
        check_fixed_capacity(unmasked, with_fixed_capacity_cache(unmasked, PAIRS))


def test_a_stateful_decoder_that_reads_its_whole_cache_keeps_a_growing_one_on_xla() -> None:
    jax_plugin = pytest.importorskip("hetero_sdk_jax")
    from hetero_sdk.runtime.fixed_capacity import FixedCapacityCompiledModel

    core = hs.Core(plugins={"XLA": jax_plugin.XlaPlugin}, autoload=False)
    model = hs.make_stateful(_unmasked_decoder(), {"past": "present"})
    compiled = core.compile_model(model, "XLA")
    assert not isinstance(compiled, FixedCapacityCompiledModel)
    request = compiled.create_infer_request()
    past = np.zeros((1, 0, DIM), np.float32)
    for ids in ([[1, 2]], [[3]], [[4]]):
        new = EMBED[np.array(ids)]
        past = np.concatenate([past, new], axis=1)
        scores = new @ past.transpose(0, 2, 1)
        weights = np.exp(scores - scores.max(-1, keepdims=True))
        expected = (weights / weights.sum(-1, keepdims=True)) @ past
        np.testing.assert_allclose(request.infer({"input_ids": np.array(ids)})["attended"], expected, rtol=1e-5)


# -- an op that writes the cache in place (OpDef.caches): any op, the SDK's or an extension's -----------


def _write_rows_infer(node: hs.graph.Node) -> list[OutputSpec]:
    past = node.input_value(0).partial_shape
    total = constant_value(node.input_value(3))
    length = max(int(total), past[1]) if total is not None and past[1] >= 0 else -1
    return [(node.input_value(0).element_type, hs.PartialShape([past[0], length, past[2]]))]


def _write_rows(node: hs.graph.Node, past, new, filled, total, *, honest: bool = True):  # type: ignore[no-untyped-def]
    """``past``'s first ``filled`` rows, ``new``'s after them, zeros after those, over ``max(past rows,
    total)`` rows; the dishonest twin takes the filled rows from ``past``'s shape instead."""
    length = max(int(total), past.shape[1])
    start = int(filled) if honest else past.shape[1]
    out = np.zeros((past.shape[0], length, past.shape[2]), past.dtype)
    keep = min(start, past.shape[1])
    out[:, :keep] = past[:, :keep]
    out[:, start : start + new.shape[1]] = new[:, : max(0, length - start)]
    return out


def _write_rows_op(honest: bool = True) -> OpDef:
    return OpDef(
        "TestWriteRows" if honest else "TestWriteRowsAtShape",
        "test",
        _write_rows_infer,
        inputs=(Input("past"), Input("new"), Input("filled"), Input("total", decides_shape=True)),
        evaluate=lambda node, *xs: _write_rows(node, *xs, honest=honest),
        caches=(InPlaceCache(past=0, present=0, axis=1, lengths=(2,)),),
    )


def _in_place_decoder(op: OpDef, filled_from: str = "mask") -> hs.Model:
    """:func:`_decoder`'s attention with the cache written by ``op``: the filled length is the attention
    mask's sum less the new tokens, the present length the mask's length (as onnxruntime-genai's
    GroupQueryAttention reads them); the causal mask's keys span the present cache. ``filled_from``:
    ``"mask"``, ``"cache_shape"`` (the cache's length, as exporters read it) or ``"mask_length"`` (the
    mask's length less the new tokens: the total, not the filled rows, once the mask is padded)."""
    ids = opset.parameter([1, -1], hs.Type.i64, name="input_ids")
    mask = opset.parameter([1, -1], hs.Type.i64, name="attention_mask")
    past = opset.parameter([1, -1, DIM], name="cache_in")
    zero, one = np.int64(0), np.int64(1)
    seq = opset.squeeze(opset.slice(opset.shape_of(ids), [1], [2], [1]), [0])
    total = opset.squeeze(opset.slice(opset.shape_of(mask), [1], [2], [1]), [0])
    filled = {
        "mask": lambda: opset.subtract(opset.reduce_sum(mask, [0, 1]), seq),
        "cache_shape": lambda: opset.squeeze(opset.slice(opset.shape_of(past), [1], [2], [1]), [0]),
        "mask_length": lambda: opset.subtract(total, seq),
    }[filled_from]()
    positions = opset.add(opset.range(zero, seq, one, hs.Type.i64), filled)
    new = opset.add(opset.gather(EMBED, ids, 0), opset.gather(POSITION_TABLE, positions, 0))
    present = Node(op, [past.output(0), new.output(0), filled.output(0), total.output(0)], {}, "write")
    present.output(0).set_names({"cache_out"})
    keys = opset.range(zero, opset.squeeze(opset.slice(opset.shape_of(present), [1], [2], [1]), [0]), one, hs.Type.i64)
    causal = opset.less_equal(opset.unsqueeze(keys, [0]), opset.unsqueeze(positions, [1]))
    scores = opset.matmul(new, present, transpose_b=True)
    masked = opset.select(causal, scores, np.float32(-1e30))
    attended = opset.matmul(opset.softmax(masked, -1), present, name="attended")
    attended.output(0).set_names({"attended"})
    return hs.Model([attended, present], [ids, mask, past])


IN_PLACE = {"cache_in": "cache_out"}


@pytest.mark.parametrize("filled_from", ["mask", "cache_shape"])
@given(prompt=st.integers(1, 6), steps=st.integers(1, 5), capacity_slack=st.integers(0, 4))
@settings(max_examples=6, deadline=None)
def test_a_cache_an_op_writes_in_place_stays_in_its_buffer(
    filled_from: str, prompt: int, steps: int, capacity_slack: int
) -> None:
    fixed = with_fixed_capacity_cache(_in_place_decoder(_write_rows_op(), filled_from), IN_PLACE)
    assert fixed.axes == {"cache_in": 1} and fixed.padded_inputs == ["attention_mask"]
    assert "ScatterElementsUpdate" not in {n.type_name for n in fixed.model.get_ops()}  # the op's output is it
    capacity = prompt + steps + capacity_slack
    noise = np.random.default_rng(capacity)
    ids = noise.integers(0, VOCAB, (1, prompt))
    buffer = noise.standard_normal((1, capacity, DIM)).astype(np.float32)  # unfilled rows hold noise
    past = np.zeros((1, 0, DIM), np.float32)
    for _ in range(steps):
        expected, past = _numpy_step(ids, past)
        mask = np.zeros((1, capacity), np.int64)
        mask[:, : past.shape[1]] = 1
        filled = np.int64(past.shape[1] - ids.shape[1])
        feeds = {"input_ids": ids, "attention_mask": mask, "cache_in": buffer, PAST_LENGTH: filled}
        attended, buffer = evaluate(fixed.model, feeds)
        np.testing.assert_allclose(attended, expected, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(buffer[:, : past.shape[1]], past, rtol=1e-6)
        assert buffer.shape == (1, capacity, DIM)
        ids = np.array([[int(attended[0, -1].argmax()) % VOCAB]])


def test_an_op_that_reads_the_length_from_the_buffers_shape_fails_the_check() -> None:
    """Declaring a cache written in place is a promise the check holds the op to: one that writes at the
    buffer's end (the filled length read from its shape) changes the outputs, and is refused."""
    honest = _in_place_decoder(_write_rows_op())
    check_fixed_capacity(honest, with_fixed_capacity_cache(honest, IN_PLACE))
    dishonest = _in_place_decoder(_write_rows_op(honest=False))
    with pytest.raises(ModelValidationError, match=r"output '(attended|cache_out)' .* reads past the filled rows"):
        check_fixed_capacity(dishonest, with_fixed_capacity_cache(dishonest, IN_PLACE))


def test_an_op_whose_filled_length_is_read_from_a_shape_is_refused_naming_it() -> None:
    """The mask's length is the capacity once the request pads it: a length taken from it (or from a
    constant) would not tell the op where to write."""
    model = _in_place_decoder(_write_rows_op(), "mask_length")
    with pytest.raises(ModelValidationError, match=r"TestWriteRows 'write' reads the filled length of cache 'cache_in' "
                       r"from its filled, whose value follows neither the attention mask's values"):  # fmt: skip
        with_fixed_capacity_cache(model, IN_PLACE)


def test_make_stateful_pairs_an_input_an_op_writes_in_place_whatever_its_name() -> None:
    model = hs.make_stateful(_in_place_decoder(_write_rows_op()))
    assert [v.variable_id for v in model.get_variables()] == ["cache_in"]
    assert [p.any_name for p in model.outputs] == ["attended"]


def test_an_in_place_cache_naming_an_input_the_op_lacks_is_refused() -> None:
    with pytest.raises(ValueError, match=r"TestBad: InPlaceCache\(past=2, present=0, lengths=\(\)\) names an input"):
        OpDef("TestBad", "test", _write_rows_infer, inputs=(Input("a"), Input("b")), caches=(InPlaceCache(2, 0, 1),))
    with pytest.raises(ValueError, match="input 0 is both a cache and its length"):
        OpDef("TestBad", "test", _write_rows_infer, inputs=(Input("a"),), caches=(InPlaceCache(0, 0, 1, (0,)),))
    inputs = (Input("past"), Input("total", decides_shape=True))
    with pytest.raises(ValueError, match="input 1 gives a cache's filled length and decides a shape"):
        OpDef("TestBad", "test", _write_rows_infer, inputs=inputs, caches=(InPlaceCache(0, 0, 1, (1,)),))
