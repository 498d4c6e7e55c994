"""XLA reads element-wise chains over one 8-bit level from a 256-entry table (XlaLevelLookup): YOLOv8's
SiLU block in the QDQ format, ``Q(DQ(v) * DQ(Q(Sigmoid(DQ(v)))))`` and ``Q(DQ(v) * Sigmoid(DQ(v)))``,
gives exactly ONNX's definition written in numpy here (round half to even, saturate, NaN to level 0 as
hetero-sdk's Convert makes it; the ops in f32), with the native kernel and with XLA's gather; chains the
table cannot stand for (per-channel scales, another input) or that cost less than it are left alone."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import pytest
from hetero_sdk import Model, Type, opset
from hetero_sdk.frontend.onnx import convert_onnx
from hypothesis import given
from hypothesis import strategies as st
from onnx import helper, numpy_helper
from xla_helpers import OPS, core

from hetero_sdk_jax.level_lookup import LEVEL_LOOKUP, LEVEL_LOOKUP_OP, level_lookup

SHAPE = [1, 3, 4, 6]


def _silu_block(
    s: list[float], zeros: list[int], dtype: type, requantized: bool, axis: int | None = None
) -> onnx.ModelProto:
    """x -> Q -> DQ -> a; a * Sigmoid(a) (the Sigmoid quantized too when ``requantized``) -> Q -> DQ -> y;
    out = y + b (so that y leaves the chain for an op with another input). ``axis``: the first pair
    per channel (``s[0]``, ``zeros[0]`` repeated over the channels)."""
    per_channel = axis is not None
    first_scale = np.full(SHAPE[1], s[0], np.float32) if per_channel else np.array(s[0], np.float32)
    first_zero: np.ndarray = np.full(SHAPE[1], zeros[0], dtype) if per_channel else np.array(zeros[0], dtype)
    inits = [numpy_helper.from_array(first_scale, "s0"), numpy_helper.from_array(first_zero, "z0")]
    inits += [numpy_helper.from_array(np.array(v, np.float32), f"s{i}") for i, v in enumerate(s) if i]
    inits += [numpy_helper.from_array(np.array(v, dtype), f"z{i}") for i, v in enumerate(zeros) if i]
    along: dict[str, Any] = {"axis": axis} if axis is not None else {}
    nodes = [helper.make_node("QuantizeLinear", ["x", "s0", "z0"], ["q"], **along),
             helper.make_node("DequantizeLinear", ["q", "s0", "z0"], ["a"], **along),
             helper.make_node("Sigmoid", ["a"], ["g" if requantized else "gate"])]  # fmt: skip
    if requantized:
        nodes += [helper.make_node("QuantizeLinear", ["g", "s1", "z1"], ["gq"]),
                  helper.make_node("DequantizeLinear", ["gq", "s1", "z1"], ["gate"])]  # fmt: skip
    nodes += [helper.make_node("Mul", ["a", "gate"], ["m"]),
              helper.make_node("QuantizeLinear", ["m", "s2", "z2"], ["mq"]),
              helper.make_node("DequantizeLinear", ["mq", "s2", "z2"], ["y"]),
              helper.make_node("Add", ["y", "b"], ["out"])]  # fmt: skip
    inputs = [helper.make_tensor_value_info(n, 1, SHAPE) for n in ("x", "b")]
    graph = helper.make_graph(nodes, "silu", inputs, [helper.make_tensor_value_info("out", 1, SHAPE)], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)


def _pair(v: np.ndarray, scale: float, zero: int, dtype: type) -> np.ndarray:
    """ONNX's QuantizeLinear then DequantizeLinear in f32, NaN to level 0 as hetero-sdk's Convert makes it."""
    info, s = np.iinfo(dtype), np.float32(scale)
    levels = np.clip(np.round(v / s) + np.float32(zero), info.min, info.max)  # np.round: halves to even
    levels = np.where(np.isnan(levels), np.float32(0), levels)
    return ((levels - np.float32(zero)) * s).astype(np.float32)


def _expected(
    x: np.ndarray, b: np.ndarray, s: list[float], zeros: list[int], dtype: type, requantized: bool
) -> np.ndarray:
    a = _pair(x, s[0], zeros[0], dtype)
    with np.errstate(over="ignore"):  # exp(-a) of a large negative a is inf, the gate 0
        gate = (np.float32(1) / (np.float32(1) + np.exp(-a))).astype(np.float32)  # ONNX's Sigmoid in f32
    if requantized:
        gate = _pair(gate, s[1], zeros[1], dtype)
    return (_pair(a * gate, s[2], zeros[2], dtype) + b).astype(np.float32)


def _levels(scale: float, data: st.DataObject) -> np.ndarray:
    """Values off the rounding ties of ``scale``'s levels (XLA divides by a reciprocal, which may round a
    tie the other way), beyond the saturation bounds, and NaN and infinities."""
    count = int(np.prod(SHAPE))
    levels = np.array(data.draw(st.lists(st.integers(-300, 300), min_size=count, max_size=count)), np.float32)
    offsets = np.array(
        data.draw(st.lists(st.sampled_from([0.0, 0.3, -0.3, 0.45, -0.45]), min_size=count, max_size=count))
    )
    x = ((levels + offsets.astype(np.float32)) * np.float32(scale)).astype(np.float32)
    for value in (np.nan, np.inf, -np.inf):
        x[data.draw(st.integers(0, count - 1))] = value
    return x.reshape(SHAPE)


def _types(compiled: object) -> list[str]:
    return [n.type_name for n in compiled.get_runtime_model().get_ops()]  # type: ignore[attr-defined]


@OPS
@given(
    s=st.tuples(
        st.sampled_from([0.02, 0.27, 0.0625, 1.1]),
        st.sampled_from([1 / 255, 1 / 256, 0.0047]),
        st.sampled_from([0.013, 0.127, 0.5]),
    ),
    dtype=st.sampled_from([np.uint8, np.int8]),
    requantized=st.booleans(),
    native=st.booleans(),
    data=st.data(),
)
def test_the_silu_block_read_from_a_table_is_exactly_onnx_definition(
    s: tuple[float, float, float], dtype: type, requantized: bool, native: bool, data: st.DataObject
) -> None:
    info = np.iinfo(dtype)
    zeros = [data.draw(st.integers(int(info.min), int(info.max))), int(info.min) if dtype == np.int8 else 0,
             data.draw(st.integers(int(info.min), int(info.max)))]  # fmt: skip
    compiled = core().compile_model(convert_onnx(_silu_block(list(s), zeros, dtype, requantized)), "XLA",
                                    {"XLA_NATIVE_KERNELS": native})  # fmt: skip
    types = _types(compiled)
    assert LEVEL_LOOKUP in types and "Sigmoid" not in types
    x = _levels(s[0], data)
    b = np.linspace(-1, 1, x.size, dtype=np.float32).reshape(SHAPE)
    got = np.asarray(compiled({"x": x, "b": b})["out"])
    np.testing.assert_array_equal(got, _expected(x, b, list(s), zeros, dtype, requantized))


def test_a_per_channel_source_is_left_alone() -> None:
    """A source dequantized per channel holds a different value per channel for one level: no table."""
    model = convert_onnx(_silu_block([0.1, 1 / 255, 0.05], [128, 0, 120], np.uint8, True, axis=1))
    compiled = core().compile_model(model, "XLA")
    types = _types(compiled)
    assert "Sigmoid" in types and LEVEL_LOOKUP not in types
    x = np.linspace(-9, 9, int(np.prod(SHAPE)), dtype=np.float32).reshape(SHAPE) + np.float32(0.01)
    b = np.zeros(SHAPE, np.float32)
    want = _expected(x, b, [0.1, 1 / 255, 0.05], [128, 0, 120], np.uint8, True)
    np.testing.assert_allclose(np.asarray(compiled({"x": x, "b": b})["out"]), want, atol=0.05 + 1e-6)


def test_a_chain_reading_another_input_or_costing_less_than_a_table_is_left_alone() -> None:
    """``DQ(v) * b`` depends on another input; a requantized ReLU alone is cheaper than a gather: both stay."""
    inits = [
        numpy_helper.from_array(np.array(0.1, np.float32), "s"),
        numpy_helper.from_array(np.array(3, np.uint8), "z"),
    ]
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"]),
             helper.make_node("DequantizeLinear", ["q", "s", "z"], ["a"]),
             helper.make_node("Relu", ["a"], ["r"]),
             helper.make_node("QuantizeLinear", ["r", "s", "z"], ["rq"]),
             helper.make_node("DequantizeLinear", ["rq", "s", "z"], ["rd"]),
             helper.make_node("Mul", ["rd", "b"], ["m"]),
             helper.make_node("Sigmoid", ["m"], ["out"])]  # fmt: skip
    inputs = [helper.make_tensor_value_info(n, 1, SHAPE) for n in ("x", "b")]
    graph = helper.make_graph(nodes, "mixed", inputs, [helper.make_tensor_value_info("out", 1, SHAPE)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)
    compiled = core().compile_model(convert_onnx(model), "XLA")
    assert LEVEL_LOOKUP not in _types(compiled)
    x = np.linspace(-3, 30, int(np.prod(SHAPE)), dtype=np.float32).reshape(SHAPE) + np.float32(0.01)
    b = np.full(SHAPE, 0.5, np.float32)
    relu = _pair(np.maximum(_pair(x, 0.1, 3, np.uint8), 0), 0.1, 3, np.uint8)
    want = np.float32(1) / (np.float32(1) + np.exp(-(relu * b)))
    np.testing.assert_allclose(np.asarray(compiled({"x": x, "b": b})["out"]), want, rtol=1e-6)


@pytest.mark.parametrize("native", [True, False])
@pytest.mark.parametrize("nan_entry", [True, False])
def test_the_lookup_op_reads_each_level_and_nan_as_its_definition_says(native: bool, nan_entry: bool) -> None:
    """``table[level - low]``, levels beyond the table clipped into it, NaN at the last entry (else at
    level 0's), on XLA (native kernel or gather) and in the op's definition."""
    low = -3
    table = np.arange(10, dtype=np.float32) * np.float32(1.5) - 4  # levels -3..5, then the NaN entry
    x = np.array([-3, 0, 5, 2, np.nan, -7, 9, 1], np.float32)
    used = table if nan_entry else table[:-1]
    want = table[[0, 3, 8, 5, 9 if nan_entry else 3, 0, 8, 4]]
    parameter = opset.parameter([8], Type.f32, name="x")
    lookup = level_lookup(parameter.output(0), used, low, nan_entry)
    model = Model([lookup], [parameter], name="lookup")
    compiled = core().compile_model(model, "XLA", {"XLA_NATIVE_KERNELS": native})
    np.testing.assert_array_equal(np.asarray(compiled({"x": x})[0]), want.astype(np.float32))
    np.testing.assert_array_equal(LEVEL_LOOKUP_OP.evaluate(lookup.node, x), want.astype(np.float32))


def test_a_table_longer_than_the_levels_is_refused() -> None:
    parameter = opset.parameter([2], Type.u8, name="x")
    with pytest.raises(Exception, match="table must hold"):
        level_lookup(parameter.output(0), np.zeros(300, np.float32), 0, False)


def test_a_model_with_tables_survives_export_and_import() -> None:
    """The exported executable carries the tables (and the native kernel's call): the imported model gives
    the definition's values."""
    s, zeros = [0.27, 1 / 255, 0.127], [120, 0, 2]
    compiled = core().compile_model(convert_onnx(_silu_block(s, zeros, np.uint8, True)), "XLA")
    x = np.linspace(-40, 40, int(np.prod(SHAPE)), dtype=np.float32).reshape(SHAPE) + np.float32(0.01)
    b = np.zeros(SHAPE, np.float32)
    assert LEVEL_LOOKUP in _types(compiled)
    imported = core().import_model(compiled.export_model(), "XLA")
    want = _expected(x, b, s, zeros, np.uint8, True)
    np.testing.assert_array_equal(np.asarray(imported({"x": x, "b": b})["out"]), want)


def test_the_qoperator_silu_block_is_one_table() -> None:
    """As ONNX Runtime's QOperator format writes the SiLU: QLinearSigmoid and QLinearMul (com.microsoft)
    each dequantize the level themselves; the block is one table, exactly the definition. (In YOLOv8n the
    two reads arrive as twin Clamp/IsNaN/Select nodes, which the pass merges; this small graph reaches the
    pass with one.)"""
    s, zeros = [0.27, 1 / 255, 0.127], [120, 0, 2]
    inits = [numpy_helper.from_array(np.array(v, np.float32), f"s{i}") for i, v in enumerate(s)]
    inits += [numpy_helper.from_array(np.array(v, np.uint8), f"z{i}") for i, v in enumerate(zeros)]
    ms = {"domain": "com.microsoft"}
    nodes = [helper.make_node("QuantizeLinear", ["x", "s0", "z0"], ["q"]),
             helper.make_node("QLinearSigmoid", ["q", "s0", "z0", "s1", "z1"], ["g"], **ms),
             helper.make_node("QLinearMul", ["q", "s0", "z0", "g", "s1", "z1", "s2", "z2"], ["m"], **ms),
             helper.make_node("DequantizeLinear", ["m", "s2", "z2"], ["y"]),
             helper.make_node("Add", ["y", "b"], ["out"])]  # fmt: skip
    inputs = [helper.make_tensor_value_info(n, 1, SHAPE) for n in ("x", "b")]
    graph = helper.make_graph(nodes, "qsilu", inputs, [helper.make_tensor_value_info("out", 1, SHAPE)], inits)
    opsets = [helper.make_opsetid("", 13), helper.make_opsetid("com.microsoft", 1)]
    compiled = core().compile_model(convert_onnx(helper.make_model(graph, opset_imports=opsets, ir_version=8)), "XLA")
    types = _types(compiled)
    assert types.count(LEVEL_LOOKUP) == 1 and "Sigmoid" not in types
    x = np.linspace(-40, 40, int(np.prod(SHAPE)), dtype=np.float32).reshape(SHAPE) + np.float32(0.01)
    b = np.zeros(SHAPE, np.float32)
    want = _expected(x, b, s, zeros, np.uint8, True)
    np.testing.assert_array_equal(np.asarray(compiled({"x": x, "b": b})["out"]), want)


@pytest.mark.parametrize("dtype", [np.uint8, np.int8])
def test_an_8_bit_input_is_a_source_of_levels(dtype: type) -> None:
    """``Sigmoid(Convert(f32, v) * s)`` of an i8/u8 model input: one table of the type's 256 levels."""
    levels = opset.parameter([2, 128], Type.u8 if dtype == np.uint8 else Type.i8, name="v")
    other = opset.parameter([2, 128], Type.f32, name="b")
    scaled = opset.multiply(opset.convert(levels, Type.f32), opset.constant(np.float32(0.05)))
    out = opset.add(opset.sigmoid(scaled), other)
    compiled = core().compile_model(Model([out], [levels, other], name="input"), "XLA")
    assert LEVEL_LOOKUP in _types(compiled) and "Sigmoid" not in _types(compiled)
    info = np.iinfo(dtype)
    v: np.ndarray = np.arange(info.min, info.max + 1).astype(dtype).reshape(2, 128)
    b = np.full((2, 128), 0.25, np.float32)
    gate = np.float32(1) / (np.float32(1) + np.exp(-(v.astype(np.float32) * np.float32(0.05))))
    np.testing.assert_array_equal(np.asarray(compiled({"v": v, "b": b})[0]), (gate + b).astype(np.float32))


def test_a_clamp_open_on_one_side_is_no_source() -> None:
    """``Clamp(Round(x), -inf, 5)`` holds any number of levels: its Sigmoid stays a Sigmoid."""
    x = opset.parameter([4], Type.f32, name="x")
    clamped = opset.clamp(opset.round(x, "half_to_even"), -np.inf, 5.0)
    compiled = core().compile_model(Model([opset.add(opset.sigmoid(clamped), x)], [x], name="open"), "XLA")
    assert "Sigmoid" in _types(compiled) and LEVEL_LOOKUP not in _types(compiled)
    v = np.array([1, 2, -60, 9], np.float32)
    gate = np.float32(1) / (np.float32(1) + np.exp(-np.minimum(np.round(v), np.float32(5))))
    np.testing.assert_allclose(np.asarray(compiled({"x": v})[0]), gate + v, rtol=1e-6)
