"""MatMulNBits through XLA's native CPU kernel (hetero_sdk_jax.native): against numpy written here over
bits, block sizes, K not a multiple of the block, zero-point forms, rows and bias; the packed weight kept
packed; XLA's own lowering where the kernel cannot be built (a fresh process without a compiler); and
exported blobs that name the kernel."""

from __future__ import annotations

import contextlib
import gc
import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hetero_sdk.errors import BlobFormatError
from hetero_sdk.plugin import pack_blob, unpack_blob
from hetero_sdk_jax import native
from hypothesis import given, settings
from hypothesis import strategies as st
from ms_models import core, ms_model, typed_model

from hetero_sdk_contrib import xla_matmul_nbits_native
from hetero_sdk_contrib.ops_matmul_nbits import PREPARED

TARGET = "hetero_sdk_matmul_nbits"
pytestmark = pytest.mark.skipif(not native.available(TARGET), reason="no C++ compiler with AVX-512 here")


def _packed_values(packed: np.ndarray, bits: int, count: int) -> np.ndarray:
    """The first ``count`` ``bits``-bit values of each row of ``packed``, lowest bits of each byte first."""
    rows = packed.reshape(packed.shape[0], -1)
    shifts = np.arange(0, 8, bits)
    values = (rows[:, :, None] >> shifts) & ((1 << bits) - 1)
    return values.reshape(rows.shape[0], -1)[:, :count].astype(np.float64)


def _case(
    rng: np.random.Generator, rows: int, k: int, n: int, bits: int, block: int, zero_points: bool, bias: bool
) -> tuple[Any, dict[str, np.ndarray], np.ndarray]:
    """A MatMulNBits of Constant weights, its feeds, and numpy's f64 result."""
    model, feeds, expected, _ = _case_with_size(rng, rows, k, n, bits, block, zero_points, bias)
    return model, feeds, expected


def _case_with_size(
    rng: np.random.Generator, rows: int, k: int, n: int, bits: int, block: int, zero_points: bool, bias: bool
) -> tuple[Any, dict[str, np.ndarray], np.ndarray, np.ndarray]:
    """:func:`_case`, and the size of the terms each result sums (``|A| @ |W|^T``): f32 sums are exact to
    a few ulps of that, not of the result."""
    blocks = -(-k // block)
    packed = rng.integers(0, 256, (n, blocks, block * bits // 8), dtype=np.uint8)
    scales = rng.uniform(0.05, 1.0, n * blocks).astype(np.float32)
    zeros = rng.integers(0, 256, (n, -(-blocks * bits // 8)), dtype=np.uint8) if zero_points else None
    b = rng.standard_normal(n).astype(np.float32) if bias else None
    a = rng.standard_normal((rows, k)).astype(np.float32)
    q = _packed_values(packed, bits, blocks * block).reshape(n, blocks, block)
    zp = np.full((n, blocks), 2.0 ** (bits - 1)) if zeros is None else _packed_values(zeros, bits, blocks)
    weight = ((q - zp[..., None]) * scales.reshape(n, blocks, 1).astype(np.float64)).reshape(n, -1)[:, :k]
    expected = a.astype(np.float64) @ weight.T + (0 if b is None else b)
    inputs: dict[str, np.ndarray | None] = {
        "A": a, "B": packed, "scales": scales, "zero_points": zeros, "g_idx": None, "bias": b,
    }  # fmt: skip
    constants = [name for name in ("B", "scales", "zero_points", "bias") if inputs[name] is not None]
    model, feeds = ms_model(
        "MatMulNBits", inputs, constants=constants, K=k, N=n, bits=bits, block_size=block, accuracy_level=0
    )
    size = np.abs(a.astype(np.float64)) @ np.abs(weight).T
    return typed_model(model, [expected.astype(np.float32)]), feeds, expected, size


def _assert_close(got: Any, expected: np.ndarray, size: np.ndarray) -> None:
    error = np.abs(np.asarray(got, np.float64) - expected)
    assert np.all(error <= 4e-6 * size + 1e-6), f"error {error.max():.3g} where the terms sum to {size.max():.3g}"


@contextlib.contextmanager
def _every_size() -> Iterator[None]:
    """The kernel used for weights of any size (these tests' weights are below MIN_WEIGHTS)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(xla_matmul_nbits_native, "MIN_WEIGHTS", 1)
        yield


def _calls_kernel(compiled: Any, rows: int, k: int) -> bool:
    return TARGET in compiled.jax_executable([[rows, k]]).as_text()


@settings(max_examples=40, deadline=None)
@given(
    rows=st.integers(1, 20), k=st.integers(1, 300), n=st.integers(1, 13), bits=st.sampled_from([2, 4, 8]),
    block=st.sampled_from([16, 32, 64, 128]), zero_points=st.booleans(), bias=st.booleans(), seed=st.integers(0, 2**16),
)  # fmt: skip
def test_native_matmul_nbits_matches_numpy(
    rows: int, k: int, n: int, bits: int, block: int, zero_points: bool, bias: bool, seed: int
) -> None:
    """The dequantized weight times the f32 activations, accumulated in f32; the kernel runs wherever a
    weight row is a whole number of 16-byte chunks, XLA's own lowering elsewhere."""
    rng = np.random.default_rng(seed)
    model, feeds, expected, size = _case_with_size(rng, rows, k, n, bits, block, zero_points, bias)
    with _every_size():
        compiled = core().compile_model(model, "XLA")
    _assert_close(compiled(feeds)[0], expected, size)
    blocks = -(-k // block)
    assert _calls_kernel(compiled, rows, k) == ((blocks * block * bits // 8) % 16 == 0)


@pytest.mark.parametrize(
    ("bits", "block", "k"),
    [(2, 16, 125), (2, 32, 121), (2, 64, 127), (4, 16, 91), (4, 32, 100), (4, 64, 130), (4, 128, 300), (8, 16, 50),
     (8, 32, 70)],
)  # fmt: skip
@pytest.mark.parametrize("rows", [1, 3, 6])
def test_native_kernel_runs_every_form_it_takes(bits: int, block: int, k: int, rows: int) -> None:
    """Each path of the kernel (several blocks in 16 bytes, one, two or more 16-byte chunks a block; few
    rows and many), with a partial last block: the kernel runs and matches numpy."""
    rng = np.random.default_rng(bits * block + k)
    model, feeds, expected, size = _case_with_size(rng, rows, k, 9, bits, block, True, False)
    with _every_size():
        compiled = core().compile_model(model, "XLA")
    assert _calls_kernel(compiled, rows, k)
    _assert_close(compiled(feeds)[0], expected, size)


@pytest.mark.parametrize("rows", [1, 9])
def test_native_kernel_splits_large_products_on_xla_threads(rows: int) -> None:
    """A million multiply-adds or more: the weight rows are split on XLA's intra-op thread pool (as many
    threads as CPUs this process may use); the result is the same as numpy's."""
    rng = np.random.default_rng(rows)
    model, feeds, expected, size = _case_with_size(rng, rows, 2048, 600, 4, 32, True, True)
    compiled = core().compile_model(model, "XLA")
    assert _calls_kernel(compiled, rows, 2048)
    for _ in range(3):
        _assert_close(compiled(feeds)[0], expected, size)


def test_native_kernel_reads_the_packed_bytes_and_keeps_no_f32_weight() -> None:
    rng = np.random.default_rng(3)
    k, n = 512, 256
    model, feeds, expected = _case(rng, 1, k, n, 4, 32, True, False)
    gc.collect()
    kept, computed = len(PREPARED), PREPARED.computed
    compiled: Any = core().compile_model(model, "XLA")
    np.testing.assert_allclose(np.asarray(compiled(feeds)[0]), expected, rtol=1e-5, atol=1e-4)
    assert (len(PREPARED), PREPARED.computed) == (kept, computed)  # no f32 weight made
    text = compiled.jax_executable([[1, k]]).as_text()
    assert f"u8[{n},{k // 32},16]" in text and f"f32[{n},{k}]" not in text
    off = core().compile_model(model, "XLA", {"XLA_NATIVE_KERNELS": False})
    assert not _calls_kernel(off, 1, k)
    np.testing.assert_allclose(np.asarray(off(feeds)[0]), expected, rtol=1e-5, atol=1e-4)


def test_weights_below_the_minimum_keep_the_f32_weight() -> None:
    """Small weights (N * K below MIN_WEIGHTS): the f32 product, which XLA fuses with its neighbours."""
    model, feeds, expected = _case(np.random.default_rng(6), 1, 128, 64, 4, 32, True, False)
    compiled = core().compile_model(model, "XLA")
    assert xla_matmul_nbits_native.MIN_WEIGHTS > 64 * 128 and not _calls_kernel(compiled, 1, 128)
    np.testing.assert_allclose(np.asarray(compiled(feeds)[0]), expected, rtol=1e-5, atol=1e-4)


def test_genai_llama_through_the_kernel_generates_onnx_runtimes_greedy_tokens() -> None:
    """The contrib tests' int4 Llama (onnxruntime-genai's builder) with every MatMulNBits on the kernel."""
    from test_genai_llama_pipeline import test_genai_llama_generates_onnx_runtimes_greedy_tokens

    from hetero_sdk_contrib import xla_matmul_nbits

    traced = []

    def counted(*args: Any) -> Any:
        traced.append(args[0].friendly_name)
        return xla_matmul_nbits_native.native_matmul(*args)

    with _every_size(), pytest.MonkeyPatch.context() as patch:
        patch.setattr(xla_matmul_nbits, "native_matmul", counted)
        test_genai_llama_generates_onnx_runtimes_greedy_tokens("XLA")
    assert len(set(traced)) >= 7  # the layers' projections and the LM head, each through the kernel


def test_environment_variable_turns_the_kernel_off(monkeypatch: pytest.MonkeyPatch) -> None:
    model, feeds, expected = _case(np.random.default_rng(4), 2, 256, 256, 4, 32, False, True)
    assert _calls_kernel(core().compile_model(model, "XLA"), 2, 256)
    monkeypatch.setenv(native.ENV_VAR, "0")
    compiled = core().compile_model(model, "XLA")
    assert not _calls_kernel(compiled, 2, 256)
    np.testing.assert_allclose(np.asarray(compiled(feeds)[0]), expected, rtol=1e-5, atol=1e-4)


def _exported(tmp_path: Path) -> tuple[bytes, dict[str, np.ndarray], np.ndarray]:
    model, feeds, expected = _case(np.random.default_rng(5), 3, 256, 256, 4, 32, True, True)
    compiled = core().compile_model(model, "XLA")
    compiled(feeds)
    return compiled.export_model(), feeds, expected


def _with_header(blob: bytes, **fields: Any) -> bytes:
    frames = unpack_blob(blob, "XLA")
    header = json.loads(frames["header"])
    header.update(fields)
    frames["header"] = json.dumps(header).encode()
    return pack_blob("XLA", frames)


def test_blob_records_the_kernel_and_imports_with_it(tmp_path: Path) -> None:
    blob, feeds, expected = _exported(tmp_path)
    header = json.loads(unpack_blob(blob, "XLA")["header"])
    assert header["native_kernels"] == [TARGET]
    imported = core().import_model(blob, "XLA")
    np.testing.assert_allclose(np.asarray(imported(feeds)[0]), expected, rtol=1e-5, atol=1e-4)
    unlisted = r"calls native kernel\(s\) \['hetero_sdk_matmul_nbits'\] that its header"
    with pytest.raises(BlobFormatError, match=unlisted):
        core().import_model(_with_header(blob, native_kernels=[]), "XLA")
    with pytest.raises(BlobFormatError, match=r"'native_kernels' is .*libc\.so\.6.*not a list of hetero-sdk-jax's"):
        core().import_model(_with_header(blob, native_kernels=["libc.so.6"]), "XLA")


_WITHOUT_COMPILER = textwrap.dedent(
    """
    import logging, sys
    import numpy as np
    logging.basicConfig(level=logging.WARNING, stream=sys.stdout)
    from hetero_sdk.errors import UnsupportedOperationError
    from ms_models import core
    import onnx
    model = onnx.load(sys.argv[1])
    feeds = dict(np.load(sys.argv[2]))
    compiled = core().compile_model(model, "XLA")
    for _ in range(2):
        got = np.asarray(compiled(feeds)[0])
    np.save(sys.argv[3], got)
    print("CALLS KERNEL", "hetero_sdk_matmul_nbits" in compiled.jax_executable([list(feeds["A"].shape)]).as_text())
    compiled = core().compile_model(model, "XLA")  # a second model: nothing logged again
    try:
        core().import_model(open(sys.argv[4], "rb").read(), "XLA")
    except UnsupportedOperationError as exc:
        print("IMPORT", exc)
    """
)


def test_without_a_compiler_xla_lowers_it_itself_and_a_blob_naming_the_kernel_says_how_to_fix_it(
    tmp_path: Path,
) -> None:
    """A fresh process with no C++ compiler and an empty kernel cache: the same results through XLA's
    own lowering, the reason logged once; importing a blob that calls the kernel is a typed error naming
    it and the fixes."""
    import onnx

    blob, feeds, expected = _exported(tmp_path)
    model, _, _ = _case(np.random.default_rng(5), 3, 256, 256, 4, 32, True, True)
    onnx.save(model, tmp_path / "model.onnx")
    np.savez(tmp_path / "feeds.npz", **feeds)  # type: ignore[arg-type]
    (tmp_path / "model.blob").write_bytes(blob)
    env = {**os.environ, "CXX": "/nonexistent/c++", "XDG_CACHE_HOME": str(tmp_path / "cache")}
    env["PYTHONPATH"] = os.pathsep.join([str(Path(__file__).parent), env.get("PYTHONPATH", "")])
    arguments = [str(tmp_path / name) for name in ("model.onnx", "feeds.npz", "got.npy", "model.blob")]
    done = subprocess.run(
        [sys.executable, "-c", _WITHOUT_COMPILER, *arguments], env=env, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-3000:]
    out = done.stdout
    np.testing.assert_allclose(np.load(tmp_path / "got.npy"), expected, rtol=1e-5, atol=1e-4)
    assert "CALLS KERNEL False" in out
    assert out.count("native kernel hetero_sdk_matmul_nbits unavailable") == 1
    assert "'/nonexistent/c++' is not on PATH" in out
    assert "IMPORT XLA blob calls native kernel 'hetero_sdk_matmul_nbits', which cannot be built here" in out
    assert "Install a C++ compiler" in out and "XLA_NATIVE_KERNELS=False" in out
