"""The AUTO meta-device: compiles a model on the best device that runs all of it, or on HETERO over the
candidates when none does, and serves the first inferences from a reference device while the chosen
one compiles. Registered through the ``AUTO`` entry point like any device plugin."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from hetero_sdk import __version__
from hetero_sdk import properties as props
from hetero_sdk.auto.compiled_model import AutoCompiledModel, Served, compile_in_background, read_auto_blob
from hetero_sdk.auto.cumulative import CumulativeCompiledModel
from hetero_sdk.auto.priorities import candidates, device_kind
from hetero_sdk.auto.selection import HETERO_DEVICE, Selection, Selector
from hetero_sdk.auto.startup import CostBook, ModelSize, StartupDecision, decide_startup, model_size
from hetero_sdk.device_name import parse_device_name
from hetero_sdk.errors import CompilationError, HeteroSDKError, UnsupportedPropertyError
from hetero_sdk.graph import Model
from hetero_sdk.plugin import (
    ConfiguredDevice,
    DeviceConfig,
    DevicePlugin,
    ModelImporter,
    PropertySpec,
    RemoteContext,
    Version,
    VersionReporter,
    as_bool,
    hookimpl,
    read_only,
    standard,
)

if TYPE_CHECKING:
    from hetero_sdk import Core

__all__ = ["ENABLE_STARTUP_FALLBACK", "AutoPlugin"]

ENABLE_STARTUP_FALLBACK = "ENABLE_STARTUP_FALLBACK"
"""OpenVINO's key: serve the first inferences from a reference device while the chosen one compiles."""

CUMULATIVE_THROUGHPUT = "CUMULATIVE_THROUGHPUT"
"""The PERFORMANCE_HINT under which AUTO runs a model on every capable device at once."""

_FORWARDED = (
    props.enable_profiling,
    props.hint.performance_mode,
    props.hint.num_requests,
    props.hint.execution_mode,
)
"""AUTO's standard keys, passed on to the devices that list them once set on AUTO or in a compile."""

_log = logging.getLogger(__name__)


class AutoPlugin(ConfiguredDevice):
    """The AUTO device: picks the device for each model (OpenVINO's AUTO plugin).

    :param costs: each device's compile and inference costs, which decide whether the startup device
        serves first; by default the kinds' defaults, refined by this plugin's own measurements.
    """

    def __init__(self, costs: CostBook | None = None) -> None:
        self.costs = CostBook() if costs is None else costs
        self.config = DeviceConfig(
            [
                standard.device_priorities(),
                standard.device_properties(),
                PropertySpec(ENABLE_STARTUP_FALLBACK, default=True, convert=as_bool, allowed="True, False"),
                standard.perf_count(),
                standard.performance_hint(),
                standard.performance_hint_num_requests(),
                standard.execution_mode_hint(),
                read_only(props.available_devices, []),
                read_only(props.device.full_name, "AUTO (automatic device selection)"),
                read_only(props.device.architecture, "AUTO"),
                read_only(props.device.capabilities, ["EXPORT_IMPORT"]),
                read_only(props.range_for_async_infer_requests, (1, 16, 1)),
                read_only(props.caching_properties, [props.device.priorities, props.device.properties]),
            ],
            device_ids=list,
        )
        self._explicit: set[str] = set()
        self._explicit_lock = threading.Lock()

    @hookimpl
    def get_version(self, device_name: str) -> Version:
        return Version(__version__, "AUTO meta-device (automatic device selection)")

    @hookimpl
    def set_property(self, properties: dict[str, Any], device_name: str, core: Core) -> None:
        self.config.set(properties)
        with self._explicit_lock:
            self._explicit |= {k for k in properties if k in _FORWARDED}

    @hookimpl
    def query_model(self, model: Model, properties: dict[str, Any], device_name: str, core: Core) -> dict[str, str]:
        """The answer of the device compile_model would choose (HETERO's answer over the candidates
        when no single device runs the whole model)."""
        _, selector = self._prepare(model, properties, device_name, core)
        try:
            selection = selector.first()
        except HeteroSDKError:
            selection = None
        if selection is not None and selection.device in selector.claims:
            return dict(selector.claims[selection.device])
        device = f"{HETERO_DEVICE}:{','.join(selector.candidates)}"
        if HETERO_DEVICE not in core.registered_devices:
            return {}
        return core.query_model(model, device, {props.device.properties: dict(selector.configs)})

    @hookimpl
    def compile_model(
        self, model: Model, properties: dict[str, Any], context: RemoteContext | None, device_name: str, core: Core
    ) -> AutoCompiledModel | CumulativeCompiledModel:
        config, selector = self._prepare(model, properties, device_name, core)
        if config[props.hint.performance_mode] == CUMULATIVE_THROUGHPUT:
            cumulative = self._compile_on_every_device(model, config, device_name, selector)
            if cumulative is not None:
                return cumulative
        started = time.perf_counter()
        selection = selector.first()
        size = model_size(model)
        startup = selector.startup_device(selection.device) if config[ENABLE_STARTUP_FALLBACK] else None
        decision = self._decide(startup, selection.device, size, core) if startup is not None else None
        if decision is not None and not decision.use:
            startup = None
        selection.startup = startup
        own = {**config, props.device.priorities: ",".join(selector.candidates), **selector.forwarded}
        _log.info("AUTO: '%s' goes to %s (startup: %s)", model.friendly_name, selection.device, startup)
        if decision is not None:
            _log.info("AUTO: %s", decision.describe())
        first = None
        if startup is not None:
            # the startup device first: if it fails, the chosen device compiles in the foreground and
            # no background thread is left behind
            try:
                first = core.compile_model(model, startup, selector.configs[startup])
            except HeteroSDKError as exc:
                _log.warning("AUTO: startup device %s failed (%s); waiting for %s", startup, exc, selection.device)
                selection.startup = None
        if first is None:
            served = self._compile_measured(model, selection, selector, size)
            return AutoCompiledModel(model.clone(), device_name, own, selection, served, decision=decision)
        startup_name = str(startup)
        kind = device_kind(core, startup_name)
        pending = compile_in_background(
            selection.device, lambda: self._compile_measured(model, selection, selector, size)
        )
        return AutoCompiledModel(
            model.clone(),
            device_name,
            own,
            selection,
            Served(startup_name, first),
            pending,
            decision=decision,
            started=started,
            on_startup_inference=lambda s: self.costs.record_inference(startup_name, kind, size, s),
        )

    @hookimpl
    def import_model(
        self, blob: bytes, properties: dict[str, Any], context: RemoteContext | None, device_name: str, core: Core
    ) -> AutoCompiledModel:
        header, payload = read_auto_blob(blob, device_name)
        device = header["device"]
        config, extra = self._resolve(properties)
        listed = [str(c) for c in header.get("candidates", [])] or [device]
        plain = parse_device_name(device)
        targets = list(plain.targets) or [plain.full]
        supported = {d: core.get_property(d, props.supported_properties) for d in targets}
        forwarded = self._forwarded(properties, config, extra, supported)
        configs = {d: _device_config(d, config, forwarded, supported[d]) for d in targets}
        device_config = configs[targets[0]] if not plain.targets else {props.device.properties: configs}
        compiled = core.import_model(payload, device, device_config)
        selection = Selection(device, listed)
        own = {**config, props.device.priorities: ",".join(listed), **forwarded}
        return AutoCompiledModel(compiled.model, device_name, own, selection, Served(device, compiled))

    # -- internals ----------------------------------------------------------------------------------

    def _resolve(self, properties: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        own = {k: v for k, v in properties.items() if k in self.config.specs}
        extra = {k: v for k, v in properties.items() if k not in self.config.specs}
        return self.config.resolve(own), extra

    def _forwarded(
        self,
        properties: Mapping[str, Any],
        config: Mapping[str, Any],
        extra: Mapping[str, Any],
        supported: Mapping[str, Any],
    ) -> dict[str, Any]:
        """AUTO's standard keys set explicitly, and the keys AUTO does not know, which some candidate
        must support."""
        for key in extra:
            if not any(key in keys for keys in supported.values()):
                raise UnsupportedPropertyError(
                    f"unsupported property {key!r}: neither AUTO nor any of its devices ({', '.join(supported)}) "
                    "supports it; pass it per device in DEVICE_PROPERTIES, or check its spelling"
                )
        with self._explicit_lock:
            explicit = set(self._explicit)
        standard_keys: dict[str, Any] = {k: config[k] for k in _FORWARDED if k in properties or k in explicit}
        return {**standard_keys, **extra}

    def _prepare(
        self, model: Model, properties: Mapping[str, Any], device_name: str, core: Core
    ) -> tuple[dict[str, Any], _AutoSelector]:
        config, extra = self._resolve(properties)
        priorities = [p for p in config[props.device.priorities].split(",") if p]
        found, skipped = candidates(core, priorities, device_name)
        for device, reason in skipped.items():
            _log.info("AUTO: skipping %s: %s", device, reason)
        supported = {d: core.get_property(d, props.supported_properties) for d in found}
        forwarded = self._forwarded(properties, config, extra, supported)
        configs = {d: _device_config(d, config, forwarded, supported[d]) for d in found}
        return config, _AutoSelector(model, found, core, configs, forwarded)

    def _compile_on_every_device(
        self, model: Model, config: Mapping[str, Any], device_name: str, selector: _AutoSelector
    ) -> CumulativeCompiledModel | None:
        """CUMULATIVE_THROUGHPUT: the model compiled on each candidate that runs all of it (each with the
        THROUGHPUT hint where it has hints); None when no candidate does (HETERO then takes it)."""
        devices = selector.whole_model_devices()
        if not devices:
            return None
        served = []
        for device in devices:
            device_config = dict(selector.configs[device])
            if props.hint.performance_mode in device_config:
                device_config[props.hint.performance_mode] = "THROUGHPUT"
            served.append(Served(device, selector.core.compile_model(model, device, device_config)))
        own = {**config, props.device.priorities: ",".join(selector.candidates), **selector.forwarded}
        _log.info("AUTO: '%s' runs on %s at once (CUMULATIVE_THROUGHPUT)", model.friendly_name, ", ".join(devices))
        selection = Selection(devices[0], list(selector.candidates))
        return CumulativeCompiledModel(model.clone(), device_name, own, selection, served)

    def _decide(self, startup: str, target: str, size: ModelSize, core: Core) -> StartupDecision:
        """Whether ``startup`` serves first, from the costs known for it and for ``target``."""
        startup_costs = self.costs.costs(startup, device_kind(core, startup))
        return decide_startup(startup, target, size, startup_costs, self.costs.costs(target, device_kind(core, target)))

    def _compile_measured(self, model: Model, selection: Selection, selector: _AutoSelector, size: ModelSize) -> Served:
        """:meth:`_compile_first_that_works`, recording how long the device that compiled took."""
        begin = time.perf_counter()
        served = self._compile_first_that_works(model, selection, selector)
        if not served.device.startswith(f"{HETERO_DEVICE}:"):
            kind = device_kind(selector.core, served.device)
            self.costs.record_compile(served.device, kind, size, time.perf_counter() - begin)
        return served

    def _compile_first_that_works(self, model: Model, selection: Selection, selector: _AutoSelector) -> Served:
        """Compiles on the chosen device; if that fails, on the next candidates that run the whole model
        (but the startup device, which already serves the model), asked only then: a compile that works
        queries no further device (a remote one would start its cluster to answer)."""
        core = selector.core
        chosen = selection.device
        try:
            return Served(chosen, core.compile_model(model, chosen, _compile_config(chosen, selector.configs)))
        except HeteroSDKError as exc:
            if chosen.startswith(f"{HETERO_DEVICE}:"):
                raise
            failure = exc
        selection.failures[chosen] = f"{type(failure).__name__}: {failure}"
        after = selector.candidates[selector.candidates.index(chosen) + 1 :]
        fallbacks = [d for d in after if d != selection.startup]
        if not any(selector.runs_all(d) for d in fallbacks):
            raise failure
        _log.warning("AUTO: %s failed to compile '%s': %s", chosen, model.friendly_name, failure)
        for device in (d for d in fallbacks if selector.runs_all(d)):
            try:
                return Served(device, core.compile_model(model, device, _compile_config(device, selector.configs)))
            except HeteroSDKError as exc:
                selection.failures[device] = f"{type(exc).__name__}: {exc}"
                _log.warning("AUTO: %s failed to compile '%s': %s", device, model.friendly_name, exc)
        tried = "; ".join(f"{d}: {why}" for d, why in selection.failures.items())
        raise CompilationError(f"AUTO: every device that runs '{model.friendly_name}' failed to compile it: {tried}")


class _AutoSelector(Selector):
    """A :class:`Selector` that also keeps the keys AUTO forwards to the devices."""

    def __init__(
        self,
        model: Model,
        found: Sequence[str],
        core: Core,
        configs: Mapping[str, dict[str, Any]],
        forwarded: Mapping[str, Any],
    ) -> None:
        super().__init__(model, found, core, configs)
        self.forwarded = dict(forwarded)


def _device_config(
    device: str, config: Mapping[str, Any], forwarded: Mapping[str, Any], supported: Mapping[str, Any]
) -> dict[str, Any]:
    """A candidate's configuration: its entry of DEVICE_PROPERTIES (plain name, then with its id), then
    the forwarded keys it lists."""
    table = config[props.device.properties]
    base = parse_device_name(device).name
    result = {**table.get(base, {}), **(table.get(device, {}) if device != base else {})}
    for key, value in forwarded.items():
        if key in supported:
            result.setdefault(key, value)
    return result


def _compile_config(device: str, configs: Mapping[str, dict[str, Any]]) -> dict[str, Any]:
    if device.startswith(f"{HETERO_DEVICE}:"):
        return {props.device.properties: {d: dict(c) for d, c in configs.items()}}
    return dict(configs[device])


if TYPE_CHECKING:  # mypy checks the hook methods against the contract's Protocols

    def _typed(plugin: AutoPlugin) -> tuple[DevicePlugin, ModelImporter, VersionReporter]:
        return plugin, plugin, plugin
