"""Built-in sample models: small, deterministic networks the CLI runs when no model file is given.

``detection`` is the main job's model: a convolutional backbone any accelerator runs and a
NonMaxSuppression that XLA refuses, so ``HETERO:XLA,TEMPLATE`` really splits it. ``mlp`` is a
two-layer perceptron every device runs whole.
"""

from __future__ import annotations

from collections.abc import Callable

from hetero_sdk.graph import Model
from hetero_sdk.samples.detection import detection_model
from hetero_sdk.samples.mlp import mlp_model

__all__ = ["SAMPLES", "detection_model", "get_sample", "mlp_model"]

SAMPLES: dict[str, Callable[[], Model]] = {"detection": detection_model, "mlp": mlp_model}
"""Sample name to a function building the model with its default arguments."""


def get_sample(name: str) -> Model:
    """A fresh copy of the sample model ``name``.

    :raises KeyError: for an unknown name; the message lists the samples.
    """
    try:
        build = SAMPLES[name]
    except KeyError:
        raise KeyError(f"no sample model {name!r}; samples: {', '.join(sorted(SAMPLES))}") from None
    return build()
