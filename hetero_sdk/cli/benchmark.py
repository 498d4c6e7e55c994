"""``hetero-sdk benchmark [-m MODEL]``: the main job. Compile a model (an ONNX or native file, or the
built-in detection sample by default, split over ``HETERO:XLA,TEMPLATE`` when XLA is installed), show
the partition, check the results against the reference evaluator, and time it as OpenVINO's
benchmark_app does, with its single-dash options and its report (Count, Duration, Latency, Throughput)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import click

from hetero_sdk.cli.check import CheckResult, check_results
from hetero_sdk.cli.context import EXIT_FAILURE, LOAD_CONFIG, apply_config_file, check_installed, get_core
from hetero_sdk.cli.dash_options import NOT_TAKEN, DashOptionCommand
from hetero_sdk.cli.input_files import InputData, load_input_files
from hetero_sdk.cli.measure import Timing, perf_counters, run_async, run_sync
from hetero_sdk.cli.models import (
    LoadedModel,
    default_device,
    load_model,
    model_source,
    random_inputs,
    validate_device,
)
from hetero_sdk.cli.output import Printer, emit_json, progress, status
from hetero_sdk.cli.query import placement_of, print_summary
from hetero_sdk.cli.report_files import REPORT_TYPES, write_counters_report, write_statistics_report
from hetero_sdk.cli.shapes import SHAPES, InputShapes, require_static, shapes_text
from hetero_sdk.core import Core
from hetero_sdk.device_name import parse_device_name
from hetero_sdk.errors import HeteroSDKError, did_you_mean
from hetero_sdk.genai.compiles import compiled_so_far
from hetero_sdk.graph import Model
from hetero_sdk.hetero.report import PlacementReport
from hetero_sdk.runtime import CompiledModel

__all__ = ["DEFAULT_MODEL", "DEFAULT_TIME_S", "EXIT_INTERRUPTED", "benchmark"]

DEFAULT_MODEL = "detection"
EXIT_INTERRUPTED = 130
"""The exit status after Ctrl-C, as shells report SIGINT; the statistics are printed first."""
DEFAULT_TIME_S = 3.0
"""The time limit when neither -niter nor -t is given: the main job must stay a few seconds long."""
_HINTS = ("throughput", "cumulative_throughput", "latency", "none")


def _supports(core: Core, device: str, key: str) -> bool:
    """Whether ``device`` (or, for ``HETERO:A,B``, one of its targets, which HETERO forwards to) takes ``key``."""
    parsed = parse_device_name(device)
    targets = parsed.targets or (device,)
    for target in targets:
        try:
            if key in core.get_property(target, "SUPPORTED_PROPERTIES"):
                return True
        except HeteroSDKError:
            continue
    return False


def _config(core: Core, device: str, api: str, hint: str | None, pc: bool) -> dict[str, Any]:
    config: dict[str, Any] = {"PERF_COUNT": True} if pc else {}
    if hint is None:
        if _supports(core, device, "PERFORMANCE_HINT"):
            config["PERFORMANCE_HINT"] = "LATENCY" if api == "sync" else "THROUGHPUT"
    elif hint != "none":
        config["PERFORMANCE_HINT"] = hint.upper()
    return config


def _streams(device: str, text: str) -> dict[str, Any]:
    """``-nstreams`` as config: ``N`` (or ``AUTO``: from PERFORMANCE_HINT, ``NUM_STREAMS`` 0) for the
    device, which HETERO and AUTO pass on to theirs; ``DEV:N,DEV:N`` per device of a HETERO or AUTO
    device string, through ``DEVICE_PROPERTIES``."""

    def count(value: str, part: str) -> int:
        value = value.strip().upper()
        if value == "AUTO":
            return 0
        if not value.isdigit():
            raise click.BadParameter(
                f"{part!r} is not a number of streams; give an integer >= 0 or AUTO, or DEVICE:N per device",
                param_hint="-nstreams",
            )
        return int(value)

    if ":" not in text:
        return {"NUM_STREAMS": count(text, text)}
    per_device = {}
    for part in text.split(","):
        name, _, value = part.partition(":")
        per_device[name.strip()] = {"NUM_STREAMS": count(value, part)}
    parsed = parse_device_name(device)
    if not parsed.targets:
        if set(per_device) != {device}:
            raise click.BadParameter(
                f"{text!r} names {', '.join(per_device)}, but the device is {device}; write -nstreams N",
                param_hint="-nstreams",
            )
        return per_device[device]
    listed = {*parsed.targets, *(parse_device_name(t).name for t in parsed.targets)}
    unknown = sorted(set(per_device) - listed)
    if unknown:
        raise click.BadParameter(
            f"{unknown[0]!r} is not one of the devices of {device}; {did_you_mean(unknown[0], parsed.targets)}",
            param_hint="-nstreams",
        )
    return {"DEVICE_PROPERTIES": per_device}


def _print(
    out: Printer, data: dict[str, Any], loaded: LoadedModel, partition: PlacementReport, check: CheckResult | None
) -> None:
    out.heading("Model")
    model = data["model"]
    out.fields(
        [
            ("model", loaded.describe()),
            *([("shape", shapes_text(loaded.shapes))] if loaded.shapes else []),
            ("inputs", ", ".join(f"{p['name']} {p['element_type']}{p['shape']}" for p in model["inputs"])),
            ("outputs", ", ".join(f"{p['name']} {p['element_type']}{p['shape']}" for p in model["outputs"])),
            ("graph", loaded.ops_text()),
            ("input data", ", ".join(f"{name}: {source}" for name, source in data["input_data"].items())),
            ("device", f"{data['device']} (runs on {', '.join(data['execution_devices'])})"),
            *([("AUTO", data["auto_serving"])] if data.get("auto_serving") else []),
            ("config", ", ".join(f"{k}={v}" for k, v in data["config"].items()) or "-"),
        ]
    )
    out.heading("Partition")
    print_summary(out, partition)
    out.heading("Results check")
    if check is None:
        out.line("  skipped (--no-check)")
    elif check.status == "SKIPPED":
        out.line(f"  {check.summary()}", style="yellow")
    else:
        out.verdict(check.ok, check.summary())
    out.heading("Timing")
    if data["interrupted"]:
        out.line(
            f"  interrupted (Ctrl-C): the figures cover the {data['iterations']} inference(s) done", style="yellow"
        )
    if not data["iterations"]:
        return
    settings = data["settings"]
    limit = f"{settings['niter']} iterations" if settings["niter"] is not None else f"{settings['time_limit_s']:g} s"
    stats = data["latency_ms"]
    out.fields(
        [
            ("api", f"{settings['api']}, {settings['nireq']} request(s), limit {limit}"),
            ("First inference", f"{data['first_inference_ms']:.2f} ms"),
            *([("Executables compiled", data["executables_compiled"])] if data["executables_compiled"] else []),
            ("Count", f"{data['iterations']} iterations"),
            ("Duration", f"{data['duration_s'] * 1e3:.2f} ms"),
            ("Latency:", ""),
            ("  Median", f"{stats['median']:.2f} ms"),
            ("  Average", f"{stats['average']:.2f} ms"),
            ("  Min", f"{stats['min']:.2f} ms"),
            ("  Max", f"{stats['max']:.2f} ms"),
            ("  p90", f"{stats['p90']:.2f} ms"),
            ("  p99", f"{stats['p99']:.2f} ms"),
            ("Throughput", f"{data['throughput_fps']:.2f} FPS"),
        ]
    )
    for path in data.get("report_files", []):
        out.line(f"  report written: {path}")
    counters = data.get("perf_counts")
    if counters:
        columns = ["NAME", "TYPE", "EXEC TYPE", "STATUS", "REAL TIME (ms)", "CPU TIME (ms)"]
        keys = ["name", "type", "exec_type", "status", "real_time_ms", "cpu_time_ms"]
        for title, rows in (("Per-subgraph counters", counters["subgraphs"]), ("Per-op counters", counters["ops"])):
            if rows:
                out.heading(title)
                out.table(columns, [[row[k] for k in keys] for row in rows])


@click.command(
    cls=DashOptionCommand,
    not_taken=NOT_TAKEN,
    short_help="Split, check and time a model (the main job).",
    context_settings={"show_default": True},
)
@click.argument("model", required=False)
@click.option(
    "-m",
    "--model",
    "model_option",
    metavar="MODEL",
    help="The model: an ONNX or native file, or a sample [default: detection]",
)
@click.option(
    "-d",
    "--device",
    callback=validate_device,
    help="The device [default: HETERO:XLA,TEMPLATE when XLA is installed, else TEMPLATE]",
)
@click.option(
    "-shape",
    "--input-shape",
    "shape",
    type=SHAPES,
    help='Input shapes, as benchmark_app: "[1,3,224,224]" for one input, "a[1,3],b[2]" by name; '
    "needed when the model's inputs are dynamic",
)
@click.option(
    "-b",
    "--batch-size",
    "batch",
    type=click.IntRange(min=1),
    help="Batch size: the first dimension of every input (after -shape), as benchmark_app's -b.",
)
@click.option(
    "-i",
    "--input",
    "input_files",
    metavar="PATH",
    help="Input data instead of random values: an .npz (arrays by input name), an .npy or an image for "
    "the model's one input, name:FILE,other:FILE, or a folder of them.",
)
@click.option("-api", "--api", type=click.Choice(["sync", "async"]), default="async", help="Inference API.")
@click.option(
    "-nireq", "--nireq", type=click.IntRange(min=1), help="Requests in flight (async) [default: the device's optimal]"
)
@click.option(
    "-nstreams",
    "--nstreams",
    metavar="N|AUTO|DEV:N,...",
    help="NUM_STREAMS (requests a device runs at once): one number, AUTO (from the hint), or per device.",
)
@click.option("-niter", "--niter", type=click.IntRange(min=1), help="Stop after this many inferences.")
@click.option(
    "-t",
    "--time",
    "time_limit",
    type=click.FloatRange(min=0, min_open=True),
    help=f"Stop after this many seconds [default: {DEFAULT_TIME_S:g} unless -niter is given]",
)
@click.option(
    "-hint",
    "--hint",
    type=click.Choice(_HINTS, case_sensitive=False),
    help="PERFORMANCE_HINT, in either case [default: throughput for async, latency for sync, where the device "
    "has hints]",
)
@click.option("-pc", "--pc", is_flag=True, help="Report per-subgraph and per-op performance counters (PERF_COUNT).")
@click.option(
    "-report_type",
    "--report-type",
    type=click.Choice(REPORT_TYPES),
    help="Write benchmark_app's CSV reports to -report_folder; the counter types turn on PERF_COUNT.",
)
@click.option(
    "-report_folder",
    "--report-folder",
    type=click.Path(file_okay=False),
    default=".",
    help="The folder -report_type writes to.",
)
@LOAD_CONFIG
@click.option("--seed", type=int, default=0, help="Seed of the random inputs.")
@click.option("--check/--no-check", default=True, help="Compare the outputs with the reference evaluator.")
@click.option("--rtol", type=click.FloatRange(min=0), default=1e-4, help="Relative tolerance of the results check.")
@click.option("--atol", type=click.FloatRange(min=0), default=1e-5, help="Absolute tolerance of the results check.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.option("--report", "report_file", type=click.Path(dir_okay=False), help="Also write the JSON report here.")
@click.pass_context
def benchmark(
    ctx: click.Context,
    model: str | None,
    model_option: str | None,
    device: str | None,
    shape: InputShapes | None,
    batch: int | None,
    input_files: str | None,
    api: str,
    nireq: int | None,
    nstreams: str | None,
    niter: int | None,
    time_limit: float | None,
    hint: str | None,
    pc: bool,
    report_type: str | None,
    report_folder: str,
    config_file: str | None,
    seed: int,
    check: bool,
    rtol: float,
    atol: float,
    as_json: bool,
    report_file: str | None,
) -> None:
    """Measure latency and throughput of MODEL on a device, after checking its results.

    MODEL (or -m MODEL) is a model file, ONNX (.onnx) or native (.json with its .bin), or a built-in
    sample (detection, mlp); without it, the detection sample, whose NonMaxSuppression XLA cannot
    run, so HETERO splits it. Inputs are random (--seed); a model with dynamic input dimensions needs
    -shape. With both -niter and -t, the first limit reached stops. Exits 1 when the results check
    fails.
    """
    if api == "sync" and nireq not in (None, 1):
        raise click.UsageError("-nireq applies to --api async; sync runs one request", ctx)
    pc = pc or report_type in ("average_counters", "detailed_counters")
    core = get_core(ctx)
    device = device or default_device(core)
    check_installed(core, device)  # a wrong name is answered before the model is read or a device loaded
    loaded = load_model(core, model_source(ctx, model, model_option) or DEFAULT_MODEL, shape, batch)
    require_static(loaded.model, loaded.describe())
    random = random_inputs(loaded.model, seed)
    feeds = (
        load_input_files(loaded.model, input_files, random)
        if input_files
        else InputData([random], dict.fromkeys(random, "random"))
    )
    inputs = feeds.sets[0]
    config = {
        **_config(core, device, api, hint, pc),
        **(_streams(device, nstreams) if nstreams else {}),
        **apply_config_file(core, config_file, device),
    }
    compile_started = time.perf_counter()
    with status(f"compiling {loaded.model.friendly_name} on {device}"):
        compiled = core.compile_model(loaded.model, device, config)
    compile_ms = (time.perf_counter() - compile_started) * 1e3
    partition = placement_of(compiled, loaded.model)

    started = time.perf_counter()
    first = compiled.create_infer_request().infer(inputs)
    first_ms = (time.perf_counter() - started) * 1e3
    verdict = check_results(loaded.model, inputs, first.to_tuple(), rtol, atol) if check else None

    if niter is None and time_limit is None:
        time_limit = DEFAULT_TIME_S
    requests = 1 if api == "sync" else nireq or int(compiled.get_property("OPTIMAL_NUMBER_OF_INFER_REQUESTS"))
    by_time = niter is None
    total = float(time_limit) if by_time and time_limit is not None else float(niter or 0)
    with progress(f"{api} on {device}", total, by_time) as bar:
        if api == "sync":
            timing = run_sync(compiled, inputs, niter, time_limit, bar)
        else:
            timing = run_async(compiled, feeds.sets, requests, niter, time_limit, bar)

    data = _report(loaded, device, compiled, config, partition, verdict, first_ms, timing, niter, time_limit, pc)
    data["input_data"] = feeds.sources
    data["compile_ms"] = compile_ms
    data["batch_size"] = _batch_size(loaded.model)
    data["executables_compiled"] = compiled_so_far(compiled)
    data["streams"] = _streams_used(compiled, device)
    if report_type:
        data["report_files"] = _write_reports(ctx, Path(report_folder), report_type, data, timing)
    if report_file:
        Path(report_file).write_text(json.dumps(data, indent=2) + "\n")
    if as_json:
        emit_json(data)
    else:
        _print(Printer(), data, loaded, partition, verdict)
    if verdict is not None and not verdict.ok:
        ctx.exit(EXIT_FAILURE)
    if timing.interrupted:
        ctx.exit(EXIT_INTERRUPTED)


def _report(
    loaded: LoadedModel,
    device: str,
    compiled: CompiledModel,
    config: dict[str, Any],
    partition: PlacementReport,
    verdict: CheckResult | None,
    first_ms: float,
    timing: Timing,
    niter: int | None,
    time_limit: float | None,
    pc: bool,
) -> dict[str, Any]:
    data: dict[str, Any] = {
        "model": loaded.to_dict(),
        "device": device,
        "execution_devices": list(compiled.get_property("EXECUTION_DEVICES")),
        "auto_serving": compiled.get_property_or("AUTO_SERVING_SUMMARY", None),
        "config": config,
        "partition": partition.to_dict(),
        "check": verdict.to_dict() if verdict is not None else {"status": "SKIPPED", "reason": "--no-check"},
        "settings": {"api": timing.api, "nireq": timing.nireq, "niter": niter, "time_limit_s": time_limit},
        "first_inference_ms": first_ms,
        "iterations": timing.iterations,
        "interrupted": timing.interrupted,
        "duration_s": timing.duration_s,
        "latency_ms": timing.latency_stats(),
        "throughput_fps": timing.throughput_fps,
    }
    if pc:
        data["perf_counts"] = perf_counters(timing.requests)
    return data


def _write_reports(
    ctx: click.Context, folder: Path, report_type: str, data: dict[str, Any], timing: Timing
) -> list[str]:
    """benchmark_app's ``-report_type`` files: the statistics, and the counters for the counter types."""
    folder.mkdir(parents=True, exist_ok=True)
    command = ctx.command
    given = [
        (param.opts[0], ctx.params[param.name])
        for param in command.params
        if param.name and ctx.get_parameter_source(param.name) is click.core.ParameterSource.COMMANDLINE
    ]
    settings = data["settings"]
    streams = [(f"number of {name} streams", count) for name, count in data["streams"].items()]
    configuration = [
        ("topology", data["model"]["name"]),
        ("target device", data["device"]),
        ("API", settings["api"]),
        ("batch size", data["batch_size"]),
        ("number of iterations", data["iterations"]),
        ("number of parallel infer requests", settings["nireq"]),
        ("duration (ms)", f"{data['duration_s'] * 1e3:.2f}"),
        *streams,
    ]
    stats = data["latency_ms"]
    results = [
        ("compile model time (ms)", f"{data['compile_ms']:.2f}"),
        ("first inference time (ms)", f"{data['first_inference_ms']:.2f}"),
        ("total execution time (ms)", f"{data['duration_s'] * 1e3:.2f}"),
        ("total number of iterations", data["iterations"]),
        *(
            [
                ("latency (ms)", f"{stats['median']:.2f}"),
                ("avg latency", f"{stats['average']:.2f}"),
                ("min latency", f"{stats['min']:.2f}"),
                ("max latency", f"{stats['max']:.2f}"),
            ]
            if stats
            else []
        ),
        ("throughput", f"{data['throughput_fps']:.2f}"),
    ]
    written = [write_statistics_report(folder, given, configuration, results)]
    counters = write_counters_report(folder, report_type, [r.get_profiling_info() for r in timing.requests])
    if counters is not None:
        written.append(counters)
    return [str(path) for path in written]


def _streams_used(compiled: CompiledModel, device: str) -> dict[str, int]:
    """``NUM_STREAMS`` of the compiled model, per device for HETERO (where the devices report one)."""
    per_device = compiled.get_property_or("DEVICE_PROPERTIES", None)
    if isinstance(per_device, dict):
        return {name: props["NUM_STREAMS"] for name, props in per_device.items() if "NUM_STREAMS" in props}
    streams = compiled.get_property_or("NUM_STREAMS", None)
    return {} if streams is None else {device: int(streams)}


def _batch_size(model: Model) -> int:
    """The first dimension of the first input that has one (benchmark_app's batch size), else 1."""
    return next((int(p.partial_shape.dims[0]) for p in model.inputs if p.partial_shape.rank > 0), 1)
