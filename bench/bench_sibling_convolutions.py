"""The XLA device with merged sibling 1x1 convolutions carrying their branches' bias and activation
(:mod:`hetero_sdk_jax.sibling_convolutions`) or leaving them after the split, whole models compiled both
ways in one process, timed interleaved on one CPU.

Usage::

    python bench/bench_sibling_convolutions.py --models yolox yolov8n --runs 100 --cpu-time

Each row gives the medians in milliseconds, carried / after the split, and the largest difference of the
two outputs (f32 rounding: the same operations, the bias added to the finished sum either way).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import hetero_sdk_jax.sibling_convolutions as siblings
from on_off import on_off_main
from real_models import fetch, read

import hetero_sdk as hs


@contextlib.contextmanager
def _biases_after_the_split() -> Iterator[None]:
    """The merge finds no sibling's bias (it is looked up when the pass runs): main's graph before the change."""
    saved = siblings.bias_and_activation
    siblings.bias_and_activation = lambda node, users: None  # type: ignore[assignment]
    try:
        yield
    finally:
        siblings.bias_and_activation = saved  # type: ignore[assignment]


def _compiled(model: Any, carried: bool) -> Any:
    """``model`` (a bench model) compiled for XLA, the biases carried into the merged convolution or not."""
    path = fetch(model)
    with contextlib.nullcontext() if carried else _biases_after_the_split():
        converted = read(model, path)
        return hs.Core().compile_model(converted, "XLA")


def main() -> None:
    on_off_main(
        __doc__,
        "XLA, siblings' bias + activation carried into the merge or not",
        (("after", "after split ms"), ("carried", "carried ms")),
        "carried/after",
        ["yolox", "yolov8n"],
        lambda model, carried: _compiled(model, carried).create_infer_request(),
    )


if __name__ == "__main__":
    main()
