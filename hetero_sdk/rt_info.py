"""The rt_info keys the SDK and devices read and write, one typed name each (OpenVINO's
``ov::exec_model_info`` and HETERO's keys): write ``node.get_rt_info()[rt_info.AFFINITY]``, never the
string by hand."""

from __future__ import annotations

from typing import Final

__all__ = [
    "AFFINITY", "DIM_NAMES", "DONATABLE", "EXEC_TYPE", "LAYER_TYPE", "ORIGINAL_NAMES", "PERF_COUNTER",
    "RUNTIME_PRECISION", "SUBGRAPH",
]  # fmt: skip

AFFINITY: Final = "affinity"
"""On a model's op: the device HETERO must run it on (manual affinities); on a runtime model's op: the
device it runs on."""

DIM_NAMES: Final = "dim_names"
"""On a Parameter read from a file: the symbolic name of each dimension (``"batch"``), None where the
file names none; a named dimension is dynamic (``-1``) in the shape."""

DONATABLE: Final = "donatable"
"""On a Parameter: True when the caller never reads the input's value after an inference (a cache
buffer the model returns updated), so a device may write an output into its memory (XLA's buffer
donation)."""

SUBGRAPH: Final = "subgraph"
"""On a HETERO runtime model's op: the index of the subgraph it belongs to."""

ORIGINAL_NAMES: Final = "originalLayersNames"
"""On a runtime model's op: the friendly names of the original ops it computes, comma-separated."""

LAYER_TYPE: Final = "layerType"
"""On a runtime model's op: the kernel or op type the device runs."""

EXEC_TYPE: Final = "execType"
"""On a runtime model's op: how the device executes it (``ref_Add``, ``xla_fused``...)."""

RUNTIME_PRECISION: Final = "runtimePrecision"
"""On a runtime model's op: the element type the device computes in."""

PERF_COUNTER: Final = "execTimeMcs"
"""On a runtime model's op, after a profiled run: its last execution time in microseconds."""
