"""Long fuzz runs: ``python -m hetero_sdk.conformance.fuzz --target onnx|ir|native|blob [options]
[-- libFuzzer options]``.

Two engines over the same strategies:

- ``--engine atheris`` (default): coverage-guided, in this process; libFuzzer's options follow ``--``
  (``-max_total_time=600 -timeout=10``: a case running longer is a hang; the first finding stops the run
  unless ``-fork=1 -ignore_crashes=1``). Needs ``pip install "hetero-sdk[fuzz]"`` (atheris).
- ``--engine hypothesis``: ``--examples N`` cases in a worker process with a watchdog per case (hangs and
  crashes are counted, not suffered), for ``--minutes M`` at most; prints the counts of outcomes.

Findings are saved under ``--findings`` (one folder each: the model or blob, its files, outcome.json).
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import sys
import time
import types
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hetero_sdk.conformance.fuzz.evaluation import evaluate
from hetero_sdk.conformance.fuzz.findings import Tally, save_finding
from hetero_sdk.conformance.fuzz.ir import ir_cases, ir_seeds
from hetero_sdk.conformance.fuzz.outcome import Case
from hetero_sdk.conformance.fuzz.runner import CaseRunner
from hetero_sdk.conformance.fuzz.seeds import CI_NODE_TESTS, blob_seeds, built_seeds, native_seeds, node_test_seeds
from hetero_sdk.conformance.fuzz.strategies import blob_cases, native_cases, onnx_cases

_CHUNK = 200
_INSTALL = (
    'atheris is not installed: pip install "hetero-sdk[fuzz]" (or pip install atheris), or use --engine hypothesis'
)


def strategy_for(target: str, seeds: str) -> st.SearchStrategy[Case]:
    """The cases of ``target`` (``onnx``, ``ir``, ``native``, ``blob``); ``seeds``: ``ci`` or ``all`` node tests."""
    if target == "onnx":
        return onnx_cases(node_test_seeds(CI_NODE_TESTS if seeds == "ci" else None) + built_seeds())
    if target == "native":
        return native_cases(native_seeds())
    if target == "ir":
        return ir_cases(ir_seeds())
    return blob_cases(blob_seeds())


def _hypothesis(strategy: st.SearchStrategy[Case], args: argparse.Namespace) -> int:
    tally = Tally()
    stop_at = time.monotonic() + args.minutes * 60
    with CaseRunner(args.time_limit) as runner:

        @settings(max_examples=_CHUNK, deadline=None, database=None, suppress_health_check=list(HealthCheck))
        @given(strategy)
        def run(case: Case) -> None:
            if time.monotonic() > stop_at or tally.cases >= args.examples:
                return
            outcome = runner.run(case)
            tally.add(outcome)
            if outcome.is_finding:
                where = save_finding(case, outcome, args.findings)
                print(f"{outcome.kind}: {outcome.detail.splitlines()[0][:160]} [{case.label}] -> {where}", flush=True)
            if tally.cases % 500 == 0:
                print(tally.report(), flush=True)

        while time.monotonic() < stop_at and tally.cases < args.examples:
            run()  # chunks of fresh random cases, so that the time limit ends the run promptly
    print(tally.report())
    return 1 if tally.findings else 0


def _atheris(strategy: st.SearchStrategy[Case], args: argparse.Namespace, rest: list[str]) -> int:
    try:
        import atheris  # optional: the fuzz extra
    except ImportError:
        print(_INSTALL, file=sys.stderr)
        return 2

    @settings(deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(strategy)
    def check(case: Case) -> None:
        outcome = evaluate(case)
        if outcome.is_finding:
            where = save_finding(case, outcome, args.findings)
            raise AssertionError(f"{outcome.kind}: {outcome.detail} [{case.label}] -> {where}")

    _instrument(atheris, ("hetero_sdk", "template_plugin", "hetero_sdk_jax", "onnx"))
    fuzz: Any = check.hypothesis.fuzz_one_input  # type: ignore[attr-defined]
    atheris.Setup([sys.argv[0], *rest], fuzz)
    atheris.Fuzz()
    return 0


def _instrument(atheris: Any, packages: tuple[str, ...]) -> None:
    """Adds atheris's coverage instrumentation to the functions of ``packages`` already imported
    (``atheris.instrument_all`` would take minutes over every library loaded)."""
    prefixes = tuple(p + "." for p in packages)
    for obj in gc.get_objects():
        module = getattr(obj, "__module__", None) or ""
        if isinstance(obj, types.FunctionType) and (module in packages or module.startswith(prefixes)):
            with contextlib.suppress(Exception):  # a function atheris cannot patch stays as it is
                atheris.instrument_func(obj)


def main(argv: list[str] | None = None) -> int:
    """Parses the options and runs the chosen engine; returns the exit status (1 when something was found)."""
    argv = sys.argv[1:] if argv is None else argv
    ours, rest = (argv[: argv.index("--")], argv[argv.index("--") + 1 :]) if "--" in argv else (argv, [])
    parser = argparse.ArgumentParser(prog="python -m hetero_sdk.conformance.fuzz", description=__doc__.splitlines()[0])
    parser.add_argument("--target", choices=["onnx", "ir", "native", "blob"], default="onnx")
    parser.add_argument("--engine", choices=["atheris", "hypothesis"], default="atheris")
    parser.add_argument("--seeds", choices=["ci", "all"], default="all", help="ONNX seeds: the CI node tests or all")
    parser.add_argument("--examples", type=int, default=10_000, help="hypothesis: how many cases")
    parser.add_argument("--minutes", type=float, default=15.0, help="hypothesis: stop after this long")
    parser.add_argument("--time-limit", type=float, default=10.0, help="hypothesis: seconds per case")
    parser.add_argument("--findings", default="fuzz_findings", help="the folder findings are saved in")
    args = parser.parse_args(ours)
    strategy = strategy_for(args.target, args.seeds)
    return _hypothesis(strategy, args) if args.engine == "hypothesis" else _atheris(strategy, args, rest)


if __name__ == "__main__":
    sys.exit(main())
