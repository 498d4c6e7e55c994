"""benchmark_app's single-dash spellings: the options this CLI does not take are named, with what to
use instead, before click can misread them (``-data_shape`` as ``-d ata_shape``); an unknown option is
named as typed."""

from __future__ import annotations

from pathlib import Path

import pytest

from hetero_sdk.cli.dash_options import NOT_TAKEN

from .helpers import Invoke, assert_one_line_error, parse_json

DOCUMENTED_NOT_TAKEN = [
    "-data_shape",
    "-layout",
    "-mean_values",
    "-scale_values",
    "-ip",
    "-op",
    "-iop",
    "-infer_precision",
    "-nthreads",
    "-pin",
    "-exec_graph_path",
    "-dump_config",
    "-json_stats",
    "-pcsort",
    "-pcseq",
    "-inference_only",
    "-latency_percentile",
    "-cache_dir",
    "-load_from_file",
]
"""The list in docs/cli.md, "Differences from benchmark_app"."""


def test_the_documented_list_is_the_list_answered() -> None:
    assert sorted(DOCUMENTED_NOT_TAKEN) == sorted(NOT_TAKEN)
    text = (Path(__file__).parents[2] / "docs" / "cli.md").read_text()
    row = next(line for line in text.splitlines() if line.startswith("| `-data_shape`"))
    assert all(f"`{name}`" in row for name in DOCUMENTED_NOT_TAKEN), row


@pytest.mark.parametrize("name", DOCUMENTED_NOT_TAKEN)
@pytest.mark.parametrize("form", ["separate", "equals"])
def test_a_benchmark_app_option_not_taken_is_named_with_what_to_use(invoke: Invoke, name: str, form: str) -> None:
    args = [name, "x"] if form == "separate" else [f"{name}=x"]
    result = invoke("benchmark", "-m", "mlp", "-d", "TEMPLATE", "-niter", "1", *args)
    assert_one_line_error(
        result, f"UsageError: {name} is a benchmark_app option that hetero-sdk benchmark does not take; ", exit_code=2
    )
    assert NOT_TAKEN[name] in result.stderr
    assert "malformed" not in result.stderr and "Invalid value" not in result.stderr


def test_advice_names_the_equivalent(invoke: Invoke) -> None:
    result = invoke("benchmark", "mlp", "-nthreads", "4")
    assert_one_line_error(result, "-nthreads", "INFERENCE_NUM_THREADS with -load_config", exit_code=2)
    result = invoke("benchmark", "mlp", "-data_shape", "[1,3]")
    assert_one_line_error(result, "-data_shape", "-shape", exit_code=2)


@pytest.mark.parametrize(
    ("args", "typed"),
    [
        (["-niter", "2", "-nitre", "3"], "-nitre"),
        (["-niter", "2", "-n", "3"], "-n"),
        (["-niter", "2", "-n3"], "-n3"),  # click reports -n; the first -n... typed is -niter, an option
        (["-api", "sync", "-apii", "sync"], "-apii"),
    ],
)
def test_the_unknown_option_named_is_the_one_typed(invoke: Invoke, args: list[str], typed: str) -> None:
    result = invoke("benchmark", "-m", "mlp", "-d", "TEMPLATE", *args)
    assert_one_line_error(result, f"no such option '{typed}'", exit_code=2)


def test_the_audit_case_names_nthreads_not_niter(invoke: Invoke) -> None:
    result = invoke("benchmark", "-m", "mlp", "-d", "TEMPLATE", "-niter", "2", "-nthreads", "x")
    assert_one_line_error(result, "-nthreads is a benchmark_app option", exit_code=2)
    assert "-niter" not in result.stderr


def test_the_unknown_option_gets_suggestions(invoke: Invoke) -> None:
    result = invoke("benchmark", "mlp", "-niter", "1", "-nitre", "3")
    assert_one_line_error(result, "no such option '-nitre'; did you mean -niter", exit_code=2)


@pytest.mark.parametrize("command", [["query", "mlp"], ["convert", "mlp"]])
def test_query_and_convert_check_single_dash_tokens_too(invoke: Invoke, command: list[str]) -> None:
    result = invoke(*command, "-data_shape", "x")
    assert_one_line_error(result, "no such option '-data_shape'", exit_code=2)
    assert "malformed" not in result.stderr


def test_a_short_option_with_its_value_glued_on_says_how_to_write_it(invoke: Invoke) -> None:
    result = invoke("query", "mlp", "-dTEMPLATE")
    assert_one_line_error(result, "no such option '-dTEMPLATE'; write -d TEMPLATE", exit_code=2)


def test_option_values_and_short_forms_are_not_checked(
    invoke: Invoke, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    data = parse_json(invoke("benchmark", "mlp", "-d", "TEMPLATE", "-t2", "-niter", "1", "--report", "-odd", "--json"))
    assert data["iterations"] == 1 and (tmp_path / "-odd").is_file()


@pytest.mark.parametrize("option", ["--rtol", "--atol"])
def test_tolerances_are_not_negative(invoke: Invoke, option: str) -> None:
    result = invoke("benchmark", "mlp", "-d", "TEMPLATE", "-niter", "1", option, "-1")
    assert_one_line_error(result, f"'{option}'", "-1.0 is not in the range x>=0", exit_code=2)
    data = parse_json(invoke("benchmark", "mlp", "-d", "TEMPLATE", "-niter", "1", option, "0", "--json"))
    assert data["check"]["status"] in ("PASS", "FAIL")
