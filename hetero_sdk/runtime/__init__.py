"""What compiling returns: compiled models, infer requests, async queues, contexts, profiling, tensors,
and the variables of stateful models."""

from hetero_sdk.runtime.async_queue import AsyncInferQueue
from hetero_sdk.runtime.compiled_model import CompiledModel
from hetero_sdk.runtime.context import HostContext, RemoteContext, RemoteTensor
from hetero_sdk.runtime.infer_request import InferRequest, InferResults
from hetero_sdk.runtime.profiling import ProfilingInfo, RunContext, Status
from hetero_sdk.runtime.stateful import StatefulCompiledModel, StatefulInferRequest
from hetero_sdk.runtime.tensor import Tensor
from hetero_sdk.runtime.variable_state import BufferFactory, VariableBuffer, VariableState
from hetero_sdk.runtime.version import Version

__all__ = [
    "AsyncInferQueue", "BufferFactory", "CompiledModel", "HostContext", "InferRequest", "InferResults",
    "ProfilingInfo", "RemoteContext", "RemoteTensor", "RunContext", "StatefulCompiledModel", "StatefulInferRequest",
    "Status", "Tensor", "VariableBuffer", "VariableState", "Version",
]  # fmt: skip
