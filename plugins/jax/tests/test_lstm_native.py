"""LSTMSequence's recurrence in the native kernel (``hetero_sdk_lstm_sequence``) gives an LSTM written in
numpy here, and the same values as the ``lax.scan`` lowering with native kernels off."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hetero_sdk import Model, opset
from hypothesis import given
from hypothesis import strategies as st
from xla_helpers import OPS, core, run_without_a_compiler

from hetero_sdk_jax import native
from hetero_sdk_jax.lowering.kernels.lstm import TARGET, TILE, packed_r

F32 = np.float32

pytestmark = pytest.mark.skipif(
    not native.available(TARGET), reason="the native LSTM kernel cannot be built here (no compiler or AVX-512F)"
)


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def numpy_lstm(
    x: np.ndarray, h0: np.ndarray, c0: np.ndarray, lengths: np.ndarray, w: np.ndarray, r: np.ndarray,
    b: np.ndarray, direction: str, clip: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:  # fmt: skip
    """OpenVINO's LSTMSequence (gates f, i, c, o) in float64, one step at a time."""
    batch, steps, _ = x.shape
    dirs, size = w.shape[0], h0.shape[2]
    y = np.zeros((batch, dirs, steps, size))
    ho, co = np.zeros((batch, dirs, size)), np.zeros((batch, dirs, size))
    for d in range(dirs):
        backwards = direction == "reverse" or (direction == "bidirectional" and d == 1)
        for n in range(batch):
            h, c = h0[n, d].astype(np.float64), c0[n, d].astype(np.float64)
            order = range(steps - 1, -1, -1) if backwards else range(steps)
            for t in order:
                if t >= lengths[n]:
                    continue
                gates = x[n, t] @ w[d].T.astype(np.float64) + h @ r[d].T.astype(np.float64) + b[d]
                if clip > 0:
                    gates = np.clip(gates, -clip, clip)
                f, i, g, o = np.split(gates, 4)
                c = _sigmoid(f) * c + _sigmoid(i) * np.tanh(g)
                h = _sigmoid(o) * np.tanh(c)
                y[n, d, t] = h
            ho[n, d], co[n, d] = h, c
    return y, ho, co


def _model(values: list[np.ndarray], direction: str = "forward", clip: float = 0.0) -> Model:
    """The LSTM with X and the states as inputs, lengths, W, R and B as Constants (R packed for the kernel)."""
    x, h0, c0, lengths, w, r, b = values
    xp, hp, cp = (opset.parameter(list(v.shape), v.dtype, name=n) for v, n in ((x, "x"), (h0, "h0"), (c0, "c0")))
    lstm = opset.lstm_sequence(
        xp, hp, cp, opset.constant(lengths), opset.constant(w), opset.constant(r), opset.constant(b),
        hidden_size=h0.shape[2], direction=direction, clip=clip,
    )  # fmt: skip
    return Model(lstm.outputs(), [xp, hp, cp], name="lstm")


def _run(values: list[np.ndarray], direction: str, clip: float, native_kernels: bool) -> list[np.ndarray]:
    compiled = core().compile_model(_model(values, direction, clip), "XLA", {"XLA_NATIVE_KERNELS": native_kernels})
    return list(compiled(values[:3]).to_tuple())


def _values(
    seed: int, batch: int, steps: int, inputs: int, size: int, dirs: int, lengths: list[int]
) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [
        rng.normal(size=(batch, steps, inputs)).astype(F32),
        rng.normal(size=(batch, dirs, size)).astype(F32),
        rng.normal(size=(batch, dirs, size)).astype(F32),
        np.array(lengths, np.int32),
        (rng.normal(size=(dirs, 4 * size, inputs)) / np.sqrt(inputs)).astype(F32),
        (rng.normal(size=(dirs, 4 * size, size)) / np.sqrt(size)).astype(F32),
        rng.normal(size=(dirs, 4 * size)).astype(F32),
    ]


def _check(values: list[np.ndarray], direction: str, clip: float) -> None:
    x, h0, c0, lengths, w, r, b = values
    expected = numpy_lstm(x, h0, c0, lengths, w, r, b, direction, clip)
    got = _run(values, direction, clip, native_kernels=True)
    scan = _run(values, direction, clip, native_kernels=False)
    for name, g, s, e in zip(("Y", "Ho", "Co"), got, scan, expected):
        assert g.dtype == np.float32 and g.shape == e.shape, name
        np.testing.assert_allclose(g, e, rtol=1e-4, atol=1e-5, err_msg=f"{name} against numpy")
        np.testing.assert_allclose(g, s, rtol=1e-4, atol=1e-5, err_msg=f"{name}: native against lax.scan")


def test_packed_r_puts_each_tile_of_r_transposed_in_one_block() -> None:
    r = np.arange(2 * 4 * 40 * 40, dtype=F32).reshape(2, 160, 40)
    packed = packed_r(r)
    assert packed.shape == (2, 2, 40, TILE) and not packed.flags.writeable
    assert packed[1, 1, 7, 3] == r[1, TILE + 3, 7]
    assert np.all(packed[:, 1, :, 160 - TILE :] == 0)  # past 4H


@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
def test_crnn_sized_layer_matches_numpy(direction: str) -> None:
    """H = 512 as ddddocr's CRNN (4H a whole number of tiles), batch 1, and a partial length."""
    dirs = 2 if direction == "bidirectional" else 1
    _check(_values(3, 2, 9, 24, 512, dirs, [9, 5]), direction, 0.0)


@OPS
@given(
    direction=st.sampled_from(["forward", "reverse", "bidirectional"]),
    batch=st.integers(1, 5),
    steps=st.integers(1, 7),
    inputs=st.integers(1, 20),
    size=st.integers(1, 70),
    clip=st.sampled_from([0.0, 0.5, 3.0]),
    data=st.data(),
)
def test_any_shape_direction_length_and_clip_matches_numpy(
    direction: str, batch: int, steps: int, inputs: int, size: int, clip: float, data: st.DataObject
) -> None:
    """Hidden sizes that are not a multiple of 16 or of a tile, batches beyond the kernel's 3 rows at once,
    lengths from 0 to the whole sequence (a step past one holds the state and writes zeros)."""
    lengths = data.draw(st.lists(st.integers(0, steps), min_size=batch, max_size=batch), label="lengths")
    seed = data.draw(st.integers(0, 2**16), label="seed")
    dirs = 2 if direction == "bidirectional" else 1
    _check(_values(seed, batch, steps, inputs, size, dirs, lengths), direction, clip)


def test_the_native_model_calls_the_kernel_and_the_other_does_not() -> None:
    values = _values(0, 1, 3, 4, 8, 1, [3])
    for flag in (True, False):
        compiled: Any = core().compile_model(_model(values), "XLA", {"XLA_NATIVE_KERNELS": flag})
        compiled(values[:3])
        assert (TARGET in compiled.jax_executable().as_text()) is flag


_WITHOUT_COMPILER = """
import logging, sys
import numpy as np
from hetero_sdk import Model, opset
from xla_helpers import core
logging.basicConfig(stream=sys.stdout, level=logging.WARNING, format="%(message)s")
values = list(np.load(sys.argv[1]).values())
x, h0, c0, lengths, w, r, b = values
xp, hp, cp = (opset.parameter(list(v.shape), v.dtype, name=n) for v, n in ((x, "x"), (h0, "h0"), (c0, "c0")))
lstm = opset.lstm_sequence(xp, hp, cp, *(opset.constant(v) for v in (lengths, w, r, b)), hidden_size=h0.shape[2],
                           direction="bidirectional")
compiled = core().compile_model(Model(lstm.outputs(), [xp, hp, cp]), "XLA")
np.savez(sys.argv[2], *compiled(values[:3]).to_tuple())
print("CALLS KERNEL", "hetero_sdk_lstm_sequence" in compiled.jax_executable().as_text())
"""


def test_without_a_compiler_the_scan_lowering_runs_and_says_why(tmp_path: Path) -> None:
    values = _values(4, 2, 4, 3, 20, 2, [4, 2])
    np.savez(tmp_path / "values.npz", *values)
    stdout = run_without_a_compiler(tmp_path, _WITHOUT_COMPILER, [tmp_path / "values.npz", tmp_path / "got.npz"])
    assert "CALLS KERNEL False" in stdout
    assert "native kernel hetero_sdk_lstm_sequence unavailable" in stdout
    x, h0, c0, lengths, w, r, b = values
    expected = numpy_lstm(x, h0, c0, lengths, w, r, b, "bidirectional", 0.0)
    got = np.load(tmp_path / "got.npz")
    for i, e in enumerate(expected):
        np.testing.assert_allclose(got[f"arr_{i}"], e, rtol=1e-4, atol=1e-5)
