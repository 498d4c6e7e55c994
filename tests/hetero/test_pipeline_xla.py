"""PIPELINE_PARALLEL over four XLA devices: JAX shows four CPU devices when XLA_FLAGS asks for them
before it initialises, so the case runs in a fresh interpreter (the rest of the suite keeps one)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("hetero_sdk_jax", reason="the XLA plugin (plugins/jax) is not installed")

SCRIPT = textwrap.dedent(
    """
    import numpy as np
    import hetero_sdk as hs
    from hetero_sdk import opset
    from hetero_sdk.hetero.plugin import HeteroPlugin
    from hetero_sdk_jax import XlaPlugin
    from template_plugin import TemplatePlugin

    core = hs.Core(plugins={"XLA": XlaPlugin(), "TEMPLATE": TemplatePlugin(), "HETERO": HeteroPlugin()}, autoload=False)
    assert core.get_property("XLA", "AVAILABLE_DEVICES") == ["0", "1", "2", "3"]
    assert "DEVICE_TOTAL_MEM_SIZE" not in core.get_property("XLA", "SUPPORTED_PROPERTIES")  # the CPU keeps no stats
    rng = np.random.default_rng(0)
    h = x = opset.parameter([2, 16], hs.Type.f32, name="x")
    for i in range(8):
        w = opset.constant(rng.standard_normal((16, 16)).astype(np.float32) / 4, name=f"w{i}")
        h = opset.tanh(opset.matmul(h, w, name=f"mm{i}"), name=f"t{i}")
    model = hs.Model([h], [x], name="mlp")
    data = rng.standard_normal((2, 16)).astype(np.float32)
    expected = core.compile_model(model, "TEMPLATE")(data)[0]
    budget = {f"XLA.{i}": {"DEVICE_TOTAL_MEM_SIZE": 2 * 16 * 16 * 4 + 512} for i in range(4)}
    compiled = core.compile_model(model, "HETERO:XLA.0,XLA.1,XLA.2,XLA.3",
                                  {"MODEL_DISTRIBUTION_POLICY": {"PIPELINE_PARALLEL"}, "DEVICE_PROPERTIES": budget})
    assert compiled.get_property("HETERO_NUMBER_OF_SUBMODELS") == 4, compiled.placement_report().to_text()
    assert compiled.get_property("EXECUTION_DEVICES") == ["XLA.0", "XLA.1", "XLA.2", "XLA.3"]
    np.testing.assert_allclose(compiled(data)[0], expected, rtol=1e-5, atol=1e-6)
    queue = hs.AsyncInferQueue(compiled, 4)
    outputs = {}
    queue.set_callback(lambda request, i: outputs.__setitem__(i, request.get_output_tensor(0).data.copy()))
    for i in range(8):
        queue.start_async(data * i, i)
    queue.wait_all()
    for i in range(8):
        np.testing.assert_allclose(outputs[i], core.compile_model(model, "TEMPLATE")(data * i)[0], rtol=1e-5, atol=1e-6)
    print("OK")
    """
)


def test_pipeline_parallel_over_four_forced_host_devices() -> None:
    env = {**os.environ, "XLA_FLAGS": "--xla_force_host_platform_device_count=4", "JAX_PLATFORMS": "cpu"}
    done = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and done.stdout.strip().endswith("OK"), done.stderr[-3000:]
