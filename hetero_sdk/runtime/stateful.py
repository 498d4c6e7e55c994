"""Running stateful models on any device: the device compiles the explicit form
(:func:`~hetero_sdk.transformations.make_stateless`), and :class:`StatefulCompiledModel` feeds it the
variables each infer request keeps.

A request's variables live in its :class:`~hetero_sdk.runtime.variable_state.VariableBuffer` objects,
one per variable, kept in the request's state (:class:`RequestState`, ``RunContext.state``). Each inference reads them
(the initial values, computed on the host by :mod:`hetero_sdk.reference`, where a variable has no value
yet), runs the device's compiled model with remote outputs where the device has them, and keeps the
new values as the device returned them: on XLA the cache stays on the device between inferences.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from hetero_sdk.graph.model import Model
from hetero_sdk.reference import evaluate
from hetero_sdk.runtime.compiled_model import CompiledModel
from hetero_sdk.runtime.infer_request import InferRequest
from hetero_sdk.runtime.profiling import RunContext
from hetero_sdk.runtime.stateful_blob import pack_stateful
from hetero_sdk.runtime.variable_state import BufferFactory, VariableBuffer, VariableState
from hetero_sdk.serialization import model_to_bytes
from hetero_sdk.transformations.stateful import StatelessForm

__all__ = ["RequestState", "StatefulCompiledModel", "StatefulInferRequest"]


@dataclass
class RequestState:
    """What one request of a stateful model keeps: its variables' buffers and the device's own state."""

    buffers: list[VariableBuffer]
    device: Any


class StatefulCompiledModel(CompiledModel):
    """A stateful model compiled on a device: its ports are the stateful model's, and its requests
    (:class:`StatefulInferRequest`) keep the variables.

    :param model: the stateful model (a clone the compiled model owns).
    :param form: its explicit form; ``compiled`` was compiled from ``form.model``.
    :param compiled: the device's compiled model of the explicit form.
    :param buffer: makes each variable's buffer for a new request (:class:`VariableBuffer`: keep the
        value the device returned).
    """

    def __init__(
        self,
        model: Model,
        form: StatelessForm,
        compiled: CompiledModel,
        buffer: BufferFactory = VariableBuffer,
    ) -> None:
        super().__init__(model, compiled.device_name, compiled.config)
        self.form = form
        self.compiled = compiled
        self.buffer = buffer
        self.loaded_from_cache = compiled.loaded_from_cache
        self._inputs = len(model.inputs)
        self._outputs = len(model.outputs)

    def create_infer_request(self) -> StatefulInferRequest:
        """A new request, its variables at their initial values."""
        return StatefulInferRequest(self)

    def create_request_state(self) -> RequestState:
        """A new request's variables (at their initial values) and its state on the device."""
        return RequestState(self.new_buffers(), self.compiled.create_request_state())

    def new_buffers(self) -> list[VariableBuffer]:
        """The buffers of a new request, one per variable in :attr:`form` order."""
        return [self.buffer(v) for v in self.form.variables]

    def run(self, inputs: Sequence[Any], context: RunContext) -> list[Any]:
        """Runs the device's compiled model on the inputs and the variables, and keeps the new values."""
        state: RequestState = context.state if context.state is not None else self.create_request_state()
        buffers = state.buffers
        values = [b.get() for b in buffers]
        if any(v is None for v in values):
            values = self._initial(values, inputs)
        inner = RunContext(
            context.profile is not None,
            remote_outputs=True,
            cancelled=context.cancelled,
            state=state.device,
        )
        outputs = self.compiled.run(self.arguments(inputs, buffers, values), inner)
        if context.profile is not None and inner.profile:
            context.profile.extend(inner.profile)
        self.keep(inputs, buffers, outputs[self._outputs :])
        mine = list(outputs[: self._outputs])
        if context.remote_outputs or context.host_outputs_later:
            return mine
        return [v if isinstance(v, np.ndarray) else np.asarray(v) for v in mine]

    def arguments(self, inputs: Sequence[Any], buffers: list[VariableBuffer], values: list[Any]) -> list[Any]:
        """What the device's compiled model takes: the inputs, then each variable's value."""
        return [*inputs, *values]

    def keep(self, inputs: Sequence[Any], buffers: list[VariableBuffer], values: Sequence[Any]) -> None:
        """Keeps the variables' new values (the device's extra outputs) in the request's buffers."""
        for buffer, value in zip(buffers, values):
            buffer.set(value)

    def _initial(self, values: list[Any], inputs: Sequence[Any]) -> list[Any]:
        """``values`` with each missing one replaced by the variable's initial value."""
        form = self.form
        computed = None
        if form.init is not None and any(v is None and i is not None for v, i in zip(values, form.init_of)):
            computed = evaluate(form.init, [np.asarray(x) for x in inputs])
        filled = []
        for value, variable, index in zip(values, form.variables, form.init_of):
            if value is None:
                if index is None:
                    shape = [0 if d < 0 else d for d in variable.data_shape]  # (a dynamic one starts empty)
                    value = np.zeros(shape, variable.data_type.numpy)
                else:
                    assert computed is not None
                    value = computed[index]
            filled.append(value)
        return filled

    def get_property(self, name: str) -> Any:
        """The device's compiled model's properties, with this model's name."""
        if name == "NETWORK_NAME":
            return self._model.friendly_name
        return self.compiled.get_property(name)

    def get_runtime_model(self) -> Model:
        """The explicit form as the device runs it."""
        return self.compiled.get_runtime_model()

    def placement_report(self) -> Any:
        """HETERO's placement report of the explicit form (each variable's Parameter and Result placed
        where its ReadValue and Assign run).

        :raises AttributeError: when the device is not HETERO (it places nothing).
        """
        report = getattr(self.compiled, "placement_report", None)
        if report is None:
            raise AttributeError(f"{self.device_name} places no ops; a placement report comes from HETERO")
        return report()

    @property
    def execution_devices(self) -> list[str]:
        """The devices that run the explicit form."""
        return self.compiled.execution_devices

    def export_model(self) -> bytes:
        """A stateful blob (:mod:`hetero_sdk.runtime.stateful_blob`): the stateful model, its variables
        and the device's own blob; ``Core.import_model`` on the same device rebuilds it."""
        return pack_stateful(
            model_to_bytes(self._model), self.form.variables, self.device_name, self.compiled.export_model()
        )

    def release(self) -> None:
        """Stops this compiled model's threads and the device's."""
        super().release()
        self.compiled.release()


class StatefulInferRequest(InferRequest):
    """An infer request of a stateful model: it keeps the model's variables between inferences
    (``query_state``, ``reset_state``); two requests keep two independent states."""

    def __init__(self, compiled_model: StatefulCompiledModel) -> None:
        super().__init__(compiled_model)
        self._buffers: list[VariableBuffer] = self._state.buffers

    def query_state(self) -> list[VariableState]:
        """The request's variables, one :class:`VariableState` each."""
        return [VariableState(self, b) for b in self._buffers]

    def reserve_state(self, rows: int) -> None:
        """Tells the request that its variables will grow to ``rows`` rows (a prompt and the tokens to
        generate): where the device keeps them in fixed-capacity buffers (XLA), the next inference makes
        them that large, so the sequence compiles no executable for a larger capacity part way. An SDK
        extension (OpenVINO's requests have no such call); a hint: other devices ignore it.

        :raises RequestBusyError: while an inference runs on the request.
        """
        self.ensure_idle()
        for buffer in self._buffers:
            buffer.reserve(int(rows))

    def reset_state(self) -> None:
        """Resets every variable: the next inference starts from the initial values."""
        self.ensure_idle()
        for buffer in self._buffers:
            buffer.reset()

    def ensure_idle(self) -> None:
        """:raises RequestBusyError: while an inference runs on the request."""
        self._ensure_idle()
