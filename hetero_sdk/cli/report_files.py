"""benchmark_app's ``-report_type`` / ``-report_folder`` files, in its layout, so scripts that read
OpenVINO's reports read ours: ``benchmark_report.csv`` (sections of ``key;value`` lines) and, for
``average_counters`` / ``detailed_counters``, ``benchmark_<type>_report.csv`` (one row per op with
``layerName;execStatus;layerType;execType;realTime (ms);cpuTime (ms)`` and a ``Total`` row)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from hetero_sdk.runtime import ProfilingInfo

__all__ = ["REPORT_TYPES", "write_counters_report", "write_statistics_report"]

REPORT_TYPES = ("no_counters", "average_counters", "detailed_counters")
"""benchmark_app's report types: the statistics only, or with the counters averaged over the
requests, or with each request's counters."""
_SEPARATOR = ";"
_COLUMNS = ("layerName", "execStatus", "layerType", "execType", "realTime (ms)", "cpuTime (ms)")

Section = Sequence[tuple[str, object]]
"""A block of ``key;value`` lines."""
Row = tuple[ProfilingInfo, float, float]
"""A counter row with its real and CPU times in seconds."""


def write_statistics_report(folder: Path, command_line: Section, configuration: Section, results: Section) -> Path:
    """Writes ``benchmark_report.csv``: the command line parameters, the configuration setup and the
    execution results, each a titled block of ``key;value`` lines.

    :returns: the file written.
    """
    blocks = (("Command line parameters", command_line), ("Configuration setup", configuration),
              ("Execution results", results))  # fmt: skip
    lines: list[str] = []
    for title, rows in blocks:
        lines += [title, *(f"{key}{_SEPARATOR}{value}" for key, value in rows), ""]
    path = folder / "benchmark_report.csv"
    path.write_text("\n".join(lines) + "\n")
    return path


def write_counters_report(
    folder: Path, report_type: str, per_request: Sequence[Sequence[ProfilingInfo]]
) -> Path | None:
    """Writes ``benchmark_<report_type>_report.csv``: one table per request (``detailed_counters``) or
    one of the rows averaged over the requests by op name (``average_counters``).

    :returns: the file written, or ``None`` for ``no_counters`` or when no request has counters.
    """
    if report_type == "no_counters" or not any(per_request):
        return None
    if report_type == "detailed_counters":
        tables = [
            [(row, row.real_time.total_seconds(), row.cpu_time.total_seconds()) for row in rows] for rows in per_request
        ]
    else:
        tables = [_averaged(per_request)]
    lines: list[str] = []
    for rows in tables:
        lines += _table(rows)
    path = folder / f"benchmark_{report_type}_report.csv"
    path.write_text("\n".join(lines) + "\n")
    return path


def _averaged(per_request: Sequence[Sequence[ProfilingInfo]]) -> list[Row]:
    """Rows in first-seen order, times averaged over the requests (as benchmark_app averages)."""
    first: dict[str, ProfilingInfo] = {}
    real: dict[str, float] = {}
    cpu: dict[str, float] = {}
    for rows in per_request:
        for row in rows:
            first.setdefault(row.node_name, row)
            real[row.node_name] = real.get(row.node_name, 0.0) + row.real_time.total_seconds()
            cpu[row.node_name] = cpu.get(row.node_name, 0.0) + row.cpu_time.total_seconds()
    count = len(per_request)
    return [(row, real[name] / count, cpu[name] / count) for name, row in first.items()]


def _table(rows: Iterable[Row]) -> list[str]:
    lines = [_SEPARATOR.join(_COLUMNS)]
    total_real = total_cpu = 0.0
    for row, real, cpu in rows:
        lines.append(
            _SEPARATOR.join([row.node_name, str(row.status), row.node_type, row.exec_type, _ms(real), _ms(cpu)])
        )
        total_real += real
        total_cpu += cpu
    lines += [_SEPARATOR.join(["Total", "", "", "", _ms(total_real), _ms(total_cpu)]), ""]
    return lines


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.3f}"
