"""The XLA device with channel concatenates read in place by the 1x1 convolutions they feed
(:mod:`hetero_sdk_jax.lowering.kernels.concat_pointwise`) or written out first, whole models compiled both ways
in one process, timed interleaved on one CPU.

Usage::

    python bench/bench_concat_pointwise.py --models yolov8n yolox --runs 100 --cpu-time

Each row gives the medians in milliseconds, in place / written out, and the largest difference of the two
outputs (f32 rounding: the same products summed in another order).
"""

from __future__ import annotations

from typing import Any

from hetero_sdk_jax.lowering.kernels import concat_pointwise
from on_off import on_off_main
from real_models import fetch, read

import hetero_sdk as hs


def _request(model: Any, in_place: bool) -> Any:
    """An infer request of ``model`` (a bench model) compiled for XLA with the rule on or off, lowered (a model
    with dynamic inputs lowers at its first inference) before the rule is put back on."""
    path = fetch(model)
    concat_pointwise.set_enabled(in_place)
    try:
        converted = read(model, path)
        request = hs.Core().compile_model(converted, "XLA").create_infer_request()
        request.infer(model.feeds)
        return request
    finally:
        concat_pointwise.set_enabled(True)


def main() -> None:
    on_off_main(
        __doc__,
        "XLA, channel Concats before 1x1 convolutions written out or read in place",
        (("written", "written ms"), ("in_place", "in place ms")),
        "in place/out",
        ["yolov8n", "yolox"],
        _request,
    )


if __name__ == "__main__":
    main()
