"""The TEMPLATE device's own property names (``template_plugin.properties.disable_transformations``)."""

from __future__ import annotations

from hetero_sdk.properties import Property

__all__ = ["blas", "disable_transformations"]

disable_transformations = Property("TEMPLATE_DISABLE_TRANSFORMATIONS")
"""Skip the transformation pipeline in compile_model and query_model (RW, bool, default False)."""

blas = Property("TEMPLATE_BLAS")
"""The BLAS library under TEMPLATE's matrix products, its version and kernels, and whether
``OPENBLAS_CORETYPE`` chose them (RO, str; see :mod:`template_plugin.blas`)."""
