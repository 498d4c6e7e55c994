"""A killed actor fails its request with InferenceError naming the device, without hanging; the
compiled model then says it is unusable, and the next compile starts a new actor. Wrong properties
get typed errors."""

from __future__ import annotations

import time

import numpy as np
import pytest

ray = pytest.importorskip("ray")

import hetero_sdk as hs  # noqa: E402
from hetero_sdk import opset  # noqa: E402
from hetero_sdk.errors import (  # noqa: E402
    DeviceNotFoundError,
    DeviceUnavailableError,
    InferenceError,
    PropertyValueError,
    UnsupportedPropertyError,
)
from ray_helpers import RAY_CONFIG, dense, dense_expected, inputs  # noqa: E402


def _kill(actor: object) -> None:
    """``ray.kill``, then wait until the actor is gone: the kill is asynchronous, and a request sent
    just after it may otherwise still be answered."""
    ray.kill(actor)
    for _ in range(100):
        try:
            ray.get(actor.describe.remote(), timeout=5)  # type: ignore[attr-defined]
        except ray.exceptions.RayActorError:
            return
        time.sleep(0.05)
    raise AssertionError("the actor survived ray.kill")


def test_a_killed_actor_fails_the_request_and_the_next_compile_starts_a_new_one(core: hs.Core) -> None:
    compiled = core.compile_model(dense(), "RAY.1", RAY_CONFIG)
    assert compiled.get_property("RAY_ACTOR_STATE") == "ALIVE"
    old = compiled.link.where["pid"]
    _kill(compiled.link.actor)
    started = time.monotonic()
    with pytest.raises(InferenceError, match=r"RAY\.1.*died.*compile the model again"):
        compiled({"x": inputs()})
    assert time.monotonic() - started < 10
    assert compiled.get_property("RAY_ACTOR_STATE").startswith("DEAD")
    assert not compiled.usable
    with pytest.raises(InferenceError, match=r"RAY\.1"):  # unusable until recompiled, every time
        compiled.create_infer_request().infer({"x": inputs()})
    again = core.compile_model(dense(), "RAY.1", RAY_CONFIG)
    assert again.link.where["pid"] != old
    x = inputs(5)
    np.testing.assert_allclose(again({"x": x})[0], dense_expected(x), rtol=1e-5, atol=1e-6)


def test_an_actor_killed_during_a_split_run_fails_that_request_naming_it(core: hs.Core) -> None:
    model = dense()
    for op in model.get_ops():
        if op.type_name not in ("Parameter", "Constant", "Result"):
            op.get_rt_info()["affinity"] = "RAY.0" if op.friendly_name == "mm1" else "RAY.1"
    split = core.compile_model(model, "HETERO:RAY.0,RAY.1", {"DEVICE_PROPERTIES": {"RAY": RAY_CONFIG}})
    split({"x": inputs()})
    _kill(split.compiled[1].link.actor)
    request = split.create_infer_request()
    request.start_async({"x": inputs()})
    with pytest.raises(InferenceError, match=r"RAY\.1"):
        request.wait()
    assert split.compiled[0].get_property("RAY_ACTOR_STATE") == "ALIVE"
    recompiled = core.compile_model(model, "HETERO:RAY.0,RAY.1", {"DEVICE_PROPERTIES": {"RAY": RAY_CONFIG}})
    x = inputs(6)
    np.testing.assert_allclose(recompiled({"x": x})[0], dense_expected(x), rtol=1e-5, atol=1e-6)


def test_wrong_properties_get_typed_errors_naming_the_key(core: hs.Core) -> None:
    with pytest.raises(UnsupportedPropertyError, match="RAY_NUM_ACTOR"):
        core.compile_model(dense(), "RAY", {"RAY_NUM_ACTOR": 3})
    with pytest.raises(PropertyValueError, match=r"RAY_NUM_ACTORS.*1\.\.1024"):
        core.set_property("RAY", {"RAY_NUM_ACTORS": 0})
    with pytest.raises(PropertyValueError, match="TARGET_DEVICE"):
        core.compile_model(dense(), "RAY", {"TARGET_DEVICE": "RAY"})
    with pytest.raises(PropertyValueError, match="RAY_TIMEOUT"):
        core.compile_model(dense(), "RAY", {"RAY_TIMEOUT": -1})
    with pytest.raises(PropertyValueError, match="RAY_RESOURCES"):
        core.compile_model(dense(), "RAY", {"RAY_RESOURCES": ["gpu"]})
    with pytest.raises(UnsupportedPropertyError, match="read-only"):
        core.set_property("RAY", {"DEVICE_TOTAL_MEM_SIZE": 1})
    assert core.get_property("RAY", "RAY_NUM_ACTORS") == 2  # nothing changed


def test_a_target_device_the_host_lacks_is_named_with_the_actor(core: hs.Core) -> None:
    with pytest.raises(DeviceNotFoundError, match=r"RAY\.0.*NOPE"):
        core.compile_model(dense(), "RAY.0", {"TARGET_DEVICE": "NOPE"})


def test_an_actor_no_node_can_place_fails_the_compile_after_the_timeout(core: hs.Core) -> None:
    started = time.monotonic()
    config = {**RAY_CONFIG, "RAY_RESOURCES": {"no_such_host": 1}, "RAY_TIMEOUT": 2}
    with pytest.raises(DeviceUnavailableError, match=r"RAY\.0.*no_such_host"):
        core.compile_model(dense(), "RAY.0", config)
    assert time.monotonic() - started < 10
    np.testing.assert_allclose(  # the id's usual actor is untouched
        core.compile_model(dense(), "RAY.0", RAY_CONFIG)({"x": inputs()})[0], dense_expected(inputs()), rtol=1e-5
    )


def test_an_actor_killed_while_it_computes_fails_the_request_in_flight(core: hs.Core) -> None:
    x = opset.parameter([512, 512], hs.Type.f32, name="x")
    w = np.eye(512, dtype=np.float32)
    y = x
    for i in range(80):  # about a second of numpy matmuls on the actor: long enough to be killed during
        y = opset.matmul(y, w, name=f"mm{i}")
    compiled = core.compile_model(hs.Model([y], [x], name="slow"), "RAY.1", RAY_CONFIG)
    request = compiled.create_infer_request()
    request.start_async({"x": np.ones((512, 512), np.float32)})
    time.sleep(0.1)
    ray.kill(compiled.link.actor)
    started = time.monotonic()
    with pytest.raises(InferenceError, match=r"RAY\.1.*died"):
        request.wait()
    assert time.monotonic() - started < 10
    assert compiled.get_property("RAY_ACTOR_STATE").startswith("DEAD")


def test_actors_are_placed_on_the_node_asked_for(core: hs.Core) -> None:
    node = ray.get_runtime_context().get_node_id()
    compiled = core.compile_model(dense(), "RAY.0", {**RAY_CONFIG, "RAY_NODE_ID": node})
    assert compiled.link.placement.node_id == node
    np.testing.assert_allclose(compiled({"x": inputs()})[0], dense_expected(inputs()), rtol=1e-5, atol=1e-6)
    with pytest.raises(PropertyValueError, match=r"RAY\.0.*RAY_NODE_ID=ff"):
        core.compile_model(dense(), "RAY.0", {**RAY_CONFIG, "RAY_NODE_ID": "ff" * 28, "RAY_TIMEOUT": 2})
