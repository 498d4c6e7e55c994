"""Names every op module of the package shares."""

__all__ = ["DOMAIN", "VERSION"]

DOMAIN = "com.microsoft"
"""The ONNX domain of the ops."""

VERSION = "com.microsoft1"
"""The ``version`` of every op definition here (the native format records it)."""
