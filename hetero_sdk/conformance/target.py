"""The device under test: its Core, its name and configuration, the HETERO partner, and shortcuts the
checks share (compile, query, run, read properties)."""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import hetero_sdk as hs
from hetero_sdk.device_name import parse_device_name
from hetero_sdk.errors import UnsupportedPropertyError
from hetero_sdk.graph import Model
from hetero_sdk.plugin.discovery import discover

__all__ = ["ORACLE", "PARTNER_ALIAS", "Target", "build_core", "normalized"]

ORACLE = "TEMPLATE"
"""The oracle device: values are compared with its reference kernels, and HETERO splits models
between the device under test and it."""

PARTNER_ALIAS = "TEMPLATE_PARTNER"
"""The name of a second TEMPLATE instance, the HETERO partner when the device under test is TEMPLATE."""


def load_object(spec: str) -> Any:
    """The object ``module:attr`` names. :raises ValueError: naming what is wrong."""
    module_name, colon, attr = spec.partition(":")
    if not colon or not module_name or not attr:
        raise ValueError(f"--conformance-plugin {spec!r} must be 'module:attr'")
    obj: Any = importlib.import_module(module_name)
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj


def build_core(device: str, plugin: str | None) -> hs.Core:
    """A Core with the installed devices (entry points), the ``--conformance-plugin`` registered under
    the device's name, and a second TEMPLATE as HETERO partner when the device is TEMPLATE."""
    core = hs.Core()
    name = parse_device_name(device).name
    if plugin is not None:
        core.register_plugin(load_object(plugin), name)
    if name == ORACLE and ORACLE in discover():
        core.register_plugin(discover()[ORACLE].load(), PARTNER_ALIAS)
    return core


def normalized(value: Any) -> Any:
    """A property value in comparable form: enums by value, ``YES``/``NO`` strings as bools."""
    value = getattr(value, "value", value) if not isinstance(value, (str, bool, int, float)) else value
    if isinstance(value, str) and value.upper() in ("YES", "TRUE", "NO", "FALSE"):
        return value.upper() in ("YES", "TRUE")
    if isinstance(value, tuple):
        return list(value)
    return value


@dataclass
class Target:
    """The device under test.

    :ivar core: the Core every check uses.
    :ivar device: the device string as given (``XLA``, ``TEMPLATE.1``, ``HETERO:TEMPLATE``).
    :ivar config: properties for every compile and query (``--device-config``).
    :ivar plugin: the ``--conformance-plugin`` spec, or None.
    """

    core: hs.Core
    device: str
    config: dict[str, Any] = field(default_factory=dict)
    plugin: str | None = None

    @property
    def name(self) -> str:
        """The plugin's name (``XLA``)."""
        return parse_device_name(self.device).name

    @property
    def plain(self) -> str:
        """The device without meta targets (``XLA.1``, ``HETERO``): where properties are set and read."""
        return parse_device_name(self.device).full

    @property
    def partner(self) -> str:
        """The device HETERO pairs this one with: TEMPLATE, or a second TEMPLATE instance."""
        return PARTNER_ALIAS if self.name == ORACLE else ORACLE

    def new_core(self) -> hs.Core:
        """Another Core set up like :attr:`core`."""
        return build_core(self.device, self.plugin)

    # -- properties ---------------------------------------------------------------------------------

    def get(self, key: str) -> Any:
        """A device property."""
        return self.core.get_property(self.plain, key)

    def set(self, values: Mapping[str, Any]) -> None:
        """Sets device properties."""
        self.core.set_property(self.plain, dict(values))

    def supported(self) -> dict[str, str]:
        """``SUPPORTED_PROPERTIES`` as ``{key: "RO"|"RW"|"WO"}``."""
        value = self.get("SUPPORTED_PROPERTIES")
        return {str(k): str(getattr(v, "value", v)) for k, v in dict(value).items()}

    def rw_values(self) -> dict[str, Any]:
        """The current value of every RW property."""
        return {k: self.get(k) for k, m in self.supported().items() if m == "RW"}

    def restore(self, saved: Mapping[str, Any]) -> None:
        """Sets every saved RW value back (one key at a time, so one bad key does not block the rest)."""
        for key, value in saved.items():
            with contextlib.suppress(UnsupportedPropertyError, ValueError, TypeError):
                self.set({key: value})

    def capabilities(self) -> list[str]:
        """``OPTIMIZATION_CAPABILITIES`` (empty when missing)."""
        try:
            return [str(c) for c in self.get("OPTIMIZATION_CAPABILITIES")]
        except UnsupportedPropertyError:
            return []

    @property
    def is_meta(self) -> bool:
        """True for a meta-device such as HETERO (it takes ``MULTI_DEVICE_PRIORITIES``)."""
        return "MULTI_DEVICE_PRIORITIES" in self.supported()

    # -- models -------------------------------------------------------------------------------------

    def query(self, model: Model) -> dict[str, str]:
        """``query_model`` on the device with :attr:`config`."""
        return self.core.query_model(model, self.device, self.config)

    def compile(self, model: Model, config: Mapping[str, Any] | None = None, device: str | None = None) -> Any:
        """``compile_model`` with :attr:`config`, then ``config``."""
        return self.core.compile_model(model, device or self.device, {**self.config, **(config or {})})

    def run(self, model: Model, inputs: Mapping[str, np.ndarray], config: Mapping[str, Any] | None = None) -> list[Any]:
        """Compiles and runs one inference; the outputs in order."""
        return list(self.compile(model, config)(dict(inputs)).to_tuple())

    def claims_all(self, model: Model) -> bool:
        """True when ``query_model`` claims every op of ``model``."""
        claimed = self.query(model)
        return all(node.friendly_name in claimed for node in model.get_ops())
