"""Text in and out: a Hugging Face ``tokenizer.json`` read by the ``tokenizers`` library (the optional
extra ``hetero-sdk[genai]``; only the file, never the hub), and the streamer's text pieces."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hetero_sdk.errors import ModelFormatError

__all__ = ["INSTALL_HINT", "Tokenizer", "TextStream"]

INSTALL_HINT = "reading a tokenizer needs the 'tokenizers' library: pip install 'hetero-sdk[genai]'"


class Tokenizer:
    """Encodes text into token ids and decodes ids into text (OpenVINO GenAI's ``Tokenizer``).

    :param source: a ``tokenizer.json`` file (or a folder holding one), or a ``tokenizers.Tokenizer``.
    :raises ImportError: when ``tokenizers`` is not installed, saying which extra to install.
    :raises FileNotFoundError: when the file does not exist.
    :raises ModelFormatError: when the file is not a tokenizer ``tokenizers`` reads.
    """

    def __init__(self, source: str | os.PathLike[str] | Any) -> None:
        if not isinstance(source, (str, os.PathLike)):
            self._tokenizer = source
            return
        try:
            import tokenizers
        except ImportError as exc:
            raise ImportError(INSTALL_HINT) from exc
        path = Path(source)
        if path.is_dir():
            path = path / "tokenizer.json"
        if not path.is_file():
            raise FileNotFoundError(2, "no such file", str(path))
        try:
            self._tokenizer = tokenizers.Tokenizer.from_file(str(path))
        except Exception as exc:  # the Rust library raises plain Exceptions for a malformed file
            raise ModelFormatError(f"{path}: not a Hugging Face tokenizer.json: {exc}") from None

    def encode(self, text: str) -> list[int]:
        """The token ids of ``text`` (with the special tokens the tokenizer adds, such as BOS)."""
        return list(self._tokenizer.encode(text).ids)

    def decode(self, ids: Sequence[int]) -> str:
        """The text of ``ids``, special tokens left out."""
        return str(self._tokenizer.decode(list(ids), skip_special_tokens=True))

    @property
    def vocab_size(self) -> int:
        """The number of ids the tokenizer knows, special tokens included."""
        return int(self._tokenizer.get_vocab_size(with_added_tokens=True))


class TextStream:
    """Turns a stream of ids into text pieces: each new id gives the text it adds to the decoded
    sequence, held back while it ends in an unfinished character (a multi-byte character split over
    ids decodes to U+FFFD until its last id)."""

    def __init__(self, tokenizer: Tokenizer) -> None:
        self.tokenizer = tokenizer
        self.ids: list[int] = []
        self.printed = 0

    def push(self, token: int) -> str:
        """The text that ``token`` completes ("" when nothing new is printable yet)."""
        self.ids.append(token)
        text = self.tokenizer.decode(self.ids)
        if text.endswith("\ufffd") or len(text) <= self.printed:
            return ""
        piece, self.printed = text[self.printed :], len(text)
        return piece

    def flush(self) -> str:
        """The text not given yet (an unfinished character at the end, as U+FFFD)."""
        text = self.tokenizer.decode(self.ids)
        piece, self.printed = text[self.printed :], max(self.printed, len(text))
        return piece
