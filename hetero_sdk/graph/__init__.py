"""The model graph: nodes, their output and input ports, and models."""

from hetero_sdk.graph.model import Model
from hetero_sdk.graph.node import Input, Node, Output
from hetero_sdk.graph.variables import Variable

__all__ = ["Input", "Model", "Node", "Output", "Variable"]
