"""Telling a model file's format from its first bytes, without importing any frontend: what lets
``read_model`` choose a frontend and import only that one (as OpenVINO's ``FrontEndManager`` loads a
frontend library only when a model needs it)."""

from __future__ import annotations

__all__ = ["is_ir", "is_native_json"]


def is_ir(head: bytes) -> bool:
    """Whether a file starting with ``head`` looks like IR: XML whose root is ``<net``."""
    text = head.lstrip()
    if text.startswith(b"<?xml"):
        end = text.find(b"?>")
        text = text[end + 2 :].lstrip() if end >= 0 else b""
    return text.startswith(b"<net")


def is_native_json(head: bytes) -> bool:
    """Whether a file starting with ``head`` looks like the native format's graph file (a JSON object)."""
    return head.lstrip()[:1] == b"{"
