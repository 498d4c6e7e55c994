"""Text in and out: the Tokenizer wraps the tokenizers library's reading of tokenizer.json, a text
streamer's pieces add up to the generated text, and without the library the error names the extra."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from decoders import PATHS, TOKENIZER, ort_greedy

from hetero_sdk.errors import ModelFormatError
from hetero_sdk.genai import DecodedResults, LLMPipeline, Tokenizer
from hetero_sdk.genai.tokenizer import TextStream

LLAMA = PATHS["llama"]

tokenizers = pytest.importorskip("tokenizers")
TEXT = "the quick brown fox"


@pytest.fixture(scope="module")
def reference() -> tokenizers.Tokenizer:
    return tokenizers.Tokenizer.from_file(str(TOKENIZER))


def test_encode_and_decode_are_the_tokenizers_librarys(reference: tokenizers.Tokenizer) -> None:
    tokenizer = Tokenizer(TOKENIZER)
    assert tokenizer.encode(TEXT) == reference.encode(TEXT).ids
    assert tokenizer.decode(reference.encode(TEXT).ids) == reference.decode(reference.encode(TEXT).ids)
    assert tokenizer.vocab_size == 512
    assert Tokenizer(TOKENIZER.parent).encode(TEXT) == tokenizer.encode(TEXT)  # the folder holding it


def test_a_text_stream_holds_back_an_unfinished_character(reference: tokenizers.Tokenizer) -> None:
    ids = reference.encode("é€ok").ids  # multi-byte characters split over byte-level tokens
    stream = TextStream(Tokenizer(reference))
    pieces = [stream.push(token) for token in ids]
    assert pieces == ["", "é", "", "", "€", "o", "k"]  # é is two tokens, € three
    assert stream.flush() == ""


def test_text_prompts_give_the_text_of_onnx_runtimes_tokens(
    llama_pipeline: LLMPipeline, reference: tokenizers.Tokenizer
) -> None:
    pipeline = LLMPipeline.__new__(LLMPipeline)
    pipeline.__dict__.update(llama_pipeline.__dict__, tokenizer=Tokenizer(TOKENIZER))
    expected = ort_greedy(LLAMA, reference.encode(TEXT).ids, 20)
    pieces: list[str] = []
    text = pipeline.generate(TEXT, max_new_tokens=20, streamer=pieces.append)
    assert text == reference.decode(expected, skip_special_tokens=True)
    assert "".join(pieces) == text
    results = pipeline.generate([TEXT, "hello"], max_new_tokens=4, return_results=True)
    assert isinstance(results, DecodedResults)
    assert results.tokens[0] == expected[:4] and results.texts[0] == reference.decode(expected[:4])


def test_a_missing_or_malformed_tokenizer_file_is_an_error_naming_it(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="absent"):
        Tokenizer(tmp_path / "absent.json")
    bad = tmp_path / "tokenizer.json"
    bad.write_text("{not json")
    with pytest.raises(ModelFormatError, match=r"not a Hugging Face tokenizer\.json"):
        Tokenizer(bad)


def test_without_the_library_the_error_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "tokenizers", None)
    with pytest.raises(ImportError, match=r"pip install 'hetero-sdk\[genai\]'"):
        Tokenizer(TOKENIZER)
