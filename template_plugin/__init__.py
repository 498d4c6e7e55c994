"""TEMPLATE: the optimised CPU reference device of hetero-sdk, registered through the ``hetero_sdk.devices``
entry point like any third-party plugin, and written against the SDK's public names only.

Its kernels are tuned for speed (an arena of buffers, fused ops, planned convolutions; its kernel registry
is :mod:`template_plugin.kernels`) and checked against the oracle, :mod:`hetero_sdk.reference`, which
shares none of their code. It is not the example to copy: the tutorial device (``plugins/tutorial``) is."""

from template_plugin import properties
from template_plugin.plugin import TemplatePlugin

__all__ = ["TemplatePlugin", "properties"]
