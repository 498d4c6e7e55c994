"""Stateful decoders on devices that compile one executable per input shape (XLA): each request keeps
its KV caches in buffers of a fixed capacity, so a generation runs a bounded number of executables.

The device compiles the explicit form rewritten by
:func:`~hetero_sdk.transformations.fixed_capacity_cache.with_fixed_capacity_cache`: its cache inputs
are buffers written in place at the filled length, which it takes as a value. Per request, the
buffers start at :data:`INITIAL_CAPACITY` rows (or the first step's rows, rounded up to a power of
two) and double when a step would not fit: a prompt and ``n`` generated tokens run one executable per
prompt length and one per capacity, ``1 + log2(n / 64)`` or so, where a growing cache runs one per
token. The buffers the device returns are fed back as they are (on XLA, device memory donated to the
next step); ``VariableState.state`` reads the filled rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from hetero_sdk import rt_info
from hetero_sdk.device_name import parse_device_name
from hetero_sdk.errors import HeteroSDKError, InferenceError
from hetero_sdk.graph.model import Model
from hetero_sdk.graph.variables import Variable
from hetero_sdk.properties.device import STATIC_SHAPES
from hetero_sdk.runtime.compiled_model import CompiledModel
from hetero_sdk.runtime.stateful import StatefulCompiledModel
from hetero_sdk.runtime.variable_state import VariableBuffer
from hetero_sdk.transformations.fixed_capacity_cache import (
    FixedCapacityCache,
    check_fixed_capacity,
    with_fixed_capacity_cache,
)
from hetero_sdk.transformations.stateful import StatelessForm

if TYPE_CHECKING:
    from hetero_sdk.core import Core

__all__ = [
    "FixedCapacityBuffer", "FixedCapacityCompiledModel", "INITIAL_CAPACITY", "fixed_capacity_form",
    "prefers_static",
]  # fmt: skip

INITIAL_CAPACITY = 64
"""The rows a request's cache buffers start with (more when the first step needs more)."""


def prefers_static(core: Core, device_name: str | None) -> bool:
    """Whether the device (or one of a meta device's targets) lists
    :data:`~hetero_sdk.properties.device.STATIC_SHAPES`."""
    if device_name is None:
        return False
    parsed = parse_device_name(device_name)
    for name in parsed.targets or (parsed.full,):
        try:
            capabilities = core.get_property(name, "OPTIMIZATION_CAPABILITIES")
        except HeteroSDKError:
            continue
        if STATIC_SHAPES in capabilities:
            return True
    return False


def fixed_capacity_form(form: StatelessForm) -> FixedCapacityCache:
    """The explicit form with every variable kept in a fixed-capacity buffer, each buffer input marked
    :data:`~hetero_sdk.rt_info.DONATABLE`.

    :raises ModelValidationError: when a variable does not grow by one Concat, or the rewritten model
        reads the buffers' unfilled rows (see
        :func:`~hetero_sdk.transformations.fixed_capacity_cache.check_fixed_capacity`).
    """
    model = form.model
    first_input, first_output = len(model.inputs) - len(form.variables), len(model.outputs) - len(form.variables)
    pairs = {
        model.inputs[first_input + i].any_name: model.outputs[first_output + i].any_name
        for i in range(len(form.variables))
    }
    fixed = with_fixed_capacity_cache(model, pairs)
    check_fixed_capacity(model, fixed)
    for parameter in fixed.model.get_parameters()[first_input : first_input + len(form.variables)]:
        parameter.get_rt_info()[rt_info.DONATABLE] = True
    return fixed


class FixedCapacityBuffer(VariableBuffer):
    """One variable kept in a buffer of some capacity along its growing axis, and its filled rows.

    :param variable: the variable.
    :param axis: the axis the variable grows along.
    """

    def __init__(self, variable: Variable, axis: int) -> None:
        super().__init__(variable)
        self.axis = axis
        self.filled = 0
        self.reserved = 0
        """The rows the sequence will need (:meth:`reserve`): the next buffer is made that large."""
        self.capacity = 0
        """The rows the buffer holds (0 before the first inference); kept as the value changes, so that a
        step does not ask each buffer for its shape."""

    def set(self, value: Any) -> None:
        """Keeps ``value`` (the rows filled unchanged) and its capacity."""
        super().set(value)
        self.capacity = 0 if value is None else int(value.shape[self.axis])

    def advance(self, value: Any, rows: int) -> None:
        """Keeps a step's updated buffer (of the same capacity: the step wrote ``rows`` rows into it)."""
        super().set(value)
        self.filled += rows

    def reset(self) -> None:
        """Forgets the value, the rows filled and the rows reserved."""
        super().reset()
        self.filled = self.reserved = self.capacity = 0

    def reserve(self, rows: int) -> None:
        """Makes the next buffer hold ``rows`` rows at the least, so a sequence of that length does not
        grow its buffers (and compile for a new capacity) part way."""
        self.reserved = rows

    def value(self) -> Any:
        """The filled rows, as the model sees the variable."""
        buffer = self.get()
        if buffer is None:
            return None
        host = np.asarray(buffer)
        index = [slice(None)] * host.ndim
        index[self.axis] = slice(0, self.filled)
        return host[tuple(index)]

    def assign(self, value: np.ndarray) -> None:
        """Keeps ``value`` as the filled rows (the buffer grows to the next step's needs)."""
        self.set(value)
        self.filled = int(value.shape[self.axis])

    def grown(self, capacity: int) -> None:
        """Copies the filled rows into a buffer of ``capacity`` rows (zeros after them)."""
        value = self.value()
        assert value is not None
        shape = list(value.shape)
        shape[self.axis] = capacity
        buffer = np.zeros(shape, value.dtype)
        index = [slice(None)] * buffer.ndim
        index[self.axis] = slice(0, self.filled)
        buffer[tuple(index)] = value
        self.set(buffer)


class FixedCapacityCompiledModel(StatefulCompiledModel):
    """A stateful decoder compiled with fixed-capacity cache buffers (see the module's docstring).

    :param model: the stateful model.
    :param form: its explicit form.
    :param fixed: the explicit form rewritten for fixed-capacity buffers; ``compiled`` was compiled from
        ``fixed.model``.
    :param compiled: the device's compiled model.
    """

    def __init__(self, model: Model, form: StatelessForm, fixed: FixedCapacityCache, compiled: CompiledModel) -> None:
        super().__init__(model, form, compiled)
        self._axes = [fixed.axes[name] for name in fixed.pairs]
        names = [port.any_name for port in model.inputs]
        rows_input, self._rows_axis = fixed.rows
        self._rows = names.index(rows_input)
        self._padded = [names.index(name) for name in fixed.padded_inputs]

    def new_buffers(self) -> list[VariableBuffer]:
        """One :class:`FixedCapacityBuffer` per variable."""
        return [FixedCapacityBuffer(v, axis) for v, axis in zip(self.form.variables, self._axes)]

    def arguments(self, inputs: Sequence[Any], buffers: list[VariableBuffer], values: list[Any]) -> list[Any]:
        """The inputs (the attention mask padded to the capacity), the buffers grown to fit this step,
        and the filled length."""
        caches = [b for b in buffers if isinstance(b, FixedCapacityBuffer)]
        for cache, value in zip(caches, values):
            if cache.get() is None:  # an initial value: its rows are the filled ones
                cache.assign(np.asarray(value))
        length = caches[0].filled
        if any(c.filled != length for c in caches):
            lengths = {c.variable.variable_id: c.filled for c in caches}
            raise InferenceError(f"the variables hold different numbers of rows {lengths}; set them all alike")
        needed = length + int(np.shape(inputs[self._rows])[self._rows_axis])
        masks = [np.asarray(inputs[i]) for i in self._padded]
        needed = max(needed, *(m.shape[-1] for m in masks), *(c.reserved for c in caches))
        capacity = max(c.capacity for c in caches)
        if needed > capacity:
            capacity = max(INITIAL_CAPACITY, 2 * capacity, 1 << (needed - 1).bit_length())
        for cache in caches:
            if cache.capacity != capacity:
                cache.grown(capacity)
        arguments = list(inputs)
        for i, mask in zip(self._padded, masks):
            padded = np.zeros((*mask.shape[:-1], capacity), mask.dtype)
            padded[..., : mask.shape[-1]] = mask
            arguments[i] = padded
        return [*arguments, *(c.get() for c in caches), np.array(length, np.int64)]

    def keep(self, inputs: Sequence[Any], buffers: list[VariableBuffer], values: Sequence[Any]) -> None:
        """Keeps the updated buffers, and the rows this step filled."""
        rows = int(np.shape(inputs[self._rows])[self._rows_axis])
        for buffer, value in zip(buffers, values):
            if isinstance(buffer, FixedCapacityBuffer):
                buffer.advance(value, rows)
            else:
                buffer.set(value)
