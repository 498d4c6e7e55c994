"""TEMPLATE: the reference device of hetero-sdk, registered through the ``hetero_sdk.devices``
entry point like any third-party plugin, and written against the SDK's public names only."""

from template_plugin import properties
from template_plugin.plugin import TemplatePlugin

__all__ = ["TemplatePlugin", "properties"]
