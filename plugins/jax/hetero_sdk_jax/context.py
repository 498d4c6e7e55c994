"""Remote contexts and tensors of the XLA device: ``jax.Array`` buffers resident on one JAX device."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import jax
import numpy as np
from hetero_sdk import Type
from hetero_sdk.plugin import RemoteContext

__all__ = ["XlaContext", "XlaTensor", "x64_scope"]

_WIDE = frozenset({Type.i64, Type.f64})


@contextlib.contextmanager
def x64_scope(enabled: bool) -> Iterator[None]:
    """JAX's 64-bit types, enabled for this thread only (``jax.enable_x64``) when ``enabled``.

    The plugin never flips the process-wide ``jax_enable_x64`` flag: a model with i64 or f64
    tensors is traced, compiled and run inside this scope instead.
    """
    if not enabled:
        yield
        return
    with jax.enable_x64(True):
        yield


class XlaTensor:
    """A tensor in a JAX device's memory (a :class:`~hetero_sdk.plugin.RemoteTensor`).

    Requests of the same device take it as an input without a host copy, and return outputs as
    ``XlaTensor`` when ``request.remote_outputs`` is set. ``np.asarray(tensor)`` copies it to the host.

    :param array: the device buffer.
    :param device_name: the SDK device holding it (``XLA.0``).
    """

    def __init__(self, array: jax.Array, device_name: str) -> None:
        self._array = array
        self._device_name = device_name

    @property
    def array(self) -> jax.Array:
        """The ``jax.Array`` itself, for use with JAX code."""
        return self._array

    @property
    def shape(self) -> tuple[int, ...]:
        """The tensor's shape."""
        return tuple(self._array.shape)

    @property
    def element_type(self) -> Type:
        """The tensor's element type."""
        return Type.of(self._array.dtype)

    @property
    def device_name(self) -> str:
        """The device holding it (``XLA.0``)."""
        return self._device_name

    def get_shape(self) -> tuple[int, ...]:
        """The tensor's shape (OpenVINO's spelling)."""
        return self.shape

    def get_element_type(self) -> Type:
        """The tensor's element type (OpenVINO's spelling)."""
        return self.element_type

    def copy_to_host(self) -> np.ndarray:
        """The values as a numpy array (read-only where JAX shares host memory with the buffer)."""
        return np.asarray(self._array)

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        host = np.asarray(self._array)
        if dtype is not None:
            host = host.astype(dtype, copy=False)
        return np.array(host, copy=True) if copy else host

    def __repr__(self) -> str:
        return f"<XlaTensor {self.element_type.value}{list(self.shape)} on {self._device_name}>"


class XlaContext(RemoteContext):
    """The memory of one JAX device (``XLA.0``...): it makes :class:`XlaTensor` objects.

    :param device_name: the SDK device name with its id (``XLA.0``).
    :param device: the JAX device.
    :param params: the parameters the context was created with.
    """

    def __init__(self, device_name: str, device: jax.Device, params: dict[str, Any] | None = None) -> None:
        super().__init__(device_name, params)
        self.device = device

    def create_tensor(self, element_type: Any, shape: tuple[int, ...], data: Any = None) -> XlaTensor:
        """A tensor on this context's device: zeros, or a copy of ``data`` (converted to ``element_type``)."""
        kind = Type.of(element_type)
        host = np.zeros(shape, kind.numpy) if data is None else np.asarray(data, dtype=kind.numpy).reshape(shape)
        with x64_scope(kind in _WIDE):
            return XlaTensor(jax.device_put(host, self.device), self.device_name)

    def wrap(self, array: jax.Array) -> XlaTensor:
        """An existing ``jax.Array`` as a tensor of this context, moved to its device if elsewhere."""
        if self.device not in array.devices():
            array = jax.device_put(array, self.device)
        return XlaTensor(array, self.device_name)

    def __repr__(self) -> str:
        return f"<XlaContext {self.device_name} ({self.device})>"
