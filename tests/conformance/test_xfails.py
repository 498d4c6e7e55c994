"""The expected-failures file: its format, how ids and globs match, and what a run reports for
declared failures, stale entries and entries that match nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from hetero_sdk.conformance.xfails import check_id, parse_xfails

from .kit import KitRuns

OP = "test_ops.py::test_claimed_op_matches_template"


def test_lines_need_a_pattern_and_a_reason(tmp_path: Path) -> None:
    path = tmp_path / "xfails.txt"
    path.write_text("# a comment\n\ntest_a.py::test_x  # why\n  test_b.py::*[Relu]   #   spaced reason  \n")
    entries = parse_xfails(path)
    assert [(e.pattern, e.reason, e.line) for e in entries] == [
        ("test_a.py::test_x", "why", 3),
        ("test_b.py::*[Relu]", "spaced reason", 4),
    ]
    path.write_text("test_a.py::test_x\n")
    with pytest.raises(ValueError, match=r"xfails.txt:1: .*needs a check id and a reason"):
        parse_xfails(path)
    path.write_text("test_a.py::test_x  #   \n")
    with pytest.raises(ValueError, match=r":1: "):
        parse_xfails(path)


def test_brackets_are_literal_and_stars_are_wildcards(tmp_path: Path) -> None:
    path = tmp_path / "xfails.txt"
    path.write_text(f"{OP}[Relu]  # a\n*[Sig?oid]  # b\ntest_ops.py::*  # c\n")
    exact, glob, family = parse_xfails(path)
    assert exact.matches(f"{OP}[Relu]", "x")
    assert not exact.matches(f"{OP}[R]", "x") and not exact.matches(f"{OP}[Relu]x", "x")
    assert glob.matches(f"{OP}[Sigmoid]", "x") and not glob.matches(f"{OP}[Tanh]", "x")
    assert family.matches(f"{OP}[Tanh]", "x") and not family.matches("test_hetero.py::test_y", "x")
    assert exact.matches("other", f"{OP}[Relu]"), "a full node id matches too"


def test_check_ids_drop_the_directories() -> None:
    assert check_id("hetero_sdk/conformance/test_ops.py::test_x[Relu]") == "test_ops.py::test_x[Relu]"
    assert check_id("../site-packages/hetero_sdk/conformance/test_ops.py::test_x") == "test_ops.py::test_x"
    assert check_id("test_ops.py::test_x") == "test_ops.py::test_x"


def test_declared_failures_stale_entries_and_unmatched_lines(kit_runs: KitRuns) -> None:
    run = kit_runs["declared"]
    relu, abs_ = run.checks[f"{OP}[Relu]"], run.checks[f"{OP}[Abs]"]
    assert relu["outcome"] == "xfailed" and relu["message"] == "Relu is off by 1% on purpose"
    assert abs_["outcome"] == "xpassed"
    assert "now passes: remove it from the file" in abs_["message"] and "WRONG_RELU.txt" in abs_["message"]
    assert run.report["unmatched_xfails"] == ["line 4 'test_ops.py::test_no_such_check_*' matches no check"]
    assert run.returncode == 1, "a stale expected failure fails the run"
    assert "matches no check" in run.output


def test_a_declared_crash_is_an_expected_failure(kit_runs: KitRuns) -> None:
    run = kit_runs["declared_crash"]
    check = run.checks[f"{OP}[Sigmoid]"]
    assert check["outcome"] == "xfailed" and check["message"] == "Sigmoid ends the interpreter on purpose"
    assert run.returncode == 0, run.output[-3000:]
