"""The typed errors of hetero-sdk.

Every error derives from :class:`HeteroSDKError` and from the builtin exception a caller would naturally
catch (``ValueError``, ``KeyError``...), so ``except ValueError`` keeps working for code that does not
know this package. Messages say what is wrong, where (node, property key, file offset), and what to do.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

__all__ = [
    "AffinityError",
    "BlobFormatError",
    "CompilationError",
    "DeviceNameError",
    "DeviceNotFoundError",
    "DeviceUnavailableError",
    "ElementTypeError",
    "HeteroSDKError",
    "InferenceError",
    "ModelFormatError",
    "ModelValidationError",
    "PartitionError",
    "PathExistsError",
    "PluginValidationError",
    "PortNotFoundError",
    "PropertyValueError",
    "RequestBusyError",
    "RequestCancelledError",
    "UnknownOpTypeError",
    "UnsupportedOperationError",
    "UnsupportedPropertyError",
    "did_you_mean",
    "suggest",
]


class HeteroSDKError(Exception):
    """Base class of every error raised by hetero-sdk."""


class ModelValidationError(HeteroSDKError, ValueError):
    """A graph is malformed: cycle, dangling input, duplicate name, shape or type mismatch."""


class UnsupportedOperationError(HeteroSDKError, NotImplementedError):
    """An op type is unknown, or no device can run it."""


class ModelFormatError(HeteroSDKError, ValueError):
    """A model file is unreadable or malformed; the message names the file and the place."""


class ElementTypeError(ModelValidationError, TypeError):
    """A value names no supported element type (``"float99"``); the message lists the supported ones.

    A :class:`ModelValidationError` (a node cannot have that type), and a ``TypeError`` as
    ``np.dtype`` raises for an unknown type.
    """


class UnknownOpTypeError(UnsupportedOperationError, ModelFormatError):
    """A model file or blob names an op type this SDK does not define; the message names the op type,
    the node and the file.

    An :class:`UnsupportedOperationError` (the op type is unknown) and a :class:`ModelFormatError` (the
    file cannot be read), so handlers of either catch it.
    """


class DeviceNotFoundError(HeteroSDKError, LookupError):
    """No plugin is registered for a device name.

    :ivar device: the device name asked for, where the error is about one (the command line adds its
        own advice from it).
    """

    def __init__(self, message: str, device: str | None = None) -> None:
        super().__init__(message)
        self.device = device


class DeviceNameError(DeviceNotFoundError, ValueError):
    """A device string is malformed (not ``NAME``, ``NAME.ID`` or ``META:A,B``), so it names no device."""


class DeviceUnavailableError(HeteroSDKError, RuntimeError):
    """The plugin exists but failed to load, or its hardware is absent."""


class PluginValidationError(HeteroSDKError, TypeError):
    """A plugin breaks the hook contract: wrong hook names or signatures, wrong return types.

    :ivar plugin: the offending plugin object (or its name when it could not be constructed).
    """

    def __init__(self, message: str, plugin: object = None) -> None:
        super().__init__(message)
        self.plugin = plugin


class PortNotFoundError(HeteroSDKError, KeyError):
    """A model has no input or output with that name, index or port (or, in ``Model.reshape``, no input
    dimension with that name); the message lists what exists."""

    def __str__(self) -> str:  # KeyError would quote the whole message
        return str(self.args[0]) if self.args else ""


class UnsupportedPropertyError(HeteroSDKError, KeyError):
    """An unknown property key, or an attempt to set a read-only one."""

    def __str__(self) -> str:  # KeyError would quote the whole message
        return str(self.args[0]) if self.args else ""


class PropertyValueError(HeteroSDKError, ValueError):
    """A wrong value for a known property key; the message lists the allowed values."""


class CompilationError(HeteroSDKError, RuntimeError):
    """A device failed to compile a model or subgraph; the message names the device and subgraph."""


class InferenceError(HeteroSDKError, RuntimeError):
    """An inference request failed: wrong input names, shapes or types, or the device failed."""


class BlobFormatError(HeteroSDKError, ValueError):
    """An exported blob is truncated, corrupted, from another device or from another format version."""


class AffinityError(HeteroSDKError, ValueError):
    """Manual affinities are incomplete or name an unknown device."""


class PartitionError(HeteroSDKError, ValueError):
    """A partition is invalid: a node in no or two subgraphs, mixed devices, or a cycle between subgraphs."""


class PathExistsError(HeteroSDKError, FileExistsError):
    """A file or folder that a command would create already exists; nothing is overwritten."""

    def __str__(self) -> str:  # OSError would format (errno, strerror) pairs
        return str(self.args[0]) if self.args else ""


class RequestBusyError(HeteroSDKError, RuntimeError):
    """An infer request was used while it was running."""


class RequestCancelledError(HeteroSDKError, RuntimeError):
    """An infer request was cancelled before it finished."""


def did_you_mean(name: object, known: Iterable[str], *, listing: str = "available") -> str:
    """The hint every 'unknown name' error ends with: close matches, else what exists.

    >>> did_you_mean("XLAA", ["TEMPLATE", "XLA"])
    'did you mean XLA?'
    >>> did_you_mean("Q", ["TEMPLATE", "XLA"])
    'available: TEMPLATE, XLA'

    :param name: the name that was not found.
    :param known: the names that exist.
    :param listing: the word before the list when nothing is close.
    """
    names = sorted(set(known))
    return suggest(name, names) or (f"{listing}: {', '.join(names)}" if names else f"{listing}: none")


def suggest(name: object, known: Iterable[str]) -> str:
    """``'did you mean X or Y?'`` for the known names close to ``name``, else ``''``: the one place
    every suggestion is worded (:func:`did_you_mean` adds the listing when nothing is close).

    >>> suggest("NUM_STREAM", ["NUM_STREAMS", "PERF_COUNT"])
    'did you mean NUM_STREAMS?'
    """
    close = difflib.get_close_matches(str(name), sorted(set(known)), n=3)
    return f"did you mean {' or '.join(close)}?" if close else ""
