"""TEMPLATE's report of the BLAS under its matrix products (``TEMPLATE_BLAS``) against threadpoolctl's
own, in a fresh process whose environment does or does not choose OpenBLAS's kernels."""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys

import pytest

READ = """
import json, hetero_sdk as hs
from threadpoolctl import threadpool_info
print(json.dumps([hs.Core().get_property("TEMPLATE", "TEMPLATE_BLAS"),
                  [p for p in threadpool_info() if p["user_api"] == "blas"]]))
"""


def _report(coretype: str | None) -> tuple[str, list[dict]]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENBLAS_")}
    if coretype is not None:
        env["OPENBLAS_CORETYPE"] = coretype
    done = subprocess.run([sys.executable, "-c", READ], env=env, capture_output=True, text=True, check=True)
    report, pools = json.loads(done.stdout)
    return report, pools


@pytest.mark.parametrize("coretype", [None, "Haswell"], ids=["detected", "chosen-by-the-environment"])
def test_the_property_names_each_blas_its_version_kernels_and_who_chose_them(coretype: str | None) -> None:
    if coretype is not None and platform.machine().lower() not in ("x86_64", "amd64"):
        pytest.skip("OpenBLAS's Haswell kernels run on x86-64 only")
    report, pools = _report(coretype)
    assert pools, "numpy loads a BLAS"
    for pool in pools:
        assert f"{pool['internal_api']} {pool['version']}" in report
        if pool.get("architecture"):
            assert f"{pool['architecture']} kernels" in report
    openblas = [p for p in pools if p["internal_api"] == "openblas"]
    if coretype is None or not openblas:
        assert "OPENBLAS_CORETYPE" not in report
    else:
        assert openblas[0]["architecture"].lower() == coretype.lower()
        assert f"Haswell kernels (OPENBLAS_CORETYPE={coretype})" in report
