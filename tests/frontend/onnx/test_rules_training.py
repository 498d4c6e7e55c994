"""The optimizers of ai.onnx.preview.training (Adagrad, Momentum, Adam) against their update formulas
written here in numpy, on TEMPLATE and XLA, with two tensors updated at once."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper
from onnx_models import IR_VERSION, run_sdk

F32 = np.float32
RNG = np.random.default_rng(8)
DOMAIN = "ai.onnx.preview.training"


def _model(op: str, count: int, outputs: int, **attrs: object) -> tuple[object, dict[str, np.ndarray]]:
    """One ``op`` node updating two tensors (shapes [3] and [2, 2]): R, T, then ``count`` groups."""
    shapes = [(3,), (2, 2)]
    names = [f"{g}{i}" for g in "xgvh"[:count] for i in range(2)]
    feeds = {"r": np.array(0.1, F32), "t": np.array(3, np.int64)}
    for name in names:
        value = RNG.uniform(0.1, 1.0, shapes[int(name[1])]).astype(F32)
        feeds[name] = value
    node = helper.make_node(op, ["r", "t", *names], [f"y{i}" for i in range(outputs)], domain=DOMAIN, **attrs)
    inputs = [
        helper.make_tensor_value_info(k, helper.np_dtype_to_tensor_dtype(v.dtype), v.shape) for k, v in feeds.items()
    ]
    outs = [helper.make_tensor_value_info(f"y{i}", 1, shapes[i % 2]) for i in range(outputs)]
    graph = helper.make_graph([node], "g", inputs, outs)
    opsets = [helper.make_opsetid("", 17), helper.make_opsetid(DOMAIN, 1)]
    return helper.make_model(graph, opset_imports=opsets, ir_version=IR_VERSION), feeds


def _check(model: object, feeds: dict[str, np.ndarray], want: list[np.ndarray]) -> None:
    for device in ("TEMPLATE", "XLA"):
        for got, expected in zip(run_sdk(model, feeds, device), want):  # type: ignore[arg-type]
            np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6, err_msg=device)


def test_adagrad_decays_the_rate_and_accumulates_squared_gradients() -> None:
    model, f = _model("Adagrad", 3, 4, decay_factor=0.1, epsilon=1e-5, norm_coefficient=0.01)
    r = 0.1 / (1 + 3 * 0.1)
    want_x, want_h = [], []
    for i in range(2):
        g = 0.01 * f[f"x{i}"] + f[f"g{i}"]
        h = f[f"v{i}"] + g * g  # the third group (named v here) is the accumulated squares H
        want_x.append(f[f"x{i}"] - r * g / (np.sqrt(h) + 1e-5))
        want_h.append(h)
    _check(model, f, want_x + want_h)


@pytest.mark.parametrize("mode", ["standard", "nesterov"])
@pytest.mark.parametrize("first_step", [False, True])
def test_momentum_standard_and_nesterov(mode: str, first_step: bool) -> None:
    model, f = _model("Momentum", 3, 4, alpha=0.9, beta=0.5, norm_coefficient=0.02, mode=mode)
    if first_step:
        f["t"] = np.array(0, np.int64)
    beta = 1.0 if first_step else 0.5
    want_x, want_v = [], []
    for i in range(2):
        g = 0.02 * f[f"x{i}"] + f[f"g{i}"]
        v = 0.9 * f[f"v{i}"] + beta * g
        step = v if mode == "standard" else g + 0.9 * v
        want_x.append(f[f"x{i}"] - 0.1 * step)
        want_v.append(v)
    _check(model, f, want_x + want_v)


@pytest.mark.parametrize("first_step", [False, True])
def test_adam_corrects_the_bias_after_the_first_step(first_step: bool) -> None:
    model, f = _model(
        "Adam", 4, 6, alpha=0.8, beta=0.95, epsilon=1e-4, norm_coefficient=0.01, norm_coefficient_post=0.1
    )
    if first_step:
        f["t"] = np.array(0, np.int64)
    t = int(f["t"])
    rate = 0.1 if first_step else 0.1 * np.sqrt(1 - 0.95**t) / (1 - 0.8**t)
    want_x, want_v, want_h = [], [], []
    for i in range(2):
        g = 0.01 * f[f"x{i}"] + f[f"g{i}"]
        v = 0.8 * f[f"v{i}"] + 0.2 * g
        h = 0.95 * f[f"h{i}"] + 0.05 * g * g
        want_x.append(0.9 * (f[f"x{i}"] - rate * v / (np.sqrt(h) + 1e-4)))
        want_v.append(v)
        want_h.append(h)
    _check(model, f, want_x + want_v + want_h)
