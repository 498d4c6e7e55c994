"""What compiling returns: compiled models, infer requests, async queues, contexts, profiling."""

from hetero_sdk.runtime.async_queue import AsyncInferQueue
from hetero_sdk.runtime.compiled_model import CompiledModel
from hetero_sdk.runtime.context import HostContext, RemoteContext, RemoteTensor
from hetero_sdk.runtime.infer_request import InferRequest, InferResults
from hetero_sdk.runtime.profiling import ProfilingInfo, RunContext, Status
from hetero_sdk.runtime.tensor import Tensor
from hetero_sdk.runtime.version import Version

__all__ = [
    "AsyncInferQueue", "CompiledModel", "HostContext", "InferRequest", "InferResults", "ProfilingInfo",
    "RemoteContext", "RemoteTensor", "RunContext", "Status", "Tensor", "Version",
]  # fmt: skip
