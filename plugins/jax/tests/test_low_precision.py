"""The 8-, 4- and 2-bit element types on XLA: Convert to and from each agrees with TEMPLATE bit for bit
(NaN codes aside); 8-bit floats move through data-movement ops as on TEMPLATE; nodes that move 4- or
2-bit values are declined (XLA:CPU's compiler aborts the process on a Concat of 2-bit values), and
HETERO runs them on TEMPLATE."""

from __future__ import annotations

import hetero_sdk as hs
import ml_dtypes
import numpy as np
import pytest
from hetero_sdk import Model, Type, opset
from hetero_sdk.errors import UnsupportedOperationError
from hetero_sdk.hetero.plugin import HeteroPlugin
from template_plugin import TemplatePlugin
from xla_helpers import core

from hetero_sdk_jax import XlaPlugin

NARROW = [Type.f8e4m3, Type.f8e5m2, Type.f8e4m3fnuz, Type.f8e5m2fnuz, Type.f8e8m0, Type.f4e2m1]
NARROW += [Type.i4, Type.u4, Type.i2, Type.u2]
SUB_BYTE = [t for t in NARROW if t.bitwidth < 8]


def _codes(element_type: Type) -> np.ndarray:
    if element_type.is_integral:
        info = ml_dtypes.iinfo(element_type.numpy)
        return np.arange(int(info.min), int(info.max) + 1).astype(element_type.numpy)
    return np.arange(1 << element_type.bitwidth, dtype=np.uint8).view(element_type.numpy)


def _both(model: Model, feeds: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    return tuple(np.asarray(core().compile_model(model, d)(feeds)[0]) for d in ("TEMPLATE", "XLA"))  # type: ignore[return-value]


def _same(template: np.ndarray, xla: np.ndarray) -> None:
    assert template.dtype == xla.dtype and template.shape == xla.shape
    t, x = template.astype(np.float64), xla.astype(np.float64)
    np.testing.assert_array_equal(t, x)  # NaN where the other has NaN
    np.testing.assert_array_equal(np.signbit(t[~np.isnan(t)]), np.signbit(x[~np.isnan(x)]))


@pytest.mark.parametrize("element_type", NARROW)
def test_convert_from_every_code_and_back_from_f32_agrees_with_template(element_type: Type) -> None:
    codes = _codes(element_type)
    x = opset.parameter([codes.size], element_type, name="x")
    _same(*_both(Model([opset.convert(x, Type.f32, name="y")], [x]), {"x": codes}))
    wide = np.concatenate([codes.astype(np.float32), np.array([1e6, -1e6, np.inf, 0.3, -2.7], np.float32)])
    w = opset.parameter([wide.size], Type.f32, name="w")
    with np.errstate(all="ignore"):
        _same(*_both(Model([opset.convert(w, element_type, name="y")], [w]), {"w": wide}))


@pytest.mark.parametrize("element_type", [t for t in NARROW if t.bitwidth == 8])
def test_eight_bit_floats_move_through_xla_as_on_template(element_type: Type) -> None:
    codes = _codes(element_type)
    a = opset.parameter([16, 16], element_type, name="a")
    flags = opset.parameter([16, 16], Type.boolean, name="flags")
    moved = opset.transpose(opset.concat([a, a], 0), np.array([1, 0], np.int64))
    picked = opset.select(flags, opset.slice(moved, [0, 0], [16, 16], [1, 1]), a, name="y")
    model = Model([picked], [a, flags])
    assert set(core().query_model(model, "XLA")) >= {"y"}
    feeds = {"a": codes.reshape(16, 16), "flags": np.random.default_rng(0).random((16, 16)) > 0.5}
    _same(*_both(model, feeds))  # XLA may quiet a signalling NaN's code (f8e5m2's 125 becomes 127)


@pytest.mark.parametrize("element_type", SUB_BYTE)
def test_nodes_moving_sub_byte_values_are_declined_and_hetero_runs_them_on_template(element_type: Type) -> None:
    codes = _codes(element_type)
    a = opset.parameter([codes.size], element_type, name="a")
    joined = opset.concat([a, a], 0, name="joined")
    doubled = opset.multiply(opset.convert(joined, Type.f32, name="wide"), np.float32(2.0), name="y")
    model = Model([doubled], [a])
    placed = core().query_model(model, "XLA")
    assert "joined" not in placed and {"wide", "y"} <= set(placed)
    plugins = {"XLA": XlaPlugin, "TEMPLATE": TemplatePlugin, "HETERO": HeteroPlugin}
    hetero = hs.Core(plugins=plugins, autoload=False)
    result = np.asarray(hetero.compile_model(model, "HETERO:XLA,TEMPLATE")({"a": codes})[0])
    expected = 2 * np.concatenate([codes, codes]).astype(np.float32)
    np.testing.assert_array_equal(result, expected)


@pytest.mark.parametrize("element_type", NARROW)
def test_export_and_import_keep_narrow_inputs_and_outputs_or_say_why_not(element_type: Type) -> None:
    x = opset.parameter([4], element_type, name="x")
    model = Model([opset.convert(x, Type.f32, name="y"), opset.convert(x, Type.f32, name="z")], [x])
    compiled = core().compile_model(model, "XLA")
    values = _codes(element_type)[:4]
    compiled({"x": values})
    if element_type in (Type.i2, Type.u2):
        with pytest.raises(UnsupportedOperationError, match=r"dtype u?int2"):
            compiled.export_model()
        return
    imported = core().import_model(compiled.export_model(), "XLA")
    _same(np.asarray(imported({"x": values})[0]), values.astype(np.float32))
