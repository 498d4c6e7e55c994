"""XLA blobs whose checksums are valid and whose content is wrong (crafted, or written by a buggy
exporter) raise BlobFormatError naming the header field or frame, at import, never another error."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hetero_sdk import Model, Type, opset
from hetero_sdk.errors import BlobFormatError
from hetero_sdk.plugin import pack_blob, unpack_blob
from xla_helpers import core

from hetero_sdk_jax import export, stablehlo_check
from hetero_sdk_jax.stablehlo_check import StableHloChecker


def _frames() -> dict[str, bytes]:
    x = opset.parameter([2, 3], Type.f32, name="x")
    model = Model([opset.relu(x, name="r")], [x], name="m")
    return unpack_blob(core().compile_model(model, "XLA").export_model(), "XLA")


def _import(frames: dict[str, bytes]) -> Any:
    return core().import_model(pack_blob("XLA", frames), "XLA")


def _set(field: str, value: Any) -> Callable[[dict[str, Any]], None]:
    return lambda header: header.__setitem__(field, value)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (_set("format", -1), "field 'format' is -1"),
        (_set("format", "abc"), "field 'format' is 'abc'"),
        (_set("format", True), "field 'format' is True"),
        (_set("x64", "no"), "field 'x64' is 'no', not a JSON boolean"),
        (_set("graph", 1), "field 'graph' is 1"),
        (_set("config", None), "field 'config' is None"),
        (lambda h: h["config"].update(PERF_COUNT="maybe"), "field 'config'.*'maybe'.*PERF_COUNT"),
        (lambda h: h["config"].update(PERFORMANCE_HINT="BOGUS"), "field 'config'.*PERFORMANCE_HINT"),
        (lambda h: h["config"].update(FOO=1), "field 'config'.*unsupported property 'FOO'"),
        (lambda h: h["inputs"][0].update(type="f99"), r"field 'inputs\[0\]'.type is 'f99'"),
        (lambda h: h["outputs"][0].update(shape=["a"]), r"field 'outputs\[0\]'.shape"),
        (lambda h: h["executables"][0].update(input_shapes=[["a", 3]]), r"'executables\[0\]'.input_shapes"),
        (lambda h: h["executables"][0].update(frame=7), r"field 'executables\[0\]' is"),
        (lambda h: h["outputs"][0].update(type="i32"), "frame 'executable.0' has outputs"),
        (lambda h: h["outputs"][0].update(shape=[2, 4]), "frame 'executable.0' has outputs"),
        (
            lambda h: h["outputs"].append({**h["outputs"][0], "friendly_name": "o2", "names": []}),
            "frame 'executable.0' takes",
        ),
    ],
)
def test_a_header_field_of_the_wrong_type_or_range_is_named(
    change: Callable[[dict[str, Any]], None], message: str
) -> None:
    frames = _frames()
    header = json.loads(frames["header"])
    change(header)
    with pytest.raises(BlobFormatError, match=message):
        _import({**frames, "header": json.dumps(header).encode()})


def test_an_executable_returning_another_structure_fails_at_import() -> None:
    frames = _frames()
    corrupted = bytearray(frames["executable.0"])
    corrupted[16] = 127  # the flatbuffer's output tree: one bare array instead of a tuple of one
    with pytest.raises(BlobFormatError, match=r"frame 'executable\.0' takes"):
        _import({**frames, "executable.0": bytes(corrupted)})


@pytest.mark.parametrize("payload", [b"", b"garbage", None])
def test_a_corrupted_executable_frame_is_a_blob_format_error(payload: bytes | None) -> None:
    frames = _frames()
    executable = frames["executable.0"]
    frames["executable.0"] = executable[: len(executable) // 2] if payload is None else payload
    with pytest.raises(BlobFormatError, match=r"executable\.0"):
        _import(frames)


def test_every_single_byte_corruption_of_an_executable_imports_cleanly_or_is_a_blob_format_error() -> None:
    frames = _frames()
    executable = frames["executable.0"]
    x = np.ones((2, 3), np.float32)
    for offset in (0, 4, 8, 12, 16, 20, 24, 32, 40, len(executable) // 2, len(executable) - 4):
        for value in (0x00, 0x7F, 0xFF):
            corrupted = bytearray(executable)
            corrupted[offset] = value
            try:
                imported = _import({**frames, "executable.0": bytes(corrupted)})
            except BlobFormatError:
                continue
            np.testing.assert_array_equal(imported({"x": x})[0], x)  # the byte did not matter


_ANSWER_WARM_UP = (
    "import os, sys, time\nsys.stdin.buffer.read(8)\nsys.stdout.buffer.write(b'ok\\n')\nsys.stdout.flush()\n"
)
"""A stand-in helper's start: it answers the warm-up, then misbehaves on the first module."""


def test_a_module_that_kills_the_reader_is_refused_and_this_process_lives(monkeypatch: pytest.MonkeyPatch) -> None:
    # MLIR's reader aborted on a corrupted heap for a fuzzed blob; the stand-in aborts the same way
    crashing = StableHloChecker([sys.executable, "-c", _ANSWER_WARM_UP + "sys.stdin.buffer.read(8)\nos.abort()"])
    monkeypatch.setattr(export, "_STABLEHLO", crashing)
    with pytest.raises(BlobFormatError, match=r"frame 'executable.0': MLIR's reader .* died \(exit code -6\)"):
        _import(_frames())


def test_a_module_the_reader_never_finishes_is_refused_in_bounded_time(monkeypatch: pytest.MonkeyPatch) -> None:
    hanging = StableHloChecker([sys.executable, "-c", _ANSWER_WARM_UP + "time.sleep(3600)"])
    monkeypatch.setattr(stablehlo_check, "READ_LIMIT_S", 0.5)
    started = time.monotonic()
    with pytest.raises(BlobFormatError, match=r"frame 'f': MLIR's reader of its StableHLO did not finish within 1 s"):
        hanging.check(b"module", "f")
    assert time.monotonic() - started < 60


def test_stablehlo_that_mlir_cannot_read_is_refused_and_the_reader_serves_on() -> None:
    checker = StableHloChecker()
    with pytest.raises(BlobFormatError, match="frame 'f' holds StableHLO that cannot be read"):
        checker.check(b"not a module", "f")
    x = opset.parameter([2], Type.f32, name="x")
    model = Model([opset.relu(x, name="r")], [x], name="m")
    blob = core().compile_model(model, "XLA").export_model()
    assert core().import_model(blob, "XLA")({"x": np.array([-1.0, 2.0], np.float32)})[0].tolist() == [0.0, 2.0]
