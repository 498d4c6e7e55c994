"""Extensions: op definitions, ONNX rules, device kernels and conformance recipes from outside the SDK.

An extension package builds one :class:`Extension` and registers it under the entry-point group
``hetero_sdk.extensions``::

    [project.entry-points."hetero_sdk.extensions"]
    contrib = "hetero_sdk_contrib:extension"

Installed extensions load lazily, the first time something needs an op nobody defines (the ONNX
frontend meeting an unknown op, a native file naming one, a listing); ``Core.add_extension`` adds one
in process (an object, or ``"package.module:attr"``). Everything registers process-wide, so every
``Core`` and ``convert_model`` see it. Registration validates the extension
(:class:`~hetero_sdk.errors.PluginValidationError` naming it and the op, with the fix); an installed
extension that fails is isolated and listed as broken (``hetero-sdk extensions``).

Devices read an extension's kernels with :func:`device_kernel` (TEMPLATE looks in ``"TEMPLATE"`` then
``"reference"``, XLA in ``"XLA"``, each then the op's array-API ``evaluate``); every such kernel runs
checked against the op's shape inference. A device writing a blob that holds no graph records the
extension ops its model uses (:func:`used_extension_ops`) and checks them when importing it
(:func:`require_extension_ops`), so that a missing extension is named, as for a native file.
"""

from hetero_sdk.extensions.discovery import ENTRY_POINT_GROUP
from hetero_sdk.extensions.extension import REFERENCE, Extension, OnnxRule
from hetero_sdk.extensions.registered import (
    KNOWN_DOMAINS,
    ExtensionInfo,
    add_extension,
    device_kernel,
    extension_infos,
    extension_of,
    extension_op_types,
    extension_recipe,
    generation,
    load_installed,
    missing_op_hint,
    onnx_rules,
    provider_of,
    remove_extensions,
)
from hetero_sdk.extensions.requirements import require_extension_ops, used_extension_ops

__all__ = [
    "ENTRY_POINT_GROUP", "KNOWN_DOMAINS", "REFERENCE", "Extension", "ExtensionInfo", "OnnxRule", "add_extension",
    "device_kernel", "extension_infos", "extension_of", "extension_op_types", "extension_recipe", "generation",
    "load_installed",
    "missing_op_hint", "onnx_rules", "provider_of", "remove_extensions", "require_extension_ops", "used_extension_ops",
]  # fmt: skip
