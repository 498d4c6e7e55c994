"""TEMPLATE's kernel registry: its own kernels by op type, the reference's (else the op definition's
array-API kernel) where it registers none, binders consulted first."""

from __future__ import annotations

import numpy as np
import pytest

import hetero_sdk as hs
from hetero_sdk import opset
from hetero_sdk.errors import UnsupportedOperationError
from hetero_sdk.reference import get_kernel
from template_plugin import TemplatePlugin, plan_kernels
from template_plugin.kernels import BINDERS, KERNELS, LENDING_KERNELS, kernel_for, kernel_types, lends
from template_plugin.pooling import max_pool_without_indices


def _node(type_name: str) -> hs.Node:
    x = opset.parameter([2, 3], name="x")
    return {
        "Relu": lambda: opset.relu(x),
        "Gather": lambda: opset.gather(x, np.array([1], np.int64), 0),
        "Abs": lambda: opset.abs(x),
        "Erf": lambda: opset.erf(x),
    }[type_name]()


def test_an_op_template_registers_nothing_for_takes_the_reference_kernel() -> None:
    for type_name in ("Abs", "Erf"):
        assert type_name not in KERNELS and type_name not in LENDING_KERNELS and type_name not in BINDERS
        node = _node(type_name)
        assert kernel_for(node, [True]) is get_kernel(type_name)
    assert get_kernel("Abs") is hs.ops.OPS.get("Abs").evaluate  # the definition's kernel is the default


def test_templates_own_kernels_come_first() -> None:
    assert kernel_for(_node("Gather"), [True]) is KERNELS.get("Gather") is plan_kernels.gather
    assert kernel_for(_node("Relu"), [True]) is LENDING_KERNELS.get("Relu")
    assert lends("Relu") and not lends("Gather") and not lends("Abs")


def test_a_binder_sees_which_outputs_are_read() -> None:
    x = opset.parameter([1, 1, 4, 4], name="x")
    pool = opset.max_pool(x, [1, 1], [1, 1], [0, 0], [0, 0], [2, 2])
    assert kernel_for(pool, [True, False]) is max_pool_without_indices
    assert kernel_for(pool, [True, True]) is get_kernel("MaxPool")  # the binder declines: indices are read


def test_a_kernel_registered_for_an_op_type_is_what_template_runs(monkeypatch) -> None:
    """A registry entry replaced (as a device author extends TEMPLATE) changes what a compiled model computes."""
    monkeypatch.setitem(KERNELS._entries, "Abs", lambda node, x: np.abs(x) + 1)  # removed after the test
    x = np.float32([[-1, 2, -3], [4, -5, 6]])
    model = hs.Model([opset.abs(p := opset.parameter([2, 3], name="x"))], [p])
    core = hs.Core(plugins={"TEMPLATE": TemplatePlugin()}, autoload=False)
    np.testing.assert_array_equal(core.compile_model(model, "TEMPLATE")([x])[0], np.abs(x) + 1)


def test_kernel_types_cover_the_reference_and_templates_own_ops() -> None:
    types = kernel_types()
    assert {"Abs", "Convolution", "TemplateConvolution", "TemplateFullyConnected", "MaxPool"} <= set(types)
    assert types == sorted(set(types))


def test_an_op_without_any_kernel_is_named() -> None:
    with pytest.raises(UnsupportedOperationError, match="unknown op type 'NoSuchOp'"):
        kernel_for(type("Fake", (), {"type_name": "NoSuchOp", "op": "NoSuchOp"})(), [True])
