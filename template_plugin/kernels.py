"""TEMPLATE's kernel registry: how its execution plan computes each op type.

The same shape as the reference's (:mod:`hetero_sdk.reference.registry`) and XLA's lowerings: kernels
registered by op type (a decorator, or ``register``), looked up by op type, and for an op TEMPLATE
registers nothing for, the reference kernel (its numpy kernel, else the op definition's array-API
kernel, :attr:`hetero_sdk.ops.OpDef.evaluate`). :func:`kernel_for` looks in three tables, in order:

1. :data:`BINDERS`: makes a node's kernel when the plan is built, bound to what is known then (constant
   filters, shapes or indices; which outputs anyone reads), or declines (None);
2. :data:`LENDING_KERNELS`: ``kernel(node, workspace, *inputs)``, writing into buffers the request's
   arena lends (:class:`~template_plugin.workspace.Workspace`);
3. :data:`KERNELS`: ``kernel(node, *inputs)``, TEMPLATE's own variant of the reference kernel.

Kernels register from the modules that define them (:mod:`template_plugin.plan_kernels`), which the
execution plan imports.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from hetero_sdk import Node
from hetero_sdk.errors import UnsupportedOperationError
from hetero_sdk.plugin import REFERENCE, Kernel, Registry, device_kernel, get_kernel
from hetero_sdk.plugin import kernel_types as reference_kernel_types

__all__ = [
    "BINDERS",
    "Binder",
    "KERNELS",
    "LENDING_KERNELS",
    "binder",
    "has_kernel",
    "kernel",
    "kernel_for",
    "kernel_types",
    "lending_kernel",
    "lends",
]

Binder = Callable[[Node, Sequence[bool]], "Kernel | None"]
"""``bind(node, read) -> kernel or None``: ``read[i]`` says whether anything reads output ``i``. The
binder of an op type with a lending kernel returns a lending kernel (``kernel(node, workspace, *inputs)``)."""

KERNELS: Registry[Kernel] = Registry("TEMPLATE kernel", UnsupportedOperationError)
"""TEMPLATE's own kernels with the reference's signature (``kernel(node, *inputs)``), by op type."""

kernel = KERNELS
"""Registers the decorated function as TEMPLATE's kernel of each op type named: ``@kernel("Gather")``."""

LENDING_KERNELS: Registry[Kernel] = Registry("TEMPLATE lending kernel", UnsupportedOperationError)
"""Kernels taking the request's arena after the node (``kernel(node, workspace, *inputs)``), whose result
is a buffer it lends or a fresh array, never a view of a temporary."""

lending_kernel = LENDING_KERNELS
"""Registers the decorated function as TEMPLATE's lending kernel of each op type named."""

BINDERS: Registry[Binder] = Registry("TEMPLATE kernel binder", UnsupportedOperationError)
"""Functions making a node's kernel when the execution plan is built, by op type."""

binder = BINDERS
"""Registers the decorated function as the binder of each op type named: ``@binder("Pad")``."""


def kernel_for(node: Node, read: Sequence[bool]) -> Kernel:
    """The kernel TEMPLATE runs for ``node``: its binder's, else its lending kernel, else its own kernel,
    else the reference kernel. A kernel may return fewer values than outputs: the rest stay unset.

    :param read: whether anything reads each of the node's outputs.
    :raises UnsupportedOperationError: when no table and no reference kernel has the op type.
    """
    name = node.type_name
    bind = BINDERS.find(name)
    bound = None if bind is None else bind(node, read)
    if bound is not None:
        return bound
    return LENDING_KERNELS.find(name) or KERNELS.find(name) or _extension_kernel(name) or get_kernel(node.op)


def _extension_kernel(type_name: str) -> Kernel | None:
    """An extension op's TEMPLATE kernel, else its numpy reference kernel (checked; None for other ops)."""
    return device_kernel(type_name, "TEMPLATE", REFERENCE)


def lends(type_name: str) -> bool:
    """Whether TEMPLATE's kernel of ``type_name`` takes the request's arena (a lending kernel)."""
    return type_name in LENDING_KERNELS


def has_kernel(type_name: str) -> bool:
    """Whether TEMPLATE computes ``type_name`` (a table of its own, or the reference, has a kernel)."""
    if type_name in LENDING_KERNELS or type_name in KERNELS or type_name in BINDERS:
        return True
    if _extension_kernel(type_name) is not None:
        return True
    try:
        get_kernel(type_name)
    except UnsupportedOperationError:
        return False
    return True


def kernel_types() -> list[str]:
    """Every op type TEMPLATE has a kernel for, sorted."""
    return sorted(set(reference_kernel_types()) | set(KERNELS) | set(LENDING_KERNELS) | set(BINDERS))
