"""TEMPLATE's report of the BLAS under its matrix products (``TEMPLATE_BLAS``) against threadpoolctl's
own, and its hint when numpy's OpenBLAS runs kernels that leave the CPU's AVX-512 unused."""

from __future__ import annotations

import logging

import numpy as np
import pytest
from threadpoolctl import threadpool_info

import hetero_sdk as hs
from hetero_sdk import opset
from template_plugin import blas

AVX512 = {"fpu", "avx2", "avx512f", "avx512cd", "avx512bw", "avx512dq", "avx512vl"}


def _openblas(architecture: str) -> dict[str, object]:
    return {"internal_api": "openblas", "version": "0.3.31", "architecture": architecture, "num_threads": 1}


@pytest.mark.parametrize("architecture", ["Haswell", "Zen", "Sandybridge"])
def test_openblas_without_avx512_kernels_on_an_avx512_cpu_gets_the_hint(architecture: str) -> None:
    hint = blas.coretype_hint([_openblas(architecture)], AVX512)
    assert hint is not None
    assert f"its {architecture} kernels" in hint and "OPENBLAS_CORETYPE=SkylakeX" in hint


@pytest.mark.parametrize(
    ("found", "flags"),
    [
        ([_openblas("SkylakeX")], AVX512),  # already the AVX-512 kernels
        ([_openblas("Cooperlake")], AVX512),
        ([_openblas("Haswell")], {"fpu", "avx2", "avx512f"}),  # AVX-512 without what SkylakeX needs
        ([_openblas("Haswell")], set()),  # flags unknown (not Linux)
        ([{"internal_api": "mkl", "version": "2024.0", "num_threads": 1}], AVX512),  # MKL picks its own
        ([], AVX512),
    ],
    ids=["skylakex", "cooperlake", "partial-avx512", "no-flags", "mkl", "no-blas"],
)
def test_no_hint_where_the_kernels_fit_the_cpu_or_nothing_can_be_said(found: list, flags: set[str]) -> None:
    assert blas.coretype_hint(found, flags) is None


def test_the_property_names_each_blas_threadpoolctl_finds() -> None:
    report = hs.Core().get_property("TEMPLATE", "TEMPLATE_BLAS")
    pools = [p for p in threadpool_info() if p["user_api"] == "blas"]
    assert pools, "numpy loads a BLAS"
    for pool in pools:
        assert f"{pool['internal_api']} {pool['version']}" in report
        if pool.get("architecture"):
            assert f"{pool['architecture']} kernels" in report


def test_compiling_warns_once_per_process_when_the_hint_applies(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(blas, "pools", lambda: [_openblas("Haswell")])
    monkeypatch.setattr(blas, "_cpu_flags", lambda: AVX512)
    blas._process_hint.cache_clear()
    blas._warn_once.cache_clear()
    x = opset.parameter([2, 3], name="x")
    model = hs.Model([opset.matmul(x, np.ones((3, 4), np.float32))], [x])
    try:
        with caplog.at_level(logging.WARNING, logger="template_plugin.blas"):
            for _ in range(3):
                hs.Core().compile_model(model, "TEMPLATE")
    finally:
        blas._process_hint.cache_clear()
        blas._warn_once.cache_clear()
    hints = [r.getMessage() for r in caplog.records if r.name == "template_plugin.blas"]
    assert len(hints) == 1 and "OPENBLAS_CORETYPE=SkylakeX" in hints[0]
