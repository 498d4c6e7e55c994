"""The conformance kit: the checks of conformance.md as a pytest + hypothesis suite that a device plugin
author runs against their device.

Run it with ``pytest --pyargs hetero_sdk.conformance --device DEVICE`` or from Python with :func:`run`
(what ``hetero-sdk conformance DEVICE`` calls). See ``README.md`` beside this file for the options,
the expected-failures file and the JSON report. With ``--onnx-node-tests`` the kit also runs ONNX's
backend node tests (:mod:`hetero_sdk.conformance.onnx_node`, also ``hetero-sdk onnx-tests DEVICE``).
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = ["PROFILES", "command_line", "run"]

PROFILES = ("ci", "thorough")
"""The hypothesis profiles: ``ci`` (few examples, reproducible, bounded time) and ``thorough``."""


def run(
    device: str,
    *,
    extra_args: Sequence[str] = (),
    xfail_file: str | os.PathLike[str] | None = None,
    report_json: str | os.PathLike[str] | None = None,
    profile: str = "ci",
    device_config: Mapping[str, Any] | None = None,
    env: Mapping[str, str] | None = None,
    onnx_node_tests: bool = False,
    onnx_node_expected: str | os.PathLike[str] | None = None,
) -> int:
    """Runs the kit against ``device`` in a fresh Python process and returns pytest's exit code.

    The output goes to this process's stdout and stderr. The run is a separate process so that the
    kit's forked worker never inherits threads the caller started.

    :param device: the device string: ``NAME``, ``NAME.ID`` or ``HETERO:A,B``.
    :param extra_args: more pytest arguments (``-x``, ``-k relu``, ``--conformance-timeout 60``...).
    :param xfail_file: the expected-failures file (``<check id or glob>  # reason`` per line).
    :param report_json: where to write the JSON report.
    :param profile: ``ci`` or ``thorough``.
    :param device_config: properties passed to every compile of the device.
    :param env: extra environment variables for the run.
    :param onnx_node_tests: also run ONNX's backend node tests on the device, one check per case.
    :param onnx_node_expected: their expected-failures file (``case_name  status  reason`` per line;
        default: the one shipped for the device, if any).
    :returns: 0 when every check passed or was an expected failure, 1 when some failed, other
        codes as pytest defines them (2 interrupted, 4 usage error).
    :raises ValueError: for an unknown profile.
    :raises ModuleNotFoundError: when pytest or hypothesis (the ``testing`` extra) is missing.
    """
    if profile not in PROFILES:
        raise ValueError(f"unknown conformance profile {profile!r}; choose one of {', '.join(PROFILES)}")
    for module in ("pytest", "hypothesis"):
        if importlib.util.find_spec(module) is None:
            raise ModuleNotFoundError(
                f"the conformance kit needs {module}: pip install 'hetero-sdk[testing]'", name=module
            )
    command = command_line(
        device, extra_args=extra_args, xfail_file=xfail_file, report_json=report_json, profile=profile,
        device_config=device_config, onnx_node_tests=onnx_node_tests, onnx_node_expected=onnx_node_expected,
    )  # fmt: skip
    return subprocess.call(command, env={**os.environ, **(env or {})})


def command_line(
    device: str,
    *,
    extra_args: Sequence[str] = (),
    xfail_file: str | os.PathLike[str] | None = None,
    report_json: str | os.PathLike[str] | None = None,
    profile: str = "ci",
    device_config: Mapping[str, Any] | None = None,
    onnx_node_tests: bool = False,
    onnx_node_expected: str | os.PathLike[str] | None = None,
) -> list[str]:
    """The command :func:`run` executes (``python -P -m pytest --pyargs hetero_sdk.conformance ...``).

    ``-P`` (isolated path): the working folder is not put on ``sys.path``, so that running the kit
    from a plugin's own source folder checks the installed device, not a folder of the same name.
    ``PYTHONPATH`` still applies (an uninstalled plugin is found through it).
    """
    import json

    command = [sys.executable, "-P", "-m", "pytest", "--pyargs", "hetero_sdk.conformance", "--device", device]
    command += ["--conformance-profile", profile, "-p", "no:cacheprovider"]
    if xfail_file is not None:
        command += ["--conformance-xfails", str(Path(xfail_file))]
    if report_json is not None:
        command += ["--conformance-report", str(Path(report_json))]
    if device_config:
        command += ["--device-config", json.dumps(dict(device_config))]
    if onnx_node_tests:
        command.append("--onnx-node-tests")
    if onnx_node_expected is not None:
        command += ["--onnx-node-expected", str(Path(onnx_node_expected))]
    return command + list(extra_args)
