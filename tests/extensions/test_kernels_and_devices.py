"""Extension ops on devices: TEMPLATE runs them through its kernels or the reference, XLA through a
lowering or the array-API kernel and declines the rest, HETERO places them; a kernel whose result does
not fit the op's shape inference raises naming the extension and the op, never a wrong result."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import hetero_sdk as hs
from hetero_sdk import Node, opset
from hetero_sdk.errors import HeteroSDKError, PluginValidationError
from hetero_sdk.extensions import REFERENCE, Extension
from hetero_sdk.reference import evaluate
from template_plugin import TemplatePlugin

from .conftest import DATA, softsign, unary_op

Register = Callable[..., Extension]


def _model(*op_types: str) -> hs.Model:
    x = opset.parameter([3, 4], hs.Type.f32, name="x")
    value = x.output(0)
    for index, op_type in enumerate(op_types):
        value = Node(op_type, [value], {}, f"n{index}_{op_type}").output(0)
    return hs.Model([opset.relu(value, name="y")], [x], name="m")


def _core() -> hs.Core:
    return hs.Core(plugins={"TEMPLATE": TemplatePlugin}, autoload=False)


def _numpy_softsign(node: Node, x: np.ndarray) -> np.ndarray:
    return x / (1 + np.abs(x))


@pytest.mark.parametrize(
    "returned, problem",
    [
        (lambda x: x[:2], "returned shape [2, 4] for output 0; shape inference gives [3,4]"),
        (lambda x: x.astype(np.int64), "returned element type i64 for output 0; shape inference gives f32"),
        (lambda x: (x, x), "returned 2 value(s); the op has 1 output(s)"),
    ],
    ids=["shape", "type", "count"],
)
def test_a_kernel_returning_what_the_op_does_not_is_an_error_naming_extension_and_op(
    register: Register, returned: Callable[[np.ndarray], Any], problem: str
) -> None:
    register(
        Extension("wrong_ext", ops=[unary_op("WrongOp")], kernels={REFERENCE: {"WrongOp": lambda n, x: returned(x)}})
    )
    for run in (lambda m: evaluate(m, [DATA]), lambda m: _core().compile_model(m, "TEMPLATE")({"x": DATA})):
        with pytest.raises(HeteroSDKError) as info:
            run(_model("WrongOp"))
        assert "extension 'wrong_ext'" in str(info.value) and "kernel of WrongOp" in str(info.value)
        assert problem.replace("[3,4]", "") in str(info.value)


def test_a_template_kernel_is_preferred_and_checked(register: Register) -> None:
    kernels = {"TEMPLATE": {"TemplOp": lambda n, x: x[:1]}, REFERENCE: {"TemplOp": _numpy_softsign}}
    register(Extension("templ_ext", ops=[unary_op("TemplOp")], kernels=kernels))
    np.testing.assert_allclose(evaluate(_model("TemplOp"), [DATA])[0], np.maximum(DATA / (1 + np.abs(DATA)), 0), 1e-6)
    with pytest.raises(HeteroSDKError, match=r"'templ_ext': the TEMPLATE kernel of TemplOp"):
        _core().compile_model(_model("TemplOp"), "TEMPLATE")({"x": DATA})


def test_a_kernel_named_by_a_module_that_fails_to_import_is_an_error_at_first_use(register: Register) -> None:
    kernels = {REFERENCE: {"LazyOp": "no_such_module_xyz:kernel"}}
    register(Extension("lazy_kernel_ext", ops=[unary_op("LazyOp")], kernels=kernels))
    with pytest.raises(PluginValidationError, match=r"'lazy_kernel_ext'.*LazyOp.*no_such_module_xyz"):
        evaluate(_model("LazyOp"), [DATA])


xla = pytest.importorskip("hetero_sdk_jax")


def _xla_core() -> hs.Core:
    from hetero_sdk.hetero.plugin import HeteroPlugin

    return hs.Core(plugins={"TEMPLATE": TemplatePlugin, "XLA": xla.XlaPlugin, "HETERO": HeteroPlugin}, autoload=False)


def test_devices_claim_extension_ops_they_can_run_and_hetero_places_the_rest(register: Register) -> None:
    register(
        Extension("numpy_only_ext", ops=[unary_op("NumpyOnly")], kernels={REFERENCE: {"NumpyOnly": _numpy_softsign}})
    )
    register(Extension("array_api_ext", ops=[unary_op("ArrayApiOp", lambda node, x: softsign(x))]))
    model = _model("ArrayApiOp", "NumpyOnly")
    core = _xla_core()
    assert core.query_model(model, "TEMPLATE").keys() >= {"n0_ArrayApiOp", "n1_NumpyOnly"}
    on_xla = core.query_model(model, "XLA")
    assert "n0_ArrayApiOp" in on_xla and "n1_NumpyOnly" not in on_xla
    placed = core.query_model(model, "HETERO:XLA,TEMPLATE")
    assert placed["n0_ArrayApiOp"] == "XLA" and placed["n1_NumpyOnly"] == "TEMPLATE"
    once = DATA / (1 + np.abs(DATA))
    expected = np.maximum(once / (1 + np.abs(once)), 0)
    got = core.compile_model(model, "HETERO:XLA,TEMPLATE")({"x": DATA})[0]
    np.testing.assert_allclose(got, expected, rtol=1e-6)


def test_an_xla_lowering_is_used_and_checked(register: Register) -> None:
    import jax.numpy as jnp

    lowerings = {"XLA": {"LoweredOp": lambda n, x: jnp.tanh(x)}, REFERENCE: {"LoweredOp": lambda n, x: np.tanh(x)}}
    register(Extension("lowered_ext", ops=[unary_op("LoweredOp")], kernels=lowerings))
    core = _xla_core()
    assert "n0_LoweredOp" in core.query_model(_model("LoweredOp"), "XLA")
    got = core.compile_model(_model("LoweredOp"), "XLA")({"x": DATA})[0]
    np.testing.assert_allclose(got, np.maximum(np.tanh(DATA), 0), rtol=1e-6)
    register(
        Extension("bad_lowering_ext", ops=[unary_op("BadLowered")], kernels={"XLA": {"BadLowered": lambda n, x: x.T}})
    )
    with pytest.raises(HeteroSDKError, match=r"'bad_lowering_ext': the XLA kernel of BadLowered.*shape \[4, 3\]"):
        core.compile_model(_model("BadLowered"), "XLA")({"x": DATA})
