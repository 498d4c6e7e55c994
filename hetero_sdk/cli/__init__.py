"""The ``hetero-sdk`` command line: ``devices``, ``query``, ``benchmark``, ``convert``, ``generate``,
``conformance``, ``onnx-tests`` and ``new-plugin``.

Each command prints rich tables on a terminal, plain text when piped, and JSON with ``--json``;
errors are one line on stderr with a non-zero exit status.
"""

from __future__ import annotations

import logging
import sys

from hetero_sdk.cli.app import cli

__all__ = ["cli", "main"]


def main() -> None:
    """The console script's entry point.

    Library warnings (a plugin that failed to load...) stay quiet unless ``--debug`` is given: the
    commands report what matters themselves (``devices`` lists the failed plugins with the reason).
    """
    debug = "--debug" in sys.argv[1:]
    logging.basicConfig(
        level=logging.DEBUG if debug else logging.ERROR, format="hetero-sdk: %(levelname)s: %(name)s: %(message)s"
    )
    cli.main(prog_name="hetero-sdk")
