"""One Ray instance for the whole session (starting Ray takes seconds), and a Core with RAY on it.

The Core registers its plugins in process (``autoload=False``), so the tests do not depend on what is
installed beside hetero-sdk-ray; the actors, as on any host, run the devices installed there. Each
actor runs TEMPLATE, so the values are those of the reference kernels. Without Ray installed every
test here is skipped (each module starts with ``pytest.importorskip("ray")``), so this file imports
Ray only inside its fixtures.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import hetero_sdk as hs
import pytest
from ray_helpers import RAY_CONFIG


@pytest.fixture(scope="session")
def ray_session() -> Iterator[str]:
    """The Ray instance shared by every test, joined as the RAY device joins one (RAY_ADDRESS, else a
    cluster running on this machine, else a local instance of its own); yields its address (for
    subprocesses to join)."""
    ray = pytest.importorskip("ray")
    from hetero_sdk_ray.link import connect

    connect(os.environ.get("RAY_ADDRESS", ""), local_num_cpus=2)
    try:
        yield ray.get_runtime_context().gcs_address
    finally:
        ray.shutdown()


@pytest.fixture(scope="session")
def core(ray_session: str) -> hs.Core:
    """A Core with RAY (two ids, actors running TEMPLATE), TEMPLATE (two ids) and HETERO."""
    from hetero_sdk.hetero.plugin import HeteroPlugin
    from template_plugin import TemplatePlugin

    from hetero_sdk_ray import RayPlugin

    ray_plugin = RayPlugin()
    ray_plugin.config.set({**RAY_CONFIG, "RAY_NUM_ACTORS": 2})
    return hs.Core(
        plugins={"RAY": ray_plugin, "TEMPLATE": TemplatePlugin(num_devices=2), "HETERO": HeteroPlugin()},
        autoload=False,
    )
