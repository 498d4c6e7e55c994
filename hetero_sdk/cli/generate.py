"""``hetero-sdk generate -m DECODER -d DEVICE --prompt-ids 1,2,3 -n N``: generate tokens with a decoder
(:class:`hetero_sdk.genai.LLMPipeline`) and print them with the time to first token and tokens/s."""

from __future__ import annotations

from typing import Any

import click

from hetero_sdk.cli.context import EXIT_USAGE, LOAD_CONFIG, CLIError, apply_config_file, get_core
from hetero_sdk.cli.models import load_model, model_source, validate_device
from hetero_sdk.cli.output import Printer, emit_json, progress, status
from hetero_sdk.genai import GenerationConfig, LLMPipeline, Tokenizer

__all__ = ["generate", "parse_ids"]

DEFAULT_DEVICE = "TEMPLATE"
"""TEMPLATE starts generating in a fraction of XLA's compile time; ``-d XLA`` for long generations (its
caches in fixed-capacity buffers: an executable for the prompt and one per capacity)."""


def parse_ids(ctx: click.Context, param: click.Parameter, value: str | None) -> list[int] | None:
    """A click callback: ``"1,2,3"`` as ``[1, 2, 3]`` (non-negative integers, commas or spaces between)."""
    if value is None:
        return None
    parts = [p for p in value.replace(",", " ").split()]
    if not parts:
        raise click.BadParameter("no token ids given; write them as 1,2,3", ctx=ctx, param=param)
    ids = []
    for part in parts:
        if not part.isdigit():
            raise click.BadParameter(f"{part!r} is not a token id (a non-negative integer)", ctx=ctx, param=param)
        ids.append(int(part))
    return ids


def _config(
    max_new_tokens: int,
    temperature: float | None,
    top_k: int | None,
    top_p: float | None,
    seed: int,
    stop_ids: list[int] | None,
) -> GenerationConfig:
    sampling = temperature is not None or top_k is not None or top_p is not None
    return GenerationConfig(
        max_new_tokens=max_new_tokens,
        do_sample=sampling,
        temperature=1.0 if temperature is None else temperature,
        top_k=top_k or 0,
        top_p=1.0 if top_p is None else top_p,
        rng_seed=seed,
        stop_token_ids=set(stop_ids or ()),
    )


def _tokenizer(path: str | None) -> Tokenizer | None:
    if path is None:
        return None
    try:
        return Tokenizer(path)
    except ImportError as exc:
        raise CLIError(f"--tokenizer {path}: {exc}", EXIT_USAGE) from None


@click.command(short_help="Generate tokens with a decoder (greedy or sampled).")
@click.argument("model", required=False)
@click.option("-m", "--model", "model_option", metavar="MODEL", help="The decoder, as benchmark_app spells it.")
@click.option("-d", "--device", callback=validate_device, help=f"The device to generate on [default: {DEFAULT_DEVICE}]")
@click.option("--prompt-ids", callback=parse_ids, metavar="IDS", help="The prompt as token ids: 1,2,3.")
@click.option("--prompt", "prompt_text", metavar="TEXT", help="The prompt as text (needs --tokenizer).")
@click.option(
    "-n", "--max-new-tokens", type=click.IntRange(min=1), default=20, show_default=True, help="Tokens to generate."
)
@click.option(
    "--tokenizer",
    type=click.Path(exists=True),
    help="A Hugging Face tokenizer.json (or its folder): take --prompt and print text. Needs hetero-sdk[genai].",
)
@click.option("--temperature", type=float, help="Sample, dividing the logits by this (> 0).")
@click.option("--top-k", type=click.IntRange(min=0), help="Sample among the K most likely tokens.")
@click.option("--top-p", type=float, help="Sample among the most likely tokens holding this probability, in (0, 1].")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True, help="The sampler's seed.")
@click.option("--stop-ids", callback=parse_ids, metavar="IDS", help="Token ids that end the generation: 0,2.")
@LOAD_CONFIG
@click.option("--json", "as_json", is_flag=True, help="Print the tokens and metrics as JSON.")
@click.pass_context
def generate(
    ctx: click.Context,
    model: str | None,
    model_option: str | None,
    device: str | None,
    prompt_ids: list[int] | None,
    prompt_text: str | None,
    max_new_tokens: int,
    tokenizer: str | None,
    temperature: float | None,
    top_k: int | None,
    top_p: float | None,
    seed: int,
    stop_ids: list[int] | None,
    config_file: str | None,
    as_json: bool,
) -> None:
    """Generate tokens after a prompt with a decoder and print them, the time to first token and
    tokens per second.

    MODEL (or -m MODEL) is a decoder exported with its cache (past_key_values.N.key|value inputs,
    present.N.key|value outputs, as torch and optimum export them), ONNX or native. Decoding is
    greedy unless --temperature, --top-k or --top-p is given; then tokens are sampled with --seed.
    """
    spec = model_source(ctx, model, model_option)
    if spec is None:
        raise click.UsageError("Missing argument 'MODEL' (or -m MODEL)", ctx)
    if (prompt_ids is None) == (prompt_text is None):
        raise click.UsageError("give the prompt as --prompt-ids 1,2,3 or as --prompt TEXT (one of them)", ctx)
    if prompt_text is not None and tokenizer is None:
        raise click.UsageError("--prompt TEXT needs --tokenizer tokenizer.json (or give --prompt-ids)", ctx)
    config = _config(max_new_tokens, temperature, top_k, top_p, seed, stop_ids)
    config.validate()
    text_tokens = _tokenizer(tokenizer)
    core = get_core(ctx)
    loaded = load_model(core, spec)
    device = device or DEFAULT_DEVICE
    properties = apply_config_file(core, config_file, device)
    with status(f"compiling {loaded.model.friendly_name} on {device}"):
        pipeline = LLMPipeline(loaded.model, device, tokenizer=text_tokens, config=properties, core=core)
    prompt: Any = prompt_ids if prompt_ids is not None else prompt_text
    with progress(f"generating on {device}", max_new_tokens, by_time=False, enabled=False if as_json else None) as bar:

        def advance(_: Any) -> None:
            bar.advance()

        results = pipeline.generate(prompt, config, streamer=advance, return_results=True)
    _print(results, pipeline, loaded.describe(), device, as_json)


def _print(results: Any, pipeline: LLMPipeline, model: str, device: str, as_json: bool) -> None:
    metrics = results.perf_metrics
    tokens = results.tokens[0]
    text = results.texts[0] if pipeline.tokenizer is not None else None
    if as_json:
        emit_json(
            {
                "model": model,
                "device": device,
                "generated_ids": tokens,
                **({"text": text} if text is not None else {}),
                "num_input_tokens": metrics.num_input_tokens,
                "num_generated_tokens": metrics.num_generated_tokens,
                "ttft_ms": metrics.ttft_ms,
                "generate_duration_ms": metrics.generate_duration_ms,
                "tpot_ms": metrics.tpot_ms,
                "tokens_per_second": metrics.throughput,
                "compile_count": metrics.compile_count,
            }
        )
        return
    out = Printer()
    out.line(text if text is not None else " ".join(map(str, tokens)))
    fields: list[tuple[str, Any]] = [
        ("model", model),
        ("device", device),
        ("prompt tokens", metrics.num_input_tokens),
        ("generated tokens", metrics.num_generated_tokens),
        ("time to first token", f"{metrics.ttft_ms:.1f} ms"),
        ("time per token", f"{metrics.tpot_ms:.2f} ms"),
        ("tokens per second", f"{metrics.throughput:.1f} (after the first)"),
    ]
    if metrics.compile_count is not None:
        fields.append(("executables compiled", metrics.compile_count))
    out.heading("Generation")
    out.fields(fields)
