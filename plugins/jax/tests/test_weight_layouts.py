"""Weights stored on the device in the layout their consumer reads: a constant convolution filter is an
argument ``[..., I, O]`` (transformed once on the host), XLA copies no weight on a call, and every path
that touches weights (export/import, CACHE_DIR, several input shapes, a weight read in two layouts,
HETERO, weights read from a file) gives numpy's results."""

from __future__ import annotations

import gc
import mmap
import re
import weakref
from pathlib import Path

import hetero_sdk as hs
import jax
import numpy as np
import pytest
from hetero_sdk import Model, Type, opset
from hetero_sdk.errors import CompilationError
from hetero_sdk.hetero.plugin import HeteroPlugin
from hypothesis import given, settings
from hypothesis import strategies as st
from jax import lax
from template_plugin import TemplatePlugin
from xla_helpers import OPS, core, floats, param

from hetero_sdk_jax import XlaPlugin
from hetero_sdk_jax.lowering import weights_of
from hetero_sdk_jax.lowering.weight_layout import (
    Prepared,
    PreparedByIdentity,
    WeightLayout,
    aligned_read_only,
    release_pages,
)

_RNG = np.random.default_rng(31)
FILTER = _RNG.standard_normal((64, 32, 3, 3)).astype(np.float32)  # 72 KiB: a weight
GROUPED = _RNG.standard_normal((4, 16, 8, 3, 3)).astype(np.float32)  # 4 groups of 8 -> 16 channels, 18 KiB
KIO = (3, 3, 32, 64)  # FILTER as the convolution reads it


@pytest.fixture(autouse=True)
def _xla_convolutions(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests hold the layout XLA's own convolution reads (``[kh, kw, I, O]``); the native conv2d kernel,
    which takes this 3x3 filter of 32 input channels, reads it blocked (test_native_conv2d.py)."""
    monkeypatch.setenv("HETERO_SDK_NATIVE_KERNELS", "0")


def _conv_numpy(x: np.ndarray, w: np.ndarray, pad: int = 1, groups: int = 1) -> np.ndarray:
    """A stride-1 cross-correlation of ``x`` ``[N, C, H, W]`` with ``w`` ``[O, C / groups, kh, kw]``."""
    x = np.pad(x.astype(np.float64), [(0, 0), (0, 0), (pad, pad), (pad, pad)])
    out_h, out_w = x.shape[2] - w.shape[2] + 1, x.shape[3] - w.shape[3] + 1
    per_in, per_out = w.shape[1], w.shape[0] // groups
    total = np.zeros((x.shape[0], w.shape[0], out_h, out_w))
    for g in range(groups):
        part = x[:, g * per_in : (g + 1) * per_in]
        for i, j in np.ndindex(*w.shape[2:]):
            window = part[:, :, i : i + out_h, j : j + out_w]
            total[:, g * per_out : (g + 1) * per_out] += np.einsum(
                "nchw,oc->nohw", window, w[g * per_out : (g + 1) * per_out, :, i, j]
            )
    return total


def _conv_model(batch: int | None = 1) -> Model:
    x = opset.parameter([batch if batch is not None else -1, 32, 8, 8], np.float32, name="x")
    out = opset.convolution(x, FILTER, [1, 1], [1, 1], [1, 1], [1, 1], name="conv")
    return Model([out], [x], name="conv")


def _x(batch: int = 1) -> np.ndarray:
    return np.random.default_rng(batch).standard_normal((batch, 32, 8, 8)).astype(np.float32)


def weight_copies(hlo: str) -> list[str]:
    """The instructions of an optimised HLO module's entry computation that copy a parameter other than
    the first (the model's input) alone: a copy, a transpose, or a loop fusion of that one operand
    (how XLA moves a weight into the layout its convolution reads, on every call)."""
    entry = hlo[hlo.index("\nENTRY") :]
    parameters = {name for name, index in re.findall(r"(%[\w.\-]+) = \S+ parameter\((\d+)\)", entry) if int(index) > 0}
    found = []
    for line in entry.splitlines():
        match = re.match(r"\s*%[\w.\-]+ = \S+ (copy|transpose|fusion)\(([^)]*)\)(.*)", line)
        if match is None:
            continue
        operands = [o.strip().split(" ")[-1] for o in match.group(2).split(",")]
        loop = match.group(1) != "fusion" or "kind=kLoop" in match.group(3)
        if len(operands) == 1 and operands[0] in parameters and loop:
            found.append(line.strip())
    return found


def test_the_weight_copy_finder_finds_xla_moving_a_filter_on_each_call() -> None:
    """The check below can fail: a convolution given its filter ``[O, I, kh, kw]`` has XLA:CPU copy it."""
    x = jax.ShapeDtypeStruct((1, 8, 8, 32), np.float32)
    w = jax.ShapeDtypeStruct(FILTER.shape, np.float32)
    conv = jax.jit(
        lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "OIHW", "NHWC"))
    )
    assert weight_copies(conv.lower(x, w).compile().as_text())


def test_a_constant_filter_is_an_argument_in_the_layout_the_convolution_reads() -> None:
    compiled = core().compile_model(_conv_model(), "XLA")
    np.testing.assert_allclose(compiled(_x())[0], _conv_numpy(_x(), FILTER), rtol=1e-5, atol=1e-4)
    executable = compiled.jax_executable()
    (stored,) = executable.weights
    assert stored.shape == KIO
    np.testing.assert_array_equal(np.asarray(stored), FILTER.transpose(2, 3, 1, 0))
    assert weight_copies(executable.as_text()) == []


def test_at_bf16_precision_a_filter_is_stored_in_bf16() -> None:
    """Converted once on the host (numpy rounds to nearest even, as XLA's convert), not on every call."""
    compiled = core().compile_model(_conv_model(), "XLA", {"INFERENCE_PRECISION_HINT": "bf16"})
    expected = _conv_numpy(_x(), FILTER)
    got = compiled(_x())[0]
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, expected, rtol=0, atol=0.02 * float(np.abs(expected).max()))
    assert not np.allclose(got, expected, rtol=1e-4, atol=1e-3)  # bf16's rounding shows
    executable = compiled.jax_executable()
    (stored,) = executable.weights
    assert stored.shape == KIO and stored.dtype == Type.bf16.numpy
    np.testing.assert_array_equal(np.asarray(stored), FILTER.transpose(2, 3, 1, 0).astype(Type.bf16.numpy))
    # no rounding to bf16 on a call; XLA:CPU widens bf16 filters to f32 for its convolution, though
    assert all(copy.split(" = ")[1].startswith("f32[") for copy in weight_copies(executable.as_text()))


def test_a_stored_filter_is_the_transformed_host_array_itself_on_the_cpu() -> None:
    """One copy of the weight in memory: the aligned read-only host array becomes the device buffer."""
    compiled = core().compile_model(_conv_model(), "XLA")
    (stored,) = compiled.jax_executable().weights
    host = np.asarray(stored)
    assert not host.flags.writeable and host.ctypes.data % 64 == 0
    assert np.shares_memory(np.asarray(stored), host)


def test_a_weight_read_in_two_layouts_is_stored_once_in_each() -> None:
    """A filter that two convolutions read ``[..., I, O]`` and a Multiply by an input reads as it is."""
    x = opset.parameter([1, 32, 8, 8], np.float32, name="x")
    scale = opset.parameter([1], np.float32, name="scale")
    shared = opset.constant(FILTER)
    conv = opset.convolution(x, shared, [1, 1], [1, 1], [1, 1], [1, 1])
    again = opset.convolution(x, shared, [1, 1], [0, 0], [0, 0], [1, 1])  # the same layout: no third copy
    model = Model([conv, again, opset.multiply(shared, scale)], [x, scale], name="shared")
    assert sorted(w.shape for w in weights_of(model)) == sorted([FILTER.shape, KIO])
    compiled = core().compile_model(model, "XLA")
    got = compiled([_x(), np.array([2], np.float32)]).to_tuple()
    np.testing.assert_allclose(got[0], _conv_numpy(_x(), FILTER), rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(got[1], _conv_numpy(_x(), FILTER, pad=0), rtol=1e-5, atol=1e-4)
    np.testing.assert_array_equal(got[2], FILTER * 2)
    assert sorted(w.shape for w in compiled.jax_executable().weights) == sorted([FILTER.shape, KIO])


def test_grouped_filters_are_read_by_group_then_output() -> None:
    """GroupConvolution's ``[G, O/G, I/G, kh, kw]`` as ``[kh, kw, I/G, O]``, outputs group after group."""
    x = _RNG.standard_normal((1, 32, 6, 6)).astype(np.float32)
    big = np.concatenate([GROUPED] * 8, axis=1)  # [4, 128, 8, 3, 3]: 144 KiB, a weight
    px = opset.parameter(list(x.shape), np.float32, name="x")
    out = opset.group_convolution(px, big, [1, 1], [1, 1], [1, 1], [1, 1])
    compiled = core().compile_model(Model([out], [px], name="grouped"), "XLA")
    (stored,) = compiled.jax_executable().weights
    assert stored.shape == (3, 3, 8, 4 * 128)
    expected = _conv_numpy(x, big.reshape(4 * 128, 8, 3, 3), groups=4)
    np.testing.assert_allclose(compiled(x)[0], expected, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("batch", [1, None])
def test_an_exported_model_keeps_its_filters_in_the_layout_read(batch: int | None) -> None:
    """The blob bakes the stored (transformed) filter into its program; the import gives numpy's results."""
    compiled = core().compile_model(_conv_model(batch), "XLA")
    compiled(_x())
    blob = compiled.export_model()
    imported = core().import_model(blob, "XLA")
    np.testing.assert_allclose(imported(_x())[0], _conv_numpy(_x(), FILTER), rtol=1e-5, atol=1e-4)
    (exported,) = imported.exported_executables().values()
    assert "tensor<3x3x32x64xf32>" in exported.mlir_module()
    assert "tensor<64x32x3x3xf32>" not in exported.mlir_module()
    if batch is None:  # the graph travels too: a new batch compiles from it
        np.testing.assert_allclose(imported(_x(2))[0], _conv_numpy(_x(2), FILTER), rtol=1e-5, atol=1e-4)


def test_executables_for_several_input_shapes_share_the_stored_filter() -> None:
    compiled = core().compile_model(_conv_model(batch=None), "XLA")
    for batch in (1, 3, 2):
        np.testing.assert_allclose(compiled(_x(batch))[0], _conv_numpy(_x(batch), FILTER), rtol=1e-5, atol=1e-4)
    first, second = compiled.jax_executable([[1, 32, 8, 8]]), compiled.jax_executable([[3, 32, 8, 8]])
    assert first.weights[0] is second.weights[0] and first.weights[0].shape == KIO


def test_a_cached_executable_reads_the_stored_filter(tmp_path) -> None:  # type: ignore[no-untyped-def]
    config = {"CACHE_DIR": str(tmp_path)}
    first = core().compile_model(_conv_model(), "XLA", config)
    np.testing.assert_allclose(first(_x())[0], _conv_numpy(_x(), FILTER), rtol=1e-5, atol=1e-4)
    second = core().compile_model(_conv_model(), "XLA", config)
    assert second.get_property("LOADED_FROM_CACHE")
    np.testing.assert_allclose(second(_x())[0], _conv_numpy(_x(), FILTER), rtol=1e-5, atol=1e-4)


def test_filters_on_either_side_of_a_hetero_split_give_numpys_results() -> None:
    """Convolution -> NonZero (on TEMPLATE) -> a second convolution by the same filter: each XLA part
    stores the filter it reads."""
    x = opset.parameter([1, 32, 8, 8], np.float32, name="x")
    shared = opset.constant(FILTER)
    conv = opset.convolution(x, shared, [1, 1], [1, 1], [1, 1], [1, 1], name="conv")
    positive = opset.non_zero(opset.greater(conv, np.float32(0)), name="where")  # [4, count]
    factor = opset.reduce_sum(opset.convert(opset.shape_of(positive), np.float32), np.array([0], np.int64))
    part = opset.slice(opset.divide(conv, factor), [0], [32], [1], axes=[1])
    again = opset.convolution(part, shared, [1, 1], [1, 1], [1, 1], [1, 1], name="again")
    hetero = hs.Core(plugins={"XLA": XlaPlugin, "TEMPLATE": TemplatePlugin, "HETERO": HeteroPlugin}, autoload=False)
    compiled = hetero.compile_model(Model([again], [x], name="split"), "HETERO:XLA,TEMPLATE")
    first = _conv_numpy(_x(), FILTER)
    scaled = (first / (4 + np.count_nonzero(first.astype(np.float32) > 0)))[:, :32]
    np.testing.assert_allclose(compiled(_x())[0], _conv_numpy(scaled, FILTER), rtol=1e-4, atol=1e-4)


def test_filters_read_from_a_file_give_numpys_results(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A model read back from the native format (its weights memory-mapped, read-only)."""
    path = tmp_path / "conv.xml"
    hs.save_model(_conv_model(), path)
    model = hs.Core(autoload=False).read_model(path)
    values = [n.attrs["value"] for n in model.get_ops() if n.type_name == "Constant" and n.attrs["value"].size > 1000]
    assert values and not values[0].flags.writeable
    compiled = core().compile_model(model, "XLA")
    np.testing.assert_allclose(compiled(_x())[0], _conv_numpy(_x(), FILTER), rtol=1e-5, atol=1e-4)


@OPS
@given(data=st.data(), groups=st.integers(1, 3), depthwise=st.booleans())
def test_a_computed_filter_is_transformed_on_each_call(data: st.DataObject, groups: int, depthwise: bool) -> None:
    """A filter that is an input (not a constant): the layout is applied in the program, same results."""
    c_in = 1 if depthwise else data.draw(st.integers(1, 3))
    x = data.draw(floats((1, groups * c_in, 5, 5), low=-2, high=2))
    w = data.draw(floats((groups, data.draw(st.integers(1, 3)), c_in, 3, 3), low=-2, high=2))
    px, pw = param(x, "x"), param(w, "w")
    out = opset.group_convolution(px, pw, [1, 1], [1, 1], [1, 1], [1, 1])
    compiled = core().compile_model(Model([out], [px, pw], name="computed"), "XLA")
    flat = w.reshape(-1, *w.shape[2:])
    np.testing.assert_allclose(compiled([x, w])[0], _conv_numpy(x, flat, groups=groups), rtol=1e-5, atol=1e-4)


@settings(deadline=None)
@given(shape=st.lists(st.integers(1, 4), min_size=2, max_size=4), data=st.data())
def test_a_layout_prepares_an_aligned_read_only_transform(shape: list[int], data: st.DataObject) -> None:
    permutation = tuple(data.draw(st.permutations(range(len(shape)))))
    flip = tuple(sorted(data.draw(st.sets(st.integers(0, len(shape) - 1)))))
    value = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    layout = WeightLayout(permutation, (-1,), flip)
    prepared = layout.prepare(value)
    expected = np.flip(np.transpose(value, permutation), flip).reshape(-1)
    np.testing.assert_array_equal(prepared, expected)
    assert not prepared.flags.writeable and prepared.ctypes.data % 64 == 0 and prepared.flags.c_contiguous
    np.testing.assert_array_equal(np.asarray(layout.read(jax.numpy.asarray(value))), expected)
    assert layout.read(Prepared(prepared, layout)) is prepared


def test_an_input_prepared_in_another_layout_is_refused() -> None:
    with pytest.raises(CompilationError, match="prepared as"):
        WeightLayout((1, 0)).read(Prepared(aligned_read_only(np.zeros((2, 3), np.float32)), WeightLayout((0, 1))))


def test_a_memory_mapped_weight_reads_the_same_after_its_pages_are_released(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Once transformed, a weight read from a file gives its pages back; reading it again reads the file."""
    values = np.arange(3 * mmap.PAGESIZE, dtype=np.float32).reshape(3, -1)
    path = tmp_path / "weights.bin"
    path.write_bytes(values.tobytes())
    with path.open("rb") as file:
        mapped = mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ)
    expected = values.reshape(-1)[25 : 25 + 3000 * 4].reshape(-1, 4)  # from byte 100, across pages
    view = np.frombuffer(memoryview(mapped)[100:], np.float32, count=expected.size).reshape(-1, 4)
    float(view.sum())  # every page read
    resident = _resident_kib(path)
    prepared = WeightLayout((1, 0)).prepare(view)
    if resident is not None:  # Linux: the pages wholly inside the array are no longer the process's
        assert resident >= 8 and _resident_kib(path) <= resident - 4
    np.testing.assert_array_equal(prepared, expected.T)
    np.testing.assert_array_equal(view, expected)
    release_pages(values)  # an array in ordinary memory: nothing to give back
    np.testing.assert_array_equal(values, np.arange(3 * mmap.PAGESIZE, dtype=np.float32).reshape(3, -1))


def _resident_kib(path: object) -> int | None:
    """How much of ``path``'s mapping is resident in this process (``/proc/self/smaps``), None off Linux."""
    try:
        lines = Path("/proc/self/smaps").read_text().splitlines()
    except OSError:
        return None
    for i, line in enumerate(lines):
        if line.endswith(str(path)):
            return next(int(entry.split()[1]) for entry in lines[i + 1 :] if entry.startswith("Rss:"))
    return None


def test_prepared_by_identity_gives_one_array_per_constant_while_it_lives() -> None:
    calls: list[np.ndarray] = []

    def doubled(value: np.ndarray) -> np.ndarray:
        calls.append(value)
        return value * 2

    cache = PreparedByIdentity(doubled)
    constant = np.arange(6, dtype=np.float32)
    first = cache.get(constant)
    assert cache.get(constant) is first and len(calls) == 1  # the same weight each time it is asked
    np.testing.assert_array_equal(first, [0, 2, 4, 6, 8, 10])
    twin = constant.copy()  # equal values, another constant: its own array
    assert cache.get(twin) is not first and len(calls) == 2
    released = weakref.ref(first)
    del first, constant, calls[:]
    gc.collect()
    assert released() is None  # forgotten with its constant, not kept for the process's life
