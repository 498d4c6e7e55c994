"""CACHE_DIR on XLA: the device caches each executable when it compiles it (JAX's persistent compilation
cache under ``<CACHE_DIR>/xla``), so a model with dynamic inputs reads its executables from a warm cache."""

from __future__ import annotations

import os
from pathlib import Path

import hetero_sdk as hs
import jax
import numpy as np
import pytest
from hetero_sdk import Model, Type, opset
from hetero_sdk.errors import PropertyValueError

from hetero_sdk_jax import XlaPlugin

_W = np.random.default_rng(3).standard_normal((6, 4)).astype(np.float32)
_B = np.linspace(-1, 1, 4, dtype=np.float32)
_JAX_CACHE = "jax_compilation_cache_dir"


def _dynamic_model() -> Model:
    x = opset.parameter([-1, 6], Type.f32, name="x")
    y = opset.add(opset.tanh(opset.matmul(x, _W)), _B, name="y")
    return Model([opset.result(y, name="out")], [x], name="cached")


def _expected(x: np.ndarray) -> np.ndarray:
    return np.tanh(x @ _W) + _B


def _fresh_core(cache_dir: Path) -> hs.Core:
    core = hs.Core(plugins={"XLA": XlaPlugin}, autoload=False)
    core.set_property({"CACHE_DIR": str(cache_dir)})
    return core


def _rows(n: int) -> np.ndarray:
    return np.linspace(-2, 2, n * 6, dtype=np.float32).reshape(n, 6)


def test_xla_lists_cache_dir_so_the_core_passes_it() -> None:
    core = hs.Core(plugins={"XLA": XlaPlugin}, autoload=False)
    assert "CACHE_DIR" in core.get_property("XLA", "SUPPORTED_PROPERTIES")


def test_a_dynamic_model_caches_each_executable_when_it_compiles_it(tmp_path: Path) -> None:
    folder = tmp_path / "cache"
    compiled = _fresh_core(folder).compile_model(_dynamic_model(), "XLA")
    assert list((folder / "xla").iterdir()) == []  # nothing compiled yet, and no blob stored by the Core
    np.testing.assert_allclose(compiled({"x": _rows(3)})[0], _expected(_rows(3)), rtol=1e-5, atol=1e-6)
    assert len(list((folder / "xla").iterdir())) == 1
    assert [p.name for p in folder.iterdir()] == ["xla"]
    assert compiled.get_property("LOADED_FROM_CACHE") is False

    again = _fresh_core(folder).compile_model(_dynamic_model(), "XLA")  # a new Core and compiled model
    np.testing.assert_allclose(again({"x": _rows(3)})[0], _expected(_rows(3)), rtol=1e-5, atol=1e-6)
    assert again.get_property("LOADED_FROM_CACHE") is True
    assert len(list((folder / "xla").iterdir())) == 1
    np.testing.assert_allclose(again({"x": _rows(5)})[0], _expected(_rows(5)), rtol=1e-5, atol=1e-6)
    assert len(list((folder / "xla").iterdir())) == 2  # a new shape: compiled, then cached


def test_a_static_model_compiled_again_reads_its_executable_from_the_cache(tmp_path: Path) -> None:
    x = opset.parameter([2, 6], Type.f32, name="x")
    model = Model([opset.result(opset.tanh(opset.matmul(x, _W)), name="out")], [x], name="static")
    first = _fresh_core(tmp_path).compile_model(model, "XLA")
    second = _fresh_core(tmp_path).compile_model(model, "XLA")
    assert (first.get_property("LOADED_FROM_CACHE"), second.get_property("LOADED_FROM_CACHE")) == (False, True)
    np.testing.assert_allclose(second({"x": _rows(2)})[0], np.tanh(_rows(2) @ _W), rtol=1e-5, atol=1e-6)


def test_without_cache_dir_nothing_is_cached_and_jax_settings_are_left_as_they_were(tmp_path: Path) -> None:
    before = getattr(jax.config, _JAX_CACHE)
    _fresh_core(tmp_path).compile_model(_dynamic_model(), "XLA")({"x": _rows(2)})
    assert getattr(jax.config, _JAX_CACHE) == before
    plain = hs.Core(plugins={"XLA": XlaPlugin}, autoload=False).compile_model(_dynamic_model(), "XLA")
    plain({"x": _rows(7)})
    assert plain.get_property("LOADED_FROM_CACHE") is False
    assert len(list((tmp_path / "xla").iterdir())) == 1  # the shape of 7 rows was not cached


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="POSIX permissions")
def test_a_cache_dir_others_may_write_is_refused(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    with pytest.raises(PropertyValueError, match=r"CACHE_DIR .*other users may write to it.*chmod go-w"):
        _fresh_core(shared).compile_model(_dynamic_model(), "XLA")


def test_cache_dir_must_be_a_path() -> None:
    core = hs.Core(plugins={"XLA": XlaPlugin}, autoload=False)
    with pytest.raises(PropertyValueError, match="CACHE_DIR"):
        core.compile_model(_dynamic_model(), "XLA", {"CACHE_DIR": 5})


def test_an_exported_blob_does_not_carry_the_cache_folder(tmp_path: Path) -> None:
    compiled = _fresh_core(tmp_path / "here").compile_model(_dynamic_model(), "XLA")
    compiled({"x": _rows(2)})
    blob = compiled.export_model()
    assert str(tmp_path).encode() not in blob
    imported = hs.Core(plugins={"XLA": XlaPlugin}, autoload=False).import_model(blob, "XLA")
    np.testing.assert_allclose(imported({"x": _rows(2)})[0], _expected(_rows(2)), rtol=1e-5, atol=1e-6)
    assert imported.get_property("CACHE_DIR") == ""
