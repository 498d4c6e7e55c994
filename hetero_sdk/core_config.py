"""What :class:`~hetero_sdk.Core` does to a config before a device sees it, and its compile cache files.

A device string may carry settings of its own (``HETERO:XLA,TEMPLATE`` the priorities, ``XLA.1`` the
device id); a config that says something else for the same key is an error, never silently overwritten.
``CACHE_DIR`` is the Core's: it is taken out of a config before the device sees it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from hetero_sdk.device_name import DeviceName
from hetero_sdk.errors import PropertyValueError
from hetero_sdk.graph.model import Model
from hetero_sdk.properties import Config, as_config
from hetero_sdk.runtime.version import SDK_VERSION
from hetero_sdk.serialization.weights import WeightsBuilder
from hetero_sdk.serialization.writer import model_to_document

__all__ = [
    "agreeing_device_id", "agreeing_priorities", "cache_file", "store_in_cache", "without_cache_dir",
]  # fmt: skip


def without_cache_dir(config: Config | None) -> dict[str, Any]:
    """``config`` as a dict, less ``CACHE_DIR`` (the Core's key; calls other than a compile ignore it)."""
    values = as_config(config)
    values.pop("CACHE_DIR", None)
    return values


def agreeing_priorities(parsed: DeviceName, value: Any) -> str:
    """The priorities of ``HETERO:A,B`` as ``"A,B"``, checked against a config's MULTI_DEVICE_PRIORITIES.

    :param parsed: a device string with targets.
    :param value: the config's MULTI_DEVICE_PRIORITIES (``"A,B"`` or a list of names), or None.
    :raises PropertyValueError: for a value that is not a string or a list of strings, or names other
        devices, or the same in another order, than the device string; the message gives both.
    """
    targets = ",".join(parsed.targets)
    if value is None:
        return targets
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        given = ",".join(value)
    elif isinstance(value, str):
        given = value
    else:
        raise PropertyValueError(
            f"{value!r} is not a valid value for MULTI_DEVICE_PRIORITIES; allowed: 'A,B,...' or a list of "
            f"device names (the device string {str(parsed)!r} already gives {targets!r})"
        )
    if given != targets:
        raise PropertyValueError(
            f"MULTI_DEVICE_PRIORITIES {given!r} in the config conflicts with the device string {str(parsed)!r}, "
            f"which gives {targets!r}; give the priorities in one place"
        )
    return targets


def agreeing_device_id(parsed: DeviceName, value: Any) -> str:
    """The id of ``NAME.ID``, checked against a config's DEVICE_ID.

    :raises PropertyValueError: when the config's DEVICE_ID is another id; the message gives both.
    """
    assert parsed.device_id is not None
    if value is not None and str(value) != parsed.device_id:
        raise PropertyValueError(
            f"DEVICE_ID {value!r} in the config conflicts with the device string {parsed.full!r}, which gives "
            f"{parsed.device_id!r}; give the id in one place"
        )
    return parsed.device_id


def cache_file(cache_dir: str | None, model: Model, parsed: DeviceName, properties: Mapping[str, Any]) -> Path | None:
    """The file in ``cache_dir`` holding the compile of ``model`` on ``parsed`` with ``properties``
    (named by a digest of all three and the SDK version), or None without a cache directory.

    The model's digest is that of its native-format document, which records the sha256 of its
    weights: the weights are hashed where they lie, never copied into a serialized model."""
    if not cache_dir:
        return None
    document = model_to_document(model, WeightsBuilder(), "<cache key>")
    digest = hashlib.sha256(json.dumps(document, sort_keys=True, separators=(",", ":")).encode())
    digest.update(json.dumps([str(parsed), SDK_VERSION, sorted((k, str(v)) for k, v in properties.items())]).encode())
    return Path(cache_dir) / f"{digest.hexdigest()[:32]}.blob"


def store_in_cache(path: Path, blob: bytes) -> None:
    """Writes ``blob`` to ``path`` whole or not at all (through a temporary file), creating folders."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_bytes(blob)
    tmp.replace(path)
