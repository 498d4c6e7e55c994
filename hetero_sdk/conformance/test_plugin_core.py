"""Plugin and Core: properties, device ids, versions, configuration precedence, query_model, threads
and object lifetimes (conformance.md, first section; the per-op checks are in ``test_ops.py``)."""

from __future__ import annotations

import gc
import itertools
import threading
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from hetero_sdk.conformance.compare import mismatches, tolerance
from hetero_sdk.conformance.models import ModelCase, query_zoo
from hetero_sdk.conformance.target import Target, normalized
from hetero_sdk.device_name import format_device_name, parse_device_name
from hetero_sdk.errors import (
    DeviceNotFoundError,
    HeteroSDKError,
    PropertyValueError,
    UnsupportedPropertyError,
)
from hetero_sdk.reference import evaluate

mandatory = pytest.mark.mandatory

IDENTITY = (
    "FULL_DEVICE_NAME",
    "DEVICE_ARCHITECTURE",
    "OPTIMIZATION_CAPABILITIES",
    "AVAILABLE_DEVICES",
    "RANGE_FOR_ASYNC_INFER_REQUESTS",
)
"""Read-only properties every device answers."""

VALID_VALUES: dict[str, list[Any]] = {
    "PERF_COUNT": [True, False],
    "PERFORMANCE_HINT": ["LATENCY", "THROUGHPUT", "CUMULATIVE_THROUGHPUT"],
    "EXECUTION_MODE_HINT": ["PERFORMANCE", "ACCURACY"],
    "EXCLUSIVE_ASYNC_REQUESTS": [True, False],
    "NUM_STREAMS": [1, 2],
    "INFERENCE_NUM_THREADS": [0, 1],
    "PERFORMANCE_HINT_NUM_REQUESTS": [0, 1],
}
"""Values every device must accept for the standard keys it lists as RW."""

WRONG_VALUES: dict[str, list[Any]] = {
    "PERF_COUNT": ["maybe", 2.5],
    "PERFORMANCE_HINT": ["FASTEST", 3],
    "EXECUTION_MODE_HINT": ["SLOWEST"],
    "EXCLUSIVE_ASYNC_REQUESTS": ["maybe"],
    "NUM_STREAMS": [-3, "many"],
    "INFERENCE_NUM_THREADS": [-1, "many"],
    "PERFORMANCE_HINT_NUM_REQUESTS": [-1, "many"],
    "DEVICE_ID": ["CONFORMANCE_NO_SUCH_ID"],
}
"""Values every device must reject with ``PropertyValueError`` for the standard keys it lists as RW."""

UNKNOWN_KEY = "CONFORMANCE_NO_SUCH_PROPERTY"


@mandatory
def test_supported_properties_list_every_property_with_its_mutability(target: Target) -> None:
    supported = target.supported()
    problems = [
        f"{k} has mutability {m!r}, not RO, RW or WO" for k, m in supported.items() if m not in ("RO", "RW", "WO")
    ]
    problems += [f"{key} is not in SUPPORTED_PROPERTIES" for key in IDENTITY if key not in supported]
    values: dict[str, Any] = {}
    for key, mutability in supported.items():
        if mutability == "WO":
            continue
        try:
            values[key] = target.get(key)
        except HeteroSDKError as exc:
            problems.append(f"{key} is listed but reading it raised {type(exc).__name__}: {exc}")
    for key in ("FULL_DEVICE_NAME", "DEVICE_ARCHITECTURE"):
        if key in values and (not isinstance(values[key], str) or not values[key]):
            problems.append(f"{key} must be a non-empty string, got {values[key]!r}")
    for key in ("OPTIMIZATION_CAPABILITIES", "AVAILABLE_DEVICES"):
        if key in values and (isinstance(values[key], str) or not all(isinstance(v, str) for v in values[key])):
            problems.append(f"{key} must be a list of strings, got {values[key]!r}")
    if "RANGE_FOR_ASYNC_INFER_REQUESTS" in values:
        value = values["RANGE_FOR_ASYNC_INFER_REQUESTS"]
        ok = isinstance(value, (tuple, list)) and len(value) == 3 and all(isinstance(v, int) for v in value)
        if not ok or not (1 <= value[0] <= value[1] and value[2] >= 1):
            problems.append(
                f"RANGE_FOR_ASYNC_INFER_REQUESTS must be (start, end, step) with 1 <= start <= end and step >= 1; "
                f"got {value!r}"
            )
    assert not problems, "\n".join(problems)


@mandatory
def test_rw_properties_can_be_set_back_to_their_default(target: Target, saved_properties: dict[str, Any]) -> None:
    problems = []
    for key, value in saved_properties.items():
        try:
            target.set({key: value})
            again = target.get(key)
        except HeteroSDKError as exc:
            problems.append(f"setting {key} back to its value {value!r} raised {type(exc).__name__}: {exc}")
            continue
        if normalized(again) != normalized(value):
            problems.append(f"{key}: set {value!r}, read back {again!r}")
    assert not problems, "\n".join(problems)


@mandatory
def test_set_then_read_returns_the_value(target: Target, saved_properties: dict[str, Any]) -> None:
    rw = [k for k, m in target.supported().items() if m == "RW"]
    cases = [(k, v) for k in rw for v in VALID_VALUES.get(k, [])]
    if "DEVICE_ID" in rw:
        cases += [("DEVICE_ID", i) for i in target.get("AVAILABLE_DEVICES")]
    if not cases:
        pytest.skip(f"{target.device} lists none of the standard RW keys {', '.join(VALID_VALUES)}")
    problems = []
    for key, value in cases:
        try:
            target.set({key: value})
            again = target.get(key)
        except HeteroSDKError as exc:
            problems.append(f"{key}={value!r} raised {type(exc).__name__}: {exc}")
            continue
        if normalized(again) != normalized(value):
            problems.append(f"{key}: set {value!r}, read back {again!r}")
    assert not problems, "\n".join(problems)


@mandatory
def test_wrong_values_raise_property_value_error_and_keep_the_old_value(
    target: Target, saved_properties: dict[str, Any]
) -> None:
    rw = [k for k, m in target.supported().items() if m == "RW"]
    cases = [(k, v) for k in rw for v in WRONG_VALUES.get(k, [])]
    if not cases:
        pytest.skip(f"{target.device} lists none of the standard RW keys {', '.join(WRONG_VALUES)}")
    problems = []
    for key, value in cases:
        before = target.get(key)
        try:
            target.set({key: value})
            problems.append(
                f"{key}={value!r} was accepted (read back {target.get(key)!r}); expected PropertyValueError"
            )
        except PropertyValueError:
            pass
        except Exception as exc:
            problems.append(f"{key}={value!r} raised {type(exc).__name__}, not PropertyValueError: {exc}")
        after = target.get(key)
        if normalized(after) != normalized(before):
            problems.append(f"{key} changed from {before!r} to {after!r} after the rejected value {value!r}")
    assert not problems, "\n".join(problems)


@mandatory
def test_unknown_and_read_only_keys_raise_unsupported_property_error(
    target: Target, base: Callable[[], ModelCase], saved_properties: dict[str, Any]
) -> None:
    problems = []

    def expect_unsupported(what: str, action: Callable[[], Any]) -> None:
        try:
            action()
            problems.append(f"{what} was accepted; expected UnsupportedPropertyError")
        except UnsupportedPropertyError:
            pass
        except Exception as exc:
            problems.append(f"{what} raised {type(exc).__name__}, not UnsupportedPropertyError: {exc}")

    expect_unsupported(f"set_property({UNKNOWN_KEY})", lambda: target.set({UNKNOWN_KEY: 1}))
    expect_unsupported(f"get_property({UNKNOWN_KEY})", lambda: target.get(UNKNOWN_KEY))
    expect_unsupported(f"compile_model with {UNKNOWN_KEY}", lambda: target.compile(base().model, {UNKNOWN_KEY: 1}))
    for key, mutability in target.supported().items():
        if mutability == "RO":
            read_only = {key: target.get(key)}

            def set_read_only(values: dict[str, Any] = read_only) -> None:
                target.set(values)

            expect_unsupported(f"setting the read-only {key}", set_read_only)
    assert not problems, "\n".join(problems)


@mandatory
@pytest.mark.parametrize("key", ["PERF_COUNT", "PERFORMANCE_HINT", "EXECUTION_MODE_HINT"], ids=lambda k: str(k))
def test_standard_values_compile_and_read_back(target: Target, base: Callable[[], ModelCase], key: str) -> None:
    case = base()
    inputs = case.inputs()
    want = evaluate(case.model, inputs)
    problems = []
    for value in VALID_VALUES[key]:
        try:
            compiled = target.compile(case.model, {key: value})
            got = list(compiled(inputs).to_tuple())
            again = compiled.get_property(key)
        except HeteroSDKError as exc:
            problems.append(f"compile_model with {key}={value!r} raised {type(exc).__name__}: {exc}")
            continue
        if normalized(again) != normalized(value):
            problems.append(f"compiled with {key}={value!r}, the compiled model reads {again!r}")
        problems += [f"{key}={value!r}: {p}" for p in mismatches(got, want, *tolerance("f32", "simple", 4))]
    assert not problems, "\n".join(problems)


@mandatory
def test_device_ids_work_and_unknown_ids_raise(target: Target, base: Callable[[], ModelCase]) -> None:
    parsed = parse_device_name(target.device)
    suffix = ":" + ",".join(parsed.targets) if parsed.targets else ""
    case = base()
    inputs = case.inputs()
    want = evaluate(case.model, inputs)
    problems = []
    for device_id in target.get("AVAILABLE_DEVICES"):
        device = f"{parsed.name}.{device_id}{suffix}"
        try:
            target.core.get_property(format_device_name(parsed.name, device_id), "FULL_DEVICE_NAME")
            got = list(target.compile(case.model, device=device)(inputs).to_tuple())
            problems += [f"{device}: {p}" for p in mismatches(got, want, *tolerance("f32", "simple", 4))]
        except HeteroSDKError as exc:
            problems.append(f"{device} (listed in AVAILABLE_DEVICES) failed: {type(exc).__name__}: {exc}")
    bogus = f"{parsed.name}.CONFORMANCE9"
    for what, action in (
        ("get_property", lambda: target.core.get_property(bogus, "FULL_DEVICE_NAME")),
        ("compile_model", lambda: target.core.compile_model(case.model, bogus + suffix)),
    ):
        try:
            action()
            problems.append(f"{what} on the nonexistent {bogus} succeeded; expected DeviceNotFoundError")
        except (DeviceNotFoundError, PropertyValueError):
            pass
    assert not problems, "\n".join(problems)


@mandatory
def test_get_versions_has_one_entry_with_build_number_and_description(target: Target) -> None:
    versions = target.core.get_versions(target.plain)
    assert list(versions) == [target.name], f"get_versions({target.plain!r}) has entries {list(versions)}"
    version = versions[target.name]
    assert isinstance(version.build_number, str) and version.build_number, f"empty build number: {version!r}"
    assert isinstance(version.description, str) and version.description, f"empty description: {version!r}"


@mandatory
def test_core_properties_reach_compiled_models_and_compile_config_wins(
    target: Target, base: Callable[[], ModelCase], saved_properties: dict[str, Any]
) -> None:
    model = base().model
    config = {k: v for k, v in target.config.items() if k != "PERF_COUNT"}
    for stored in (True, False):
        target.set({"PERF_COUNT": stored})
        plain = target.core.compile_model(model, target.device, config)
        assert normalized(plain.get_property("PERF_COUNT")) is stored, (
            f"core.set_property(PERF_COUNT={stored}) did not reach the compiled model: it reads "
            f"{plain.get_property('PERF_COUNT')!r}"
        )
        override = target.core.compile_model(model, target.device, {**config, "PERF_COUNT": not stored})
        assert normalized(override.get_property("PERF_COUNT")) is (not stored), (
            f"compile_model(PERF_COUNT={not stored}) lost to the stored value: the compiled model reads "
            f"{override.get_property('PERF_COUNT')!r}"
        )
        assert normalized(target.get("PERF_COUNT")) is stored, (
            f"compile_model(PERF_COUNT={not stored}) changed the device's own value to {target.get('PERF_COUNT')!r}"
        )


@mandatory
def test_query_model_claims_every_op_of_a_model_it_runs(target: Target) -> None:
    problems, ran = [], 0
    for case in query_zoo():
        model = case.model
        claimed = target.query(model)
        inputs = case.inputs()
        try:
            got = list(target.compile(model)(inputs).to_tuple())
        except HeteroSDKError:
            continue  # a model the device cannot run: it may leave ops out
        if mismatches(got, evaluate(model, inputs), *tolerance("f32", "accumulate", 64)):
            continue  # wrong values are the op checks' business
        ran += 1
        missing = [f"{n.friendly_name} ({n.type_name})" for n in model.get_ops() if n.friendly_name not in claimed]
        if missing:
            problems.append(
                f"{model.friendly_name}: the device runs it but query_model leaves out {', '.join(missing)}"
            )
        foreign = sorted({d for d in claimed.values() if not _names_a_device(target, d)})
        if foreign:
            problems.append(f"{model.friendly_name}: query_model names unknown devices {foreign}")
    if not ran:
        pytest.skip(f"{target.device} runs none of the query zoo's models")
    assert not problems, "\n".join(problems)


def _names_a_device(target: Target, device: str) -> bool:
    try:
        name = parse_device_name(device).name
    except ValueError:
        return False
    return name == target.name or (target.is_meta and name in target.core.registered_devices)


def test_parallel_calls_give_stable_results(target: Target, base: Callable[[], ModelCase]) -> None:
    case = base()
    inputs = case.inputs()

    def work() -> tuple[Any, ...]:
        compiled = target.compile(case.model)
        return (
            target.get("FULL_DEVICE_NAME"),
            sorted(target.supported().items()),
            sorted(target.query(case.model).items()),
            [np.asarray(v).tobytes() for v in compiled(inputs).to_tuple()],
        )

    expected = work()
    results: list[Any] = []
    errors: list[BaseException] = []

    def loop() -> None:
        try:
            for _ in range(3):
                results.append(work())
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=loop) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors, f"a parallel call raised {type(errors[0]).__name__}: {errors[0]}"
    unstable = sum(r != expected for r in results)
    assert not unstable, f"{unstable} of {len(results)} parallel rounds differ from the sequential one"


def test_objects_outlive_each_other_in_any_release_order(target: Target, base: Callable[[], ModelCase]) -> None:
    case = base()
    inputs = case.inputs()
    want = evaluate(case.model, inputs)
    rtol, atol = tolerance("f32", "simple", 4)
    for order in itertools.permutations(("core", "compiled", "request")):
        core = target.new_core()
        compiled = core.compile_model(case.model, target.device, target.config)
        request = compiled.create_infer_request()
        request.infer(inputs)
        alive: dict[str, Any] = {"core": core, "compiled": compiled, "request": request}
        del core, compiled, request
        for name in order:
            del alive[name]
            gc.collect()
            if "request" in alive:
                got = list(alive["request"].infer(inputs).to_tuple())
                assert not mismatches(got, want, rtol, atol), f"request failed after releasing {name} (order {order})"
            if "compiled" in alive:
                got = list(alive["compiled"].create_infer_request().infer(inputs).to_tuple())
                assert not mismatches(got, want, rtol, atol), (
                    f"compiled model failed after releasing {name} (order {order})"
                )
            if "core" in alive:
                assert alive["core"].get_property(target.plain, "FULL_DEVICE_NAME")
