"""The kit with ``--onnx-node-tests``: one check per ONNX node test case, judged against the
``--onnx-node-expected`` file; without the option no such check is collected."""

from __future__ import annotations

import json
from pathlib import Path

import hetero_sdk.conformance as kit

SELECT = [
    "-k",
    "test_onnx_node_case and (test_abs or test_image_decoder_decode_bmp_rgb or test_image_decoder_decode_png_rgb)",
]


def _outcomes(report: Path) -> dict[str, str]:
    return {c["id"]: c["outcome"] for c in json.loads(report.read_text())["checks"]}


def test_cases_pass_fail_and_xfail_as_the_expected_file_says(tmp_path: Path) -> None:
    expected = tmp_path / "expected.txt"
    expected.write_text(
        "test_abs  failed  listed, but it passes\n"  # a listed case that passes fails the check
        "test_image_decoder_decode_png_rgb  unsupported  no ImageDecoder rule\n"  # listed and not passing: xfailed
    )  # test_image_decoder_decode_bmp_rgb is not listed and does not pass: failed
    report = tmp_path / "report.json"
    status = kit.run(
        "TEMPLATE", extra_args=SELECT, report_json=report, onnx_node_tests=True, onnx_node_expected=expected
    )
    assert status == 1
    check = "test_onnx_node.py::test_onnx_node_case[{}]".format
    assert _outcomes(report) == {
        check("test_abs"): "failed",
        check("test_image_decoder_decode_bmp_rgb"): "failed",
        check("test_image_decoder_decode_png_rgb"): "xfailed",
    }
    checks = {c["id"]: c for c in json.loads(report.read_text())["checks"]}
    assert "now passes: remove it from the file" in checks[check("test_abs")]["message"]
    assert checks[check("test_image_decoder_decode_bmp_rgb")]["details"] == {
        "onnx_op": "ImageDecoder",
        "onnx_node_status": "unsupported",
    }
    assert checks[check("test_image_decoder_decode_bmp_rgb")]["group"] == "ONNX node tests"


def test_the_shipped_file_is_the_default_and_node_tests_are_opt_in(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    assert kit.run("TEMPLATE", extra_args=SELECT, report_json=report, onnx_node_tests=True) == 0
    outcomes = _outcomes(report)
    assert outcomes["test_onnx_node.py::test_onnx_node_case[test_abs]"] == "passed"
    assert outcomes["test_onnx_node.py::test_onnx_node_case[test_image_decoder_decode_bmp_rgb]"] == "xfailed"
    assert kit.run("TEMPLATE", extra_args=["-k", "test_onnx_node_case"], report_json=report) == 5  # none collected
