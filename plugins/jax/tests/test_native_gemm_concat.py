"""Channel concatenates read in place by the 1x1 convolutions they feed (``hetero_sdk_gemm_f32_fused_concat``,
:mod:`hetero_sdk_jax.lowering.kernels.concat_pointwise`) against numpy written here: the kernel over one to six
operands' column ranges (widths off the 16-lane vectors, rows and columns off the register tiles, every activation,
a NaN), and whole models: a Concat of convolutions' outputs, of a Split's pieces back in order (one operand), of a
model input, before a 1x1 convolution, with native kernels on and off, the rule off, a Concat another op reads too,
a Concat along another axis left alone, a blob round trip."""

from __future__ import annotations

import json
from typing import Any

import jax
import numpy as np
import pytest
from hetero_sdk import Model, opset
from hetero_sdk.plugin import unpack_blob
from hypothesis import given
from hypothesis import strategies as st
from xla_helpers import OPS, activated, core, param

from hetero_sdk_jax import native
from hetero_sdk_jax.lowering.kernels import concat_pointwise
from hetero_sdk_jax.lowering.kernels.concat_pointwise import CONCAT_TARGET, ColumnRange, native_fused_concat_matmul
from hetero_sdk_jax.lowering.kernels.gemm import ACTIVATIONS, FUSED_TARGET, packed_b

pytestmark = pytest.mark.skipif(not native.available(CONCAT_TARGET), reason="no C++ compiler with AVX-512 here")


def _concat_call(sources: list[np.ndarray], starts: list[int], widths: list[int], b: np.ndarray, bias: np.ndarray,
                 activation: str) -> np.ndarray:  # fmt: skip
    columns = b.shape[1]

    def run(packed: Any, c: Any, *arrays: Any) -> Any:
        operands = [ColumnRange(x, s, w) for x, s, w in zip(arrays, starts, widths)]
        return native_fused_concat_matmul(operands, packed, columns, c, activation)

    return np.asarray(jax.jit(run)(packed_b(b), bias, *sources))


def _assert_close(got: np.ndarray, a: np.ndarray, b: np.ndarray, bias: np.ndarray, activation: str) -> None:
    """``got`` is ``activation(a @ b + bias)`` to f32 rounding (a few ulps of the terms' magnitudes)."""
    biased = a.astype(np.float64) @ b.astype(np.float64) + bias
    size = np.abs(a).astype(np.float64) @ np.abs(b).astype(np.float64) + np.abs(bias)
    expected = activated(biased, activation)
    assert got.shape == expected.shape
    error = np.abs(got.astype(np.float64) - expected)
    assert np.all(error <= 2e-6 * size + 1e-6 * np.abs(expected) + 1e-30), f"error {error.max():.3g}"


@OPS
@given(
    widths=st.lists(st.integers(1, 70), min_size=1, max_size=6), rows=st.integers(1, 60), columns=st.integers(1, 150),
    activation=st.sampled_from(sorted(ACTIVATIONS)), seed=st.integers(0, 2**16),
)  # fmt: skip
def test_kernel_matches_numpy(widths: list[int], rows: int, columns: int, activation: str, seed: int) -> None:
    """Each operand a range of a wider array (columns before and after it left out); the product that of numpy's
    concatenation of the ranges."""
    rng = np.random.default_rng(seed)
    starts = [int(rng.integers(0, 5)) for _ in widths]
    sources = [rng.standard_normal((rows, s + w + int(rng.integers(0, 4)))).astype(np.float32)
               for s, w in zip(starts, widths)]  # fmt: skip
    depth = sum(widths)
    b = (rng.standard_normal((depth, columns)) / np.sqrt(depth)).astype(np.float32)
    bias = (3 * rng.standard_normal(columns)).astype(np.float32)
    a = np.concatenate([x[:, s : s + w] for x, s, w in zip(sources, starts, widths)], axis=1)
    _assert_close(_concat_call(sources, starts, widths, b, bias, activation), a, b, bias, activation)


@pytest.mark.parametrize(
    ("rows", "widths", "columns"), [(6400, [32, 16], 32), (1600, [64, 32, 32, 32], 64), (169, [384, 384], 384)]
)
def test_kernel_at_yolo_sizes_matches_numpy(rows: int, widths: list[int], columns: int) -> None:
    """YOLOv8n's C2f and YOLOX's deepest CSP layer: several blocks of rows, columns of ``B`` streamed from L2."""
    rng = np.random.default_rng(rows)
    sources = [rng.standard_normal((rows, w)).astype(np.float32) for w in widths]
    b = (rng.standard_normal((sum(widths), columns)) / 20).astype(np.float32)
    bias = rng.standard_normal(columns).astype(np.float32)
    got = _concat_call(sources, [0] * len(widths), widths, b, bias, "silu")
    _assert_close(got, np.concatenate(sources, axis=1), b, bias, "silu")


def test_a_nan_in_one_operand_reaches_its_row_only() -> None:
    rng = np.random.default_rng(3)
    sources = [rng.standard_normal((30, w)).astype(np.float32) for w in (20, 40)]
    sources[1][11, 7] = np.nan
    b = (rng.standard_normal((60, 50)) / 8).astype(np.float32)
    bias = rng.standard_normal(50).astype(np.float32)
    got = _concat_call(sources, [0, 0], [20, 40], b, bias, "silu")
    assert np.all(np.isnan(got[11]))
    keep = np.arange(30) != 11
    _assert_close(got[keep], np.concatenate(sources, axis=1)[keep], b, bias, "silu")


def test_a_range_outside_its_operand_is_refused() -> None:
    rng = np.random.default_rng(4)
    x = rng.standard_normal((5, 8)).astype(np.float32)
    b, bias = np.ones((8, 4), np.float32), np.zeros(4, np.float32)
    with pytest.raises(Exception, match="columns inside L"):
        _concat_call([x], [2], [8], b, bias, "none")


def _block(x: np.ndarray, parts: str, reader: bool = False, axis: int = 1) -> tuple[Model, dict[str, np.ndarray]]:
    """A model of ``x`` ``[1, 24, H, W]``: a 1x1 convolution with SiLU to 32 channels, then a Concat along ``axis``
    of the pieces ``parts`` names (``c``: that convolution's output; ``h``: the two halves of a Split of it, in
    order; ``r``: those halves the other way round; ``g``: a 3x3 convolution of its second half; ``x``: the
    input), then a 1x1 convolution with SiLU to 40 channels (or, along another axis, a Relu); with ``reader`` the
    Concat is an output too. Returns the model and its weights."""
    rng = np.random.default_rng(len(parts))
    weights = {
        "w1": (rng.standard_normal((32, 24, 1, 1)) / 5).astype(np.float32),
        "b1": rng.standard_normal(32).astype(np.float32),
        "w3": (rng.standard_normal((16, 16, 3, 3)) / 12).astype(np.float32),
        "b3": rng.standard_normal(16).astype(np.float32),
    }
    px = param(x)

    def silu_conv(v: Any, w: np.ndarray, b: np.ndarray, pad: int) -> Any:
        conv = opset.convolution(v, w, [1, 1], [pad, pad], [pad, pad], [1, 1])
        biased = opset.add(conv, opset.constant(b.reshape(1, -1, 1, 1)))
        return opset.multiply(biased, opset.sigmoid(biased))

    first = silu_conv(px, weights["w1"], weights["b1"], 0)
    halves = opset.split(first, opset.constant(np.array(1, np.int64)), 2)
    pieces = {"c": [first], "h": [halves.output(0), halves.output(1)], "r": [halves.output(1), halves.output(0)]}
    pieces["x"] = [px]
    pieces["g"] = [silu_conv(halves.output(1), weights["w3"], weights["b3"], 1)]
    joined = opset.concat([p for key in parts for p in pieces[key]], axis)
    channels = {"c": 32, "h": 32, "r": 32, "g": 16, "x": 24}
    depth = sum(channels[key] for key in parts) if axis == 1 else 32
    weights["w2"] = (rng.standard_normal((40, depth, 1, 1)) / np.sqrt(depth)).astype(np.float32)
    weights["b2"] = rng.standard_normal(40).astype(np.float32)
    out = silu_conv(joined, weights["w2"], weights["b2"], 0) if axis == 1 else opset.relu(joined)
    outputs = [out, joined] if reader else [out]
    return Model([o.output(0) for o in outputs], [px]), weights


def _expected(x: np.ndarray, parts: str, weights: dict[str, np.ndarray]) -> np.ndarray:
    """:func:`_block`'s output in numpy (along the channels)."""

    def silu_conv(v: np.ndarray, w: np.ndarray, b: np.ndarray, pad: int) -> np.ndarray:
        size = w.shape[2]
        padded = np.pad(v, [(0, 0), (0, 0), (pad, pad), (pad, pad)])
        h, wd = v.shape[2], v.shape[3]
        total = sum(
            np.einsum("nchw,oc->nohw", padded[:, :, i : i + h, j : j + wd], w[:, :, i, j].astype(np.float64))
            for i in range(size)
            for j in range(size)
        )
        return activated(total + b.reshape(1, -1, 1, 1), "silu")

    x64 = x.astype(np.float64)
    first = silu_conv(x64, weights["w1"], weights["b1"], 0)
    pieces = {"c": first, "h": first, "r": np.concatenate([first[:, 16:], first[:, :16]], axis=1), "x": x64}
    pieces["g"] = silu_conv(first[:, 16:], weights["w3"], weights["b3"], 1)
    joined = np.concatenate([pieces[key] for key in parts], axis=1)
    return silu_conv(joined, weights["w2"], weights["b2"], 0)


def _calls(program: str) -> list[str]:
    return [line for line in program.splitlines() if f'custom_call_target="{CONCAT_TARGET}"' in line]


def _compiled(model: Model, native_kernels: bool = True) -> Any:
    return core().compile_model(model, "XLA", {"XLA_NATIVE_KERNELS": native_kernels})


_X = np.random.default_rng(0).standard_normal((1, 24, 10, 13)).astype(np.float32)


@pytest.mark.parametrize(("parts", "operands"), [("cx", 2), ("hg", 2), ("hgx", 3), ("xhcg", 4), ("gh", 2), ("rg", 3)])
def test_a_concat_before_a_pointwise_layer_is_read_in_place_with_native_kernels_on_and_off(
    parts: str, operands: int
) -> None:
    """``h``'s two halves in order are one operand, ``r``'s (the other way round) two; no concatenate is left
    in the program."""
    weights = _block(_X, parts)[1]
    expected = _expected(_X, parts, weights)
    for on in (True, False):
        compiled = _compiled(_block(_X, parts)[0], on)
        np.testing.assert_allclose(compiled([_X])[0], expected, rtol=1e-5, atol=1e-5)
        program = compiled.jax_executable().as_text()
        calls = _calls(program)
        assert len(calls) == (1 if on else 0)
        if on:
            assert " concatenate(" not in program
            (call,) = calls
            arguments = call.split("custom-call(")[1].split(")")[0].split(", ")
            assert len(arguments) == 2 + operands


def test_the_rule_turned_off_writes_the_concatenate_out() -> None:
    model, weights = _block(_X, "hgx")
    concat_pointwise.set_enabled(False)
    try:
        compiled = _compiled(model)
        got = compiled([_X])[0]
        program = compiled.jax_executable().as_text()
    finally:
        concat_pointwise.set_enabled(True)
    np.testing.assert_allclose(got, _expected(_X, "hgx", weights), rtol=1e-5, atol=1e-5)
    assert not _calls(program) and FUSED_TARGET in program and " concatenate(" in program


def test_a_concat_another_op_reads_stays_for_it() -> None:
    model, weights = _block(_X, "cg", reader=True)
    compiled = _compiled(model)
    out, joined = compiled([_X]).values()
    np.testing.assert_allclose(out, _expected(_X, "cg", weights), rtol=1e-5, atol=1e-5)
    first = (np.einsum("nchw,oc->nohw", _X.astype(np.float64), weights["w1"][:, :, 0, 0]) + weights["b1"].reshape(
        1, -1, 1, 1))  # fmt: skip
    np.testing.assert_allclose(np.asarray(joined)[:, :32], activated(first, "silu"), rtol=1e-5, atol=1e-5)
    program = compiled.jax_executable().as_text()
    assert len(_calls(program)) == 1 and " concatenate(" in program


def test_a_concat_along_another_axis_is_left_alone() -> None:
    model, weights = _block(_X, "cc", axis=2)
    compiled = _compiled(model)
    first = np.einsum("nchw,oc->nohw", _X.astype(np.float64), weights["w1"][:, :, 0, 0])
    first = activated(first + weights["b1"].reshape(1, -1, 1, 1), "silu")
    np.testing.assert_allclose(
        compiled([_X])[0], np.maximum(np.concatenate([first, first], 2), 0), rtol=1e-5, atol=1e-5
    )
    assert not _calls(compiled.jax_executable().as_text())


def test_a_blob_with_the_concat_call_runs_the_same_imported() -> None:
    model, _ = _block(_X, "hgx")
    compiled = _compiled(model)
    got = np.asarray(compiled([_X])[0])
    blob = compiled.export_model()
    assert CONCAT_TARGET in json.loads(unpack_blob(blob, "XLA")["header"])["native_kernels"]
    np.testing.assert_array_equal(np.asarray(core().import_model(blob, "XLA")([_X])[0]), got)
