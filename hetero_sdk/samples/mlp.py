"""A two-layer perceptron with a softmax: a model every device runs whole."""

from __future__ import annotations

import numpy as np

from hetero_sdk import opset
from hetero_sdk.element_type import Type
from hetero_sdk.graph import Model

__all__ = ["mlp_model"]


def mlp_model(features: int = 64, hidden: int = 128, classes: int = 10, seed: int = 0) -> Model:
    """Builds ``softmax(relu(x @ w1 + b1) @ w2 + b2)`` with weights drawn from ``seed``.

    :param features: the input width; the input ``x`` is ``[1, features]`` f32.
    :param hidden: the hidden layer's width.
    :param classes: the output width; the output ``probabilities`` is ``[1, classes]`` f32.
    :param seed: the seed of the weights.
    """
    rng = np.random.default_rng(seed)
    x = opset.parameter([1, features], Type.f32, name="x")
    w1 = (rng.standard_normal((features, hidden)) * np.sqrt(2.0 / features)).astype(np.float32)
    b1 = (0.1 * rng.standard_normal((1, hidden))).astype(np.float32)
    w2 = (rng.standard_normal((hidden, classes)) * np.sqrt(1.0 / hidden)).astype(np.float32)
    b2 = (0.1 * rng.standard_normal((1, classes))).astype(np.float32)
    h = opset.matmul(x, opset.constant(w1, name="fc1/weights"), name="fc1/matmul")
    h = opset.relu(opset.add(h, opset.constant(b1, name="fc1/bias"), name="fc1/add"), name="fc1/relu")
    logits = opset.matmul(h, opset.constant(w2, name="fc2/weights"), name="fc2/matmul")
    logits = opset.add(logits, opset.constant(b2, name="fc2/bias"), name="fc2/add")
    probabilities = opset.softmax(logits, axis=1, name="probabilities")
    return Model([opset.result(probabilities, name="probabilities/result")], [x], name="mlp")
