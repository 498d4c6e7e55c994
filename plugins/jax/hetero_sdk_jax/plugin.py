"""The XLA device plugin: one class serving JAX's default backend (``XLA``), GPUs (``GPU``) and TPUs (``TPU``)."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

import jax
from hetero_sdk import Core, Model, Node, Type
from hetero_sdk import properties as props
from hetero_sdk.errors import BlobFormatError, PropertyValueError, UnsupportedOperationError
from hetero_sdk.plugin import (
    ConfiguredDevice,
    ContextProvider,
    DevicePlugin,
    ModelImporter,
    RemoteContext,
    SupportTable,
    Version,
    VersionReporter,
    bodies,
    format_device_name,
    hookimpl,
    kernel_types,
)

from hetero_sdk_jax.backend import Backend, open_backend
from hetero_sdk_jax.compiled_model import XlaCompiledModel
from hetero_sdk_jax.config import make_config
from hetero_sdk_jax.context import XlaContext
from hetero_sdk_jax.export import import_blob
from hetero_sdk_jax.lowering import Analysis, lowering_types
from hetero_sdk_jax.specialization import plan_values
from hetero_sdk_jax.transformations import DISABLE_TRANSFORMATIONS, transform_model

PLUGIN_VERSION = "0.1.0"
"""The version of hetero-sdk-jax (``hetero_sdk_jax.__version__``)."""

__all__ = ["PLUGIN_VERSION", "XlaPlugin", "gpu_plugin", "tpu_plugin"]

_FROM_BLOB = (props.hint.inference_precision, props.hint.execution_mode)


class XlaPlugin(ConfiguredDevice):
    """A device that compiles models with JAX and runs them with XLA.

    :param backend: the JAX backend: None for JAX's default one (the ``XLA`` device: a GPU or TPU
        when JAX has one, else the CPU), ``"gpu"`` (CUDA or ROCm) or ``"tpu"``.
    :param name: the device name used in messages (``XLA``, ``GPU``, ``TPU``).
    :raises DeviceUnavailableError: when JAX has no such backend (the Core then leaves the device
        out of ``available_devices``).
    """

    def __init__(self, backend: str | None = None, name: str = "XLA") -> None:
        self.backend: Backend = open_backend(backend)
        self.config = make_config(self.backend, name)
        self._contexts: dict[str, XlaContext] = {}
        self._lock = threading.Lock()

    @hookimpl
    def get_version(self, device_name: str) -> Version:
        return Version(PLUGIN_VERSION, f"XLA device plugin (jax {jax.__version__}, platform {self.backend.platform})")

    @hookimpl
    def compile_model(
        self, model: Model, properties: dict[str, Any], context: RemoteContext | None, device_name: str, core: Core
    ) -> XlaCompiledModel:
        config = self.config.resolve(properties)
        device_id = self._device_id(config, context)
        config[props.device.id] = device_id
        _refuse_declined(model, device_name)
        graph = model.clone()
        if not config[DISABLE_TRANSFORMATIONS]:
            transform_model(graph)
        return XlaCompiledModel(
            graph,
            format_device_name(device_name, device_id),
            config,
            self.backend,
            self.backend.device(device_id),
        )

    @hookimpl
    def query_model(self, model: Model, properties: dict[str, Any], device_name: str, core: Core) -> dict[str, str]:
        config = self.config.resolve(properties)
        # Support is analysed on the model as given (the common optimisations only fuse supported
        # ops, recording the fused names): what is known while tracing depends on a node's
        # ancestors, which the table's per-node check cannot see. Inputs that decide shapes count as
        # known: compile_model specialises on their values.
        found: list[Analysis] = []
        answer = self.support_table().query(
            model, lambda clone: found.append(plan_values(clone)[0]), in_context=lambda n: found[0].reasons.get(id(n))
        )
        name = self.claiming_name(device_name, properties, config)
        return answer.claims(name)

    @hookimpl
    def import_model(
        self, blob: bytes, properties: dict[str, Any], context: RemoteContext | None, device_name: str, core: Core
    ) -> XlaCompiledModel:
        imported = import_blob(blob, self.backend.platform)
        stored = self.config.from_blob(imported.config, "XLA blob header field 'config'")
        for key in _FROM_BLOB:
            spec = self.config.spec(key)
            if key in properties and key in stored and spec.check(properties[key]) != stored[key]:
                raise PropertyValueError(
                    f"{key}={properties[key]!r} differs from the imported model's {stored[key]!r}, with which its "
                    "executables were compiled; compile the model again to change it"
                )
        config = self.config.resolve({**stored, **properties})
        device_id = self._device_id(config, context)
        config[props.device.id] = device_id
        name, device = format_device_name(device_name, device_id), self.backend.device(device_id)
        try:
            return XlaCompiledModel(
                imported.model,
                name,
                config,
                self.backend,
                device,
                lowerable=imported.lowerable,
                executables=imported.executables,
                x64=imported.x64,
            )
        except Exception as exc:  # the header checks out and the executables still fail: the blob is crafted
            raise BlobFormatError(
                f"XLA blob does not load on {device_name}: its executables or its 'model' frame fail: "
                f"{type(exc).__name__}: {exc}; export the model again"
            ) from exc

    @hookimpl
    def create_context(self, properties: dict[str, Any], device_name: str, core: Core) -> XlaContext:
        device_id = self.config.resolve(properties)[props.device.id]
        return XlaContext(format_device_name(device_name, device_id), self.backend.device(device_id), properties)

    @hookimpl
    def get_default_context(self, properties: dict[str, Any], device_name: str, core: Core) -> XlaContext:
        device_id = str(self.config.resolve(properties)[props.device.id])
        with self._lock:
            if device_id not in self._contexts:
                self._contexts[device_id] = XlaContext(
                    format_device_name(device_name, device_id),
                    self.backend.device(device_id),
                    {props.device.id: device_id},
                )
            return self._contexts[device_id]

    def make_support_table(self) -> SupportTable:
        """What XLA runs, by op type: every op it lowers (its lowering registry, and the ops whose definitions
        carry an array-API kernel), and every op it folds to a constant while tracing (the SDK's reference
        kernels). Where a node's place in the model decides (inputs that must be known while compiling,
        control flow whose shapes must stay static: :func:`~hetero_sdk_jax.lowering.analyze`), ``query_model``
        adds the analysis's reason."""
        return SupportTable("XLA").add(
            sorted(set(lowering_types()) | set(kernel_types())), limits=[_no_strings, _no_dynamic_rank]
        )

    def _device_id(self, config: dict[str, Any], context: RemoteContext | None) -> str:
        if isinstance(context, XlaContext):
            return str(self.backend.devices.index(context.device))
        if context is not None:
            raise PropertyValueError(f"{context!r} is not a context of this XLA device; use core.create_context")
        return str(config[props.device.id])


def gpu_plugin() -> XlaPlugin:
    """The ``GPU`` device: JAX's CUDA or ROCm backend (entry-point factory)."""
    return XlaPlugin("gpu", "GPU")


def tpu_plugin() -> XlaPlugin:
    """The ``TPU`` device: JAX's TPU backend (entry-point factory)."""
    return XlaPlugin("tpu", "TPU")


def _refuse_declined(model: Model, device_name: str) -> None:
    """Raises when an op of ``model`` is one XLA declines wherever it stands (:func:`_no_strings`,
    :func:`_no_dynamic_rank`), naming the ops and why."""
    for limit in (_no_strings, _no_dynamic_rank):
        declined = [n for n in model.get_ordered_ops() if limit(n) is not None]
        if declined:
            names = ", ".join(f"'{n.friendly_name}'" for n in declined[:10])
            raise UnsupportedOperationError(
                f"device {device_name} cannot run {len(declined)} op(s) of model '{model.friendly_name}' "
                f"({names}): {limit(declined[0])}"
            )


def _no_strings(node: Node) -> str | None:
    """XLA holds numbers only: a node with a ``string`` input or output is left to another device."""
    ports = [*node.input_values(), *node.outputs()]
    if any(p.element_type is Type.string for p in ports):
        return "string tensors (XLA arrays hold numbers only; HETERO:XLA,TEMPLATE runs them on TEMPLATE)"
    return None


_DYNAMIC_RANK = (
    "a value of dynamic rank (an If whose branches give different ranks), and XLA traces static ranks; "
    "HETERO:XLA,TEMPLATE runs it on TEMPLATE, or freeze the input that decides the If "
    "(convert_model(path, input={name: np.array(value)}))"
)


def _no_dynamic_rank(node: Node) -> str | None:
    """XLA traces static ranks: a node with a value of dynamic rank, itself or in its bodies, is left to
    a device that runs If at run time."""
    nodes, ports = [node], list(node.input_values())
    while nodes:
        current = nodes.pop()
        ports.extend(current.outputs())
        nodes.extend(inner for body in bodies(current) for inner in body.get_ops())
    return _DYNAMIC_RANK if any(not p.partial_shape.rank_is_static for p in ports) else None


if TYPE_CHECKING:  # mypy checks the hook methods against the contract's Protocols

    def _typed(plugin: XlaPlugin) -> tuple[DevicePlugin, ModelImporter, ContextProvider, VersionReporter]:
        return plugin, plugin, plugin, plugin
