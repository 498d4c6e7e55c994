"""The main job on the installed XLA device: HETERO really splits the detection sample."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

import hetero_sdk as hs
from hetero_sdk.cli import cli

from .helpers import op_devices, parse_json

pytestmark = pytest.mark.skipif(
    "XLA" not in {d.split(".")[0] for d in hs.Core().available_devices}, reason="the XLA device is not installed"
)


@pytest.fixture(scope="module")
def installed() -> hs.Core:
    """The Core of this installation (XLA and TEMPLATE found through their entry points)."""
    return hs.Core()


def test_benchmark_without_arguments_runs_the_detection_sample_split_over_xla_and_template(
    installed: hs.Core,
) -> None:
    data = parse_json(CliRunner().invoke(cli, ["benchmark", "-niter", "3", "--json"], obj={"core": installed}))
    assert data["device"] == "HETERO:XLA,TEMPLATE"
    placement = op_devices(data["partition"])
    assert placement["nms"] == "TEMPLATE"
    assert {device for op, device in placement.items() if op != "nms"} == {"XLA"}
    assert data["partition"]["rejected_by"]["nms"] == ["XLA"]
    assert data["check"]["status"] == "PASS"
    assert data["iterations"] == 3
    assert data["executables_compiled"] == 1  # XLA's part is static: one executable for every run


def test_query_on_xla_alone_refuses_nms(installed: hs.Core) -> None:
    result = CliRunner().invoke(cli, ["query", "detection", "-d", "XLA"], obj={"core": installed})
    assert result.exit_code == 1
    assert "NonMaxSuppression" in result.stderr or "nms" in result.stderr
