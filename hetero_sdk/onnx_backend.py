"""An ``onnx.backend.base.Backend`` running ONNX models on hetero-sdk devices, so that ONNX's own test
runner (``onnx.backend.test.BackendTest``) and code written against ONNX's backend API work with any
device::

    import hetero_sdk.onnx_backend as backend

    rep = backend.prepare(model, "XLA")             # converts and compiles once
    outputs = rep.run([x])                          # a tuple in the model's output order
    outputs = backend.run_model(model, [x], "HETERO:XLA,TEMPLATE")

The ``device`` argument is a hetero-sdk device string (``"TEMPLATE"``, ``"XLA"``,
``"HETERO:XLA,TEMPLATE"``...). ONNX's runner passes ONNX device names: ``"CPU"`` (its default) runs on
TEMPLATE, the SDK's reference CPU device; ``"CUDA"`` is not supported (use ``"XLA"``).

Models are translated by :func:`hetero_sdk.frontend.onnx.convert_onnx` and compiled by
:class:`~hetero_sdk.Core`; ONNX Runtime is never used.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cache
from typing import Any, Final

import numpy as np
import onnx
from onnx import helper
from onnx.backend.base import Backend, BackendRep, namedtupledict

from hetero_sdk.core import Core
from hetero_sdk.device_name import parse_device_name
from hetero_sdk.errors import DeviceNameError, InferenceError
from hetero_sdk.frontend.onnx import convert_onnx
from hetero_sdk.runtime import CompiledModel

__all__ = [
    "ONNX_DEVICES", "HeteroBackend", "HeteroBackendRep", "is_compatible", "prepare", "run_model", "run_node",
    "supports_device",
]  # fmt: skip

ONNX_DEVICES: Final[Mapping[str, str]] = {"CPU": "TEMPLATE"}
"""ONNX device names (as ``onnx.backend.base.DeviceType`` spells them) and the hetero-sdk device each
runs on. ONNX's test runner asks for ``"CPU"`` by default."""

_DEFAULT_OPSET: Final = 13
"""The opset a node given to :func:`run_node` is read in when the caller names none."""


@cache
def _core() -> Core:
    return Core()


def _device(device: str) -> str:
    """The hetero-sdk device string for ``device`` (an ONNX device name or a hetero-sdk one)."""
    return ONNX_DEVICES.get(device.upper(), device)


class HeteroBackendRep(BackendRep):
    """A model converted and compiled for one device, run as many times as needed.

    :param compiled: the compiled model.
    :param input_names: the ONNX graph inputs that are not initializers, in order.
    :param output_names: the ONNX graph outputs, in order.
    """

    def __init__(self, compiled: CompiledModel, input_names: Sequence[str], output_names: Sequence[str]) -> None:
        self.compiled = compiled
        self.input_names = list(input_names)
        self.output_names = list(output_names)

    def run(self, inputs: Any, **kwargs: Any) -> tuple[Any, ...]:
        """Runs the model.

        :param inputs: the input arrays in graph-input order (a list or tuple), a dict by input name,
            or one array for a one-input model.
        :returns: the outputs in the ONNX model's output order, as a named tuple (also indexable by
            output name).
        :raises InferenceError: for inputs that do not fit the model, or a device failure.
        """
        if isinstance(inputs, Mapping):
            feeds = {str(name): np.asarray(value) for name, value in inputs.items()}
        else:
            values = [inputs] if isinstance(inputs, np.ndarray) else list(inputs)
            if len(values) > len(self.input_names):
                expected = f"{len(self.input_names)}: {', '.join(self.input_names)}"
                raise InferenceError(f"{len(values)} inputs given; the model takes {expected}")
            feeds = {name: np.asarray(value) for name, value in zip(self.input_names, values) if value is not None}
        results = self.compiled(feeds)
        values = [results[name] for name in self.output_names]
        return namedtupledict("Outputs", self.output_names)(*values)


class HeteroBackend(Backend):
    """ONNX's backend interface on hetero-sdk's devices (see the module's docs for ``device``)."""

    @classmethod
    def is_compatible(cls, model: onnx.ModelProto, device: str = "CPU", **kwargs: Any) -> bool:
        """Whether ``device`` is one hetero-sdk runs on (every op's support is known only when converting)."""
        return cls.supports_device(device)

    @classmethod
    def prepare(cls, model: onnx.ModelProto, device: str = "CPU", **kwargs: Any) -> HeteroBackendRep:
        """Converts ``model`` and compiles it for ``device``.

        :param kwargs: the compile configuration (properties such as ``INFERENCE_PRECISION_HINT``).
        :raises UnsupportedOperationError: listing the ONNX nodes no rule translates.
        :raises ModelValidationError: for a graph that fails ONNX's checks.
        :raises DeviceNotFoundError: for a device no plugin provides.
        """
        converted = convert_onnx(model)
        compiled = _core().compile_model(converted, _device(device), dict(kwargs) or None)
        initializers = {t.name for t in model.graph.initializer}
        inputs = [i.name for i in model.graph.input if i.name not in initializers]
        return HeteroBackendRep(compiled, inputs, [o.name for o in model.graph.output])

    @classmethod
    def run_model(cls, model: onnx.ModelProto, inputs: Any, device: str = "CPU", **kwargs: Any) -> tuple[Any, ...]:
        """Prepares ``model`` for ``device`` and runs it once on ``inputs`` (see :meth:`HeteroBackendRep.run`)."""
        return cls.prepare(model, device, **kwargs).run(inputs)

    @classmethod
    def run_node(
        cls,
        node: onnx.NodeProto,
        inputs: Any,
        device: str = "CPU",
        outputs_info: Sequence[tuple[np.dtype, tuple[int, ...]]] | None = None,
        **kwargs: Any,
    ) -> tuple[Any, ...]:
        """Runs one node on ``inputs`` (in the node's input order; a missing optional input is None).

        :param outputs_info: ``(dtype, shape)`` of each output, when known.
        :param kwargs: ``opset_version`` (default 13): the ``ai.onnx`` opset the node is read in.
        """
        opset = int(kwargs.pop("opset_version", _DEFAULT_OPSET))
        given = list(inputs.values()) if isinstance(inputs, Mapping) else list(inputs)
        graph_inputs = []
        feeds = []
        for name, value in zip(node.input, given):
            if name and value is not None:
                array = np.asarray(value)
                graph_inputs.append(
                    helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(array.dtype), array.shape)
                )
                feeds.append(array)
        info = list(outputs_info or [])
        graph_outputs = [
            helper.make_tensor_value_info(
                name,
                helper.np_dtype_to_tensor_dtype(np.dtype(info[i][0])) if i < len(info) else onnx.TensorProto.UNDEFINED,
                list(info[i][1]) if i < len(info) else None,
            )
            for i, name in enumerate(node.output)
            if name
        ]
        graph = helper.make_graph([node], f"{node.op_type or 'node'}_graph", graph_inputs, graph_outputs)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid(node.domain, opset)])
        model = onnx.shape_inference.infer_shapes(model)  # fills in the outputs' types
        return cls.run_model(model, feeds, device, **kwargs)

    @classmethod
    def supports_device(cls, device: str) -> bool:
        """Whether ``device`` (an ONNX device name such as ``"CPU"``, or a hetero-sdk device string)
        names registered hetero-sdk devices; ``"CUDA"`` does not."""
        try:
            parsed = parse_device_name(_device(device))
        except DeviceNameError:
            return False
        registered = set(_core().registered_devices)
        return parsed.name in registered and all(parse_device_name(t).name in registered for t in parsed.targets)


prepare = HeteroBackend.prepare
run_model = HeteroBackend.run_model
run_node = HeteroBackend.run_node
supports_device = HeteroBackend.supports_device
is_compatible = HeteroBackend.is_compatible
