"""The common optimisations run before lowering: a conv + bias + scale + shift chain reaches XLA as one
convolution and one Add, which XLA's own fusion then makes one XlaConvolution (unless
XLA_DISABLE_TRANSFORMATIONS), computing what numpy written here does."""

from __future__ import annotations

import numpy as np
import pytest
from hetero_sdk import Model, opset
from xla_helpers import core


def _chain() -> tuple[Model, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    w = rng.standard_normal((4, 3, 1, 1)).astype(np.float32)
    bias, scale, shift = (rng.standard_normal((1, 4, 1, 1)).astype(np.float32) for _ in range(3))
    x = opset.parameter([1, 3, 5, 5], name="x")
    conv = opset.convolution(x, w, [1, 1], [0, 0], [0, 0], [1, 1], name="conv")
    y = opset.add(opset.multiply(opset.add(conv, bias, name="bias"), scale, name="scale"), shift, name="shift")
    y.output(0).set_names({"y"})
    return Model([y], [x], name="chain"), w, bias, scale, shift


@pytest.mark.parametrize("disabled", [False, True])
def test_the_chain_is_folded_before_lowering_unless_disabled(disabled: bool) -> None:
    model, w, bias, scale, shift = _chain()
    compiled = core().compile_model(model, "XLA", {"XLA_DISABLE_TRANSFORMATIONS": disabled})
    runtime = {n.type_name: n for n in compiled.get_runtime_model().get_ops()}
    kinds = [n.type_name for n in compiled.get_runtime_model().get_ops()]
    assert kinds.count("Multiply") == (1 if disabled else 0) and kinds.count("Add") == (2 if disabled else 0)
    if not disabled:  # the folded Add joined the convolution (hetero_sdk_jax.convolution_fusion)
        assert runtime["XlaConvolution"].get_rt_info()["originalLayersNames"] == "bias,conv,scale,shift"
    value = np.random.default_rng(1).standard_normal((1, 3, 5, 5)).astype(np.float32)
    product = np.einsum("nchw,oc->nohw", value.astype(np.float64), w[:, :, 0, 0].astype(np.float64))
    np.testing.assert_allclose(compiled({"x": value})["y"], (product + bias) * scale + shift, rtol=1e-5, atol=1e-5)
    assert compiled.outputs[0].names == {"y"}
