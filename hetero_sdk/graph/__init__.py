"""The model graph: nodes, their output and input ports, and models."""

from hetero_sdk.graph.model import Model
from hetero_sdk.graph.node import Input, Node, Output

__all__ = ["Input", "Model", "Node", "Output"]
