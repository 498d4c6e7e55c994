"""The kit's pytest plugin, loaded into every pytest run through the ``pytest11`` entry point.

It only registers the kit's command-line options, then stays out of the way unless ``--device`` is
given: only then does it apply the expected-failures file, run the kit's checks in a forked worker
(see :mod:`hetero_sdk.conformance.isolation`), and write the summary and the JSON report.
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from hetero_sdk.conformance.options import Options, add_options

if TYPE_CHECKING:
    from collections.abc import Generator

    from hetero_sdk.conformance.xfails import XfailEntry

__all__ = ["KIT_DIR", "OPTIONS_KEY", "KitSession"]

KIT_DIR = Path(__file__).resolve().parent
"""The directory of the kit's check modules."""

OPTIONS_KEY = pytest.StashKey[Options]()
"""Where the parsed options live in ``config.stash`` (the fixtures read them)."""

_XFAIL_KEY = pytest.StashKey["XfailEntry"]()


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)


def pytest_configure(config: pytest.Config) -> None:
    if config.getoption("device", None) is None:
        return
    options = Options.from_config(config)
    _check_device(options)
    if options.repro_dir is None:
        stamp = time.strftime("%Y%m%d-%H%M%S")
        folder = Path(tempfile.gettempdir()) / f"hetero-sdk-repro-{stamp}-{os.getpid()}"  # created on first failure
        options = Options(**{**options.__dict__, "repro_dir": folder})
    config.stash[OPTIONS_KEY] = options
    if getattr(config.option, "tbstyle", None) == "auto":
        config.option.tbstyle = "short"  # the kit's messages say what failed; long tracebacks bury them
    config.pluginmanager.register(KitSession(config, options), "hetero_sdk_conformance_session")


def _check_device(options: Options) -> None:
    """Rejects a malformed or unknown device before anything runs (nothing is imported here)."""
    from hetero_sdk.device_name import parse_device_name
    from hetero_sdk.errors import suggest
    from hetero_sdk.plugin.discovery import discover

    try:
        parsed = parse_device_name(options.device)
    except ValueError as exc:
        raise pytest.UsageError(f"--device: {exc}") from None
    installed = sorted(discover())
    if options.plugin is None:
        for name in (parsed.name, *(parse_device_name(t).name for t in parsed.targets)):
            if name not in installed:
                close = suggest(name, installed)
                hint = f"; {close}" if close else ""
                raise pytest.UsageError(
                    f"--device: no device {name!r} is installed (installed: {', '.join(installed) or 'none'}){hint}; "
                    "install its plugin, or register one with --conformance-plugin MODULE:ATTR"
                )


def is_kit_item(item: pytest.Item) -> bool:
    """True for the kit's own checks."""
    return Path(str(item.path)).resolve().parent == KIT_DIR


class KitSession:
    """The active kit: expected failures, isolation, reporting."""

    def __init__(self, config: pytest.Config, options: Options) -> None:
        from hetero_sdk.conformance.report import Recorder

        self.config = config
        self.options = options
        self.recorder = Recorder(options.device, options.profile.name, options.report)
        config.pluginmanager.register(self.recorder, "hetero_sdk_conformance_report")
        self.runner: Any = None
        if options.isolate:
            from hetero_sdk.conformance.isolation import ForkedRunner

            self.runner = ForkedRunner(config, options.timeout_s, self._xfail_reason)

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        from hetero_sdk.conformance.report import GROUPS
        from hetero_sdk.conformance.xfails import check_id, parse_xfails

        entries: list[XfailEntry] = []
        if self.options.xfails is not None:
            try:
                entries = parse_xfails(self.options.xfails)
            except (OSError, ValueError) as exc:
                raise pytest.UsageError(f"--conformance-xfails: {exc}") from None
        for item in items:
            if not is_kit_item(item):
                continue
            check = check_id(item.nodeid)
            mandatory = item.get_closest_marker("mandatory") is not None
            self.recorder.add_check(item.nodeid, check, GROUPS.get(item.path.name, "other"), mandatory)
            entry = next((e for e in entries if e.matches(check, item.nodeid)), None)
            if entry is not None:
                entry.matched += 1
                item.stash[_XFAIL_KEY] = entry
                item.add_marker(pytest.mark.xfail(reason=entry.reason, strict=True))
        self.recorder.unmatched_xfails = [
            f"line {e.line} '{e.pattern}' matches no check" for e in entries if not e.matched
        ]

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem: pytest.Item | None) -> bool | None:
        if self.runner is None or not is_kit_item(item):
            return None
        ihook = item.ihook
        ihook.pytest_runtest_logstart(nodeid=item.nodeid, location=item.location)
        for report in self.runner.run(item, nextitem, is_kit_item):
            ihook.pytest_runtest_logreport(report=report)
        ihook.pytest_runtest_logfinish(nodeid=item.nodeid, location=item.location)
        return True

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, Any]:
        report = yield
        entry = item.stash.get(_XFAIL_KEY, None)
        if entry is not None and report.failed and "XPASS(strict)" in str(report.longrepr):
            source = self.options.xfails
            report.longrepr = (
                f"[XPASS(strict)] now passes: remove it from the file {source} "
                f"(line {entry.line}: '{entry.pattern}  # {entry.reason}')"
            )
        return report

    def pytest_sessionfinish(self) -> None:
        if self.runner is not None:
            self.runner.close()

    def _xfail_reason(self, item: pytest.Item) -> str | None:
        entry = item.stash.get(_XFAIL_KEY, None)
        return None if entry is None else entry.reason
