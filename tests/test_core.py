"""Core: devices and ids, versions, property precedence, compiling from files, caching, lifetimes."""

from __future__ import annotations

import gc
import io
import itertools
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import hetero_sdk as hs
from hetero_sdk.errors import (
    BlobFormatError,
    DeviceNotFoundError,
    UnsupportedOperationError,
    UnsupportedPropertyError,
)
from hetero_sdk.plugin import DeviceConfig, PropertySpec, hookimpl
from template_plugin import TemplatePlugin


def test_available_devices_lists_each_device_id(core: hs.Core) -> None:
    assert core.available_devices == ["TEMPLATE.0", "TEMPLATE.1"]
    assert core.get_available_devices() == core.available_devices
    assert core.registered_devices == ["TEMPLATE"]


def test_single_id_device_is_listed_by_its_plain_name() -> None:
    core = hs.Core(plugins={"TEMPLATE": TemplatePlugin(num_devices=1)}, autoload=False)
    assert core.available_devices == ["TEMPLATE"]


def test_unknown_device_names_the_registered_ones_and_a_close_match(core: hs.Core, mlp) -> None:
    with pytest.raises(
        DeviceNotFoundError, match=r"no device 'TEMPLAT'; registered: TEMPLATE; did you mean TEMPLATE\?"
    ):
        core.compile_model(mlp.model, "TEMPLAT")
    with pytest.raises(LookupError):
        core.get_property("XLA", "FULL_DEVICE_NAME")


def test_device_names_are_case_sensitive(core: hs.Core, mlp) -> None:
    with pytest.raises(ValueError, match="UPPER_CASE"):
        core.compile_model(mlp.model, "template")


@pytest.mark.parametrize("name", ["TEMPLATE.1", "HETERO:TEMPLATE", "lower"])
def test_plugins_register_under_plain_names_only(core: hs.Core, name: str) -> None:
    with pytest.raises(ValueError):
        core.register_plugin(TemplatePlugin(), name)


def test_unregister_forgets_the_device(core: hs.Core) -> None:
    core.unregister_plugin("TEMPLATE")
    assert core.available_devices == []
    with pytest.raises(DeviceNotFoundError):
        core.unregister_plugin("TEMPLATE")


def test_get_versions_has_one_entry_with_build_number_and_description(core: hs.Core) -> None:
    for device in ("TEMPLATE", "TEMPLATE.1"):
        versions = core.get_versions(device)
        assert list(versions) == ["TEMPLATE"]
        assert versions["TEMPLATE"].build_number == hs.__version__
        assert "TEMPLATE" in versions["TEMPLATE"].description


def test_device_ids_select_the_device_and_an_unknown_id_raises(core: hs.Core, mlp) -> None:
    for device_id in ("0", "1"):
        compiled = core.compile_model(mlp.model, f"TEMPLATE.{device_id}")
        assert compiled.get_property("EXECUTION_DEVICES") == [f"TEMPLATE.{device_id}"]
        assert compiled.get_property("DEVICE_ID") == device_id
        assert core.get_property(f"TEMPLATE.{device_id}", "DEVICE_ID") == device_id
    for call in (
        lambda: core.compile_model(mlp.model, "TEMPLATE.7"),
        lambda: core.get_property("TEMPLATE.7", "FULL_DEVICE_NAME"),
        lambda: core.set_property("TEMPLATE.7", {"PERF_COUNT": True}),
        lambda: core.query_model(mlp.model, "TEMPLATE.7"),
    ):
        with pytest.raises(DeviceNotFoundError, match=r"'TEMPLATE.7' does not exist; TEMPLATE has ids: 0, 1"):
            call()


def test_values_set_for_one_id_stay_with_that_id(core: hs.Core, mlp) -> None:
    core.set_property("TEMPLATE.1", {"PERF_COUNT": True})
    assert core.get_property("TEMPLATE.1", "PERF_COUNT") is True
    assert core.get_property("TEMPLATE.0", "PERF_COUNT") is False
    assert core.compile_model(mlp.model, "TEMPLATE.1").get_property("PERF_COUNT") is True
    assert core.compile_model(mlp.model, "TEMPLATE.0").get_property("PERF_COUNT") is False


def test_compile_config_wins_over_set_property_which_wins_over_defaults(core: hs.Core, mlp) -> None:
    assert core.compile_model(mlp.model, "TEMPLATE").get_property("PERFORMANCE_HINT") == "LATENCY"
    core.set_property("TEMPLATE", {"PERFORMANCE_HINT": "THROUGHPUT", "NUM_STREAMS": 2})
    compiled = core.compile_model(mlp.model, "TEMPLATE", {"PERFORMANCE_HINT": "CUMULATIVE_THROUGHPUT"})
    assert compiled.get_property("PERFORMANCE_HINT") == "CUMULATIVE_THROUGHPUT"
    assert compiled.get_property("NUM_STREAMS") == 2
    assert compiled.get_property("EXECUTION_MODE_HINT") == "PERFORMANCE"
    assert core.get_property("TEMPLATE", "PERFORMANCE_HINT") == "THROUGHPUT"
    assert core.compile_model(mlp.model, "TEMPLATE").get_property("PERFORMANCE_HINT") == "THROUGHPUT"


def test_core_properties_are_cache_dir_only(core: hs.Core, tmp_path: Path) -> None:
    assert core.get_property("CACHE_DIR") == ""
    core.set_property({"CACHE_DIR": str(tmp_path)})
    assert core.get_property("CACHE_DIR") == str(tmp_path)
    with pytest.raises(UnsupportedPropertyError, match="not a Core property"):
        core.set_property({"PERF_COUNT": True})
    with pytest.raises(UnsupportedPropertyError):
        core.get_property("PERF_COUNT")


def test_compile_model_accepts_a_path(core: hs.Core, mlp, rng, tmp_path: Path) -> None:
    path = tmp_path / "mlp.json"
    hs.save_model(mlp.model, path)
    (x,) = mlp.make_inputs(rng)
    for source in (path, str(path)):
        compiled = core.compile_model(source, "TEMPLATE")
        np.testing.assert_allclose(compiled({"x": x})[0], mlp.expected([x])[0], rtol=1e-4, atol=1e-4)
    assert core.read_model(path).friendly_name == "mlp"


def test_compile_model_without_a_device_uses_the_first_available(core: hs.Core, mlp) -> None:
    assert core.compile_model(mlp.model).get_property("EXECUTION_DEVICES") == ["TEMPLATE.0"]
    with pytest.raises(DeviceNotFoundError, match="no device is available"):
        hs.Core(autoload=False).compile_model(mlp.model)


def test_query_model_names_every_op_of_a_supported_model(core: hs.Core, mlp) -> None:
    answer = core.query_model(mlp.model, "TEMPLATE")
    assert answer == {n.friendly_name: "TEMPLATE" for n in mlp.model.get_ops()}
    assert set(core.query_model(mlp.model, "TEMPLATE.1").values()) == {"TEMPLATE.1"}


def test_import_model_accepts_bytes_and_file_objects(core: hs.Core, mlp, rng) -> None:
    blob = core.compile_model(mlp.model, "TEMPLATE").export_model()
    (x,) = mlp.make_inputs(rng)
    for source in (blob, io.BytesIO(blob)):
        result = core.import_model(source, "TEMPLATE")({"x": x})[0]
        np.testing.assert_allclose(result, mlp.expected([x])[0], rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("blob", ["not bytes", 12, None])
def test_import_model_of_something_other_than_bytes_is_a_blob_format_error(core: hs.Core, blob: object) -> None:
    with pytest.raises(BlobFormatError, match=f"not {type(blob).__name__}; read a model file with core.read_model"):
        core.import_model(blob, "TEMPLATE")  # type: ignore[arg-type]
    text_file = io.StringIO("text")
    with pytest.raises(BlobFormatError, match="or a file opened in binary mode, not str"):
        core.import_model(text_file, "TEMPLATE")  # type: ignore[arg-type]


def test_read_model_of_a_file_with_an_unknown_op_type_names_it(core: hs.Core, mlp, tmp_path: Path) -> None:
    path = tmp_path / "mlp.json"
    hs.save_model(mlp.model, path)
    relu = next(n.friendly_name for n in mlp.model.get_ops() if n.get_type_name() == "Relu")
    path.write_text(path.read_text().replace('"type": "Relu"', '"type": "Frobnicate"'))
    with pytest.raises(UnsupportedOperationError, match=rf"mlp.json: .*\(Frobnicate '{relu}'\).*'Frobnicate'"):
        core.read_model(path)


# -- CACHE_DIR ------------------------------------------------------------------------------------------


def test_second_compile_loads_from_the_cache_with_equal_results(core: hs.Core, mlp, rng, tmp_path: Path) -> None:
    core.set_property({"CACHE_DIR": str(tmp_path)})
    first = core.compile_model(mlp.model, "TEMPLATE")
    assert first.get_property("LOADED_FROM_CACHE") is False
    assert len(list(tmp_path.iterdir())) == 1
    second = core.compile_model(mlp.model, "TEMPLATE")
    assert second.get_property("LOADED_FROM_CACHE") is True
    (x,) = mlp.make_inputs(rng)
    np.testing.assert_array_equal(first({"x": x})[0], second({"x": x})[0])
    np.testing.assert_allclose(second({"x": x})[0], mlp.expected([x])[0], rtol=1e-4, atol=1e-4)


def test_cache_entries_depend_on_device_id_config_and_model(core: hs.Core, mlp, mlp_factory, tmp_path: Path) -> None:
    core.set_property({"CACHE_DIR": str(tmp_path)})
    core.compile_model(mlp.model, "TEMPLATE")
    for device, config, model in [
        ("TEMPLATE.1", {}, mlp.model),
        ("TEMPLATE", {"PERF_COUNT": True}, mlp.model),
        ("TEMPLATE", {}, mlp_factory(seed=5).model),
    ]:
        assert core.compile_model(model, device, config).get_property("LOADED_FROM_CACHE") is False
    assert len(list(tmp_path.iterdir())) == 4
    assert core.compile_model(mlp.model, "TEMPLATE.1").get_property("EXECUTION_DEVICES") == ["TEMPLATE.1"]


def test_cache_dir_in_the_compile_config_and_a_corrupt_entry_is_recompiled(core: hs.Core, mlp, tmp_path: Path) -> None:
    core.compile_model(mlp.model, "TEMPLATE", {"CACHE_DIR": str(tmp_path)})
    (entry,) = tmp_path.iterdir()
    entry.write_bytes(entry.read_bytes()[:-3])
    again = core.compile_model(mlp.model, "TEMPLATE", {"CACHE_DIR": str(tmp_path)})
    assert again.get_property("LOADED_FROM_CACHE") is False
    assert core.compile_model(mlp.model, "TEMPLATE", {"CACHE_DIR": str(tmp_path)}).get_property("LOADED_FROM_CACHE")


class _SelfCachingTemplate(TemplatePlugin):
    """TEMPLATE listing ``CACHE_DIR`` among its properties (a device that caches its compiles itself);
    it records the ``CACHE_DIR`` each compile receives."""

    def __init__(self) -> None:
        super().__init__()
        specs = [spec for key, spec in self.config.specs.items() if key != "SUPPORTED_PROPERTIES"]
        self.config = DeviceConfig([*specs, PropertySpec("CACHE_DIR", default="")], lambda: list(self._ids))
        self.received: list[str] = []

    @hookimpl
    def compile_model(
        self, model: hs.Model, properties: dict[str, Any], context: Any, device_name: str, core: Any
    ) -> Any:
        self.received.append(properties.get("CACHE_DIR", ""))
        return super().compile_model(
            model=model, properties=properties, context=context, device_name=device_name, core=core
        )


def test_a_device_listing_cache_dir_gets_it_and_the_core_stores_no_blob(mlp, rng, tmp_path: Path) -> None:
    device = _SelfCachingTemplate()
    local = hs.Core(plugins={"TEMPLATE": device}, autoload=False)
    local.set_property({"CACHE_DIR": str(tmp_path / "core")})
    compiled = local.compile_model(mlp.model, "TEMPLATE")
    local.compile_model(mlp.model, "TEMPLATE", {"CACHE_DIR": str(tmp_path / "config")})
    local.compile_model(mlp.model, "TEMPLATE", {"CACHE_DIR": ""})
    assert device.received == [str(tmp_path / "core"), str(tmp_path / "config"), ""]
    assert list(tmp_path.iterdir()) == []  # the device did not write; the Core wrote nothing
    assert compiled.get_property("LOADED_FROM_CACHE") is False
    (x,) = mlp.make_inputs(rng)
    np.testing.assert_allclose(compiled({"x": x})[0], mlp.expected([x])[0], rtol=1e-4, atol=1e-4)


# -- lifetimes --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("order", list(itertools.permutations(["core", "compiled", "request"])))
def test_objects_outlive_each_other_in_any_release_order(order: tuple[str, ...], mlp, rng) -> None:
    objects: dict[str, Any] = {"core": hs.Core(plugins={"TEMPLATE": TemplatePlugin()}, autoload=False)}
    objects["compiled"] = objects["core"].compile_model(mlp.model, "TEMPLATE")
    objects["request"] = objects["compiled"].create_infer_request()
    (x,) = mlp.make_inputs(rng)
    expected = mlp.expected([x])[0]
    for name in order:
        del objects[name]
        gc.collect()
        if "request" in objects:
            request = objects["request"]
            np.testing.assert_allclose(request.infer({"x": x})[0], expected, rtol=1e-4, atol=1e-4)
            request.start_async({"x": x})
            request.wait()
        if "compiled" in objects:
            np.testing.assert_allclose(objects["compiled"]({"x": x})[0], expected, rtol=1e-4, atol=1e-4)
        if "core" in objects:
            assert objects["core"].available_devices == ["TEMPLATE"]


def test_a_registered_factory_that_cannot_find_its_hardware_leaves_the_device_unavailable(core: hs.Core, mlp) -> None:
    from hetero_sdk.errors import DeviceUnavailableError

    def no_hardware() -> Any:
        raise RuntimeError("no accelerator found")

    core.register_plugin(no_hardware, "ACCEL")
    assert "ACCEL" in core.registered_devices and "ACCEL" not in core.available_devices
    assert "no accelerator found" in core.unavailable_devices["ACCEL"]
    with pytest.raises(DeviceUnavailableError) as info:
        core.compile_model(mlp.model, "ACCEL")
    assert isinstance(info.value.__cause__, RuntimeError)
    inputs = mlp.make_inputs(np.random.default_rng(0))
    np.testing.assert_allclose(core.compile_model(mlp.model, "TEMPLATE")(inputs)[0], mlp.expected(inputs)[0], rtol=1e-5)


def test_a_plugin_that_says_it_is_unavailable_is_quoted_once(core: hs.Core, mlp) -> None:
    from hetero_sdk.errors import DeviceUnavailableError

    def no_gpu() -> Any:
        raise DeviceUnavailableError("no GPU backend; install jax[cuda12]")

    core.register_plugin(no_gpu, "GPU")
    with pytest.raises(DeviceUnavailableError) as info:
        core.compile_model(mlp.model, "GPU")
    assert str(info.value) == "device 'GPU' is unavailable: no GPU backend; install jax[cuda12]"


def test_compiling_and_importing_in_a_remote_context_uses_its_device(core: hs.Core, mlp) -> None:
    context = core.get_default_context("TEMPLATE.1")
    compiled = core.compile_model(mlp.model, context=context)
    assert compiled.get_property("EXECUTION_DEVICES") == ["TEMPLATE.1"]
    again = core.import_model(compiled.export_model(), context=context)
    inputs = mlp.make_inputs(np.random.default_rng(0))
    np.testing.assert_allclose(again(inputs)[0], mlp.expected(inputs)[0], rtol=1e-5)
