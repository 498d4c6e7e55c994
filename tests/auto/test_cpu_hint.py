"""``CPU`` (an OpenVINO habit) names no device here: the error says which devices run on the CPU instead
of guessing a device with a similar name."""

from __future__ import annotations

import pytest

import hetero_sdk as hs
from hetero_sdk.errors import DeviceNotFoundError
from template_plugin import TemplatePlugin

from .devices import FakeDevice, make_core, matmul_tanh


@pytest.fixture
def core() -> hs.Core:
    return make_core(
        TEMPLATE=TemplatePlugin,
        XLA=lambda: FakeDevice("cpu", "AMD EPYC (XLA cpu, device 0)"),
        TPU=lambda: FakeDevice("tpu", "TPU v5 lite"),
    )


@pytest.mark.parametrize("device", ["CPU", "AUTO:CPU,TEMPLATE", "HETERO:CPU,TEMPLATE"])
def test_cpu_names_the_devices_that_run_on_the_cpu(core: hs.Core, device: str) -> None:
    with pytest.raises(DeviceNotFoundError) as caught:
        core.compile_model(matmul_tanh(), device)
    message = str(caught.value)
    assert "no device 'CPU'" in message
    assert "use XLA (runs on the CPU here), TEMPLATE, TPU, AUTO or HETERO" in message
    assert "did you mean" not in message


def test_other_unknown_names_still_get_a_did_you_mean(core: hs.Core) -> None:
    with pytest.raises(DeviceNotFoundError, match="did you mean TPU"):
        core.get_property("TPUU", "FULL_DEVICE_NAME")


def test_with_no_device_on_the_cpu_the_message_stays_plain() -> None:
    core = make_core(TEMPLATE=TemplatePlugin)
    with pytest.raises(DeviceNotFoundError) as caught:
        core.get_property("CPU", "FULL_DEVICE_NAME")
    assert "runs on the CPU" not in str(caught.value)
