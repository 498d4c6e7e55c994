"""The hook contract: a one-file device works, and broken plugins are rejected whole, naming the hook."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

import hetero_sdk as hs
from hetero_sdk import opset
from hetero_sdk.errors import (
    CompilationError,
    DeviceNotFoundError,
    PluginValidationError,
    UnsupportedOperationError,
    UnsupportedPropertyError,
)
from hetero_sdk.ops.linear_algebra import matmul  # the opset lists it once its block lands
from hetero_sdk.plugin import CompiledModel, RemoteContext, RunContext, hookimpl

# -- a complete device in one file: four hooks and CompiledModel.run ----------------------------------

KERNELS = {"Add": np.add, "Multiply": np.multiply, "MatMul": np.matmul, "Relu": lambda x: np.maximum(x, 0)}
STRUCTURAL = {"Parameter", "Constant", "Result"}


class NumpyCompiledModel(CompiledModel):
    def __init__(self, model: hs.Model, device_name: str) -> None:
        super().__init__(model, device_name)
        self.ops = model.get_ordered_ops()
        self.params = [id(p) for p in model.get_parameters()]

    def run(self, inputs: Sequence[Any], context: RunContext) -> list[Any]:
        values: dict[int, Any] = dict(zip(self.params, inputs))
        results = []
        for node in self.ops:
            args = [values[id(source.node)] for source in node.input_values()]
            if node.get_type_name() == "Constant":
                values[id(node)] = node.get_attributes()["value"]
            elif node.get_type_name() == "Result":
                results.append(args[0])
            elif node.get_type_name() != "Parameter":
                values[id(node)] = KERNELS[node.get_type_name()](*args)
        return results


class NumpyDevice:
    @hookimpl
    def get_property(self, name: str, arguments: dict[str, Any], device_name: str, core: hs.Core) -> Any:
        supported = {"SUPPORTED_PROPERTIES": "RO", "AVAILABLE_DEVICES": "RO"}
        if name not in supported:
            raise UnsupportedPropertyError(f"NUMPY has no property {name!r}")
        return supported if name == "SUPPORTED_PROPERTIES" else ["0"]

    @hookimpl
    def set_property(self, properties: dict[str, Any], device_name: str, core: hs.Core) -> None:
        for key in properties:
            raise UnsupportedPropertyError(f"NUMPY has no settable property {key!r}")

    @hookimpl
    def query_model(
        self, model: hs.Model, properties: dict[str, Any], device_name: str, core: hs.Core
    ) -> dict[str, str]:
        ok = KERNELS.keys() | STRUCTURAL
        return {n.friendly_name: device_name for n in model.get_ops() if n.get_type_name() in ok}

    @hookimpl
    def compile_model(
        self,
        model: hs.Model,
        properties: dict[str, Any],
        context: RemoteContext | None,
        device_name: str,
        core: hs.Core,
    ) -> CompiledModel:
        return NumpyCompiledModel(model.clone(), device_name)


# -------------------------------------------------------------------------------------------------------


def small_model() -> tuple[hs.Model, np.ndarray]:
    w = np.arange(12, dtype=np.float32).reshape(4, 3) / 10
    x = opset.parameter([2, 4], hs.Type.f32, name="x")
    y = opset.relu(opset.add(matmul(x, opset.constant(w, name="w")), opset.constant(-1.0, name="c")), name="y")
    return hs.Model([y], [x], name="small"), w


def test_one_file_plugin_registers_compiles_and_runs(core: hs.Core) -> None:
    core.register_plugin(NumpyDevice(), "NUMPY")
    assert "NUMPY" in core.available_devices
    model, w = small_model()
    assert set(core.query_model(model, "NUMPY")) == {n.friendly_name for n in model.get_ops()}
    compiled = core.compile_model(model, "NUMPY")
    x = np.linspace(-2, 2, 8, dtype=np.float32).reshape(2, 4)
    np.testing.assert_allclose(compiled({"x": x})["y"], np.maximum(x @ w - 1.0, 0), rtol=1e-6)
    request = compiled.create_infer_request()
    request.start_async({"x": x})
    request.wait()
    np.testing.assert_allclose(request.results[0], np.maximum(x @ w - 1.0, 0), rtol=1e-6)
    assert compiled.get_property("EXECUTION_DEVICES") == ["NUMPY"]
    assert core.get_versions("NUMPY")["NUMPY"].build_number == hs.__version__


def test_plugin_class_is_instantiated_on_registration(core: hs.Core) -> None:
    core.register_plugin(NumpyDevice, "NUMPY")
    assert "NUMPY" in core.available_devices


def test_each_registration_receives_its_own_device_name(core: hs.Core) -> None:
    device = NumpyDevice()
    core.register_plugin(device, "NP_A")
    core.register_plugin(device, "NP_B")
    model, _ = small_model()
    assert set(core.query_model(model, "NP_B").values()) == {"NP_B"}
    assert core.compile_model(model, "NP_A").device_name == "NP_A"


class Misspelt(NumpyDevice):
    compile_model = None  # type: ignore[assignment]

    @hookimpl
    def compile_modle(self, model: hs.Model) -> None: ...


class Unmarked(NumpyDevice):
    def compile_model(self, model: hs.Model, device_name: str) -> CompiledModel:  # type: ignore[override]
        return NumpyCompiledModel(model.clone(), device_name)


class ExtraArgument(NumpyDevice):
    @hookimpl
    def compile_model(self, model: hs.Model, flavour: str) -> CompiledModel:  # type: ignore[override]
        raise AssertionError("never called")


def test_misspelt_hook_is_rejected_naming_plugin_hook_and_suggestion(core: hs.Core) -> None:
    plugin = Misspelt()
    with pytest.raises(PluginValidationError) as info:
        core.register_plugin(plugin, "BROKEN")
    message = str(info.value)
    assert "'BROKEN'" in message and "compile_modle" in message and "did you mean compile_model?" in message
    assert info.value.plugin is plugin
    assert isinstance(info.value, TypeError)


def test_rejected_plugin_leaves_nothing_registered(core: hs.Core) -> None:
    with pytest.raises(PluginValidationError):
        core.register_plugin(Misspelt(), "BROKEN")
    assert core.registered_devices == ["TEMPLATE"]
    assert core.available_devices == ["TEMPLATE.0", "TEMPLATE.1"]
    with pytest.raises(DeviceNotFoundError):
        core.compile_model(small_model()[0], "BROKEN")
    core.register_plugin(NumpyDevice(), "BROKEN")  # the name is free
    assert "BROKEN" in core.available_devices


def test_rejected_replacement_keeps_the_registered_device(core: hs.Core) -> None:
    with pytest.raises(PluginValidationError):
        core.register_plugin(Misspelt(), "TEMPLATE")
    assert core.compile_model(small_model()[0], "TEMPLATE").device_name == "TEMPLATE.0"


def test_unmarked_method_with_a_hook_name_is_rejected(core: hs.Core) -> None:
    with pytest.raises(PluginValidationError, match=r"'compile_model' has a hook's name but is not marked"):
        core.register_plugin(Unmarked(), "UNMARKED")
    assert "UNMARKED" not in core.registered_devices


@pytest.mark.parametrize("hook", ["get_property", "set_property", "compile_model", "query_model"])
def test_missing_required_hook_is_rejected_naming_it(core: hs.Core, hook: str) -> None:
    cls = type("Partial", (NumpyDevice,), {hook: None})
    with pytest.raises(PluginValidationError, match=rf"'PARTIAL'.*required hook\(s\) {hook}"):
        core.register_plugin(cls(), "PARTIAL")
    assert "PARTIAL" not in core.registered_devices


def test_hook_argument_missing_from_the_spec_is_rejected(core: hs.Core) -> None:
    with pytest.raises(PluginValidationError, match=r"(?s)compile_model.*flavour"):
        core.register_plugin(ExtraArgument(), "EXTRA")
    assert "EXTRA" not in core.registered_devices


class LeavesOutContext(NumpyDevice):
    @hookimpl
    def compile_model(  # type: ignore[override]
        self, model: hs.Model, properties: dict[str, Any], device_name: str, core: hs.Core
    ) -> CompiledModel:
        raise AssertionError("never called")


def test_a_hook_leaving_out_a_spec_argument_is_rejected_naming_hook_and_argument(core: hs.Core) -> None:
    plugin = LeavesOutContext()
    with pytest.raises(PluginValidationError) as info:
        core.register_plugin(plugin, "PARTIAL")
    message = str(info.value)
    assert "'PARTIAL'" in message and "hook compile_model leaves out the argument(s) context" in message
    assert "def compile_model(self, model, properties, context, device_name, core)" in message  # the fix
    assert info.value.plugin is plugin
    assert "PARTIAL" not in core.registered_devices


def _get_property(self: Any, name: str, device_name: str, core: hs.Core) -> Any: ...
def _set_property(self: Any, properties: dict[str, Any], device_name: str) -> None: ...
def _query_model(self: Any, model: hs.Model, properties: dict[str, Any]) -> dict[str, str]: ...


@pytest.mark.parametrize(
    ("method", "left_out"),
    [(_get_property, "arguments"), (_set_property, "core"), (_query_model, "device_name, core")],
    ids=["get_property", "set_property", "query_model"],
)
def test_every_leftout_argument_is_named(core: hs.Core, method: Any, left_out: str) -> None:
    hook = method.__name__.lstrip("_")
    cls = type("Partial", (NumpyDevice,), {hook: hookimpl(method)})
    with pytest.raises(PluginValidationError, match=rf"hook {hook} leaves out the argument\(s\) {left_out};"):
        core.register_plugin(cls(), "PARTIAL")


def test_a_wrapper_may_take_a_subset_of_the_arguments(core: hs.Core) -> None:
    tracer = Tracer()  # its compile_model takes model and device_name only
    core.add_hook_wrapper(tracer)
    core.compile_model(small_model()[0], "TEMPLATE")
    assert tracer.calls == [("TEMPLATE", "small", "TemplateCompiledModel")]


def test_helpers_and_properties_beside_hooks_are_allowed(core: hs.Core) -> None:
    class WithHelpers(NumpyDevice):
        version = "1"

        def helper(self) -> int:
            return 1

        @property
        def name(self) -> str:
            return "numpy"

    core.register_plugin(WithHelpers(), "HELPED")
    assert "HELPED" in core.available_devices


def test_compile_model_returning_the_wrong_type_is_a_contract_error(core: hs.Core) -> None:
    class ReturnsNone(NumpyDevice):
        @hookimpl
        def compile_model(
            self,
            model: hs.Model,
            properties: dict[str, Any],
            context: RemoteContext | None,
            device_name: str,
            core: hs.Core,
        ) -> Any:  # type: ignore[override]
            return {"not": "a compiled model"}

    core.register_plugin(ReturnsNone(), "NONE")
    with pytest.raises(PluginValidationError, match="'NONE': compile_model returned dict"):
        core.compile_model(small_model()[0], "NONE")


def test_query_model_returning_the_wrong_type_is_a_contract_error(core: hs.Core) -> None:
    class ReturnsList(NumpyDevice):
        @hookimpl
        def query_model(self, model: hs.Model, properties: dict[str, Any], device_name: str, core: hs.Core) -> Any:  # type: ignore[override]
            return ["x"]

    core.register_plugin(ReturnsList(), "LISTY")
    with pytest.raises(PluginValidationError, match="query_model returned list"):
        core.query_model(small_model()[0], "LISTY")


def test_device_failure_in_compile_is_a_compilation_error_naming_the_device(core: hs.Core) -> None:
    class Fails(NumpyDevice):
        @hookimpl
        def compile_model(
            self,
            model: hs.Model,
            properties: dict[str, Any],
            context: RemoteContext | None,
            device_name: str,
            core: hs.Core,
        ) -> Any:  # type: ignore[override]
            raise MemoryError("out of device memory")

    core.register_plugin(Fails(), "FAILS")
    with pytest.raises(CompilationError, match=r"'FAILS'.*MemoryError: out of device memory") as info:
        core.compile_model(small_model()[0], "FAILS")
    assert isinstance(info.value.__cause__, MemoryError)


def test_optional_hooks_left_out_raise_unsupported_operation(core: hs.Core) -> None:
    core.register_plugin(NumpyDevice(), "NUMPY")
    compiled = core.compile_model(small_model()[0], "NUMPY")
    with pytest.raises(UnsupportedOperationError, match=r"NUMPY.*export_model"):
        compiled.export_model()
    with pytest.raises(UnsupportedOperationError, match="'NUMPY' does not implement import_model"):
        core.import_model(b"blob", "NUMPY")
    with pytest.raises(UnsupportedOperationError, match="create_context"):
        core.create_context("NUMPY")


# -- cross-cutting plugins ----------------------------------------------------------------------------


class Tracer:
    """Records every compile_model call of every device, with its outcome."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str, str]] = []

    @hookimpl(wrapper=True)
    def compile_model(self, model: hs.Model, device_name: str) -> Any:
        try:
            compiled = yield
        except Exception as exc:
            self.calls.append((device_name, model.friendly_name, type(exc).__name__))
            raise
        self.calls.append((device_name, model.friendly_name, type(compiled).__name__))
        return compiled


def test_hook_wrapper_sees_compile_model_of_every_device(core: hs.Core) -> None:
    core.register_plugin(NumpyDevice(), "NUMPY")
    tracer = Tracer()
    core.add_hook_wrapper(tracer)
    core.register_plugin(NumpyDevice(), "LATER")  # registered after the wrapper: wrapped too
    model, _ = small_model()
    core.compile_model(model, "TEMPLATE.1")
    core.compile_model(model, "NUMPY")
    core.compile_model(model, "LATER")
    assert tracer.calls == [
        ("TEMPLATE", "small", "TemplateCompiledModel"),
        ("NUMPY", "small", "NumpyCompiledModel"),
        ("LATER", "small", "NumpyCompiledModel"),
    ]


def test_hook_wrapper_sees_failures_and_does_not_change_results(core: hs.Core) -> None:
    class Fails(NumpyDevice):
        @hookimpl
        def compile_model(
            self,
            model: hs.Model,
            properties: dict[str, Any],
            context: RemoteContext | None,
            device_name: str,
            core: hs.Core,
        ) -> Any:  # type: ignore[override]
            raise RuntimeError("no")

    core.register_plugin(Fails(), "FAILS")
    tracer = Tracer()
    core.add_hook_wrapper(tracer)
    with pytest.raises(CompilationError):
        core.compile_model(small_model()[0], "FAILS")
    assert tracer.calls == [("FAILS", "small", "RuntimeError")]


def test_wrapper_with_a_misspelt_hook_is_registered_nowhere(core: hs.Core) -> None:
    class BadTracer:
        @hookimpl(wrapper=True)
        def compile_modle(self) -> Any:
            return (yield)

    core.register_plugin(NumpyDevice(), "NUMPY")
    with pytest.raises(PluginValidationError, match="compile_modle"):
        core.add_hook_wrapper(BadTracer())
    core.register_plugin(NumpyDevice(), "LATER")  # would fail if the wrapper had been kept
    assert core.compile_model(small_model()[0], "LATER").device_name == "LATER"


def test_wrapper_with_a_plain_implementation_is_rejected(core: hs.Core) -> None:
    class Hijacker:
        @hookimpl
        def compile_model(
            self,
            model: hs.Model,
            properties: dict[str, Any],
            context: RemoteContext | None,
            device_name: str,
            core: hs.Core,
        ) -> Any:
            return None

    with pytest.raises(PluginValidationError, match="wrapper=True"):
        core.add_hook_wrapper(Hijacker())
    assert core.compile_model(small_model()[0], "TEMPLATE").device_name == "TEMPLATE.0"
