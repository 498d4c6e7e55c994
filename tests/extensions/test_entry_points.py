"""Installed extensions (entry-point group hetero_sdk.extensions) load lazily, at first need; a broken
one is isolated: the others and every device still load, and listings name it with its error."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

GOOD = textwrap.dedent(
    """
    from hetero_sdk import Node
    from hetero_sdk.array_api import namespace
    from hetero_sdk.extensions import Extension, OnnxRule
    from hetero_sdk.ops import REAL_TYPES, Input, OpDef

    def _infer(node):
        x = node.input_value(0)
        return [(x.element_type, x.partial_shape)]

    OP = OpDef("GoodSoftsign", "vendor", _infer, (Input("data", REAL_TYPES),), version="good1",
               evaluate=lambda node, x: x / (1 + namespace(x).abs(x)))
    RULE = OnnxRule("org.vendor", "Good", lambda ctx: [Node(OP, [ctx.input(0)]).output(0)], makes=("GoodSoftsign",))
    extension = Extension("good", ops=[OP], onnx_rules=[RULE])
    """
)
BROKEN = 'raise ImportError("libvendor_ops.so: cannot open shared object file")\n'
CLASHING = textwrap.dedent(
    """
    from hetero_sdk.extensions import Extension
    from hetero_sdk.ops import OpDef
    extension = Extension("clashing", ops=[OpDef("Relu", "vendor", lambda node: [])])
    """
)
CHILD = textwrap.dedent(
    """
    import json, sys
    import numpy as np
    from onnx import TensorProto, helper
    import hetero_sdk as hs

    core = hs.Core()
    report = {"imported_at_start": "good_ext_mod" in sys.modules}
    node = helper.make_node("Good", ["x"], ["y"], domain="org.vendor")
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("org.vendor", 1)])
    read = core.read_model(model.SerializeToString())
    report["result"] = core.compile_model(read, "TEMPLATE")({"x": np.array([-1, 3], np.float32)})[0].tolist()
    report["extensions"] = {e.name: [e.distribution, e.status, list(e.ops), e.error] for e in core.extensions}
    report["available"] = core.available_devices
    print(json.dumps(report))
    """
)


def _install(site: Path, dist: str, entry: str, module: str, source: str) -> None:
    info = site / f"{dist.replace('-', '_')}-0.3.dist-info"  # as wheels name it: the name is read up to the "-"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.3\n")
    (info / "entry_points.txt").write_text(f"[hetero_sdk.extensions]\n{entry} = {module}:extension\n")
    (site / f"{module}.py").write_text(source)


@pytest.fixture
def site(tmp_path: Path) -> Path:
    _install(tmp_path, "vendor-good-ops", "good", "good_ext_mod", GOOD)
    _install(tmp_path, "vendor-broken-ops", "broken", "broken_ext_mod", BROKEN)
    _install(tmp_path, "vendor-clashing-ops", "clashing", "clashing_ext_mod", CLASHING)
    return tmp_path


def _run(site: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {"PYTHONPATH": str(site), "PATH": "/usr/bin:/bin", "JAX_PLATFORMS": "cpu"}
    return subprocess.run([sys.executable, *args], env=env, capture_output=True, text=True, timeout=120, check=False)


def test_installed_extensions_load_at_first_need_and_a_broken_one_is_isolated(site: Path) -> None:
    done = _run(site, "-c", CHILD)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["imported_at_start"] is False
    assert report["result"] == pytest.approx([-0.5, 0.75])
    assert report["extensions"]["good"][:3] == ["vendor-good-ops", "loaded", ["GoodSoftsign"]]
    assert report["extensions"]["broken"][:2] == ["vendor-broken-ops", "broken"]
    assert "libvendor_ops.so" in report["extensions"]["broken"][3]
    clash = report["extensions"]["clashing"]
    assert (
        clash[1] == "broken" and "vendor-clashing-ops" in clash[3] and "hetero-sdk" in clash[3] and "Relu" in clash[3]
    )
    assert "TEMPLATE" in report["available"]


def test_the_cli_lists_extensions_and_devices_names_the_broken_ones(site: Path) -> None:
    listing = _run(site, "-m", "hetero_sdk.cli", "extensions", "--json")
    assert listing.returncode == 0, listing.stderr
    by_name = {e["name"]: e for e in json.loads(listing.stdout)}
    assert by_name["good"]["ops"] == ["GoodSoftsign"] and by_name["good"]["version"] == "0.3"
    assert by_name["broken"]["status"] == "broken" and "libvendor_ops.so" in by_name["broken"]["error"]
    table = _run(site, "-m", "hetero_sdk.cli", "extensions")
    assert "vendor-good-ops" in table.stdout and "GoodSoftsign" in table.stdout and "libvendor_ops.so" in table.stdout
    devices = _run(site, "-m", "hetero_sdk.cli", "devices")
    assert devices.returncode == 0, devices.stderr
    assert "Broken extensions" in devices.stdout and "broken (vendor-broken-ops)" in devices.stdout
    assert "TEMPLATE" in devices.stdout


def test_an_op_type_named_before_anything_loaded_its_extension_is_found(site: Path) -> None:
    code = (
        "import hetero_sdk as hs\nfrom hetero_sdk import Node, opset\n"
        "x = opset.parameter([2], hs.Type.f32, name='x')\n"
        "print(Node('GoodSoftsign', [x.output(0)]).get_output_element_type(0).value)"
    )
    done = _run(site, "-c", code)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "f32"
