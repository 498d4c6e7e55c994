"""How the Core compiles, imports and queries stateful models: the device compiles the explicit form
(with fixed-capacity caches where the device compiles per input shape,
:mod:`hetero_sdk.runtime.fixed_capacity`), and a stateful compiled model wraps it."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from hetero_sdk.errors import BlobFormatError, ModelValidationError
from hetero_sdk.graph.model import Model
from hetero_sdk.runtime.fixed_capacity import FixedCapacityCompiledModel, fixed_capacity_form, prefers_static
from hetero_sdk.runtime.stateful import StatefulCompiledModel
from hetero_sdk.runtime.stateful_blob import is_stateful_blob, unpack_stateful
from hetero_sdk.serialization import model_from_bytes
from hetero_sdk.transformations.fixed_capacity_cache import PAST_LENGTH
from hetero_sdk.transformations.stateful import make_stateless

if TYPE_CHECKING:
    from hetero_sdk.core import Core
    from hetero_sdk.properties import Config
    from hetero_sdk.runtime.context import RemoteContext

_log = logging.getLogger(__name__)

__all__ = ["compile_stateful", "import_stateful", "is_stateful_blob", "query_stateful"]


def compile_stateful(
    core: Core, model: Model, device_name: str | None, config: Config | None, context: RemoteContext | None
) -> StatefulCompiledModel:
    """``Core.compile_model`` of a stateful model: the Core compiles the explicit form on the device, and
    the result is wrapped; on a device that compiles per input shape (``STATIC_SHAPES`` in its
    ``OPTIMIZATION_CAPABILITIES``), with the caches of a decoder in fixed-capacity buffers."""
    form = make_stateless(model)
    if prefers_static(core, device_name):
        try:
            fixed = fixed_capacity_form(form)
        except ModelValidationError as exc:  # its variables do not grow by one Concat each: the plain form
            _log.info(
                "model '%s' on %s keeps its state in growing buffers, one executable per length: %s",
                model.friendly_name, device_name, exc,
            )  # fmt: skip
        else:
            compiled = core.compile_model(fixed.model, device_name, config, context=context)
            return FixedCapacityCompiledModel(model.clone(), form, fixed, compiled)
    return StatefulCompiledModel(
        model.clone(), form, core.compile_model(form.model, device_name, config, context=context)
    )


def import_stateful(
    core: Core, blob: bytes, device_name: str | None, config: Config | None, context: RemoteContext | None
) -> StatefulCompiledModel:
    """``Core.import_model`` of a :meth:`StatefulCompiledModel.export_model` blob: the Core imports the
    device's own blob on the device, and the result is wrapped.

    :raises BlobFormatError: for a malformed blob, or variables that are not the model's.
    """
    variables, model_bytes, inner = unpack_stateful(blob)
    try:
        model = model_from_bytes(model_bytes, "the stateful blob's model")
    except ValueError as exc:
        raise BlobFormatError(f"stateful blob: its model does not read: {exc}") from exc
    form = make_stateless(model)
    if tuple(variables) != form.variables:
        raise BlobFormatError(
            f"stateful blob: its header lists variables {[v.variable_id for v in variables]}, its model has "
            f"{[v.variable_id for v in form.variables]}; export the model again"
        )
    compiled = core.import_model(inner, device_name, config, context=context)
    if any(PAST_LENGTH in port.names for port in compiled.inputs):  # exported with fixed-capacity caches
        return FixedCapacityCompiledModel(model, form, fixed_capacity_form(form), compiled)
    return StatefulCompiledModel(model, form, compiled)


def query_stateful(core: Core, model: Model, device_name: str, config: Config | None) -> dict[str, str]:
    """``Core.query_model`` of a stateful model: the device answers for the explicit form, whose Parameters
    and Results carry the names of the ReadValues and Assigns they replace; each variable's initial-value
    nodes go where its ReadValue goes."""
    form = make_stateless(model)
    answer = core.query_model(form.model, device_name, config)
    readers = [n.friendly_name for n in model.get_ordered_ops() if n.type_name == "ReadValue"]
    for reader, nodes in zip(readers, form.init_nodes):
        if reader in answer:
            answer.update(dict.fromkeys(nodes, answer[reader]))
    return answer
