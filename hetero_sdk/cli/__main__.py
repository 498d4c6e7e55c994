"""``python -m hetero_sdk.cli``: the ``hetero-sdk`` command."""

from hetero_sdk.cli import main

main()
