"""The node test cache: regenerated from the installed onnx's generators into ONNX's on-disk layout,
read back equal to what the generators give, with each case's ONNX op; and the case selection."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

from hetero_sdk.conformance.onnx_node import CACHE_ENV, CaseInfo, cache_dir, ensure_cache, load_case
from hetero_sdk.conformance.onnx_node.cases import select


@pytest.fixture(scope="module")
def generated() -> dict[str, object]:
    """ONNX's own in-memory cases (the oracle of what the cache must hold)."""
    from onnx.backend.test.loader import load_node_model_tests

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {t.name: t for t in load_node_model_tests()}


def _same(got: object, want: object) -> bool:
    if isinstance(want, onnx.TensorProto):
        want = numpy_helper.to_array(want)
    if isinstance(want, list):
        return isinstance(got, list) and len(got) == len(want) and all(map(_same, got, want))
    if want is None:
        return got is None
    want = np.asarray(want)
    if not (isinstance(got, np.ndarray) and got.dtype == want.dtype and got.shape == want.shape):
        return False
    return np.array_equal(got, want) if want.dtype == object else got.tobytes() == want.tobytes()  # bit for bit


def test_the_cache_follows_the_environment_variable_and_the_onnx_version(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv(CACHE_ENV, str(tmp_path))
    assert cache_dir() == tmp_path / onnx.__version__
    monkeypatch.delenv(CACHE_ENV)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_dir("1.0") == tmp_path / "xdg" / "hetero-sdk" / "onnx-node-tests" / "1.0"


@pytest.mark.parametrize(
    "name",
    [
        "test_abs",  # one tensor in, one out
        "test_sequence_insert_at_back",  # sequences
        "test_optional_has_element_empty_optional_input",  # an empty optional
        "test_string_concat",  # strings
        "test_cast_FLOAT_to_BFLOAT16",  # bfloat16
        "test_softmax_example_expanded",  # a function body written out
        "test_clip_default_inbounds",  # an optional input left out
    ],
)
def test_a_cached_case_reads_back_as_onnx_generates_it(name: str, generated: dict[str, object]) -> None:
    want = generated[name]
    ensure_cache()
    case = load_case(name, cache_dir())
    assert case.model.SerializeToString() == want.model.SerializeToString()  # type: ignore[attr-defined]
    [(inputs, outputs)] = case.data_sets
    [(want_inputs, want_outputs)] = want.data_sets  # type: ignore[attr-defined]
    assert len(inputs) == len(want_inputs) and all(map(_same, inputs, want_inputs))
    assert len(outputs) == len(want_outputs) and all(map(_same, outputs, want_outputs))


def test_generation_writes_onnx_s_layout_and_an_index_of_ops(tmp_path: Path, generated: dict[str, object]) -> None:
    folder = tmp_path / "cache" / onnx.__version__
    index = ensure_cache(folder)
    assert sorted(index) == sorted(generated)
    assert (folder / "test_abs" / "model.onnx").is_file()
    assert sorted(p.name for p in (folder / "test_add" / "test_data_set_0").iterdir()) == [
        "input_0.pb", "input_1.pb", "output_0.pb",
    ]  # fmt: skip
    assert index["test_abs"] == CaseInfo("test_abs", "Abs", 13, False)
    assert index["test_softmax_example_expanded"].op == "Softmax"
    assert index["test_softmax_example_expanded"].expanded
    assert index["test_adagrad"].op == "ai.onnx.preview.training:Adagrad"
    assert json.loads((folder / "cases.json").read_text())["test_abs"] == {"op": "Abs", "opset": 13, "expanded": False}
    assert not [p for p in folder.parent.iterdir() if p.name.startswith(".")]  # no staging folder left
    assert ensure_cache(folder) == index  # read back, not regenerated


def test_selection_by_regex_and_shard() -> None:
    index = {n: CaseInfo(n, "Op", 1, False) for n in ["test_a1", "test_a2", "test_a3", "test_b1", "test_c1"]}
    names = lambda infos: [i.name for i in infos]  # noqa: E731
    assert names(select(index, include="test_a")) == ["test_a1", "test_a2", "test_a3"]
    assert names(select(index, exclude="[12]$")) == ["test_a3"]
    assert names(select(index, include="test_[ab]", exclude="2")) == ["test_a1", "test_a3", "test_b1"]
    assert names(select(index, shard=(1, 2))) == ["test_a1", "test_a3", "test_c1"]
    assert names(select(index, shard=(2, 2))) == ["test_a2", "test_b1"]
    with pytest.raises(ValueError, match="between 1 and 2"):
        select(index, shard=(3, 2))
