"""High-level hints and their values, as ``openvino.properties.hint``.

The values are ``str`` enums, so ``{hint.performance_mode: hint.PerformanceMode.LATENCY}`` and
``{"PERFORMANCE_HINT": "LATENCY"}`` are the same config.
"""

from __future__ import annotations

import enum

from hetero_sdk.properties._key import Property

__all__ = [
    "ExecutionMode", "ModelDistributionPolicy", "PerformanceMode", "execution_mode", "inference_precision",
    "model_distribution_policy", "num_requests", "performance_mode",
]  # fmt: skip

performance_mode = Property("PERFORMANCE_HINT")
num_requests = Property("PERFORMANCE_HINT_NUM_REQUESTS")
inference_precision = Property("INFERENCE_PRECISION_HINT")
execution_mode = Property("EXECUTION_MODE_HINT")
model_distribution_policy = Property("MODEL_DISTRIBUTION_POLICY")


class PerformanceMode(enum.StrEnum):
    """Values of ``PERFORMANCE_HINT``."""

    LATENCY = "LATENCY"
    THROUGHPUT = "THROUGHPUT"
    CUMULATIVE_THROUGHPUT = "CUMULATIVE_THROUGHPUT"


class ExecutionMode(enum.StrEnum):
    """Values of ``EXECUTION_MODE_HINT``: speed, or the model's own precision."""

    PERFORMANCE = "PERFORMANCE"
    ACCURACY = "ACCURACY"


class ModelDistributionPolicy(enum.StrEnum):
    """Members of ``MODEL_DISTRIBUTION_POLICY`` (a set): HETERO takes ``PIPELINE_PARALLEL``."""

    TENSOR_PARALLEL = "TENSOR_PARALLEL"
    PIPELINE_PARALLEL = "PIPELINE_PARALLEL"
