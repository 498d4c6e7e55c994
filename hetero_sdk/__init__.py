"""hetero-sdk: run one ML model across several devices.

The public names: the graph (:class:`Model`, :class:`Node`, :class:`Output`, :class:`Type`,
:class:`PartialShape`), the opset (:mod:`hetero_sdk.opset`), :class:`Core` and what it returns, the
properties (:mod:`hetero_sdk.properties`) and the errors (:mod:`hetero_sdk.errors`).
"""

from hetero_sdk import errors, opset
from hetero_sdk.element_type import Type
from hetero_sdk.graph import Model, Node, Output
from hetero_sdk.shape import PartialShape

__version__ = "0.1.0"

__all__ = ["Model", "Node", "Output", "PartialShape", "Type", "__version__", "errors", "opset"]
