"""Reference kernels of the basic ops that the array API cannot express: BitCast (Convert, Constant,
Parameter and Result are computed elsewhere)."""

from __future__ import annotations

import numpy as np

from hetero_sdk.graph.node import Node
from hetero_sdk.reference.registry import kernel


@kernel("BitCast")
def bit_cast(node: Node, data: np.ndarray) -> np.ndarray:
    return data.view(node.attrs["destination_type"].numpy)  # same width: any layout views in place
