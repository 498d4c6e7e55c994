"""The node tests' expected-failures file: parsing, judging a run against it, and rewriting it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hetero_sdk.conformance.onnx_node import CaseResult, Expected, ExpectedFileError, judge, parse, updated
from hetero_sdk.conformance.onnx_node.expected import SHIPPED, read, shipped_file

FILE = """\
# a comment

test_b  unsupported  no rule for B
test_a  failed  values differ by one ulp   (known)
"""


def test_lines_are_case_status_and_the_rest_is_the_reason() -> None:
    entries = parse(FILE)
    assert entries == {
        "test_a": Expected("test_a", "failed", "values differ by one ulp   (known)"),
        "test_b": Expected("test_b", "unsupported", "no rule for B"),
    }


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("test_a  failed\n", "needs 'case_name  status  reason'"),
        ("test_a\n", "needs 'case_name  status  reason'"),
        ("test_a  passed  it works\n", "status 'passed' of test_a is not one of failed, unsupported, error"),
        ("test_a  failed  x\ntest_a  error  y\n", "test_a is listed twice"),
    ],
)
def test_a_malformed_line_names_the_file_and_line(text: str, fragment: str) -> None:
    with pytest.raises(ExpectedFileError, match=r"^mine\.txt:[12]: ") as caught:
        parse(text, "mine.txt")
    assert fragment in str(caught.value)


def test_a_run_is_judged_on_the_cases_it_ran_only() -> None:
    listed = parse(FILE + "test_c  error  crashes\ntest_d  failed  not run this time\n")
    results = {
        "test_a": CaseResult("passed"),  # listed, now passes
        "test_b": CaseResult("unsupported", "no rule"),  # listed, still unsupported
        "test_c": CaseResult("failed", "values differ"),  # listed as error, now failed
        "test_e": CaseResult("error", "boom"),  # not listed: a regression
        "test_f": CaseResult("passed"),
    }
    verdict = judge(results, listed)
    assert verdict.regressions == ["test_e"]
    assert verdict.unexpected_passes == ["test_a"]
    assert verdict.changed == {"test_c": ("error", "failed")}
    assert not verdict.ok()
    assert not judge({"test_a": CaseResult("passed")}, listed).ok(strict=True)
    assert judge({"test_a": CaseResult("passed")}, listed).ok()
    assert judge({"test_b": CaseResult("unsupported")}, listed).ok(strict=True)


def test_rewriting_keeps_reasons_fills_new_ones_and_sorts() -> None:
    listed = parse(FILE + "test_c  error  crashes\ntest_z  failed  not run this time\n")
    results = {
        "test_a": CaseResult("passed"),
        "test_b": CaseResult("unsupported", "UnsupportedOperationError: another text"),
        "test_c": CaseResult("failed", "output 0: values differ"),
        "test_0": CaseResult("error", "\nRuntimeError: first line\nsecond line"),
    }
    text = updated(results, listed, ["header one", "header two"])
    assert text == (
        "# header one\n"
        "# header two\n"
        "test_0  error  RuntimeError: first line\n"
        "test_b  unsupported  no rule for B\n"
        "test_c  failed  output 0: values differ\n"
        "test_z  failed  not run this time\n"
    )
    assert updated(results, parse(text), ["header one", "header two"]) == text  # a fixed point
    assert judge(results, parse(text)).ok(strict=True)


def test_an_empty_reason_is_filled_in() -> None:
    assert updated({"test_a": CaseResult("error", "")}, {}) == "test_a  error  no reason given\n"


def test_the_shipped_files_parse_and_name_only_templates_and_xlas() -> None:
    assert shipped_file("TEMPLATE") == SHIPPED / "TEMPLATE.txt"
    assert shipped_file("XLA") == SHIPPED / "XLA.txt"
    assert shipped_file("HETERO:XLA,TEMPLATE") is None
    assert shipped_file("../TEMPLATE") is None
    for path in (SHIPPED / "TEMPLATE.txt", SHIPPED / "XLA.txt"):
        entries = read(path)
        assert list(entries) == sorted(entries)


def test_read_names_the_path(tmp_path: Path) -> None:
    path = tmp_path / "dev.txt"
    path.write_text("test_a  maybe  why\n")
    with pytest.raises(ExpectedFileError, match=f"^{re.escape(str(path))}:1: "):
        read(path)
