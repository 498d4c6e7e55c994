"""The kit's command-line options, parsed once into :class:`Options`, and its hypothesis profiles."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field, replace
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pytest
    from hypothesis import settings as Settings

__all__ = ["PROFILES", "Options", "Profile", "add_options"]


@dataclass(frozen=True)
class Profile:
    """How hard hypothesis searches, and the time limit of one check.

    :ivar max_examples: examples per property-based check.
    :ivar deadline_s: hypothesis's deadline for one example, in seconds.
    :ivar derandomize: draw the same examples on every run (CI stays reproducible).
    :ivar timeout_s: the default time limit of one check, in seconds.
    """

    name: str
    max_examples: int
    deadline_s: float
    derandomize: bool
    timeout_s: float

    def settings(self, scale: float = 1.0, reseed: bool = False) -> Settings:
        """Hypothesis settings for one check (``scale`` multiplies the number of examples; ``reseed``
        lets a ``@seed`` decorator choose the examples, for a second round of other models)."""
        from hypothesis import HealthCheck, Phase, settings

        extra = {"database": None} if self.derandomize else {}
        return settings(
            max_examples=max(1, round(self.max_examples * scale)),
            deadline=timedelta(seconds=self.deadline_s),
            derandomize=self.derandomize and not reseed,
            suppress_health_check=list(HealthCheck),
            print_blob=not self.derandomize,
            phases=[p for p in Phase if p.name != "explain"],
            **extra,  # type: ignore[arg-type]
        )


PROFILES = {
    "ci": Profile("ci", max_examples=25, deadline_s=20.0, derandomize=True, timeout_s=120.0),
    "thorough": Profile("thorough", max_examples=100, deadline_s=60.0, derandomize=False, timeout_s=900.0),
}
"""The profiles ``--conformance-profile`` accepts."""


@dataclass(frozen=True)
class Options:
    """The parsed options of one kit run.

    :ivar device: the device string under test (``TEMPLATE``, ``XLA.1``, ``HETERO:TEMPLATE``).
    :ivar device_config: properties passed to every ``compile_model`` and ``query_model`` of the device.
    :ivar plugin: ``module:attr`` of an in-process plugin to register under the device's name, or None.
    :ivar xfails: the expected-failures file, or None.
    :ivar report: where to write the JSON report, or None.
    :ivar repro_dir: where failing checks save their reproductions.
    :ivar profile: the hypothesis profile.
    :ivar timeout_s: the time limit of one check.
    :ivar isolate: run checks in a forked worker process (crashes and hangs fail one check only).
    :ivar onnx_node_tests: also run ONNX's backend node tests, one check per case.
    :ivar onnx_node_expected: the node tests' expected-failures file (default: the one shipped for the
        device, if any).
    """

    device: str
    device_config: dict[str, Any] = field(default_factory=dict)
    plugin: str | None = None
    xfails: Path | None = None
    report: Path | None = None
    repro_dir: Path | None = None
    profile: Profile = PROFILES["ci"]
    timeout_s: float = PROFILES["ci"].timeout_s
    isolate: bool = True
    onnx_node_tests: bool = False
    onnx_node_expected: Path | None = None

    @classmethod
    def from_config(cls, config: pytest.Config) -> Options:
        """Reads the options; raises ``pytest.UsageError`` for malformed ones."""
        import pytest

        device = config.getoption("device")
        raw = config.getoption("device_config") or "{}"
        try:
            device_config = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise pytest.UsageError(
                f"--device-config is not JSON ({exc}); pass e.g. '{{\"PERF_COUNT\": true}}'"
            ) from None
        if not isinstance(device_config, dict):
            raise pytest.UsageError(f"--device-config must be a JSON object of properties, got {raw!r}")
        profile = PROFILES[config.getoption("conformance_profile")]
        examples = config.getoption("conformance_max_examples")
        if examples is not None:
            if examples < 1:
                raise pytest.UsageError(f"--conformance-max-examples must be >= 1, got {examples}")
            profile = replace(profile, max_examples=examples)
        timeout = config.getoption("conformance_timeout")
        xfails = config.getoption("conformance_xfails")
        report = config.getoption("conformance_report")
        repro = config.getoption("conformance_repro_dir")
        if repro is None and report is not None:
            repro = str(Path(report).with_suffix("")) + "-repro"
        isolation = config.getoption("conformance_isolation")
        node_expected = config.getoption("onnx_node_expected")
        return cls(
            device=str(device),
            device_config=device_config,
            plugin=config.getoption("conformance_plugin"),
            xfails=Path(xfails) if xfails else None,
            report=Path(report) if report else None,
            repro_dir=Path(repro) if repro else None,
            profile=profile,
            timeout_s=float(timeout) if timeout else profile.timeout_s,
            isolate=isolation == "fork" or (isolation == "auto" and hasattr(os, "fork")),
            onnx_node_tests=bool(config.getoption("onnx_node_tests")),
            onnx_node_expected=Path(node_expected) if node_expected else None,
        )


def add_options(parser: pytest.Parser) -> None:
    """Registers the kit's options (every pytest run sees them; they act only with ``--device``)."""
    group = parser.getgroup("hetero-sdk conformance", "hetero-sdk conformance kit (active with --device)")
    group.addoption("--device", default=None, help="the device to check: NAME, NAME.ID or HETERO:A,B")
    group.addoption(
        "--device-config", default=None, metavar="JSON", help="properties for every compile_model, as a JSON object"
    )
    group.addoption(
        "--conformance-plugin",
        default=None,
        metavar="MODULE:ATTR",
        help="register this in-process plugin object or factory under the device's name",
    )
    group.addoption(
        "--conformance-xfails",
        default=None,
        metavar="FILE",
        help="expected failures: one '<check id or glob>  # reason' per line",
    )
    group.addoption("--conformance-report", default=None, metavar="FILE", help="write the JSON report here")
    group.addoption(
        "--conformance-repro-dir",
        default=None,
        metavar="DIR",
        help="where failing checks save models and inputs (default: beside the report, else a temp dir)",
    )
    group.addoption(
        "--conformance-profile",
        default="ci",
        choices=sorted(PROFILES),
        help="hypothesis effort: ci (few examples, reproducible) or thorough",
    )
    group.addoption(
        "--conformance-max-examples",
        default=None,
        type=int,
        metavar="N",
        help="hypothesis examples per property-based check (overrides the profile's)",
    )
    group.addoption(
        "--conformance-timeout",
        default=None,
        type=float,
        metavar="SECONDS",
        help="time limit of one check (default: 120 with ci, 900 with thorough)",
    )
    group.addoption(
        "--conformance-isolation",
        default="auto",
        choices=("auto", "fork", "none"),
        help="run checks in a forked worker so that a crash or hang fails one check (auto: where fork exists)",
    )
    group.addoption(
        "--onnx-node-tests",
        action="store_true",
        default=False,
        help="also run ONNX's backend node tests on the device, one check per case (test_onnx_node.py)",
    )
    group.addoption(
        "--onnx-node-expected",
        default=None,
        metavar="FILE",
        help="the node tests' expected failures: one 'case_name  status  reason' per line "
        "(default: the file shipped for TEMPLATE and XLA)",
    )
