"""The HETERO meta-device: splits a model by affinity and compiles each part on its device through
the Core. Registered through the ``HETERO`` entry point like any device plugin."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from hetero_sdk import __version__
from hetero_sdk import properties as props
from hetero_sdk.device_name import parse_device_name
from hetero_sdk.errors import (
    AffinityError,
    BlobFormatError,
    CompilationError,
    HeteroSDKError,
    ModelFormatError,
    PropertyValueError,
    UnknownOpTypeError,
    UnsupportedPropertyError,
    did_you_mean,
)
from hetero_sdk.graph import Model, Node
from hetero_sdk.hetero.affinity import Placement, assign_affinities, compute_nodes, has_manual_affinities
from hetero_sdk.hetero.blob_format import read_blob
from hetero_sdk.hetero.calibration import measure_plans, place_by_latency
from hetero_sdk.hetero.check import check_partition
from hetero_sdk.hetero.compiled_model import HeteroCompiledModel
from hetero_sdk.hetero.distribution import PIPELINE_PARALLEL, plan_stages
from hetero_sdk.hetero.partition import PARTITIONERS, split_by_affinity
from hetero_sdk.hetero.report import CutInfo, LatencyInfo, PlacementReport, StageInfo
from hetero_sdk.hetero.subgraph import Subgraph
from hetero_sdk.hetero.submodels import Cut, SplitModel, Submodel, hosted_shapes, output_constants, split_model
from hetero_sdk.hetero.visualize import dump_if_requested
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
    one_of,
    read_only,
    standard,
)
from hetero_sdk.runtime import CompiledModel
from hetero_sdk.serialization import model_from_bytes

if TYPE_CHECKING:
    from hetero_sdk import Core

__all__ = ["HeteroPlugin"]


def _distribution(value: Any) -> list[str]:
    values = [value] if isinstance(value, str) else list(value)
    for item in values:
        if item not in ("", PIPELINE_PARALLEL):
            raise ValueError(item)
    return sorted({str(v) for v in values if v})


class HeteroPlugin(ConfiguredDevice):
    """The HETERO device: one model over several devices."""

    def __init__(self) -> None:
        self.config = DeviceConfig(
            [
                standard.device_priorities(),
                standard.device_properties(),
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
                PropertySpec(
                    props.hint.model_distribution_policy,
                    default=[],
                    convert=_distribution,
                    allowed="set(), {'PIPELINE_PARALLEL'}",
                ),
                PropertySpec(
                    props.hetero.placement_policy,
                    default="PRIORITY",
                    convert=one_of("PRIORITY", "LATENCY"),
                    allowed="PRIORITY, LATENCY",
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
    def get_version(self, device_name: str) -> Version:
        return Version(__version__, "HETERO meta-device (split execution)")

    @hookimpl
    def query_model(self, model: Model, properties: dict[str, Any], device_name: str, core: Core) -> dict[str, str]:
        config, _ = self._resolve(properties)
        priorities = _listed_devices(config[props.device.priorities], core)
        if PIPELINE_PARALLEL in config[props.hint.model_distribution_policy]:
            parts, _, _ = _pipeline(model, priorities, core, config)
            return _with_colourless(model, {n.friendly_name: p.device for p in parts for n in p.nodes})
        placement = assign_affinities(model, priorities, core, _per_device(config, priorities), require_all=False)
        return _with_colourless(model, placement.device, placement.structural)

    @hookimpl
    def compile_model(
        self, model: Model, properties: dict[str, Any], context: RemoteContext | None, device_name: str, core: Core
    ) -> HeteroCompiledModel:
        config, forwarded = self._resolve(properties)
        priorities = _listed_devices(config[props.device.priorities], core)
        pipeline = PIPELINE_PARALLEL in config[props.hint.model_distribution_policy]
        latency: LatencyInfo | None = None
        stages: list[StageInfo] = []
        notes: list[str] = []
        parts: list[Subgraph] = []
        if pipeline:
            parts, stages, notes = _pipeline(model, priorities, core, config)
            placement = Placement({n.friendly_name: p.device for p in parts for n in p.nodes})
        else:
            placement = assign_affinities(model, priorities, core, _per_device(config, priorities))
            if config[props.hetero.placement_policy] == "LATENCY" and not placement.manual:
                placement, latency = place_by_latency(
                    model, priorities, core, _per_device(config, priorities), placement
                )
        devices = sorted(set(placement.device.values()))
        device_config = _per_device(config, devices)
        if config[props.enable_profiling]:
            forwarded.setdefault(props.enable_profiling, True)
        _forward(forwarded, devices, device_config, core, priorities)
        split = (
            _split_pipeline(model, parts) if pipeline else _partition(model, placement, config["HETERO_PARTITIONER"])
        )
        fallbacks: dict[int, tuple[str, str, str]] = {}
        compiled = [
            _compile(sub, core, device_config, priorities, config["HETERO_FALLBACK_POLICY"], fallbacks)
            for sub in split.submodels
        ]
        used = [fallbacks[sub.index][1] if sub.index in fallbacks else sub.device for sub in split.submodels]
        report = _report(split, placement, used, fallbacks)
        report.policy = PIPELINE_PARALLEL if pipeline else config[props.hetero.placement_policy]
        report.stages, report.notes, report.latency = stages, notes, latency
        dump_if_requested(model, report)
        result = HeteroCompiledModel(model.clone(), device_name, split, compiled, {**config, **forwarded}, report)
        if latency is not None:
            measure_plans(result, model, core, device_config, latency)
        return result

    @hookimpl
    def import_model(
        self, blob: bytes, properties: dict[str, Any], context: RemoteContext | None, device_name: str, core: Core
    ) -> HeteroCompiledModel:
        parsed = read_blob(blob)
        header, model = parsed.header, parsed.model
        stored = header["config"]
        own = self.config.from_blob(
            {k: v for k, v in stored.items() if k in self.config.specs}, "HETERO blob header field 'config'"
        )
        devices = sorted({entry["device"] for entry in header["submodels"]})
        known = {k for device in devices for k in core.get_property(device, props.supported_properties)}
        if extra := sorted(stored.keys() - own.keys() - known):  # before any submodel is compiled
            raise BlobFormatError(
                f"HETERO blob header field 'config' holds {extra[0]!r}, a property neither HETERO nor its devices "
                f"({', '.join(devices)}) support; export the model again"
            )
        submodels = []
        compiled = []
        for i, (entry, payload) in enumerate(zip(header["submodels"], parsed.payloads)):
            device = entry["device"]
            config = dict(properties.get(props.device.properties, {}).get(device, {}))
            try:
                if entry["payload"] == "device":
                    sub_compiled = core.import_model(payload, device, config)
                else:
                    sub_model = model_from_bytes(payload, source=f"HETERO blob submodel{i}")
                    sub_compiled = core.compile_model(sub_model, device, config)
            except UnknownOpTypeError:  # the blob is sound; an extension is missing here (the error names it)
                raise
            except (BlobFormatError, ModelFormatError) as exc:
                raise BlobFormatError(f"HETERO blob frame 'submodel{i}' for {device}: {exc}") from exc
            compiled.append(sub_compiled)
            submodels.append(
                Submodel(i, device, sub_compiled.get_runtime_model(), tuple(entry["inputs"]), tuple(entry["outputs"]))
            )
        try:
            report = PlacementReport.from_dict(header["report"])
        except Exception as exc:  # an informative field, rebuilt as it is: any defect is the blob's
            raise BlobFormatError(
                f"HETERO blob header field 'report' is malformed: {type(exc).__name__}: {exc}"
            ) from exc
        try:
            cuts = _cuts_of(header["cuts"], submodels, compiled)
            read = {key for sub in submodels for key in sub.inputs} | set(header["outputs"])
            shapes = hosted_shapes(model, read) if len(submodels) > 1 else {}
            split = SplitModel(
                tuple(submodels),
                tuple(header["inputs"]),
                tuple(header["outputs"]),
                output_constants(model),
                cuts,
                shapes,
            )
            config = {**{k: v for k, v in stored.items() if k not in own}, **own, **properties}
            return HeteroCompiledModel(model, device_name, split, compiled, config, report)
        except (UnsupportedPropertyError, PropertyValueError):
            raise  # the caller's properties
        except Exception as exc:  # the frames parse, and yet the split does not fit the submodels
            raise BlobFormatError(
                f"HETERO blob header fields 'inputs', 'outputs', 'cuts' or 'submodels' do not fit the submodels' "
                f"ports: {type(exc).__name__}: {exc}"
            ) from exc

    def _resolve(self, properties: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        own = {k: v for k, v in properties.items() if k in self.config.specs}
        forwarded = {k: v for k, v in properties.items() if k not in self.config.specs}
        return self.config.resolve(own), forwarded


def _split(priorities: str) -> list[str]:
    return [p for p in priorities.split(",") if p]


def _listed_devices(priorities: str, core: Core) -> list[str]:
    """The devices HETERO is given, each checked to exist with its id (``TEMPLATE.1`` on a one-device
    TEMPLATE is refused as it is alone, rather than silently left unused).

    :raises DeviceNotFoundError: naming the device and the ids it has.
    """
    devices = _split(priorities)
    for device in devices:
        core.get_property(device, props.supported_properties)
    return devices


def _per_device(
    config: Mapping[str, Any], devices: Sequence[str], *, budgets: bool = False
) -> dict[str, dict[str, Any]]:
    """Each device's entry of DEVICE_PROPERTIES (its plain name's entry, then its own with an id),
    without the ``DEVICE_TOTAL_MEM_SIZE`` budgets, which HETERO plans with and does not pass on (or only
    those, with ``budgets``)."""
    table = config[props.device.properties]
    result = {}
    for device in devices:
        base = parse_device_name(device).name
        merged = {**table.get(base, {}), **(table.get(device, {}) if device != base else {})}
        budget = merged.pop(props.device.total_mem_size, None)
        result[device] = ({props.device.total_mem_size: budget} if budget is not None else {}) if budgets else merged
    return result


def _pipeline(
    model: Model, priorities: Sequence[str], core: Core, config: Mapping[str, Any]
) -> tuple[list[Subgraph], list[StageInfo], list[str]]:
    """PIPELINE_PARALLEL's stages over the listed devices, and what to note in the report."""
    if has_manual_affinities(model):
        raise AffinityError(
            "MODEL_DISTRIBUTION_POLICY=PIPELINE_PARALLEL places ops itself, but the model has rt_info affinities: "
            "remove them, or remove the policy to use them"
        )
    if not priorities:
        raise AffinityError("PIPELINE_PARALLEL needs devices: use HETERO:A.0,A.1 or set MULTI_DEVICE_PRIORITIES")
    budgets = {d: v.get(props.device.total_mem_size) for d, v in _per_device(config, priorities, budgets=True).items()}
    parts, stages, plan = plan_stages(model, priorities, core, _per_device(config, priorities), budgets)
    notes = []
    if len(stages) == 1:
        s = stages[0]
        notes.append(
            f"PIPELINE_PARALLEL: the model fits on {s.device} ({s.memory_bytes} of {s.budget} bytes, "
            f"{s.budget_source}): not split"
        )
    else:
        notes.append(f"PIPELINE_PARALLEL: {len(stages)} stages, {plan.transfer_bytes} bytes between stages")
    return parts, stages, notes


def _split_pipeline(model: Model, parts: Sequence[Subgraph]) -> SplitModel:
    ops = compute_nodes(model)
    members = {id(n) for n in ops}
    consumers = model.consumers()
    successors = {n: [u for o in n.outputs() for u, _ in consumers.get(o, []) if id(u) in members] for n in ops}
    affinity = {n: p.device for p in parts for n in p.nodes}
    check_partition(successors, affinity, list(parts))  # type: ignore[arg-type]
    return split_model(model, parts)


def _forward(
    forwarded: Mapping[str, Any],
    devices: Sequence[str],
    device_config: dict[str, dict[str, Any]],
    core: Core,
    listed: Sequence[str],
) -> None:
    """Passes HETERO-level keys to the devices the model runs on that support them; a device's own
    DEVICE_PROPERTIES win. A key that no listed device supports (no device the model runs on, when none
    is listed) is an error; one only an unused listed device supports goes nowhere.

    :raises UnsupportedPropertyError: naming the key, the devices and the keys they have.
    """
    candidates = list(listed) or list(devices)
    supported = {d: core.get_property(d, props.supported_properties) for d in {*devices, *candidates}}
    for key, value in forwarded.items():
        if not any(key in supported[d] for d in candidates):
            known = {k for d in candidates for k in supported[d]}
            raise UnsupportedPropertyError(
                f"no device of {', '.join(candidates)} supports property {key!r} "
                f"({did_you_mean(key, known, listing='their properties')}); pass it per device in DEVICE_PROPERTIES"
            )
        for device in devices:
            if key in supported[device]:
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
    except (PropertyValueError, UnsupportedPropertyError):
        raise  # the configuration's fault, not the subgraph's: no other device would mend it
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


def _with_colourless(
    model: Model, device: Mapping[str, str], structural: Mapping[str, str] | None = None
) -> dict[str, str]:
    """query_model's answer: compute ops, plus Parameters and Constants with their first claimed
    consumer's device, and Results and sinks with their producer's; those that no compute op places (a
    Constant or Parameter that only feeds Results, or nothing) take the device that claimed them in
    ``structural`` (:attr:`Placement.structural`)."""
    answer = dict(device)
    consumers = model.consumers()
    for node in model.get_ordered_ops():
        if node.type_name in ("Parameter", "Constant"):
            for user, _ in consumers.get(node.output(0), []):
                if user.friendly_name in answer and not user.op.structural:
                    answer[node.friendly_name] = answer[user.friendly_name]
                    break
            else:
                if structural and node.friendly_name in structural:
                    answer[node.friendly_name] = structural[node.friendly_name]
    for result in [*model.get_results(), *model.get_sinks()]:  # (a sink: an Assign, with its producer)
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


if TYPE_CHECKING:  # mypy checks the hook methods against the contract's Protocols

    def _typed(plugin: HeteroPlugin) -> tuple[DevicePlugin, ModelImporter, VersionReporter]:
        return plugin, plugin, plugin
