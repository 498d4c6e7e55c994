"""Backends: GPU and TPU devices are reported unavailable on a machine without them, and device ids map
to ``jax.devices()``."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from importlib.metadata import EntryPoint

import hetero_sdk as hs
import jax
import pytest
from hetero_sdk.errors import CompilationError, DeviceUnavailableError
from template_plugin import TemplatePlugin

from hetero_sdk_jax import backend, gpu_plugin, tpu_plugin
from hetero_sdk_jax.backend import Backend
from hetero_sdk_jax.executable_cache import compile_ahead


def _has(backend: str) -> bool:
    try:
        return bool(jax.devices(backend))
    except RuntimeError:
        return False


@pytest.mark.parametrize(
    ("factory", "backend", "hint"), [(gpu_plugin, "gpu", "jax\\[cuda12\\]"), (tpu_plugin, "tpu", "jax\\[tpu\\]")]
)
def test_absent_backends_raise_in_the_constructor_with_a_hint(factory, backend: str, hint: str) -> None:
    if _has(backend):
        pytest.skip(f"this machine has a {backend} backend")
    with pytest.raises(
        DeviceUnavailableError, match=rf"no {backend.upper()} backend: jax.devices\('{backend}'\) failed: .*{hint}"
    ):
        factory()


@pytest.mark.parametrize("name", ["GPU", "TPU"])
def test_absent_backends_never_break_the_core(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    if _has(name.lower()):
        pytest.skip(f"this machine has a {name} backend")
    found = {
        device: EntryPoint(device, value, "hetero_sdk.devices")
        for device, value in (("XLA", "hetero_sdk_jax:XlaPlugin"), (name, f"hetero_sdk_jax:{name.lower()}_plugin"))
    }
    monkeypatch.setattr("hetero_sdk.core.discover", lambda: found)  # the entry points, whatever is installed
    core = hs.Core(plugins={"TEMPLATE": TemplatePlugin})
    assert name not in core.available_devices
    assert {"XLA", "TEMPLATE"} <= set(core.available_devices)
    assert name in core.unavailable_devices
    with pytest.raises(DeviceUnavailableError, match=name) as caught:
        core.get_property(name, "FULL_DEVICE_NAME")
    assert isinstance(caught.value.__cause__, DeviceUnavailableError)
    assert isinstance(caught.value.__cause__.__cause__, RuntimeError)


def test_registering_an_absent_backend_in_process_leaves_it_unavailable_with_the_reason() -> None:
    if _has("gpu"):
        pytest.skip("this machine has a GPU")
    core = hs.Core(autoload=False)
    core.register_plugin(gpu_plugin, "GPU")
    assert "GPU" in core.registered_devices and "GPU" not in core.available_devices
    assert "no GPU backend" in core.unavailable_devices["GPU"]
    with pytest.raises(DeviceUnavailableError, match="no GPU backend"):
        core.get_versions("GPU")


_TWO_DEVICES = textwrap.dedent(
    """
    import numpy as np, jax, hetero_sdk as hs
    from hetero_sdk import Model, Type, opset
    from hetero_sdk_jax import XlaPlugin
    core = hs.Core(plugins={"XLA": XlaPlugin}, autoload=False)
    assert core.get_property("XLA", "AVAILABLE_DEVICES") == ["0", "1"], core.get_property("XLA", "AVAILABLE_DEVICES")
    assert core.available_devices == ["XLA.0", "XLA.1"], core.available_devices
    x = opset.parameter([3], Type.f32, name="x")
    model = Model([opset.multiply(x, 2.0, name="y")], [x], name="double")
    compiled = core.compile_model(model, "XLA.1")
    assert compiled.get_property("EXECUTION_DEVICES") == ["XLA.1"]
    on_zero = core.create_context("XLA.0").create_tensor(Type.f32, (3,), [1, 2, 3])
    request = compiled.create_infer_request()
    request.remote_outputs = True
    request.infer({"x": on_zero})
    out = request.get_output_tensor(0)
    assert out.device_name == "XLA.1" and out.array.devices() == {jax.devices()[1]}, out
    assert np.asarray(out).tolist() == [2, 4, 6]
    assert compiled({"x": np.ones(3, np.float32)})[0].tolist() == [2, 2, 2]  # host input, moved to device 1
    assert "device 1" in core.get_property("XLA.1", "FULL_DEVICE_NAME")
    print("ok")
    """
)


def test_device_ids_map_to_jax_devices() -> None:
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=2", JAX_PLATFORMS="cpu")
    done = subprocess.run([sys.executable, "-c", _TWO_DEVICES], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip().endswith("ok"), done.stderr[-3000:]


@pytest.mark.parametrize(
    ("platform", "xla_flags", "expected"),
    [
        ("cuda", "", {"xla_gpu_graph_min_graph_size": 1}),
        ("cuda", "--xla_gpu_graph_min_graph_size=3", {}),  # the user's own setting stays
        ("rocm", "", {}),
    ],
)
def test_cuda_executables_are_compiled_with_graphs_from_one_op(
    monkeypatch: pytest.MonkeyPatch, platform: str, xla_flags: str, expected: dict
) -> None:
    monkeypatch.setenv("XLA_FLAGS", xla_flags)
    assert Backend("gpu", platform, ()).compiler_options == expected


@pytest.mark.parametrize(
    ("avx512", "xla_flags", "expected"),
    [
        (True, "", {"xla_cpu_prefer_vector_width": 512}),
        (True, "--xla_cpu_prefer_vector_width=256", {}),  # the user's own setting stays
        (False, "", {}),
    ],
)
def test_cpu_loops_are_vectorised_512_bits_wide_where_the_cpu_has_avx512(
    monkeypatch: pytest.MonkeyPatch, avx512: bool, xla_flags: str, expected: dict
) -> None:
    monkeypatch.setenv("XLA_FLAGS", xla_flags)
    monkeypatch.setattr(backend, "_has_avx512", lambda: avx512)
    assert Backend("cpu", "cpu", ()).compiler_options == expected


def test_compile_options_reach_xla() -> None:
    """An option XLA does not know fails the compile with a CompilationError: the options are passed."""
    spec = [jax.ShapeDtypeStruct((2,), "float32")]
    sharding = jax.sharding.SingleDeviceSharding(jax.devices()[0])
    with pytest.raises(CompilationError, match="no_such_option"):
        compile_ahead(lambda x: x + 1, spec, sharding, False, lambda: "test", {"xla_no_such_option": 1})
    for options in ({"xla_gpu_graph_min_graph_size": 1}, {"xla_cpu_prefer_vector_width": 512}):
        compiled = compile_ahead(lambda x: x + 1, spec, sharding, False, lambda: "test", options)
        assert compiled(jax.numpy.ones(2, "float32")).tolist() == [2.0, 2.0]
