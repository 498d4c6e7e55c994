"""Extension kernels run checked: each result is compared with the op's shape inference, so a kernel
that returns the wrong count, shape or type raises naming the extension and the op, never a wrong result."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from hetero_sdk.element_type import Type
from hetero_sdk.errors import PluginValidationError

if TYPE_CHECKING:
    from hetero_sdk.graph.node import Node

__all__ = ["checked_kernel"]

Kernel = Callable[..., Any]


def checked_kernel(kernel: Kernel, extension: str, op_type: str, backend: str) -> Kernel:
    """``kernel`` wrapped to check each result against the node's inferred outputs.

    A 16-bit float output may come back in a wider float type (kernels compute in f32 and the device
    rounds back, as the SDK's own kernels do); any other type, a shape the inference does not allow or
    the wrong number of outputs raises :class:`~hetero_sdk.errors.PluginValidationError`.
    """

    def run(node: Node, *inputs: Any) -> Any:
        raw = kernel(node, *inputs)
        _check_outputs(raw, node, f"extension '{extension}': the {backend} kernel of {op_type}")
        return raw

    run.__name__ = getattr(kernel, "__name__", "kernel")
    run.__qualname__ = getattr(kernel, "__qualname__", run.__name__)
    run.__doc__ = kernel.__doc__
    run.__wrapped__ = kernel  # type: ignore[attr-defined]
    return run


def _check_outputs(raw: Any, node: Node, who: str) -> None:
    outputs = list(raw) if isinstance(raw, (tuple, list)) else [raw]
    where = f"{who} (node '{node.friendly_name}')"
    fix = "; fix the kernel to return what the op definition's shape inference says"
    if len(outputs) != node.get_output_size():
        raise PluginValidationError(f"{where} returned {len(outputs)} value(s); the op has {node.get_output_size()} "
                                    f"output(s){fix}")  # fmt: skip
    for index, value in enumerate(outputs):
        shape = tuple(int(d) for d in getattr(value, "shape", np.shape(value)))
        expected_shape = node.get_output_partial_shape(index)
        if not expected_shape.compatible(shape):
            raise PluginValidationError(f"{where} returned shape {list(shape)} for output {index}; shape inference "
                                        f"gives {expected_shape}{fix}")  # fmt: skip
        expected = node.get_output_element_type(index)
        dtype = getattr(value, "dtype", None)
        try:
            actual = Type.of(np.asarray(value).dtype if dtype is None else dtype)
        except (TypeError, ValueError):
            actual = None
        if actual is expected or (actual is not None and actual.is_real and expected.is_real):
            continue
        shown = actual.value if actual is not None else str(dtype)
        raise PluginValidationError(f"{where} returned element type {shown} for output {index}; shape inference "
                                    f"gives {expected.value}{fix}")  # fmt: skip
