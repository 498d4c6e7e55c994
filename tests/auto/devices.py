"""Test-only devices for AUTO: TEMPLATE's kernels behind another identity (a GPU, a CPU compiler, an
unknown kind), declining chosen op types, compiling slowly or failing; and a small model with its numpy
forward pass."""

from __future__ import annotations

import threading
import time
from typing import Any

import numpy as np

import hetero_sdk as hs
from hetero_sdk import opset
from hetero_sdk.auto import AutoPlugin
from hetero_sdk.errors import CompilationError, UnsupportedOperationError
from hetero_sdk.hetero.plugin import HeteroPlugin
from hetero_sdk.plugin import RemoteContext, hookimpl
from template_plugin import TemplatePlugin

__all__ = ["FakeDevice", "make_core", "matmul_tanh", "numpy_matmul_tanh"]

W = np.linspace(-1.0, 1.0, 8 * 3, dtype=np.float32).reshape(8, 3)


class FakeDevice(TemplatePlugin):
    """TEMPLATE's kernels reporting another DEVICE_ARCHITECTURE and FULL_DEVICE_NAME.

    :param architecture: what DEVICE_ARCHITECTURE reports (``cuda`` ranks it as an accelerator, ``cpu``
        as a device compiling for the CPU).
    :param declines: op types it neither claims nor compiles.
    :param compile_delay: seconds each compile_model sleeps first (a device that compiles slowly).
    :param fail_compile: compile_model raises CompilationError after the delay.
    :param gate: when given, compile_model waits until it is set (a compile that ends when the test says).
    """

    def __init__(
        self,
        architecture: str = "numpy",
        full_name: str = "fake device",
        declines: tuple[str, ...] = (),
        compile_delay: float = 0.0,
        fail_compile: bool = False,
        gate: threading.Event | None = None,
    ) -> None:
        super().__init__(1)
        self.architecture, self.full_name, self.declines = architecture, full_name, frozenset(declines)
        self.compile_delay, self.fail_compile, self.gate = compile_delay, fail_compile, gate
        self.compiles = 0
        self.compiled = threading.Event()

    @hookimpl
    def get_property(self, name: str, arguments: dict[str, Any], device_name: str, core: hs.Core) -> Any:
        if name == "DEVICE_ARCHITECTURE":
            return self.architecture
        if name == "FULL_DEVICE_NAME":
            return self.full_name
        return super().get_property(name, arguments, device_name, core)

    @hookimpl
    def query_model(
        self, model: hs.Model, properties: dict[str, Any], device_name: str, core: hs.Core
    ) -> dict[str, str]:
        answer = super().query_model(model, properties, device_name, core)
        declined = {n.friendly_name for n in model.get_ops() if n.type_name in self.declines}
        return {op: device for op, device in answer.items() if op not in declined}

    @hookimpl
    def compile_model(
        self,
        model: hs.Model,
        properties: dict[str, Any],
        context: RemoteContext | None,
        device_name: str,
        core: hs.Core,
    ) -> Any:
        time.sleep(self.compile_delay)
        if self.gate is not None and not self.gate.wait(timeout=60):
            raise CompilationError(f"{device_name}: the test never opened the gate")
        declined = sorted({n.type_name for n in model.get_ops() if n.type_name in self.declines})
        if declined:
            raise UnsupportedOperationError(f"{device_name} does not run {', '.join(declined)}")
        if self.fail_compile:
            raise CompilationError(f"{device_name} failed on purpose")
        compiled = super().compile_model(model, properties, context, device_name, core)
        self.compiles += 1
        self.compiled.set()
        return compiled


def make_core(**devices: Any) -> hs.Core:
    """A Core with AUTO, HETERO and the given devices only (``TEMPLATE=TemplatePlugin`` ...)."""
    return hs.Core(plugins={"AUTO": AutoPlugin, "HETERO": HeteroPlugin, **devices}, autoload=False)


def matmul_tanh() -> hs.Model:
    """y = tanh(x @ W), x: f32[4, 8]."""
    x = opset.parameter([4, 8], hs.Type.f32, name="x")
    mm = opset.matmul(x, opset.constant(W, name="w"), name="mm")
    return hs.Model([opset.tanh(mm, name="y")], [x], name="matmul_tanh")


def numpy_matmul_tanh(x: np.ndarray) -> np.ndarray:
    """What :func:`matmul_tanh` computes, in numpy."""
    return np.tanh(x @ W)
