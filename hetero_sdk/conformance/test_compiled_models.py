"""Compiled models: compile and infer, independence, the untouched original, inputs and outputs, the
runtime model, compiled-model properties, export/import, corrupted blobs and the model cache."""

from __future__ import annotations

import gc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hetero_sdk import rt_info
from hetero_sdk.conformance.compare import assert_results_match, mismatches, tolerance
from hetero_sdk.conformance.models import ModelCase
from hetero_sdk.conformance.target import Target
from hetero_sdk.device_name import parse_device_name
from hetero_sdk.errors import BlobFormatError
from hetero_sdk.graph import Model, Output
from hetero_sdk.reference import evaluate
from hetero_sdk.serialization import model_to_bytes

mandatory = pytest.mark.mandatory
_TOL = tolerance("f32", "simple", 4)


def _ports(ports: list[Output]) -> list[tuple[Any, ...]]:
    return [(sorted(p.names), p.element_type, str(p.partial_shape), p.node.friendly_name) for p in ports]


def _needs_export(target: Target) -> None:
    if "EXPORT_IMPORT" not in target.capabilities():
        pytest.skip(f"{target.device} does not list EXPORT_IMPORT in OPTIMIZATION_CAPABILITIES")


@mandatory
def test_compile_create_request_and_infer(target: Target, base: Callable[[], ModelCase]) -> None:
    case = base()
    inputs = case.inputs()
    want = evaluate(case.model, inputs)
    compiled = target.compile(case.model)
    request = compiled.create_infer_request()
    assert_results_match(list(request.infer(inputs).to_tuple()), want, *_TOL, what="request.infer")
    assert_results_match(list(compiled(inputs).to_tuple()), want, *_TOL, what="compiled(inputs)")


@mandatory
def test_two_compiled_models_of_one_model_are_independent(target: Target, base: Callable[[], ModelCase]) -> None:
    case = base()
    first, second = target.compile(case.model), target.compile(case.model)
    requests = [first.create_infer_request(), second.create_infer_request()]
    for seed in range(3):
        pair = [case.inputs(seed), case.inputs(seed + 100)]
        results = [list(r.infer(i).to_tuple()) for r, i in zip(requests, pair)]
        for got, given in zip(results, pair):
            assert_results_match(got, evaluate(case.model, given), *_TOL, what=f"interleaved run {seed}")
    del first, requests
    gc.collect()
    inputs = case.inputs(7)
    assert_results_match(
        list(second(inputs).to_tuple()), evaluate(case.model, inputs), *_TOL, what="after releasing the other"
    )


@mandatory
def test_compiling_does_not_change_the_model(target: Target, base: Callable[[], ModelCase]) -> None:
    model = base().model
    before = model_to_bytes(model)
    rt_before = [(n.friendly_name, dict(n.get_rt_info())) for n in model.get_ops()]
    target.query(model)
    compiled = target.compile(model)
    compiled(base().inputs())
    assert [(n.friendly_name, dict(n.get_rt_info())) for n in model.get_ops()] == rt_before, (
        "query_model or compile_model changed the original model's ops or their rt_info"
    )
    assert model_to_bytes(model) == before, "query_model or compile_model changed the original model"


@mandatory
def test_inputs_and_outputs_keep_names_types_shapes_and_friendly_names(
    target: Target, base: Callable[[], ModelCase]
) -> None:
    model = base().model
    compiled = target.compile(model)
    assert _ports(compiled.inputs) == _ports(model.inputs), "compiled inputs differ from the model's"
    assert _ports(compiled.outputs) == _ports(model.outputs), "compiled outputs differ from the model's"
    for i, port in enumerate(model.inputs):
        assert _ports([compiled.input(port.any_name)]) == _ports([port]), f"compiled.input({port.any_name!r})"
        assert _ports([compiled.input(i)]) == _ports([port]), f"compiled.input({i})"


def _original_names(op: Any) -> set[str]:
    info = op.get_rt_info()
    if info.get(rt_info.ORIGINAL_NAMES):
        return {n for n in str(info[rt_info.ORIGINAL_NAMES]).split(",") if n}
    if info.get("fused_names"):
        return {str(n) for n in info["fused_names"]}
    return {op.friendly_name}


@mandatory
def test_runtime_model_names_the_original_ops_with_perf_data(target: Target, base: Callable[[], ModelCase]) -> None:
    case = base()
    compiled = target.compile(case.model, {"PERF_COUNT": True})
    compiled.create_infer_request().infer(case.inputs())
    runtime = compiled.get_runtime_model()
    assert isinstance(runtime, Model), f"get_runtime_model() returned {type(runtime).__name__}"
    named = set().union(*(_original_names(op) for op in runtime.get_ops()))
    compute = {n.friendly_name for n in case.model.get_ops() if not n.op.structural}
    missing = sorted(compute - named)
    assert not missing, (
        f"no op of the runtime model names the original op(s) {missing} (in rt_info 'originalLayersNames' "
        "or by friendly name)"
    )
    timed = [op.friendly_name for op in runtime.get_ops() if rt_info.PERF_COUNTER in op.get_rt_info()]
    assert timed, "after a profiled inference no op of the runtime model has perf data (rt_info 'execTimeMcs')"


@mandatory
def test_compiled_model_properties(target: Target, base: Callable[[], ModelCase]) -> None:
    model = base().model
    compiled = target.compile(model)
    problems = []
    if compiled.get_property("NETWORK_NAME") != model.friendly_name:
        problems.append(f"NETWORK_NAME is {compiled.get_property('NETWORK_NAME')!r}, not {model.friendly_name!r}")
    optimal = compiled.get_property("OPTIMAL_NUMBER_OF_INFER_REQUESTS")
    if not isinstance(optimal, int) or optimal < 1:
        problems.append(f"OPTIMAL_NUMBER_OF_INFER_REQUESTS is {optimal!r}, not an int >= 1")
    devices = compiled.get_property("EXECUTION_DEVICES")
    if isinstance(devices, str) or not devices or not all(isinstance(d, str) for d in devices):
        problems.append(f"EXECUTION_DEVICES is {devices!r}, not a non-empty list of device names")
    elif not target.is_meta and any(parse_device_name(d).name != target.name for d in devices):
        problems.append(f"EXECUTION_DEVICES {devices!r} names devices other than {target.name}")
    if compiled.get_property("LOADED_FROM_CACHE") is not False:
        problems.append(f"LOADED_FROM_CACHE is {compiled.get_property('LOADED_FROM_CACHE')!r} after a plain compile")
    listed = compiled.get_property("SUPPORTED_PROPERTIES")
    for key in ("NETWORK_NAME", "OPTIMAL_NUMBER_OF_INFER_REQUESTS", "EXECUTION_DEVICES", "LOADED_FROM_CACHE"):
        if key not in listed:
            problems.append(f"the compiled model's SUPPORTED_PROPERTIES lacks {key}")
    assert not problems, "\n".join(problems)


@mandatory
def test_export_import_keeps_inputs_outputs_and_results(target: Target, base: Callable[[], ModelCase]) -> None:
    _needs_export(target)
    case = base()
    inputs = case.inputs()
    compiled = target.compile(case.model)
    blob = compiled.export_model()
    assert isinstance(blob, bytes) and blob, (
        f"export_model() returned {type(blob).__name__} of length {len(blob or b'')}"
    )
    again = target.core.import_model(blob, target.device, target.config)
    assert _ports(again.inputs) == _ports(case.model.inputs), "imported inputs differ from the model's"
    assert _ports(again.outputs) == _ports(case.model.outputs), "imported outputs differ from the model's"
    assert again.get_property("NETWORK_NAME") == case.model.friendly_name, "NETWORK_NAME changed by export/import"
    assert again.get_property("LOADED_FROM_CACHE") is False, "LOADED_FROM_CACHE is not False after an explicit import"
    got = list(again(inputs).to_tuple())
    assert_results_match(got, evaluate(case.model, inputs), *_TOL, what="the imported model")
    assert not mismatches(got, list(compiled(inputs).to_tuple()), *_TOL), "the imported model computes other results"


@mandatory
def test_corrupted_blob_raises_blob_format_error(target: Target, base: Callable[[], ModelCase]) -> None:
    _needs_export(target)
    blob = target.compile(base().model).export_model()
    variants: dict[str, bytes] = {
        "empty": b"",
        "not a blob": b"definitely not an exported model" * 4,
        "cut in half": blob[: len(blob) // 2],
        "last byte cut": blob[:-1],
        "bytes appended": blob + b"\x00trailing",
    }
    for fraction in (0.25, 0.5, 0.75, 1.0):
        at = min(int(len(blob) * fraction), len(blob) - 1)
        flipped = bytearray(blob)
        flipped[at] ^= 0x5A
        variants[f"byte {at} of {len(blob)} flipped"] = bytes(flipped)
    problems = []
    for what, data in variants.items():
        try:
            target.core.import_model(data, target.device, target.config)
            problems.append(f"{what}: import_model accepted it")
        except BlobFormatError:
            pass
        except Exception as exc:
            problems.append(f"{what}: raised {type(exc).__name__}, not BlobFormatError: {exc}")
    assert not problems, "a corrupted blob must raise BlobFormatError:\n" + "\n".join(problems)


def test_cache_dir_second_compile_loads_from_cache(
    target: Target, base: Callable[[], ModelCase], tmp_path: Path
) -> None:
    _needs_export(target)
    case = base()
    inputs = case.inputs()
    config = {"CACHE_DIR": str(tmp_path)}
    first = target.compile(case.model, config)
    assert first.get_property("LOADED_FROM_CACHE") is False, "the first compile with CACHE_DIR claims to be cached"
    second = target.compile(case.model, config)
    assert second.get_property("LOADED_FROM_CACHE") is True, "the second compile with CACHE_DIR did not load the cache"
    want = [np.asarray(v) for v in first(inputs).to_tuple()]
    assert_results_match(list(second(inputs).to_tuple()), want, *_TOL, what="the cached model")
