"""Reference kernels of the scatters (GatherND and ReverseSequence use their definitions' array-API
kernels): numpy writes updates with fancy indexing, and folds repeated positions with ``ufunc.at``."""

from __future__ import annotations

import numpy as np

from hetero_sdk.errors import InferenceError
from hetero_sdk.graph.node import Node
from hetero_sdk.ops.indexing import scatter_positions
from hetero_sdk.reference.registry import kernel

_FOLDS = {"sum": np.add, "prod": np.multiply, "min": np.minimum, "max": np.maximum}


def check_positions(node: Node, columns: list[tuple[np.ndarray, int]]) -> None:
    """Raises :class:`InferenceError` naming the node when an index of a ``(indices, size)`` pair leaves
    ``[-size, size-1]``."""
    for column, size in columns:
        if column.size and (column.min() < -size or column.max() >= size):
            raise InferenceError(
                f"{node.type_name} '{node.friendly_name}': indices must lie in [{-size}, {size - 1}]; they span "
                f"[{column.min()}, {column.max()}]; fix the indices fed to it"
            )


@kernel("ScatterElementsUpdate", "ScatterNDUpdate")
def scatter(node: Node, data: np.ndarray, indices: np.ndarray, updates: np.ndarray) -> np.ndarray:
    if node.type_name == "ScatterNDUpdate":
        check_positions(node, [(indices[..., j], data.shape[j]) for j in range(indices.shape[-1])])
    else:
        check_positions(node, [(indices, data.shape[node.attrs["axis"] % data.ndim])])
    out = data.copy()
    where = scatter_positions(node, np, data.shape, indices)
    fold = _FOLDS.get(node.attrs["reduction"])
    if fold is None:
        out[where] = updates
    else:
        fold.at(out, where, updates)
    return out
