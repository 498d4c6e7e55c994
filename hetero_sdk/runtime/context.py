"""Remote contexts and tensors: handles on a device's own memory (``ov::RemoteContext``)."""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import numpy as np

from hetero_sdk.element_type import Type

__all__ = ["HostContext", "RemoteContext", "RemoteTensor"]


@runtime_checkable
class RemoteTensor(Protocol):
    """A tensor living in device memory. ``np.asarray(tensor)`` copies it to the host."""

    @property
    def shape(self) -> tuple[int, ...]:
        """The tensor's shape."""
        ...

    @property
    def element_type(self) -> Type:
        """The tensor's element type."""
        ...

    @property
    def device_name(self) -> str:
        """The device holding it."""
        ...

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray: ...


class RemoteContext:
    """A device's memory context: it makes tensors that live on that device.

    Plugins subclass it; :meth:`create_tensor` returns their :class:`RemoteTensor`.
    """

    def __init__(self, device_name: str, params: dict[str, Any] | None = None) -> None:
        self.device_name = device_name
        self.params = dict(params or {})

    def get_device_name(self) -> str:
        """The device this context belongs to."""
        return self.device_name

    def get_params(self) -> dict[str, Any]:
        """The parameters the context was created with."""
        return dict(self.params)

    def create_tensor(self, element_type: Any, shape: tuple[int, ...], data: Any = None) -> Any:
        """A new tensor of this context (zeros, or a copy of ``data``)."""
        raise NotImplementedError(f"device {self.device_name} cannot create remote tensors")

    def create_host_tensor(self, element_type: Any, shape: tuple[int, ...]) -> np.ndarray:
        """A host tensor suited to transfers with this device (a numpy array here)."""
        return np.zeros(shape, Type.of(element_type).numpy)


class HostContext(RemoteContext):
    """The context of a device that computes in host memory: its tensors are numpy arrays."""

    def create_tensor(self, element_type: Any, shape: tuple[int, ...], data: Any = None) -> np.ndarray:
        """A host array (zeros, or a copy of ``data``)."""
        dtype = Type.of(element_type).numpy
        return np.zeros(shape, dtype) if data is None else np.array(data, dtype=dtype).reshape(shape)
