"""MatMul on XLA matches the reference: ranks 1 to 4, transposes, batch broadcasting, several types."""

from __future__ import annotations

import numpy as np
from hetero_sdk import opset
from hypothesis import given
from hypothesis import strategies as st
from xla_helpers import OPS, check_against_reference, core, floats, ints, many_ops, param, run_xla, single_op


@st.composite
def matmul_operands(draw: st.DrawFn) -> tuple[tuple[int, ...], tuple[int, ...], bool, bool]:
    m, k, n = (draw(st.integers(1, 5)) for _ in range(3))
    rank_a, rank_b = draw(st.integers(1, 4)), draw(st.integers(1, 4))
    batch = draw(st.lists(st.integers(1, 3), min_size=2, max_size=2))
    ta, tb = draw(st.booleans()), draw(st.booleans())
    a = (m, k) if not ta else (k, m)
    b = (k, n) if not tb else (n, k)
    a_shape = (k,) if rank_a == 1 else tuple(draw(st.sampled_from([d, 1])) for d in batch[4 - rank_a :]) + a
    b_shape = (k,) if rank_b == 1 else tuple(batch[4 - rank_b :]) + b
    return a_shape, b_shape, ta, tb


@OPS
@given(data=st.data(), operands=matmul_operands(), dtype=st.sampled_from([np.float32, np.float16, np.int32, np.int8]))
def test_matmul(data: st.DataObject, operands, dtype: type) -> None:
    a_shape, b_shape, ta, tb = operands
    if np.dtype(dtype).kind == "f":
        a, b = data.draw(floats(a_shape, dtype, -4, 4)), data.draw(floats(b_shape, dtype, -4, 4))
    else:
        a, b = data.draw(ints(a_shape, dtype)), data.draw(ints(b_shape, dtype))
    pa, pb = param(a, "a"), param(b, "b")
    model = single_op(opset.matmul(pa, pb, transpose_a=ta, transpose_b=tb), [pa, pb])
    rtol, atol = (2e-3, 2e-2) if dtype == np.float16 else (1e-5, 1e-5)
    check_against_reference(model, [a, b], rtol=rtol, atol=atol)


def test_matmul_with_constant_weights_closed_form() -> None:
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    w = np.array([[1, 0], [0, 1], [1, 1]], np.float32)
    p = param(x)
    got = run_xla(single_op(opset.matmul(p, w, transpose_b=False), [p]), [x])[0]
    np.testing.assert_array_equal(got, [[2, 3], [8, 9]])


def test_f32_matmul_is_full_precision() -> None:
    # 1 + 2**-20 is not representable in bf16 or tf32: a reduced-precision product would lose it.
    a = np.full((1, 1), 1 + 2**-20, np.float32)
    b = np.ones((1, 1), np.float32)
    pa, pb = param(a, "a"), param(b, "b")
    got = run_xla(single_op(opset.matmul(pa, pb), [pa, pb]), [a, b])[0]
    assert got[0, 0] == np.float32(1 + 2**-20)


def test_every_f32_product_is_compiled_at_highest_precision() -> None:
    # XLA:GPU runs an f32 product of default precision in TF32 (~1e-3 relative error); on the CPU the
    # compiled HLO still says which precision each product asked for. STFT and Einsum come from the
    # kernels shared with TEMPLATE (plain matmuls), MatMul and Convolution from the plugin's own lowering.
    signal, a = param(np.zeros((1, 64), np.float32), "signal"), param(np.zeros((4, 16), np.float32), "a")
    image = param(np.zeros((1, 2, 8, 8), np.float32), "image")
    window = np.hanning(16).astype(np.float32)
    nodes = [
        opset.stft(signal, window, np.array(16, np.int64), np.array(8, np.int64), False),
        opset.einsum([a, a], "ij,kj->ik"),
        opset.matmul(a, np.ones((16, 3), np.float32)),
        opset.convolution(image, np.ones((3, 2, 3, 3), np.float32), [1, 1], [0, 0], [0, 0], [1, 1]),
    ]
    compiled = core().compile_model(many_ops(nodes, [signal, a, image]), "XLA")
    products = [
        line for line in compiled.jax_executable().as_text().splitlines() if " dot(" in line or " convolution(" in line
    ]
    assert len(products) >= 4
    assert all("operand_precision={highest,highest}" in line for line in products), products


EINSUMS = {
    "ij,jk->ik": ([2, 3], [3, 4]),
    "bij,bjk->bik": ([5, 2, 3], [5, 3, 4]),
    "ii->i": ([3, 3],),
    "ij->": ([2, 3],),
    "i,j->ij": ([2], [3]),
    "...ij,...jk->...ik": ([5, 2, 3], [1, 3, 4]),
    "ij,jk,kb->ib": ([2, 3], [3, 4], [4, 5]),
}


@OPS
@given(equation=st.sampled_from(sorted(EINSUMS)), dtype=st.sampled_from([np.float32, np.int32]), data=st.data())
def test_einsum_matches_numpy(equation: str, dtype: type, data: st.DataObject) -> None:
    arrays = [data.draw(ints(shape, np.int32, -4, 4)).astype(dtype) for shape in EINSUMS[equation]]
    params = [param(a, f"x{i}") for i, a in enumerate(arrays)]
    (got,) = run_xla(single_op(opset.einsum(params, equation), params), arrays)
    want = np.einsum(equation, *arrays)
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-6)


@OPS
@given(data=st.data(), size=st.integers(1, 4), batch=st.lists(st.integers(1, 3), max_size=2))
def test_det_matches_numpy(data: st.DataObject, size: int, batch: list[int]) -> None:
    x = data.draw(floats((*batch, size, size), np.float32, -2, 2))
    px = param(x)
    (got,) = run_xla(single_op(opset.det(px), [px]), [x])
    assert got.dtype == np.float32 and got.shape == tuple(batch)
    np.testing.assert_allclose(got, np.linalg.det(x.astype(np.float64)), rtol=1e-4, atol=1e-4)
