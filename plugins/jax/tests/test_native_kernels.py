"""Native CPU kernels (hetero_sdk_jax.native): built with the system C++ compiler into a cache keyed by
what went into them, registered once, refused when not ours, and off when the environment says so."""

from __future__ import annotations

import ctypes
import os
import platform
import re
import stat
import threading
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hetero_sdk.errors import BlobFormatError

from hetero_sdk_jax import native
from hetero_sdk_jax.native import build
from hetero_sdk_jax.stablehlo_check import StableHloChecker

MATMUL = native.KERNELS["hetero_sdk_matmul_nbits"]


def _logging_compiler(tmp_path: Path) -> Path:
    """A CXX that appends each command line to ``cxx.log``, then runs the real compiler."""
    script = tmp_path / "cxx.sh"
    script.write_text(f'#!/bin/sh\necho "$@" >> {tmp_path / "cxx.log"}\nexec c++ "$@"\n')
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script


def test_build_is_cached_by_key_and_two_builders_at_once_both_get_a_whole_library(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("CXX", str(_logging_compiler(tmp_path)))
    results: list[Path] = []
    builders = [threading.Thread(target=lambda: results.append(build.build(MATMUL.path))) for _ in range(2)]
    for builder in builders:
        builder.start()
    for builder in builders:
        builder.join()
    assert len(results) == 2 and results[0] == results[1]
    library = results[0]
    assert library.parent.parent == tmp_path / "cache" / "hetero-sdk" / "native"
    assert library.parent.name.startswith("matmul_nbits-")
    assert sorted(p.name for p in library.parent.iterdir()) == ["matmul_nbits.so"]  # no temporary left
    assert hasattr(ctypes.CDLL(str(library)), MATMUL.symbol)
    compiles = (tmp_path / "cxx.log").read_text().count("-shared")
    assert 1 <= compiles <= 2
    for flag in ("-O3", "-march=native"):
        assert flag in (tmp_path / "cxx.log").read_text()
    assert build.build(MATMUL.path) == library  # cached: the compiler is asked its version only
    assert (tmp_path / "cxx.log").read_text().count("-shared") == compiles
    for header in MATMUL.path.parent.glob("*.h"):
        (tmp_path / header.name).write_bytes(header.read_bytes())
    changed = tmp_path / "matmul_nbits.cc"
    changed.write_text(MATMUL.path.read_text() + "\n// changed\n")
    assert build.build(changed).parent != library.parent  # another source, another key
    monkeypatch.setattr(build, "cpu_identity", lambda: "model name : another CPU\nflags : sse2")
    assert build.build(MATMUL.path).parent != library.parent  # -march=native code: another CPU, another key


def test_the_key_covers_the_headers_beside_a_source_and_flags_given_in_cxx(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    compiler = str(_logging_compiler(tmp_path))
    monkeypatch.setenv("CXX", compiler)
    sources = tmp_path / "src"
    sources.mkdir()
    for path in MATMUL.path.parent.iterdir():
        (sources / path.name).write_bytes(path.read_bytes())
    first = build.build(sources / MATMUL.source).parent
    header = sources / "parallel_for.h"
    header.write_text(header.read_text() + "\n// changed\n")
    second = build.build(sources / MATMUL.source).parent
    assert second != first  # a header the kernel includes changed: built again
    monkeypatch.setenv("CXX", f"{compiler} -DHETERO_SDK_TEST_FLAG")
    assert build.build(sources / MATMUL.source).parent not in (first, second)


def test_building_again_removes_the_kernels_builds_unused_for_thirty_days_and_keeps_the_rest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    root = tmp_path / "cache" / "hetero-sdk" / "native"
    month_ago = time.time() - (build.UNUSED_DAYS + 1) * 86400
    stale, recent, other_kernel, empty_stale = (
        root / "matmul_nbits-aaaaaaaaaaaaaaaaaaaaaaaa",
        root / "matmul_nbits-bbbbbbbbbbbbbbbbbbbbbbbb",
        root / "conv2d-cccccccccccccccccccccccc",
        root / "matmul_nbits-dddddddddddddddddddddddd",
    )
    for folder in (stale, recent, other_kernel):
        folder.mkdir(parents=True)
        (folder / f"{folder.name.split('-')[0]}.so").write_bytes(b"")
    empty_stale.mkdir()
    for path in (stale / "matmul_nbits.so", other_kernel / "conv2d.so", empty_stale):
        os.utime(path, (month_ago, month_ago))
    library = build.build(MATMUL.path)
    assert sorted(p.name for p in root.iterdir()) == sorted([library.parent.name, recent.name, other_kernel.name])
    os.utime(library, (month_ago, month_ago))
    assert build.build(MATMUL.path) == library  # a cache hit marks the library used
    assert library.stat().st_mtime > time.time() - 60


def test_cpu_identity_names_this_cpus_features() -> None:
    identity = build.cpu_identity()
    assert identity
    if Path("/proc/cpuinfo").is_file() and platform.machine() in ("x86_64", "AMD64"):
        assert "model name" in identity and "flags" in identity
        assert identity.count("flags") == 1  # one processor's record, not every core's


def test_no_compiler_is_a_build_error_naming_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setenv("CXX", "/nonexistent/c++")
    with pytest.raises(build.BuildError, match="no C\\+\\+ compiler: '/nonexistent/c\\+\\+'"):
        build.build(MATMUL.path)


def test_a_failing_compile_is_a_build_error_with_its_message_and_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    source = tmp_path / "broken.cc"
    source.write_text("int main( {\n")
    with pytest.raises(build.BuildError, match=r"failed on broken\.cc: .*error"):
        build.build(source)
    assert [p for p in (tmp_path / "cache").rglob("*") if p.is_file()] == []


def test_cache_root_follows_xdg_cache_home(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", "/somewhere")
    assert native.cache_root() == Path("/somewhere/hetero-sdk/native")
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert native.cache_root() == Path.home() / ".cache" / "hetero-sdk" / "native"


def test_only_our_kernels_are_registered() -> None:
    with pytest.raises(KeyError):
        native.register("some_library_symbol")


@pytest.mark.parametrize("value", ["0", "false", "OFF", "no"])
def test_the_environment_variable_turns_native_kernels_off(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv(native.ENV_VAR, value)
    assert not native.enabled_by_environment()
    assert not native.available(MATMUL.target)
    with native.native_scope("cpu", True):
        assert not native.use_native(MATMUL.target)


def test_use_native_needs_the_cpu_platform_and_the_device_setting() -> None:
    assert not native.use_native(MATMUL.target)  # no scope: a graph lowered by other code
    with native.native_scope("cuda", True):
        assert not native.use_native(MATMUL.target)
    with native.native_scope("cpu", False):
        assert not native.use_native(MATMUL.target)
    with native.native_scope("cpu", True):
        assert native.use_native(MATMUL.target) == native.available(MATMUL.target)


def _ffi_matmul(x: np.ndarray, packed: np.ndarray, scales: np.ndarray, zeros: np.ndarray, k: int) -> jax.Array:
    n, _, blob = packed.shape
    call = jax.ffi.ffi_call(MATMUL.target, jax.ShapeDtypeStruct((x.shape[0], n), jnp.float32))
    return call(x, packed, scales, zeros, bits=np.int64(4), block_size=np.int64(2 * blob), k=np.int64(k))


def test_registered_kernel_runs_inside_jitted_code_and_matches_numpy() -> None:
    if not native.available(MATMUL.target):
        pytest.skip("no C++ compiler with AVX-512 here")
    assert MATMUL.target in native.registered()
    rng = np.random.default_rng(0)
    n, k, block = 8, 70, 32  # K not a multiple of the block: the last block is partial
    blocks = -(-k // block)
    q = rng.integers(0, 16, (n, blocks * block))
    packed = (q[:, 0::2] | (q[:, 1::2] << 4)).astype(np.uint8).reshape(n, blocks, block // 2)
    scales = rng.uniform(0.1, 1, (n, blocks)).astype(np.float32)
    zeros = rng.integers(0, 16, (n, blocks)).astype(np.uint8)
    weight = ((q.reshape(n, blocks, block) - zeros[..., None]) * scales[..., None].astype(np.float64)).reshape(n, -1)
    for rows in (1, 5):
        x = rng.standard_normal((rows, k)).astype(np.float32)
        got = jax.jit(lambda x: _ffi_matmul(x, packed, scales, zeros, k))(x)
        np.testing.assert_allclose(np.asarray(got), x @ weight[:, :k].T, rtol=1e-5, atol=1e-5)


def _exported_calling(target: str) -> bytes:
    def f(x: jax.Array) -> jax.Array:
        return jax.ffi.ffi_call(target, jax.ShapeDtypeStruct(x.shape, x.dtype))(x)

    checks = [jax.export.DisabledSafetyCheck.custom_call(target)]
    exported = jax.export.export(jax.jit(f), platforms=["cpu"], disabled_checks=checks)(
        jax.ShapeDtypeStruct((2,), jnp.float32)
    )
    return exported.mlir_module_serialized


def test_stablehlo_check_accepts_our_kernels_and_refuses_any_other_custom_call() -> None:
    checker = StableHloChecker()
    try:
        assert checker.check(_exported_calling(MATMUL.target), "executable.0") == {MATMUL.target}
        with pytest.raises(BlobFormatError, match=r"executable.1.*\['libc_system'\].*not native kernels"):
            checker.check(_exported_calling("libc_system"), "executable.1")
    finally:
        checker.stop()


def test_native_kernel_sources_ship_with_the_package() -> None:
    for kernel in native.KERNELS.values():
        assert kernel.path.is_file(), kernel
    pyproject = (Path(__file__).resolve().parents[1] / "pyproject.toml").read_text()
    assert 'hetero_sdk_jax = ["native/src/*.cc", "native/src/*.h"]' in pyproject  # the headers they include
    for kernel in native.KERNELS.values():
        for included in re.findall(r'#include "([^/"]+)"', kernel.path.read_text()):
            assert (kernel.path.parent / included).is_file(), (kernel.source, included)
    assert os.path.basename(str(native.KERNELS[MATMUL.target].path)) == "matmul_nbits.cc"
