"""What the RAY tests share: the config every RAY compile passes, and small models with the numpy
function that computes what each should."""

from __future__ import annotations

import numpy as np
from hetero_sdk import Model, Type, opset

RAY_CONFIG = {"TARGET_DEVICE": "TEMPLATE"}
"""What every compile on RAY passes: the actors run TEMPLATE (not XLA, even where it is installed)."""

W1 = np.linspace(-1.0, 1.0, 4 * 6, dtype=np.float32).reshape(4, 6)
W2 = np.linspace(0.5, -0.5, 6 * 3, dtype=np.float32).reshape(6, 3)


def dense() -> Model:
    """``relu(x @ W1) @ W2 + 1``, with its ops named ``mm1``, ``act``, ``mm2``, ``out``."""
    x = opset.parameter([2, 4], Type.f32, name="x")
    hidden = opset.relu(opset.matmul(x, W1, name="mm1"), name="act")
    y = opset.add(opset.matmul(hidden, W2, name="mm2"), np.float32(1.0), name="out")
    return Model([y], [x], name="dense")


def dense_expected(x: np.ndarray) -> np.ndarray:
    """What :func:`dense` computes, in numpy."""
    return np.maximum(x @ W1, 0.0) @ W2 + 1.0


def inputs(seed: int = 0) -> np.ndarray:
    """A reproducible input of :func:`dense`."""
    return np.random.default_rng(seed).standard_normal((2, 4)).astype(np.float32)
