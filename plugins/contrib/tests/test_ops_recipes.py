"""The conformance kit draws cases of the contrib ops from their recipes; each case runs on TEMPLATE and XLA
within its tolerance of the oracle (hetero_sdk.reference)."""

from __future__ import annotations

import numpy as np
import pytest
from hetero_sdk.conformance.op_cases import case_types, strategy_for
from hetero_sdk.reference import evaluate
from hypothesis import given, settings
from hypothesis import strategies as st
from ms_models import core

RECIPE_OPS = [
    "FastGelu", "BiasAdd", "SkipLayerNormalization", "SkipSimplifiedLayerNormalization",
    "SimplifiedLayerNormalization", "EmbedLayerNormalization", "MatMulNBits", "RotaryEmbedding",
    "GroupQueryAttention", "Attention", "MultiHeadAttention", "MatMulIntegerToFloat", "DynamicQuantizeMatMul",
    "GatherBlockQuantized", "PagedAttention",
]  # fmt: skip


def test_the_kit_knows_every_contrib_recipe() -> None:
    core()  # adds the extension
    assert set(RECIPE_OPS) <= set(case_types())


@pytest.mark.parametrize("op_type", RECIPE_OPS)
def test_recipe_cases_run_on_the_devices(op_type: str) -> None:
    compiled_core = core()
    strategy = strategy_for(op_type)
    assert strategy is not None

    @settings(max_examples=4, deadline=None)
    @given(data=st.data())
    def run(data: st.DataObject) -> None:
        case = data.draw(strategy)
        assert op_type in [n.get_type_name() for n in case.model.get_ops()]
        want = evaluate(case.model, case.inputs)
        for device in ("TEMPLATE", "XLA"):
            results = compiled_core.compile_model(case.model, device)(case.inputs)
            for index, expected in enumerate(want):
                got = np.asarray(results[index])
                assert got.dtype == expected.dtype and got.shape == expected.shape, device
                np.testing.assert_allclose(got.astype(np.float64), expected.astype(np.float64), rtol=case.rtol,
                                           atol=case.atol, err_msg=f"{device} output {index}")  # fmt: skip

    run()
