"""HETERO with this device: random DAG models split between the device and TEMPLATE, with manual and
automatic affinities, in both priority orders; DEVICE_PROPERTIES for the device."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given

from hetero_sdk import rt_info
from hetero_sdk.conformance.compare import Repro, assert_results_match, tolerance
from hetero_sdk.conformance.dags import DAG_OPS, DagCase, dag_models, partition_of, probe_model
from hetero_sdk.conformance.models import ModelCase
from hetero_sdk.conformance.target import Target, normalized
from hetero_sdk.device_name import parse_device_name
from hetero_sdk.errors import PartitionError
from hetero_sdk.hetero import check_partition
from hetero_sdk.reference import evaluate

_TOL = tolerance("f32", "accumulate", 16)


def _needs_plain_device(target: Target) -> None:
    if target.is_meta:
        pytest.skip(f"{target.device} is a meta-device: HETERO over it is not checked")


def _hetero_config(target: Target) -> dict[str, Any]:
    return {"DEVICE_PROPERTIES": {target.device: dict(target.config)}} if target.config else {}


@pytest.fixture(scope="module")
def claimed_dag_ops(target: Target) -> list[str]:
    """The DAG op types the device claims."""
    if target.is_meta:
        return []
    model = probe_model()
    claimed = target.query(model)
    return [t for t in DAG_OPS if f"probe_{t}" in claimed]


@pytest.mark.parametrize("mode", ["manual", "automatic"])
@pytest.mark.parametrize("order", ["device_first", "template_first"])
def test_random_dags_through_hetero_equal_template_alone(
    target: Target, claimed_dag_ops: list[str], order: str, mode: str, hyp: Any, repro: Repro
) -> None:
    _needs_plain_device(target)
    if not claimed_dag_ops:
        pytest.skip(f"{target.device} claims none of {', '.join(DAG_OPS)}")
    devices = [target.device, target.partner]
    priorities = devices if order == "device_first" else devices[::-1]
    hetero = f"HETERO:{','.join(priorities)}"
    op_types = (
        DAG_OPS if mode == "automatic" else claimed_dag_ops + [t for t in DAG_OPS if t not in claimed_dag_ops][:2]
    )
    strategy = dag_models(op_types, devices if mode == "manual" else None, claimed_dag_ops)

    @hyp()
    @given(case=strategy)
    def check(case: DagCase) -> None:
        want = evaluate(case.model, case.inputs)
        config = _hetero_config(target)
        try:
            compiled = target.core.compile_model(case.model, hetero, config)
            got = list(compiled(case.inputs).to_tuple())
        except Exception as exc:
            snippet = repro.save(case.model, case.inputs, config, hetero)
            raise AssertionError(
                f"{hetero} failed on {case!r}: {type(exc).__name__}: {exc}\nreproduce with:\n{snippet}"
            ) from exc
        what = f"{hetero} on {case!r}"
        assert_results_match(
            got, want, *_TOL, what=what, repro=repro, model=case.model, inputs=case.inputs, config=config, device=hetero
        )
        successors, affinity, parts = partition_of(compiled.get_runtime_model())
        try:
            check_partition(successors, affinity, parts)
        except PartitionError as exc:
            raise AssertionError(f"{what}: HETERO ran an invalid partition: {exc}") from exc
        if case.affinity:
            moved = {
                op: (want_dev, affinity.get(op))
                for op, want_dev in case.affinity.items()
                if affinity.get(op) != want_dev
            }
            assert not moved, f"{what}: ops ran elsewhere than their manual affinity (wanted, ran): {moved}"
        again = target.core.import_model(compiled.export_model(), "HETERO", config)
        assert_results_match(list(again(case.inputs).to_tuple()), want, *_TOL, what=f"{what}, exported and imported")

    check()


def test_device_properties_reach_its_submodels_and_leave_its_settings(
    target: Target, base: Callable[[], ModelCase], saved_properties: dict[str, Any]
) -> None:
    _needs_plain_device(target)
    case = base()
    ops = [n for n in case.model.get_ordered_ops() if n.type_name not in ("Parameter", "Constant", "Result")]
    for i, node in enumerate(ops):
        node.get_rt_info()[rt_info.AFFINITY] = target.device if i % 2 == 0 else target.partner
    own = normalized(target.get("PERF_COUNT"))
    config = {"DEVICE_PROPERTIES": {target.device: {**target.config, "PERF_COUNT": not own}}}
    compiled = target.core.compile_model(case.model, f"HETERO:{target.device},{target.partner}", config)
    inputs = case.inputs()
    assert_results_match(list(compiled(inputs).to_tuple()), evaluate(case.model, inputs), *_TOL, what="HETERO")
    per_device = compiled.get_property("DEVICE_PROPERTIES")
    mine = {k: v for k, v in per_device.items() if parse_device_name(k).name == target.name}
    assert mine, f"HETERO's DEVICE_PROPERTIES has no entry for {target.name}: {sorted(per_device)}"
    for name, values in mine.items():
        assert normalized(values.get("PERF_COUNT")) is (not own), (
            f"DEVICE_PROPERTIES {{{target.device}: {{PERF_COUNT: {not own}}}}} did not reach the submodel on {name}: "
            f"it reads {values.get('PERF_COUNT')!r}"
        )
    partner_own = normalized(target.core.get_property(target.partner, "PERF_COUNT"))
    leaked = {k: v.get("PERF_COUNT") for k, v in per_device.items() if k not in mine}
    leaked = {k: v for k, v in leaked.items() if normalized(v) != partner_own}
    assert not leaked, f"DEVICE_PROPERTIES for {target.device} leaked to other devices: {leaked}"
    assert normalized(target.get("PERF_COUNT")) is own, "compiling through HETERO changed the device's own PERF_COUNT"
