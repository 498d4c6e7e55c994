"""hetero-sdk-jax: the XLA device of hetero-sdk.

Installing the distribution registers three devices through the ``hetero_sdk.devices`` entry points:
``XLA`` (JAX's default backend: the GPU or TPU when JAX has one, else the CPU), ``GPU`` (JAX's CUDA or
ROCm backend) and ``TPU``. A device whose backend is absent is reported unavailable, with the reason,
and never breaks the Core. The plugin uses only the SDK's public plugin API.
"""

from hetero_sdk_jax.compiled_model import WithWeights, XlaCompiledModel
from hetero_sdk_jax.context import XlaContext, XlaTensor
from hetero_sdk_jax.plugin import PLUGIN_VERSION as __version__
from hetero_sdk_jax.plugin import XlaPlugin, gpu_plugin, tpu_plugin

__all__ = [
    "WithWeights", "XlaCompiledModel", "XlaContext", "XlaPlugin", "XlaTensor", "__version__", "gpu_plugin",
    "tpu_plugin",
]  # fmt: skip
