"""Claims: reading a model never runs code from the file: no eval, exec, compile, import or unpickling."""

from __future__ import annotations

import contextlib
import json
import pickle
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from hetero_sdk.errors import ModelFormatError
from hetero_sdk.serialization import model_from_bytes, model_to_bytes, read_model, save_model

_WATCHED = ("exec", "compile", "import", "pickle.find_class", "marshal.loads", "os.system", "subprocess.Popen")
_recording: dict[int, list[str]] = {}


def _audit(event: str, args: tuple[object, ...]) -> None:
    events = _recording.get(threading.get_ident())
    if events is not None and event in _WATCHED:
        events.append(f"{event}{args!r:.200}")


sys.addaudithook(_audit)  # audit hooks cannot be removed; this one only records while a test asks it to


@contextlib.contextmanager
def recorded() -> Iterator[list[str]]:
    """Collects the watched audit events this thread raises inside the block."""
    events: list[str] = []
    _recording[threading.get_ident()] = events
    try:
        yield events
    finally:
        del _recording[threading.get_ident()]


def test_the_audit_hook_sees_code_execution():
    with recorded() as events:
        eval("1 + 1")  # the control: the hook does notice code being run
    assert any(e.startswith(("exec", "compile")) for e in events)


def test_reading_a_valid_model_runs_no_code(tmp_path, reference_model, same_model):
    save_model(reference_model, tmp_path / "m.json")
    blob = model_to_bytes(reference_model)
    read_model(tmp_path / "m.json")  # warm up: first use may import the SDK's own modules
    model_from_bytes(blob)
    with recorded() as events:
        from_file = read_model(tmp_path / "m.json")
        from_bytes = model_from_bytes(blob)
    assert events == []
    same_model(reference_model, from_file)
    same_model(reference_model, from_bytes)


@pytest.mark.parametrize(
    ("where", "payload"),
    [
        ("type", "__import__('os').system('touch {marker}')"),
        ("type", "os.system"),
        ("attr", {"$type": "__import__('os').system('touch {marker}')"}),
        ("attr", {"$tensor": "__import__('os')", "shape": [1], "offset": 0, "size": 1, "crc32": 0}),
        ("attr", {"$__reduce__": "os.system", "args": ["touch {marker}"]}),
        ("name", "__import__('os').system('touch {marker}')"),
    ],
)
def test_crafted_strings_are_data_never_code(tmp_path, reference_model, where, payload):
    marker = tmp_path / "pwned"
    save_model(reference_model, tmp_path / "m.json")
    path = tmp_path / "m.json"
    document = json.loads(path.read_text("utf-8"))
    node = document["nodes"][2]
    text = json.dumps(payload).replace("{marker}", str(marker))
    if where == "type":
        node["type"] = json.loads(text)
    elif where == "attr":
        node["attrs"]["auto_broadcast"] = json.loads(text)
    else:
        document["results"] = [json.loads(text)]
    path.write_text(json.dumps(document), "utf-8")
    with recorded() as events, pytest.raises(ModelFormatError, match=r"m\.json"):
        read_model(path)
    assert not marker.exists()
    assert events == []


def test_pickled_bytes_are_rejected_without_unpickling():
    payload = pickle.dumps({"format": "hetero-sdk-model"})
    with recorded() as events, pytest.raises(ModelFormatError, match="not a hetero-sdk model"):
        model_from_bytes(payload)
    assert events == []


def test_a_path_is_only_read(tmp_path: Path):
    odd = tmp_path / "$(touch pwned).json"
    with pytest.raises(ModelFormatError, match="does not exist"):
        read_model(odd)
    assert not (tmp_path / "pwned").exists()
