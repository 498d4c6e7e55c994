"""ONNX's backend node test cases, regenerated once from the installed ``onnx`` wheel's
``onnx.backend.test.case.node`` generators into an on-disk cache laid out as ONNX lays its test data
out (``<case>/model.onnx``, ``<case>/test_data_set_0/input_N.pb`` and ``output_N.pb``), with an index
naming each case's ONNX op.

The cache lives in ``~/.cache/hetero-sdk/onnx-node-tests/<onnx version>/`` (``$XDG_CACHE_HOME`` is
honoured); ``HETERO_SDK_ONNX_TESTS_CACHE`` names another folder to use instead of
``.../onnx-node-tests`` (the version folder is still added).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from onnx import numpy_helper

__all__ = ["CACHE_ENV", "CaseInfo", "NodeCase", "cache_dir", "ensure_cache", "load_case", "op_of", "select"]

CACHE_ENV = "HETERO_SDK_ONNX_TESTS_CACHE"
"""The environment variable naming the cache folder (the onnx version folder goes inside it)."""

_INDEX = "cases.json"
_EXPANDED = re.compile(r"_expanded(_ver\d+)?$")

DataSet = tuple[list[Any], list[Any]]
"""A data set: its inputs and expected outputs (arrays; lists for sequences; None for empty optionals)."""


@dataclass(frozen=True)
class CaseInfo:
    """What the index says about a case.

    :ivar name: the case's name (``test_abs``).
    :ivar op: the ONNX op it tests (``Abs``; ``ai.onnx.ml:LabelEncoder`` outside the default domain).
    :ivar opset: the version of the op's domain the model imports.
    :ivar expanded: whether the model is the op's function body written out (``*_expanded``).
    """

    name: str
    op: str
    opset: int
    expanded: bool


@dataclass
class NodeCase:
    """A case read back from the cache: its model and data sets."""

    name: str
    model: onnx.ModelProto
    data_sets: list[DataSet]


def cache_dir(version: str | None = None) -> Path:
    """The cache folder for ``version`` of onnx (the installed one by default)."""
    base = os.environ.get(CACHE_ENV)
    if base:
        root = Path(base).expanduser()
    else:
        root = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "hetero-sdk" / "onnx-node-tests"
    return root / (version or onnx.__version__)


def op_of(model: onnx.ModelProto) -> tuple[str, int]:
    """The op a single-node case tests, domain-qualified outside ``ai.onnx``, and its domain's opset."""
    node = model.graph.node[0]
    domain = "" if node.domain in ("", "ai.onnx") else node.domain
    wanted = {domain} if domain else {"", "ai.onnx"}
    opset = next((o.version for o in model.opset_import if (o.domain or "") in wanted), 0)
    return (f"{domain}:{node.op_type}" if domain else node.op_type), int(opset)


def _index(tests: Sequence[Any]) -> dict[str, CaseInfo]:
    """Every case's op: a plain case has one node; an ``_expanded`` case tests its base case's op."""
    plain = {t.name: op_of(t.model) for t in tests if not _EXPANDED.search(t.name)}
    infos = {}
    for test in tests:
        base = _EXPANDED.sub("", test.name)
        op, opset = plain[base] if base in plain else op_of(test.model)
        infos[test.name] = CaseInfo(test.name, op, opset, test.name != base)
    return dict(sorted(infos.items()))


def _write_value(path: Path, value: Any, type_proto: onnx.TypeProto, name: str) -> None:
    """Writes one value as ONNX's ``cmd_tools generate-data`` does."""
    if type_proto.HasField("sequence_type"):
        proto: Any = numpy_helper.from_list(value, name)
    elif type_proto.HasField("optional_type"):
        proto = numpy_helper.from_optional(value, name)
    elif isinstance(value, onnx.TensorProto):
        proto = value
    else:
        proto = numpy_helper.from_array(np.asarray(value), name)
    path.write_bytes(proto.SerializeToString())


def _read_value(path: Path, type_proto: onnx.TypeProto) -> Any:
    """Reads one value as ONNX's backend test runner does."""
    data = path.read_bytes()
    if type_proto.HasField("sequence_type"):
        sequence = onnx.SequenceProto()
        sequence.ParseFromString(data)
        return numpy_helper.to_list(sequence)
    if type_proto.HasField("optional_type"):
        optional = onnx.OptionalProto()
        optional.ParseFromString(data)
        return numpy_helper.to_optional(optional)
    tensor = onnx.TensorProto()
    tensor.ParseFromString(data)
    return numpy_helper.to_array(tensor)


def _write_case(folder: Path, test: Any) -> None:
    folder.mkdir()
    model: onnx.ModelProto = test.model
    (folder / "model.onnx").write_bytes(model.SerializeToString())
    graph = model.graph
    for number, (inputs, outputs) in enumerate(test.data_sets):
        data = folder / f"test_data_set_{number}"
        data.mkdir()
        for kind, values, infos in (("input", inputs, graph.input), ("output", outputs, graph.output)):
            for position, value in enumerate(values):
                info = infos[position]
                _write_value(data / f"{kind}_{position}.pb", value, info.type, info.name)


def ensure_cache(folder: Path | None = None) -> dict[str, CaseInfo]:
    """The index of the cached cases, generating the cache first when it is missing.

    Generation takes a few seconds; it writes into a temporary folder renamed into place, so that
    processes starting together never read a half-written cache.
    """
    folder = folder or cache_dir()
    index = folder / _INDEX
    if not index.is_file():
        _generate(folder)
    entries = json.loads(index.read_text())
    return {name: CaseInfo(name, **fields) for name, fields in entries.items()}


def _generate(folder: Path) -> None:
    from onnx.backend.test.loader import load_node_model_tests  # imports every generator: only when needed

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the generators divide by zero on purpose
        tests = [t for t in load_node_model_tests() if t.model is not None and t.data_sets is not None]
    folder.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{folder.name}-", dir=folder.parent))
    try:
        for test in tests:
            _write_case(staging / test.name, test)
        infos = _index(tests)
        fields = {n: {"op": i.op, "opset": i.opset, "expanded": i.expanded} for n, i in infos.items()}
        (staging / _INDEX).write_text(json.dumps(fields, indent=1, sort_keys=True) + "\n")
        try:
            staging.rename(folder)
        except OSError:  # another process finished first, or a stale partial folder is in the way
            if not (folder / _INDEX).is_file():
                shutil.rmtree(folder, ignore_errors=True)
                staging.rename(folder)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def load_case(name: str, folder: Path | None = None) -> NodeCase:
    """Reads case ``name`` back from the cache (which must exist: see :func:`ensure_cache`)."""
    case_dir = (folder or cache_dir()) / name
    model = onnx.load(case_dir / "model.onnx")
    sets = []
    for data in sorted(case_dir.glob("test_data_set_*")):
        read: dict[str, list[Any]] = {}
        for kind, infos in (("input", model.graph.input), ("output", model.graph.output)):
            count = len(list(data.glob(f"{kind}_*.pb")))
            read[kind] = [_read_value(data / f"{kind}_{i}.pb", infos[i].type) for i in range(count)]
        sets.append((read["input"], read["output"]))
    return NodeCase(name, model, sets)


def select(
    index: dict[str, CaseInfo],
    include: str | None = None,
    exclude: str | None = None,
    shard: tuple[int, int] | None = None,
) -> list[CaseInfo]:
    """The cases whose names match ``include`` and not ``exclude`` (regular expressions, ``re.search``),
    sorted by name; with ``shard=(i, n)`` only the i-th of every n of those (i from 1 to n)."""
    keep = re.compile(include) if include else None
    drop = re.compile(exclude) if exclude else None
    chosen = [
        info
        for name, info in sorted(index.items())
        if (keep is None or keep.search(name)) and (drop is None or not drop.search(name))
    ]
    if shard is None:
        return chosen
    part, parts = shard
    if not 1 <= part <= parts:
        raise ValueError(f"shard {part}/{parts}: the part must be between 1 and {parts}")
    return chosen[part - 1 :: parts]
