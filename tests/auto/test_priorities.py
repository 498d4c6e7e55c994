"""AUTO's default order comes from what devices report: accelerators, then devices compiling for the CPU,
then the reference device, then the rest; explicit lists keep their order and skip unavailable devices."""

from __future__ import annotations

import pytest

import hetero_sdk as hs
from hetero_sdk.auto import DeviceKind, default_priorities, device_kind
from hetero_sdk.errors import DeviceNotFoundError, DeviceUnavailableError
from template_plugin import TemplatePlugin

from .devices import FakeDevice, make_core, matmul_tanh


def _no_hardware() -> FakeDevice:
    raise DeviceUnavailableError("no such hardware here")


@pytest.fixture
def core() -> hs.Core:
    return make_core(
        ZOO=lambda: FakeDevice("numpy", "a zoo of kernels"),
        TEMPLATE=TemplatePlugin,
        XLA=lambda: FakeDevice("cpu", "AMD EPYC (XLA cpu, device 0)"),
        ACCEL=lambda: FakeDevice("cuda", "NVIDIA H100 (XLA cuda, device 0)"),
        TPU=_no_hardware,
    )


def test_kinds_come_from_the_reported_architecture_and_name(core: hs.Core) -> None:
    assert device_kind(core, "ACCEL") is DeviceKind.ACCELERATOR
    assert device_kind(core, "XLA") is DeviceKind.HOST
    assert device_kind(core, "TEMPLATE") is DeviceKind.REFERENCE
    assert device_kind(core, "ZOO") is DeviceKind.OTHER


def test_the_architecture_wins_over_words_in_the_full_name() -> None:
    core = make_core(APU=lambda: FakeDevice("cpu", "AMD Ryzen 7 with integrated Radeon GPU (XLA cpu, device 0)"))
    assert device_kind(core, "APU") is DeviceKind.HOST
    core.register_plugin(lambda: FakeDevice("numpy", "Fake TPU v5"), "NAMED")
    assert device_kind(core, "NAMED") is DeviceKind.ACCELERATOR


def test_default_order_is_accelerators_then_cpu_then_template_then_the_rest(core: hs.Core) -> None:
    assert default_priorities(core, exclude=("AUTO",)) == ["ACCEL", "XLA", "TEMPLATE", "ZOO"]


def test_plain_auto_compiles_on_the_first_device_of_the_default_order(core: hs.Core) -> None:
    compiled = core.compile_model(matmul_tanh(), "AUTO", {"ENABLE_STARTUP_FALLBACK": False})
    assert compiled.get_property("EXECUTION_DEVICES") == ["ACCEL.0"]
    assert compiled.get_property("MULTI_DEVICE_PRIORITIES") == "ACCEL,XLA,TEMPLATE,ZOO"


def test_an_explicit_list_keeps_its_order_and_skips_unavailable_devices(core: hs.Core) -> None:
    compiled = core.compile_model(matmul_tanh(), "AUTO:TPU,ZOO,ACCEL")
    assert compiled.get_property("EXECUTION_DEVICES") == ["ZOO.0"]
    assert compiled.get_property("MULTI_DEVICE_PRIORITIES") == "ZOO,ACCEL"
    core.set_property("AUTO", {"MULTI_DEVICE_PRIORITIES": "XLA,ZOO"})
    assert core.compile_model(matmul_tanh(), "AUTO").get_property("EXECUTION_DEVICES") == ["XLA.0"]


def test_a_list_of_only_unavailable_devices_says_why(core: hs.Core) -> None:
    with pytest.raises(DeviceUnavailableError, match=r"TPU: .*no such hardware"):
        core.compile_model(matmul_tanh(), "AUTO:TPU")


def test_unknown_devices_and_auto_itself_are_rejected(core: hs.Core) -> None:
    with pytest.raises(DeviceNotFoundError, match="did you mean ZOO"):
        core.compile_model(matmul_tanh(), "AUTO:ZOOO")
    with pytest.raises(DeviceNotFoundError, match="cannot list itself"):
        core.compile_model(matmul_tanh(), "AUTO:AUTO,ZOO")
