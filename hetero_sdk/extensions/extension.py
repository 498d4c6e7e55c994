"""What an extension is: a named bundle of op definitions and the ways to translate and compute them."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from hetero_sdk.graph.op_def import OpDef

__all__ = ["REFERENCE", "Extension", "OnnxRule"]

REFERENCE = "reference"
"""The backend key of an extension's numpy kernels in :attr:`Extension.kernels`: the oracle
(:mod:`hetero_sdk.reference`) runs them, and so does every device that falls back to the reference."""


@dataclass(frozen=True)
class OnnxRule:
    """How the ONNX frontend translates one op type of one domain, from opset version ``since`` on (until
    the next rule's): the one rule type, of the SDK's own rules (``@onnx_rule`` in
    :mod:`hetero_sdk.plugin`) and of extensions' (:attr:`Extension.onnx_rules`).

    :ivar domain: the ONNX domain (``"com.microsoft"``; ``""`` for ``ai.onnx``).
    :ivar op_type: the ONNX op type.
    :ivar translate: ``translate(ctx) -> outputs``, a rule as the frontend's own
        (:mod:`hetero_sdk.frontend.onnx.rules`): it receives a ``NodeContext`` and returns one value per
        ONNX output.
    :ivar since: the first opset version of ``domain`` it translates.
    :ivar makes: the op types the translation builds; each must be defined (by the SDK, this
        extension or one registered before it), checked when the extension is registered.
    :ivar replaces: for an op type the SDK translates itself: this rule replaces the SDK's translation
        from opset ``since`` on (as OpenVINO's ``ConversionExtension`` replaces a frontend's translator).
        Only an extension added with ``Core.add_extension`` may replace; without ``replaces`` such a
        rule is refused at registration, since it would never run.
    """

    domain: str
    op_type: str
    translate: Callable[..., Any]
    since: int = 1
    makes: tuple[str, ...] = ()
    replaces: bool = False


@dataclass(frozen=True)
class Extension:
    """Ops from outside the SDK, with what translates and computes them.

    An extension package exposes one, registered under the entry-point group ``hetero_sdk.extensions``
    (see :mod:`hetero_sdk.extensions`), or a user passes it to ``Core.add_extension``.

    :ivar name: the extension's name (the entry-point name, for installed ones).
    :ivar ops: op definitions, registered process-wide: their ``evaluate`` is the array-API kernel every
        device may trace or run, as for the SDK's own ops.
    :ivar onnx_rules: ONNX conversion rules; one for an op type the SDK translates itself is refused at
        registration unless it says ``replaces`` (see :class:`OnnxRule`).
    :ivar kernels: device-specific kernels by backend, then op type: ``{"reference": {...}}`` holds numpy
        kernels (``kernel(node, *inputs)``) the oracle and TEMPLATE run; ``{"TEMPLATE": {...}}``
        TEMPLATE's own; ``{"XLA": {...}}`` XLA's lowerings (``fn(node, *inputs)`` tracing with
        ``jax.numpy``). A kernel may be given as ``"package.module:attr"``, imported on first use, so
        that an extension imports without the libraries of the devices it supports (jax). A device
        reads its entry with :func:`hetero_sdk.extensions.device_kernel`.
    :ivar recipes: conformance-kit case recipes by op type, for ops whose cases cannot be derived from
        their definition.
    :ivar doc: one line for listings.
    """

    name: str
    ops: Sequence[OpDef] = ()
    onnx_rules: Sequence[OnnxRule] = ()
    kernels: Mapping[str, Mapping[str, Callable[..., Any] | str]] = field(default_factory=dict)
    recipes: Mapping[str, Callable[..., Any]] = field(default_factory=dict)
    doc: str = ""

    def op_types(self) -> list[str]:
        """The type names of :attr:`ops`, in declaration order."""
        return [op.type_name for op in self.ops]
