"""Where an infer request keeps its variables: one :class:`VariableBuffer` per variable, and the
:class:`VariableState` handles ``InferRequest.query_state()`` returns (``ov.VariableState``).

The buffer is the one place that decides how a variable's value is stored between inferences. The
default keeps what the device returned (a remote tensor stays on its device); a device-specific policy
(a fixed-capacity KV cache, say) subclasses :class:`VariableBuffer` and is given to the stateful
compiled model as its ``buffer`` factory.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from hetero_sdk.errors import InferenceError
from hetero_sdk.graph.variables import Variable
from hetero_sdk.runtime.tensor import Tensor

if TYPE_CHECKING:
    from hetero_sdk.runtime.stateful import StatefulInferRequest

__all__ = ["BufferFactory", "VariableBuffer", "VariableState"]


class VariableBuffer:
    """One variable's value in one infer request: the value the device returned last, or none yet.

    :param variable: the variable it holds.
    """

    def __init__(self, variable: Variable) -> None:
        self.variable = variable
        self._value: Any = None

    def get(self) -> Any:
        """The value the next inference reads (a host array or a remote tensor), or None: the variable
        takes its initial value."""
        return self._value

    def set(self, value: Any) -> None:
        """Keeps ``value`` (as the device returned it, or a host array) for the next inference."""
        self._value = value

    def reset(self) -> None:
        """Forgets the value: the next inference starts from the initial value."""
        self._value = None

    def reserve(self, rows: int) -> None:
        """A hint that the variable will grow to ``rows`` rows; a buffer kept as the device returns it
        has nothing to prepare."""

    def value(self) -> Any:
        """The variable's value as the model sees it (what :attr:`VariableState.state` reads), or None."""
        return self.get()

    def assign(self, value: np.ndarray) -> None:
        """Sets the variable's value as the model sees it (a checked host array, from
        :attr:`VariableState.state`)."""
        self.set(value)


BufferFactory = Callable[[Variable], VariableBuffer]
"""Makes the buffer of one variable for a new infer request (:class:`VariableBuffer` by default)."""


class VariableState:
    """One variable of an infer request, as ``ov.VariableState``: read or set its value, or reset it."""

    def __init__(self, request: StatefulInferRequest, buffer: VariableBuffer) -> None:
        self._request = request
        self._buffer = buffer

    @property
    def name(self) -> str:
        """The variable's id."""
        return self._buffer.variable.variable_id

    def get_name(self) -> str:
        """The variable's id."""
        return self.name

    @property
    def state(self) -> Tensor:
        """The value the next inference reads, copied to the host. Before the first inference and
        after a reset: zeros of the variable's shape, each dynamic dimension 0 (the initial value, when
        it depends on no input)."""
        value = self._buffer.value()
        if value is None:
            shape = [0 if d < 0 else d for d in self._buffer.variable.data_shape]
            return Tensor(self._buffer.variable.data_type, shape)
        return Tensor(np.asarray(value))

    @state.setter
    def state(self, value: Any) -> None:
        self.set_state(value)

    def get_state(self) -> Tensor:
        """The value the next inference reads (see :attr:`state`)."""
        return self.state

    def set_state(self, value: Tensor | np.ndarray) -> None:
        """Sets the value the next inference reads (copied).

        :raises InferenceError: naming the variable, for a value of another element type or shape (the
            request keeps its state and stays usable).
        :raises RequestBusyError: while the request runs.
        """
        self._request.ensure_idle()
        variable = self._buffer.variable
        array = np.array(value.data if isinstance(value, Tensor) else value, copy=True)
        if array.dtype != variable.data_type.numpy or not variable.data_shape.compatible(array.shape):
            raise InferenceError(
                f"variable '{variable.variable_id}' is {variable.data_type.value}{variable.data_shape}; the state "
                f"given is {array.dtype}{list(array.shape)}: give an array of the variable's type and shape"
            )
        self._buffer.assign(array)

    def reset(self) -> None:
        """Forgets the value: the next inference reads the initial value."""
        self._request.ensure_idle()
        self._buffer.reset()

    def __repr__(self) -> str:
        return f"<VariableState: '{self.name}'>"
