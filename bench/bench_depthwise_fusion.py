"""The XLA device with and without :class:`~hetero_sdk_jax.depthwise_fusion.DepthwiseBiasActivationFusion`
(a depthwise convolution's bias and activation applied inside the native kernel), whole models compiled
both ways in one process, timed interleaved on one CPU.

Usage::

    python bench/bench_depthwise_fusion.py --models ppocr-rec ppocr-cls ppocr-det --runs 100 --cpu-time

Each row gives the medians in milliseconds, fused / unfused, and the largest difference of the two
outputs (f32 rounding: the bias and activation are the same operations in the same order).
"""

from __future__ import annotations

import contextlib
from typing import Any

from hetero_sdk_jax.depthwise_fusion import DepthwiseBiasActivationFusion
from on_off import on_off_main
from real_models import fetch
from timing import pass_off

import hetero_sdk as hs


def _compiled(path: Any, fused: bool) -> Any:
    """``path`` compiled for XLA, the fusion pass on or off (it is looked up when the passes run)."""
    with contextlib.nullcontext() if fused else pass_off(DepthwiseBiasActivationFusion):
        return hs.Core().compile_model(hs.convert_model(path), "XLA")


def main() -> None:
    on_off_main(
        __doc__,
        "XLA, depthwise bias + activation fused or not",
        (("unfused", "unfused ms"), ("fused", "fused ms")),
        "fused/unfused",
        ["ppocr-rec", "ppocr-cls", "ppocr-det"],
        lambda model, fused: _compiled(fetch(model), fused).create_infer_request(),
    )


if __name__ == "__main__":
    main()
