"""``hetero-sdk generate``: a decoder's greedy or sampled tokens, text with a tokenizer, the metrics,
and one-line errors for every bad option.

TEMPLATE compiles the decoder here without its graph transformations: they take seconds on it today,
and these tests are about the command (the pipeline's tests compile with them)."""

from __future__ import annotations

import sys

import pytest
from decoders import PATHS, TOKENIZER, ort_greedy

import hetero_sdk as hs
from hetero_sdk.genai import GenerationConfig, LLMPipeline

from .helpers import Invoke, assert_one_line_error, make_core, parse_json

LLAMA = PATHS["llama"]

tokenizers = pytest.importorskip("tokenizers")
PROMPT = [1, 17, 42, 99, 256, 7]


@pytest.fixture
def accel_core() -> hs.Core:
    """The CLI tests' Core, its TEMPLATE compiling without graph transformations."""
    core = make_core()
    core.set_property("TEMPLATE", {"TEMPLATE_DISABLE_TRANSFORMATIONS": True})
    return core


def test_generate_prints_onnx_runtimes_greedy_ids_and_the_metrics(invoke: Invoke) -> None:
    result = invoke("generate", "-m", str(LLAMA), "-d", "TEMPLATE", "--prompt-ids", "1,17,42,99,256,7", "-n", "32")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert [int(t) for t in lines[0].split()] == ort_greedy(LLAMA, PROMPT, 32)
    fields = {line[:22].strip(): line[22:].strip() for line in lines[3:]}
    assert fields["device"] == "TEMPLATE"
    assert (fields["prompt tokens"], fields["generated tokens"]) == ("6", "32")
    assert fields["time to first token"].endswith(" ms") and float(fields["time to first token"][:-3]) > 0
    assert float(fields["time per token"][:-3]) > 0
    assert float(fields["tokens per second"].split()[0]) > 0
    assert "executables compiled" not in fields  # TEMPLATE does not say


def test_generate_json_holds_the_ids_and_metrics(invoke: Invoke) -> None:
    data = parse_json(invoke("generate", str(LLAMA), "--prompt-ids", "1 17 42", "-n", "8", "--json"))
    assert data["generated_ids"] == ort_greedy(LLAMA, [1, 17, 42], 8)
    assert (data["num_input_tokens"], data["num_generated_tokens"], data["compile_count"]) == (3, 8, None)
    assert 0 < data["ttft_ms"] <= data["generate_duration_ms"]
    assert data["tpot_ms"] == pytest.approx((data["generate_duration_ms"] - data["ttft_ms"]) / 7)
    assert data["tokens_per_second"] == pytest.approx(1e3 / data["tpot_ms"])
    assert data["device"] == "TEMPLATE" and "text" not in data


def test_generate_takes_and_prints_text_with_a_tokenizer(invoke: Invoke) -> None:
    tokenizer = tokenizers.Tokenizer.from_file(str(TOKENIZER))
    prompt = "the quick brown fox"
    result = invoke("generate", str(LLAMA), "--tokenizer", str(TOKENIZER), "--prompt", prompt, "-n", "24", "--json")
    data = parse_json(result)
    expected = ort_greedy(LLAMA, tokenizer.encode(prompt).ids, 24)
    assert data["generated_ids"] == expected
    assert data["text"] == tokenizer.decode(expected, skip_special_tokens=True)
    text = invoke("generate", str(LLAMA), "--tokenizer", str(TOKENIZER), "--prompt", prompt, "-n", "24")
    assert text.exit_code == 0, text.output
    assert text.stdout.startswith(data["text"] + "\n")


def test_generate_samples_with_a_seed_as_the_pipeline_does(invoke: Invoke, accel_core: object) -> None:
    args = ["generate", str(LLAMA), "--prompt-ids", "5,6,7", "-n", "12", "--top-k", "40", "--temperature", "1.3"]
    first = parse_json(invoke(*args, "--seed", "4", "--json"))["generated_ids"]
    assert parse_json(invoke(*args, "--seed", "4", "--json"))["generated_ids"] == first
    assert parse_json(invoke(*args, "--seed", "5", "--json"))["generated_ids"] != first
    config = GenerationConfig(max_new_tokens=12, do_sample=True, top_k=40, temperature=1.3, rng_seed=4)
    assert LLMPipeline(LLAMA, "TEMPLATE", core=accel_core).generate([5, 6, 7], config) == first  # type: ignore[arg-type]


def test_generate_stops_at_a_stop_id(invoke: Invoke) -> None:
    greedy = ort_greedy(LLAMA, PROMPT, 20)
    stop = greedy[6]
    data = parse_json(
        invoke(
            "generate", str(LLAMA), "--prompt-ids", "1,17,42,99,256,7", "-n", "20", "--stop-ids", str(stop), "--json"
        )
    )
    assert data["generated_ids"] == greedy[: greedy.index(stop)]


@pytest.mark.parametrize(
    ("args", "fragments", "status"),
    [
        ([], ["give the prompt as --prompt-ids 1,2,3 or as --prompt TEXT"], 2),
        (["--prompt-ids", "1", "--prompt", "x"], ["(one of them)"], 2),
        (["--prompt", "hello"], ["--prompt TEXT needs --tokenizer"], 2),
        (["--prompt-ids", "1,x,3"], ["'x' is not a token id"], 2),
        (["--prompt-ids", ","], ["no token ids given"], 2),
        (["--prompt-ids", "1,2", "-n", "0"], ["-n", "0"], 2),
        (["--prompt-ids", "1,600"], ["InferenceError", "token id 600 at position 1", "[0, 512)"], 1),
        (["--prompt-ids", "1", "--top-p", "2"], ["PropertyValueError", "GenerationConfig.top_p is 2.0"], 1),
        (["--prompt-ids", "1", "--temperature", "0"], ["PropertyValueError", "GenerationConfig.temperature"], 1),
        (["--prompt-ids", "1", "--tokenizer", "absent.json"], ["absent.json"], 2),
    ],
)
def test_bad_options_are_one_line_errors(invoke: Invoke, args: list[str], fragments: list[str], status: int) -> None:
    assert_one_line_error(invoke("generate", str(LLAMA), *args), *fragments, exit_code=status)


def test_a_missing_model_and_a_model_without_cache_are_one_line_errors(invoke: Invoke) -> None:
    assert_one_line_error(invoke("generate", "absent.onnx", "--prompt-ids", "1"), "absent.onnx", exit_code=1)
    assert_one_line_error(invoke("generate", "--prompt-ids", "1"), "Missing argument 'MODEL'", exit_code=2)
    assert_one_line_error(
        invoke("generate", "mlp", "--prompt-ids", "1"), "ModelValidationError", "no 'input_ids' input", exit_code=1
    )


def test_without_the_tokenizers_library_the_error_names_the_extra(
    invoke: Invoke, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "tokenizers", None)  # import tokenizers now raises ImportError
    result = invoke("generate", str(LLAMA), "--tokenizer", str(TOKENIZER), "--prompt", "hi")
    assert_one_line_error(result, "pip install 'hetero-sdk[genai]'", exit_code=2)
