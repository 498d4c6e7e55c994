"""``hetero-sdk devices``: every device with its name, ids, capabilities and version; failures with the reason."""

from __future__ import annotations

from .helpers import AbsentHardwareDevice, Invoke, make_core, parse_json


def test_devices_json_lists_each_device_id_with_its_properties(invoke: Invoke) -> None:
    core = make_core(template_ids=2, extra={"NPU": AbsentHardwareDevice()})
    data = parse_json(invoke("devices", "--json", core=core))
    by_device = {entry["device"]: entry for entry in data["available"]}
    assert sorted(by_device) == ["ACCEL", "TEMPLATE.0", "TEMPLATE.1"]
    second = by_device["TEMPLATE.1"]
    assert (second["plugin"], second["id"], second["ids"]) == ("TEMPLATE", "1", ["0", "1"])
    assert second["full_name"] == "Template reference device 1 (numpy)"
    assert second["architecture"] == "numpy"
    assert second["capabilities"] == ["FP32", "EXPORT_IMPORT"]
    assert second["version"] == {
        "build_number": "0.1.0",
        "description": "TEMPLATE reference device (numpy kernels)",
    }
    assert by_device["ACCEL"]["id"] is None and by_device["ACCEL"]["ids"] == ["0"]


def test_devices_json_separates_meta_devices_and_reports_why_a_device_is_unavailable(invoke: Invoke) -> None:
    core = make_core(extra={"NPU": AbsentHardwareDevice()})
    data = parse_json(invoke("devices", "--json", core=core))
    assert [entry["device"] for entry in data["meta"]] == ["HETERO"]
    assert data["meta"][0]["version"]["description"] == "HETERO meta-device (split execution)"
    assert [entry["device"] for entry in data["unavailable"]] == ["NPU"]
    assert "the npu driver is not loaded" in data["unavailable"][0]["reason"]


def test_devices_text_shows_the_same_facts(invoke: Invoke) -> None:
    core = make_core(template_ids=2, extra={"NPU": AbsentHardwareDevice()})
    result = invoke("devices", core=core)
    assert result.exit_code == 0, result.output
    text = result.stdout
    assert "Template reference device 1 (numpy)" in text
    assert "FP32, EXPORT_IMPORT" in text
    assert "HETERO" in text.split("Meta-devices")[1]
    assert "NPU: " in text.split("Unavailable devices")[1]
    assert "the npu driver is not loaded" in text


def test_devices_with_nothing_installed_says_what_to_do(invoke: Invoke) -> None:
    import hetero_sdk as hs

    result = invoke("devices", core=hs.Core(autoload=False))
    assert result.exit_code == 0
    assert "install a device plugin" in result.stdout
