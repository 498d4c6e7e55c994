"""AUTO's partition names the device that runs each op, as its header does (``AUTO (runs on
TEMPLATE.0)``), not ``AUTO``."""

from __future__ import annotations

from hetero_sdk.auto.plugin import AutoPlugin
from hetero_sdk.samples import get_sample

from .helpers import Invoke, RefusingDevice, make_core, op_devices, parse_json


class NoConvDevice(RefusingDevice):
    """A TEMPLATE that refuses convolutions: with ACCEL (which refuses NMS) no device runs the detector whole."""

    refused = "Convolution"


def test_auto_on_one_device_lists_that_device_in_its_partition(invoke: Invoke) -> None:
    core = make_core(extra={"AUTO": AutoPlugin()})
    for command in (["query", "mlp"], ["benchmark", "mlp", "-niter", "1"]):
        data = parse_json(invoke(*command, "-d", "AUTO:TEMPLATE", "--json", core=core))
        report = data if command[0] == "query" else data["partition"]
        assert data["execution_devices"] == ["TEMPLATE.0"]
        assert [s["device"] for s in report["subgraphs"]] == ["TEMPLATE.0"]
        assert set(op_devices(report).values()) == {"TEMPLATE.0"}
    result = invoke("benchmark", "mlp", "-niter", "1", "-d", "AUTO:TEMPLATE", core=core)
    assert result.exit_code == 0, result.output
    assert "AUTO:TEMPLATE (runs on TEMPLATE.0)" in result.stdout
    partition = result.stdout.split("Partition", 1)[1].split("Results check", 1)[0]
    assert "TEMPLATE.0" in partition and "AUTO" not in partition


def test_auto_serving_a_hetero_split_lists_each_ops_device(invoke: Invoke) -> None:
    core = make_core(extra={"AUTO": AutoPlugin(), "NOCONV": NoConvDevice()})
    data = parse_json(invoke("query", "detection", "-d", "AUTO:ACCEL,NOCONV", "--json", core=core))
    devices = op_devices(data)
    assert devices["nms"] == "NOCONV"
    assert {devices[op] for op in devices if op.endswith("/conv")} == {"ACCEL"}
    assert [s["device"] for s in data["subgraphs"]] == ["ACCEL", "NOCONV"]
    assert sorted(devices) == sorted(n.friendly_name for n in get_sample("detection").get_ops() if not n.op.structural)
