"""The HETERO meta-device: splits a model by affinity and compiles each part on its device through
the Core. Registered through the ``HETERO`` entry point like any device plugin."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from hetero_sdk import __version__
from hetero_sdk import properties as props
from hetero_sdk.device_name import parse_device_name
from hetero_sdk.errors import (
    BlobFormatError,
    CompilationError,
    HeteroSDKError,
    ModelFormatError,
    UnsupportedPropertyError,
)
from hetero_sdk.graph import Model, Node
from hetero_sdk.hetero.affinity import Placement, assign_affinities, compute_nodes
from hetero_sdk.hetero.blob_format import read_blob
from hetero_sdk.hetero.check import check_partition
from hetero_sdk.hetero.compiled_model import HeteroCompiledModel
from hetero_sdk.hetero.partition import PARTITIONERS, split_by_affinity
from hetero_sdk.hetero.report import CutInfo, PlacementReport
from hetero_sdk.hetero.submodels import Cut, SplitModel, Submodel, output_constants, split_model
from hetero_sdk.hetero.visualize import dump_if_requested
from hetero_sdk.plugin import (
    ConfiguredDevice,
    DeviceConfig,
    PropertySpec,
    Version,
    as_bool,
    hookimpl,
    one_of,
    read_only,
)
from hetero_sdk.runtime import CompiledModel
from hetero_sdk.serialization import model_from_bytes

if TYPE_CHECKING:
    from hetero_sdk import Core

__all__ = ["HeteroPlugin"]


def _priorities(value: Any) -> str:
    text = ",".join(value) if isinstance(value, (list, tuple)) else str(value)
    for name in filter(None, text.split(",")):
        parse_device_name(name)
    return text


def _device_properties(value: Any) -> dict[str, dict[str, Any]]:
    if not isinstance(value, Mapping) or not all(isinstance(v, Mapping) for v in value.values()):
        raise TypeError("expected {device: {key: value}}")
    return {str(k): dict(v) for k, v in value.items()}


class HeteroPlugin(ConfiguredDevice):
    """The HETERO device: one model over several devices."""

    def __init__(self) -> None:
        self.config = DeviceConfig(
            [
                PropertySpec(props.device.priorities, default="", convert=_priorities, allowed="'A,B,...'"),
                PropertySpec(
                    props.device.properties, default={}, convert=_device_properties, allowed="{device: {key: value}}"
                ),
                PropertySpec(props.enable_profiling, default=False, convert=as_bool, allowed="True, False"),
                PropertySpec(
                    "HETERO_PARTITIONER",
                    default="default",
                    convert=one_of(*PARTITIONERS.names()),
                    allowed=", ".join(PARTITIONERS.names()),
                ),
                PropertySpec(
                    "HETERO_FALLBACK_POLICY",
                    default="NONE",
                    convert=one_of("NONE", "NEXT_DEVICE"),
                    allowed="NONE, NEXT_DEVICE",
                ),
                read_only(props.available_devices, []),
                read_only(props.device.full_name, "HETERO"),
                read_only(props.device.architecture, "HETERO"),
                read_only(props.device.capabilities, ["EXPORT_IMPORT"]),
                read_only(props.range_for_async_infer_requests, (1, 16, 1)),
                read_only(props.caching_properties, [props.device.priorities, props.device.properties]),
            ],
            device_ids=list,
        )

    @hookimpl
    def get_version(self) -> Version:
        return Version(__version__, "HETERO meta-device (split execution)")

    @hookimpl
    def query_model(self, model: Model, properties: dict[str, Any], core: Core) -> dict[str, str]:
        config, _ = self._resolve(properties)
        priorities = _split(config[props.device.priorities])
        placement = assign_affinities(model, priorities, core, _per_device(config, priorities), require_all=False)
        return _with_colourless(model, placement.device)

    @hookimpl
    def compile_model(
        self, model: Model, properties: dict[str, Any], device_name: str, core: Core
    ) -> HeteroCompiledModel:
        config, forwarded = self._resolve(properties)
        priorities = _split(config[props.device.priorities])
        placement = assign_affinities(model, priorities, core, _per_device(config, priorities))
        devices = sorted(set(placement.device.values()))
        device_config = _per_device(config, devices)
        if config[props.enable_profiling]:
            forwarded.setdefault(props.enable_profiling, True)
        _forward(forwarded, devices, device_config, core)
        split = _partition(model, placement, config["HETERO_PARTITIONER"])
        fallbacks: dict[int, tuple[str, str, str]] = {}
        compiled = [
            _compile(sub, core, device_config, priorities, config["HETERO_FALLBACK_POLICY"], fallbacks)
            for sub in split.submodels
        ]
        used = [fallbacks[sub.index][1] if sub.index in fallbacks else sub.device for sub in split.submodels]
        report = _report(split, placement, used, fallbacks)
        dump_if_requested(model, report)
        return HeteroCompiledModel(model.clone(), device_name, split, compiled, {**config, **forwarded}, report)

    @hookimpl
    def import_model(
        self, blob: bytes, properties: dict[str, Any], device_name: str, core: Core
    ) -> HeteroCompiledModel:
        parsed = read_blob(blob)
        header, model = parsed.header, parsed.model
        submodels = []
        compiled = []
        try:
            for i, (entry, payload) in enumerate(zip(header["submodels"], parsed.payloads)):
                device = entry["device"]
                config = dict(properties.get(props.device.properties, {}).get(device, {}))
                if entry["payload"] == "device":
                    sub_compiled = core.import_model(payload, device, config)
                else:
                    sub_compiled = core.compile_model(
                        model_from_bytes(payload, source=f"HETERO blob submodel{i}"), device, config
                    )
                compiled.append(sub_compiled)
                submodels.append(
                    Submodel(
                        i, device, sub_compiled.get_runtime_model(), tuple(entry["inputs"]), tuple(entry["outputs"])
                    )
                )
            report = PlacementReport.from_dict(header["report"])
        except (KeyError, TypeError, ValueError, ModelFormatError) as exc:
            raise BlobFormatError(f"HETERO blob is malformed: {type(exc).__name__}: {exc}") from exc
        cuts = _cuts_of(header["cuts"], submodels, compiled)
        split = SplitModel(
            tuple(submodels), tuple(header["inputs"]), tuple(header["outputs"]), output_constants(model), cuts
        )
        config = {**header["config"], **properties}
        return HeteroCompiledModel(model, device_name, split, compiled, config, report)

    def _resolve(self, properties: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        own = {k: v for k, v in properties.items() if k in self.config.specs}
        forwarded = {k: v for k, v in properties.items() if k not in self.config.specs}
        return self.config.resolve(own), forwarded


def _split(priorities: str) -> list[str]:
    return [p for p in priorities.split(",") if p]


def _per_device(config: Mapping[str, Any], devices: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Each device's entry of DEVICE_PROPERTIES (its plain name's entry, then its own with an id)."""
    table = config[props.device.properties]
    result = {}
    for device in devices:
        base = parse_device_name(device).name
        result[device] = {**table.get(base, {}), **(table.get(device, {}) if device != base else {})}
    return result


def _forward(
    forwarded: Mapping[str, Any], devices: Sequence[str], device_config: dict[str, dict[str, Any]], core: Core
) -> None:
    """Passes HETERO-level keys to the devices that support them; a device's own DEVICE_PROPERTIES win."""
    supported = {d: core.get_property(d, props.supported_properties) for d in devices}
    for key, value in forwarded.items():
        takers = [d for d in devices if key in supported[d]]
        if not takers:
            raise UnsupportedPropertyError(
                f"no device of {', '.join(devices)} supports property {key!r}; pass it per device in "
                "DEVICE_PROPERTIES, or check its spelling"
            )
        for device in takers:
            device_config[device].setdefault(key, value)


def _partition(model: Model, placement: Placement, algorithm: str) -> SplitModel:
    ops = compute_nodes(model)
    members = {id(n) for n in ops}
    users: dict[int, list[Node]] = {id(n): [] for n in ops}
    for node in ops:
        for source in node.input_values():
            if id(source.node) in members:
                users[id(source.node)].append(node)
    successors = {n: users[id(n)] for n in ops}
    affinity = {n: placement.device[n.friendly_name] for n in ops}
    parts = split_by_affinity(successors, affinity, algorithm=algorithm)  # type: ignore[arg-type]
    check_partition(successors, affinity, parts)
    return split_model(model, parts)


def _compile(
    sub: Submodel,
    core: Core,
    device_config: Mapping[str, dict[str, Any]],
    priorities: Sequence[str],
    policy: str,
    fallbacks: dict[int, tuple[str, str, str]],
) -> CompiledModel:
    try:
        return core.compile_model(sub.model, sub.device, device_config.get(sub.device, {}))
    except HeteroSDKError as exc:
        failure = exc
    if policy == "NEXT_DEVICE" and sub.device in priorities:
        wanted = {n.friendly_name for n in sub.model.get_ops()}
        for device in priorities[priorities.index(sub.device) + 1 :]:
            try:
                if wanted <= core.query_model(sub.model, device).keys():
                    compiled = core.compile_model(sub.model, device, device_config.get(device, {}))
                    fallbacks[sub.index] = (sub.device, device, str(failure))
                    return compiled
            except HeteroSDKError:
                continue
    raise CompilationError(
        f"device {sub.device} failed to compile subgraph{sub.index} "
        f"({len(compute_nodes(sub.model))} ops: {', '.join(n.friendly_name for n in compute_nodes(sub.model)[:8])}): "
        f"{failure}; set HETERO_FALLBACK_POLICY=NEXT_DEVICE to move it to the next device"
    ) from failure


def _report(
    split: SplitModel, placement: Placement, devices: Sequence[str], fallbacks: dict[int, tuple[str, str, str]]
) -> PlacementReport:
    where: dict[str, tuple[str, int]] = {}
    subgraphs = []
    for sub, device in zip(split.submodels, devices):
        ops = [n.friendly_name for n in compute_nodes(sub.model)]
        subgraphs.append((device, ops))
        for op in ops:
            where[op] = (device, sub.index)
    cuts = [CutInfo(c.key, c.producer, c.consumers, c.element_type.value, str(c.shape), c.nbytes) for c in split.cuts]
    return PlacementReport(where, dict(placement.rejected_by), subgraphs, cuts, fallbacks, placement.manual)


def _with_colourless(model: Model, device: Mapping[str, str]) -> dict[str, str]:
    """query_model's answer: compute ops, plus Parameters and Constants with their first claimed
    consumer's device, and Results with their producer's."""
    answer = dict(device)
    consumers = model.consumers()
    for node in model.get_ordered_ops():
        if node.type_name in ("Parameter", "Constant"):
            for user, _ in consumers.get(node.output(0), []):
                if user.friendly_name in answer and not user.op.structural:
                    answer[node.friendly_name] = answer[user.friendly_name]
                    break
    for result in model.get_results():
        producer = result.input_value(0).node.friendly_name
        if producer in answer:
            answer[result.friendly_name] = answer[producer]
    return answer


def _cuts_of(
    entries: list[list[Any]], submodels: Sequence[Submodel], compiled: Sequence[CompiledModel]
) -> tuple[Cut, ...]:
    """The cut tensors of an imported split, typed by the input ports of their consumers."""
    ports = {key: port for sub, c in zip(submodels, compiled) for key, port in zip(sub.inputs, c.inputs)}
    return tuple(
        Cut(key, int(producer), tuple(consumers), ports[key].element_type, ports[key].partial_shape)
        for key, producer, consumers in entries
    )
