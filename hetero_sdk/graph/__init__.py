"""The model graph: nodes, output ports and models."""

from hetero_sdk.graph.model import Model
from hetero_sdk.graph.node import Node, Output

__all__ = ["Model", "Node", "Output"]
