"""The record the partitioner returns: one device and the nodes it runs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["Subgraph"]


@dataclass(frozen=True, slots=True)
class Subgraph:
    """A set of nodes compiled and run as one submodel on one device.

    :ivar device: the device name every node of the subgraph has as its affinity.
    :ivar nodes: the nodes (hashable objects), as a frozenset; any iterable given is converted. The nodes need not be
        weakly connected: two independent branches on one device are one submodel, one dispatch.
    """

    device: str
    nodes: frozenset[Any]

    def __post_init__(self) -> None:
        if not isinstance(self.nodes, frozenset):
            object.__setattr__(self, "nodes", frozenset(self.nodes))
