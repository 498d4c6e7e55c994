"""What the command line adds to a library error: the ``hetero-sdk`` commands and options that help.
The library's messages say what is wrong and how to fix it in library terms (``Core``, properties);
the advice in command-line terms lives here."""

from __future__ import annotations

from hetero_sdk.errors import DeviceNotFoundError

__all__ = ["cli_advice"]

_DEVICES = "; `hetero-sdk devices` lists the devices and the hardware each runs on"
_MULTI = "; on the command line: -d AUTO:XLA,TEMPLATE -hint cumulative_throughput"


def cli_advice(exc: BaseException) -> str:
    """The advice to append to ``exc``'s message (``""`` when the command line has none to add)."""
    if isinstance(exc, DeviceNotFoundError) and exc.device is not None:
        return _MULTI if exc.device.upper() == "MULTI" else _DEVICES
    return ""
