"""HETERO's own properties, as ``openvino.properties.hetero`` (and the placement policy, ours)."""

from __future__ import annotations

from hetero_sdk.properties._key import Property

__all__ = ["number_of_submodels", "placement_policy"]

number_of_submodels = Property("HETERO_NUMBER_OF_SUBMODELS")
placement_policy = Property("HETERO_PLACEMENT_POLICY")
