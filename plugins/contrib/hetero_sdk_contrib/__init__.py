"""ONNX Runtime's ``com.microsoft`` ops for hetero-sdk, as one extension (:data:`extension`).

How an op module adds to it: every module of this package named ``ops_*.py`` is collected here, in
name order, from four module-level names, each optional:

- ``OPS``: a list of :class:`hetero_sdk.plugin.OpDef` built but not ``define()``-d (registering the
  extension defines them; each op once; type names must not clash with the SDK's opset or another
  module's);
- ``ONNX_RULES``: a list of :class:`hetero_sdk.extensions.OnnxRule` (domain ``constants.DOMAIN``, the ONNX
  op type, the translation, ``makes=`` the op types it builds);
- ``KERNELS``: ``{backend: {op_type: kernel}}`` with backends ``"reference"`` (numpy,
  ``kernel(node, *inputs)``, run by the oracle and TEMPLATE) and ``"XLA"`` (a lowering tracing with
  ``jax.numpy``), written as ``"hetero_sdk_contrib.xla_<family>:function"``: the ``xla_*.py`` modules
  import jax and are imported only when XLA runs the op, so the package imports without jax;
- ``RECIPES``: ``{op_type: recipe}`` conformance-kit recipes, for ops whose cases cannot be derived.

Op definitions take ``version=constants.VERSION``; the conformance kit derives the cases of an op of
family ``activation`` or ``elementwise`` whose inputs all broadcast, and runs ``RECIPES`` for the
others (a recipe gets the kit's case builder: ``b.pick``, ``b.shape``, ``b.values``, ``b.input``,
``b.operand``, ``b.case``, as in ``ops_matmul``). A new module needs no change here: add
``ops_<family>.py`` and its tests under ``tests/``.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from typing import Any

from hetero_sdk.extensions import Extension, OnnxRule
from hetero_sdk.plugin import OpDef

from hetero_sdk_contrib.constants import DOMAIN, VERSION

__all__ = ["DOMAIN", "VERSION", "extension"]


def _collect() -> Extension:
    ops: list[OpDef] = []
    rules: list[OnnxRule] = []
    kernels: dict[str, dict[str, Callable[..., Any]]] = {}
    recipes: dict[str, Callable[..., Any]] = {}
    names = sorted(m.name for m in pkgutil.iter_modules(__path__) if m.name.startswith("ops_"))
    for name in names:
        module = importlib.import_module(f"{__name__}.{name}")
        ops += getattr(module, "OPS", [])
        rules += getattr(module, "ONNX_RULES", [])
        for backend, table in getattr(module, "KERNELS", {}).items():
            kernels.setdefault(backend, {}).update(table)
        recipes.update(getattr(module, "RECIPES", {}))
    return Extension(
        "contrib", ops, rules, kernels, recipes, doc="ONNX Runtime's com.microsoft ops (BiasGelu, QuickGelu...)"
    )


extension = _collect()
"""The extension the ``hetero_sdk.extensions`` entry point ``contrib`` names."""
