"""What a device plugin author uses: the hook marker, base classes and helpers.

A minimal device is one class with four hooks (see :mod:`hetero_sdk.plugin.hookspecs`) and a
:class:`CompiledModel` subclass that implements ``run``; the conformance kit then checks it. Deriving
from :class:`ConfiguredDevice` provides the two property hooks, and :mod:`hetero_sdk.plugin.standard`
declares OpenVINO's standard properties (``standard.perf_count()`` ...). A :class:`SupportTable`
declares which op types, element types and attribute limits the device runs, and answers ``query_model``
with a reason for each declined op.
"""

from hetero_sdk.blob import check_header_fields, pack_blob, unpack_blob
from hetero_sdk.plugin import standard
from hetero_sdk.plugin.config import DeviceConfig, PropertySpec, as_bool, as_element_type, as_int, one_of, read_only
from hetero_sdk.plugin.hookspecs import hookimpl
from hetero_sdk.plugin.query import get_supported_nodes
from hetero_sdk.plugin.standard import ConfiguredDevice
from hetero_sdk.plugin.support import Check, Limit, SupportAnswer, SupportTable
from hetero_sdk.properties import Mutability
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

__all__ = [
    "Check", "CompiledModel", "ConfiguredDevice", "DeviceConfig", "HostContext", "Limit", "Mutability",
    "ProfilingInfo", "PropertySpec", "RemoteContext", "RemoteTensor", "RunContext", "Status", "SupportAnswer",
    "SupportTable", "Version", "as_bool",
    "as_element_type", "as_int", "check_header_fields", "get_supported_nodes", "hookimpl", "one_of", "pack_blob",
    "read_only", "standard", "unpack_blob",
]  # fmt: skip
