"""Which Ray cluster the RAY device joins (spec/scale.md): a cluster started by ``ray start --head`` on
this machine when RAY_ADDRESS is empty, and its own local instance when the only record is that of a
cluster that has died; in both cases without forking a process whose JAX threads run.

Each case runs in a subprocess (a process joins one Ray cluster for its life), with Ray's temp folder
(``RAY_TMPDIR``) private to the test so that clusters of other programs on the machine play no part.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from ray_helpers import dense_expected, inputs

pytest.importorskip("ray")

_JOIN = """
import json, sys, warnings
warnings.simplefilter("always")
try:
    import jax.numpy as jnp
    jnp.ones(3).block_until_ready()  # JAX's threads run from here on
except ImportError:
    pass
import numpy as np, ray
import hetero_sdk as hs
from hetero_sdk_ray import RayPlugin
sys.path.insert(0, sys.argv[1])
from ray_helpers import dense, inputs
plugin = RayPlugin()
plugin.config.set({"TARGET_DEVICE": "TEMPLATE"})
compiled = hs.Core(plugins={"RAY": plugin}, autoload=False).compile_model(dense(), "RAY")
y = compiled({"x": inputs()})[compiled.outputs[0]]
print(json.dumps({"gcs": ray.get_runtime_context().gcs_address, "y": np.asarray(y).tolist()}))
"""


def _ray_env(temp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    env["RAY_TMPDIR"] = str(temp)  # Ray's record and session files go under temp/ray
    return env


def _record(temp: Path) -> Path:
    return temp / "ray" / "ray_current_cluster"


def _start_head(temp: Path) -> tuple[subprocess.Popen[bytes], str]:
    """``ray start --head --block`` in a process group of its own (stopped by signalling that group, never
    by ``ray stop``, which would stop every Ray cluster of this user); returns it and its address."""
    command = [
        "ray", "start", "--head", "--port=0", "--num-cpus=1", "--include-dashboard=false",
        "--disable-usage-stats", "--block",
    ]  # fmt: skip
    head = subprocess.Popen(
        command, env=_ray_env(temp), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    deadline = time.monotonic() + 90
    while not _record(temp).exists():
        if head.poll() is not None or time.monotonic() > deadline:
            _stop_head(head, signal.SIGKILL)
            pytest.fail("ray start --head did not start a cluster within 90 s")
        time.sleep(0.2)
    time.sleep(0.5)  # the record is written before the file is complete on slow machines
    return head, _record(temp).read_text().strip()


def _stop_head(head: subprocess.Popen[bytes], how: signal.Signals) -> None:
    try:
        os.killpg(head.pid, how)
        head.wait(30)
    except ProcessLookupError:
        pass
    except subprocess.TimeoutExpired:
        os.killpg(head.pid, signal.SIGKILL)
        head.wait()


@pytest.fixture
def ray_temp() -> Iterator[Path]:
    # short: Ray's unix socket paths under it must stay below 108 bytes
    temp = Path(tempfile.mkdtemp(prefix="hsr", dir="/tmp"))
    try:
        yield temp
    finally:
        shutil.rmtree(temp, ignore_errors=True)


@pytest.fixture
def running_cluster(ray_temp: Path) -> Iterator[str]:
    """A cluster started with ``ray start --head`` under ``ray_temp``; yields its address."""
    if shutil.which("ray") is None:
        pytest.skip("the ray command line is not installed")
    head, address = _start_head(ray_temp)
    try:
        yield address
    finally:
        _stop_head(head, signal.SIGTERM)


@pytest.fixture
def dead_cluster(ray_temp: Path) -> str:
    """The record and session files of a cluster started with ``ray start --head`` whose processes were
    then killed; returns the address it had."""
    if shutil.which("ray") is None:
        pytest.skip("the ray command line is not installed")
    head, address = _start_head(ray_temp)
    _stop_head(head, signal.SIGKILL)
    assert _record(ray_temp).exists()  # what Ray's own ray.init() would try to join
    return address


def _join(temp: Path) -> tuple[dict, str]:
    done = subprocess.run(
        [sys.executable, "-c", _JOIN, str(Path(__file__).parent)],
        env=_ray_env(temp), capture_output=True, text=True, timeout=240,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1]), done.stderr


def test_joins_the_cluster_started_by_ray_start_when_ray_address_is_empty(ray_temp: Path, running_cluster: str) -> None:
    answer, stderr = _join(ray_temp)
    assert answer["gcs"] == running_cluster
    np.testing.assert_allclose(np.asarray(answer["y"]), dense_expected(inputs()), rtol=1e-5, atol=1e-5)
    assert "os.fork() was called" not in stderr


def test_a_dead_clusters_record_is_ignored_and_a_local_instance_started_without_fork(
    ray_temp: Path, dead_cluster: str
) -> None:
    answer, stderr = _join(ray_temp)
    assert answer["gcs"] != dead_cluster
    np.testing.assert_allclose(np.asarray(answer["y"]), dense_expected(inputs()), rtol=1e-5, atol=1e-5)
    assert "os.fork() was called" not in stderr  # JAX's warning when a JAX-threaded process forks
