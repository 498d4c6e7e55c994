"""hetero-sdk: run one ML model across several devices.

The public names: the graph (:class:`Model`, :class:`Node`, :class:`Output`, :class:`Input`, :class:`Type`,
:class:`PartialShape`), the opset (:mod:`hetero_sdk.opset`), :class:`Core` and what it returns, the
properties (:mod:`hetero_sdk.properties`), the errors (:mod:`hetero_sdk.errors`), and
:func:`convert_model`, which reads an ONNX (or native) model without a :class:`Core`.
"""

from hetero_sdk import errors, opset, preprocess, properties
from hetero_sdk.core import Core
from hetero_sdk.element_type import Type
from hetero_sdk.frontend import convert_model
from hetero_sdk.frontend.save import save_model
from hetero_sdk.graph import Input, Model, Node, Output
from hetero_sdk.layout import Layout
from hetero_sdk.runtime import AsyncInferQueue, CompiledModel, InferRequest, ProfilingInfo, Tensor, VariableState
from hetero_sdk.runtime.version import SDK_VERSION
from hetero_sdk.shape import PartialShape
from hetero_sdk.transformations.stateful import make_stateful

__version__ = SDK_VERSION

__all__ = [
    "AsyncInferQueue", "CompiledModel", "Core", "InferRequest", "Input", "Layout", "Model", "Node", "Output",
    "PartialShape", "ProfilingInfo", "Tensor", "Type", "VariableState", "__version__", "convert_model", "errors",
    "make_stateful", "opset", "preprocess", "properties", "save_model",
]  # fmt: skip
