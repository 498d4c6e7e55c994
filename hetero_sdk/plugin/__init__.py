"""The plugin facade: everything a device plugin imports from the SDK, in one module.

A plugin imports from here, from the user API (:mod:`hetero_sdk`: ``Model``, ``Node``, ``Type``,
``PartialShape``, ``Core``...), and from :mod:`hetero_sdk.errors`, :mod:`hetero_sdk.properties` and
:mod:`hetero_sdk.opset`; nothing else (``tests/test_architecture.py`` holds the shipped plugins to it),
as a pytest plugin imports :mod:`pytest` and not ``_pytest``. The other SDK modules may change between
releases without notice.

The names, by what they are for:

- **the contract**: :data:`hookimpl` marks hook methods (:mod:`hetero_sdk.plugin.hookspecs` documents
  each hook); :class:`DevicePlugin` (and :class:`ModelImporter`, :class:`ContextProvider`,
  :class:`VersionReporter` for the optional hooks) states their signatures for mypy.
- **properties**: :class:`ConfiguredDevice` (the two property hooks over a :class:`DeviceConfig`),
  :class:`PropertySpec`, :mod:`standard` (OpenVINO's standard properties), :func:`read_only`,
  :func:`as_bool`, :func:`as_int`, :func:`as_element_type`, :func:`one_of`, :class:`Mutability`.
- **what the device runs**: :class:`SupportTable` (with :class:`Check`, :class:`Limit`,
  :class:`SupportAnswer`), :func:`get_supported_nodes`; device names: :func:`format_device_name`,
  :func:`parse_device_name`.
- **running**: :class:`CompiledModel` (implement ``run``), :class:`RunContext`, :class:`ProfilingInfo`,
  :class:`Status`, :class:`Version`, :mod:`rt_info` (the runtime model's rt_info keys); remote
  memory: :class:`RemoteContext`, :class:`HostContext`, :class:`RemoteTensor`.
- **blobs**: :func:`pack_blob`, :func:`unpack_blob`, :func:`check_header_fields`; a model as bytes:
  :func:`model_to_bytes`, :func:`model_from_bytes`, :func:`model_from_frame`.
- **graph rewrites**: :class:`PassManager`, :class:`MatcherPass`, :class:`ConsumerMap`,
  :class:`ConstantFolding`, :data:`COMMON_OPTIMIZATIONS`, :func:`common_optimizations`,
  :func:`replace_node`, :func:`constant_operand`, :func:`channel_scale`,
  :func:`channel_bias_and_activation` (a convolution's per-channel bias and activation, as fusions take
  them), :func:`fused_names`.
- **a device's own ops** (fused ops): :class:`OpDef`, :func:`define`, :class:`Attr` and its kinds
  (:data:`BOOL`, :data:`INT`...), :class:`Input` (an op's input, not :class:`hetero_sdk.Input`),
  :class:`InPlaceCache` (an output that is an input's key/value cache written in place),
  :class:`OutputSpec`, the element-type sets, :func:`expect_same_types`, :func:`as_output`, :data:`OPS`,
  :data:`STRUCTURAL_OPS`, :data:`DYNAMIC`.
- **op semantics** a kernel shares with the op's definition (so that a device computes what the op
  means): shapes and indices (:func:`reshape_dims`, :func:`slice_index`...), attribute helpers
  (:func:`resolve_pads`, :func:`window_output_dims`, :func:`recurrent_activation`...), numerics (:func:`gelu_tanh`,
  :func:`integer_saturation`, :func:`type_limits`, :func:`widened`, :func:`erfc_values`; :func:`namespace`,
  the array API namespace of a kernel's inputs); see ``__all__``.
- **extension points** (registries others add to): the reference kernel registry (:func:`kernel`,
  :data:`KERNELS`, :class:`Kernel`, :func:`get_kernel`, :func:`kernel_types`, :func:`run_node`,
  :func:`evaluate`), a device's own registry (:class:`Registry`), and the ONNX frontend's rule
  registry (:func:`onnx_rule`, :data:`ONNX_RULES`, :class:`OnnxRule` (the one rule type, of the SDK's
  rules and of extensions'), :class:`OnnxNodeContext`) with
  the ONNX exporter (:func:`export_onnx`, :func:`onnx_exportable_ops`). The ONNX names load the ONNX
  frontend on first use, not when this module is imported.
- **op extensions** (ops from outside the SDK, :mod:`hetero_sdk.extensions`): :func:`device_kernel`
  gives a device the kernel an extension declares for its backend (checked against the op's shape
  inference), :data:`REFERENCE` names the extensions' numpy kernels; a device built on
  :class:`ConfiguredDevice` rebuilds its support table when an extension is added.

hetero-sdk is before 1.0: the facade may change between minor releases, without a deprecation period
(the changelog says what changed).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from hetero_sdk import rt_info
from hetero_sdk.array_api import namespace, widened
from hetero_sdk.blob import check_header_fields, pack_blob, unpack_blob
from hetero_sdk.device_name import format_device_name, parse_device_name
from hetero_sdk.extensions import REFERENCE, OnnxRule, device_kernel
from hetero_sdk.ops import (
    BOOL,
    FLOAT,
    FLOATS,
    INDEX_TYPES,
    INT,
    INTS,
    LOWER_STRING,
    NUMERIC_TYPES,
    OPS,
    REAL_TYPES,
    STRING,
    STRINGS,
    STRUCTURAL_OPS,
    Attr,
    InPlaceCache,
    Input,
    OpDef,
    OutputSpec,
    as_output,
    define,
    expect_rank,
    expect_same_types,
)
from hetero_sdk.ops.activation import gelu_tanh
from hetero_sdk.ops.basic import integer_saturation
from hetero_sdk.ops.control_flow import bodies, loop_iterations
from hetero_sdk.ops.convolution import backprop_geometry, resolve_pads, window_output_dims
from hetero_sdk.ops.folding import constant_value
from hetero_sdk.ops.image import apply_resize, resize_plan
from hetero_sdk.ops.indexing import scatter_positions
from hetero_sdk.ops.linear_algebra import matmul_shape
from hetero_sdk.ops.normalization import batch_normalized
from hetero_sdk.ops.recurrent import activation as recurrent_activation
from hetero_sdk.ops.reduction import reduced_axes, type_limits
from hetero_sdk.ops.shape_manipulation import reshape_dims, squeezed_dims, unsqueezed_dims
from hetero_sdk.ops.slicing import slice_index, strided_slice_index
from hetero_sdk.plugin import standard
from hetero_sdk.plugin.config import DeviceConfig, PropertySpec, as_bool, as_element_type, as_int, one_of, read_only
from hetero_sdk.plugin.hookspecs import hookimpl
from hetero_sdk.plugin.protocol import ContextProvider, DevicePlugin, ModelImporter, VersionReporter
from hetero_sdk.plugin.query import get_supported_nodes
from hetero_sdk.plugin.standard import ConfiguredDevice
from hetero_sdk.plugin.support import Check, Limit, SupportAnswer, SupportTable
from hetero_sdk.properties import Mutability
from hetero_sdk.reference import (
    KERNELS,
    Kernel,
    erfc_values,
    evaluate,
    get_kernel,
    kernel,
    kernel_types,
    nearest_indices,
    run_node,
)
from hetero_sdk.registry import Registry
from hetero_sdk.runtime import (
    CompiledModel,
    HostContext,
    ProfilingInfo,
    RemoteContext,
    RemoteTensor,
    RunContext,
    Status,
    Version,
)
from hetero_sdk.serialization import model_from_bytes, model_from_frame, model_to_bytes
from hetero_sdk.shape import DYNAMIC
from hetero_sdk.transformations import (
    COMMON_OPTIMIZATIONS,
    BiasedActivation,
    ConstantFolding,
    ConsumerMap,
    MatcherPass,
    PassManager,
    channel_bias_and_activation,
    channel_scale,
    common_optimizations,
    constant_operand,
    fused_names,
    replace_node,
)

if TYPE_CHECKING:
    from hetero_sdk.frontend.onnx.node_context import NodeContext as OnnxNodeContext
    from hetero_sdk.frontend.onnx.rules import RULES as ONNX_RULES
    from hetero_sdk.frontend.onnx.rules import rule as onnx_rule
    from hetero_sdk.frontend.onnx_export import export_model as export_onnx
    from hetero_sdk.frontend.onnx_export import supported_ops as onnx_exportable_ops

_ONNX_NAMES = {
    "ONNX_RULES": ("hetero_sdk.frontend.onnx.rules", "RULES"),
    "OnnxNodeContext": ("hetero_sdk.frontend.onnx.node_context", "NodeContext"),
    "export_onnx": ("hetero_sdk.frontend.onnx_export", "export_model"),
    "onnx_exportable_ops": ("hetero_sdk.frontend.onnx_export", "supported_ops"),
    "onnx_rule": ("hetero_sdk.frontend.onnx.rules", "rule"),
}
"""The facade names that live in the ONNX frontend, loaded (with onnx) when first read."""


def __getattr__(name: str) -> Any:
    if name in _ONNX_NAMES:
        module, attribute = _ONNX_NAMES[name]
        value = getattr(importlib.import_module(module), attribute)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'hetero_sdk.plugin' has no attribute {name!r}")


__all__ = [
    # the contract
    "ContextProvider", "DevicePlugin", "ModelImporter", "VersionReporter", "hookimpl",
    # properties
    "ConfiguredDevice", "DeviceConfig", "Mutability", "PropertySpec", "as_bool", "as_element_type", "as_int",
    "one_of", "read_only", "standard",
    # what the device runs, device names
    "Check", "Limit", "SupportAnswer", "SupportTable", "format_device_name", "get_supported_nodes",
    "parse_device_name",
    # running
    "rt_info", "CompiledModel", "HostContext", "ProfilingInfo", "RemoteContext", "RemoteTensor", "RunContext", "Status",
    "Version",
    # blobs
    "check_header_fields", "model_from_bytes", "model_from_frame", "model_to_bytes", "pack_blob", "unpack_blob",
    # graph rewrites
    "BiasedActivation", "COMMON_OPTIMIZATIONS", "ConstantFolding", "ConsumerMap", "MatcherPass", "PassManager",
    "channel_bias_and_activation", "channel_scale", "common_optimizations", "constant_operand", "fused_names",
    "replace_node",
    # a device's own ops
    "BOOL", "DYNAMIC", "FLOAT", "FLOATS", "INDEX_TYPES", "INT", "INTS", "LOWER_STRING", "NUMERIC_TYPES", "OPS",
    "REAL_TYPES", "STRING", "STRINGS", "STRUCTURAL_OPS", "Attr", "InPlaceCache", "Input", "OpDef", "OutputSpec",
    "as_output", "define", "expect_rank", "expect_same_types",
    # op semantics shared with the op definitions
    "apply_resize", "backprop_geometry", "batch_normalized", "bodies", "constant_value", "erfc_values", "gelu_tanh",
    "integer_saturation", "loop_iterations", "matmul_shape", "nearest_indices", "reduced_axes", "reshape_dims",
    "recurrent_activation", "resize_plan",
    "resolve_pads", "scatter_positions", "slice_index", "squeezed_dims", "strided_slice_index", "type_limits",
    "unsqueezed_dims", "namespace", "widened", "window_output_dims",
    # extension points: kernel registries, the ONNX rule registry and exporter
    "KERNELS", "Kernel", "Registry", "evaluate", "get_kernel", "kernel", "kernel_types", "run_node",
    "ONNX_RULES", "OnnxNodeContext", "OnnxRule", "export_onnx", "onnx_exportable_ops", "onnx_rule",
    # op extensions
    "REFERENCE", "device_kernel",
]  # fmt: skip
