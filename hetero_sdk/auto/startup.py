"""Whether AUTO's startup device (TEMPLATE) should serve a model's first inferences while the chosen
device compiles: only when its expected compile plus first inference is clearly less than the chosen
device's expected compile, counting the cores both would share.

The expectations come from the model's size (compute ops, and the multiply-adds of its convolutions
and matrix products) and each device's costs: defaults by device kind, replaced by what this process
measured on earlier compiles and first inferences (:class:`CostBook`)."""

from __future__ import annotations

import math
import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass

from hetero_sdk.auto.priorities import DeviceKind
from hetero_sdk.graph import Model, Node
from hetero_sdk.shape import PartialShape

__all__ = [
    "CLEAR_MARGIN",
    "DEFAULT_COSTS",
    "CostBook",
    "DeviceCosts",
    "ModelSize",
    "StartupDecision",
    "decide_startup",
    "model_size",
]

CLEAR_MARGIN = 0.5
"""The startup device serves only when its expected time to a first result is at most this share of
the chosen device's expected compile: a smaller win is lost to the switch and to estimation error."""


@dataclass(frozen=True)
class ModelSize:
    """What a model costs to compile and run: its compute ops and its floating-point operations."""

    ops: int
    flops: float


@dataclass(frozen=True)
class DeviceCosts:
    """A device's costs for :func:`decide_startup`.

    :ivar compile_base_s: seconds any compile costs (tracing, backend start-up).
    :ivar compile_per_op_s: seconds each compute op adds to a compile.
    :ivar flops_per_s: floating-point operations the device runs a second on one core (first inference).
    :ivar measured: True when the figures come from this process's own compiles and inferences.
    """

    compile_base_s: float
    compile_per_op_s: float
    flops_per_s: float
    measured: bool = False

    def compile_s(self, size: ModelSize) -> float:
        """Expected seconds to compile a model of ``size``."""
        return self.compile_base_s + self.compile_per_op_s * size.ops

    def infer_s(self, size: ModelSize) -> float:
        """Expected seconds of one inference of a model of ``size``."""
        return size.flops / self.flops_per_s


DEFAULT_COSTS: Mapping[DeviceKind, DeviceCosts] = {
    # numpy kernels, no code generation: PP-OCRv4 det at 320x320 (468 ops, 1.3 GFLOP) compiles in about
    # 0.5 s and runs in 70-130 ms on one thread of a 2-core VM (bench/bench_auto.py)
    DeviceKind.REFERENCE: DeviceCosts(compile_base_s=0.005, compile_per_op_s=0.001, flops_per_s=1e10),
    # XLA:CPU: the same detector compiles in 2-5 s on that VM (2 s when it is quiet)
    DeviceKind.HOST: DeviceCosts(compile_base_s=0.15, compile_per_op_s=0.004, flops_per_s=2e10),
    DeviceKind.ACCELERATOR: DeviceCosts(compile_base_s=0.5, compile_per_op_s=0.004, flops_per_s=1e12),
    DeviceKind.OTHER: DeviceCosts(compile_base_s=0.1, compile_per_op_s=0.001, flops_per_s=1e10),
}
"""Costs by device kind, used until a device's own compiles and first inferences are measured."""


@dataclass(frozen=True)
class StartupDecision:
    """Whether the startup device serves first, with the estimates behind it.

    :ivar startup: the startup device considered.
    :ivar target: the chosen device.
    :ivar use: True when the startup device serves the first inferences.
    :ivar startup_first_s: expected seconds to the startup device's first result (compile and one
        inference, slowed by sharing the cores with the chosen device's compile).
    :ivar target_compile_s: expected seconds of the chosen device's compile.
    """

    startup: str
    target: str
    use: bool
    startup_first_s: float
    target_compile_s: float

    def describe(self) -> str:
        """One line for logs and the benchmark header."""
        verdict = "serves first" if self.use else "stays out"
        return (
            f"{self.startup} {verdict}: {self.startup_first_s:.2f} s to its first result (est.) vs "
            f"{self.target_compile_s:.2f} s for {self.target} to compile (est.)"
        )


def decide_startup(
    startup: str,
    target: str,
    size: ModelSize,
    startup_costs: DeviceCosts,
    target_costs: DeviceCosts,
    cores: int | None = None,
) -> StartupDecision:
    """Serve from ``startup`` only when its expected compile and first inference, slowed by sharing the
    cores with ``target``'s compile, is at most :data:`CLEAR_MARGIN` of ``target``'s expected compile.

    :param cores: CPU cores the two share (``os.cpu_count()`` when None). With fewer than 4, running both
        at once halves the speed of each, so the startup device's estimate doubles.
    """
    cores = os.cpu_count() or 1 if cores is None else cores
    contention = 2.0 if cores < 4 else 1.0
    first = (startup_costs.compile_s(size) + startup_costs.infer_s(size)) * contention
    compile_s = target_costs.compile_s(size)
    return StartupDecision(startup, target, first <= CLEAR_MARGIN * compile_s, first, compile_s)


_MATRIX_OPS = frozenset({"Convolution", "GroupConvolution", "MatMul", "ConvolutionBackpropData"})


def model_size(model: Model) -> ModelSize:
    """The compute ops of ``model`` and its floating-point operations: two per multiply-add of its
    convolutions and matrix products (output elements times the reduced length), one per output element
    elsewhere. A dynamic dimension counts as 1."""
    ops = 0
    flops = 0.0
    for node in model.get_ordered_ops():
        if node.op.structural:
            continue
        ops += 1
        out = sum(_elements(node.get_output_partial_shape(i)) for i in range(node.get_output_size()))
        if node.type_name in _MATRIX_OPS and node.get_input_size() >= 2:
            flops += 2.0 * out * _reduced(node)
        else:
            flops += out
    return ModelSize(ops, flops)


def _dims(shape: PartialShape) -> list[int]:
    """``shape``'s dimensions, 1 for a dynamic one; ``[]`` for a dynamic rank."""
    if not shape.rank_is_static:
        return []
    return [d if d > 0 else 1 for d in shape.dims]


def _elements(shape: PartialShape) -> int:
    return math.prod(_dims(shape))


def _reduced(node: Node) -> int:
    """The length each output element of a matrix op sums over: the weight's elements per output
    channel for a convolution, the shared dimension for a MatMul."""
    weights = _dims(node.input_value(1).partial_shape)
    if not weights:
        return 1
    if node.type_name == "MatMul":
        if len(weights) == 1:
            return weights[0]
        return weights[-1] if node.get_attributes().get("transpose_b", False) else weights[-2]
    if node.type_name == "GroupConvolution":
        return math.prod(weights[2:])  # [groups, out/g, in/g, k...]
    return math.prod(weights[1:])  # [out, in, k...]


class CostBook:
    """Each device's costs: the kind's defaults until this process has measured the device; then the
    per-op compile cost and inference speed of its latest compile and first inference."""

    def __init__(self, defaults: Mapping[DeviceKind, DeviceCosts] = DEFAULT_COSTS) -> None:
        self._defaults = dict(defaults)
        self._measured: dict[str, DeviceCosts] = {}
        self._lock = threading.Lock()

    def costs(self, device: str, kind: DeviceKind) -> DeviceCosts:
        """What ``device`` costs: measured when it has been, else its kind's default."""
        with self._lock:
            return self._measured.get(device, self._defaults[kind])

    def record_compile(self, device: str, kind: DeviceKind, size: ModelSize, seconds: float) -> None:
        """Learns ``device``'s per-op compile cost from one compile of a model of ``size``."""
        with self._lock:
            known = self._measured.get(device, self._defaults[kind])
            per_op = max(seconds - known.compile_base_s, 0.0) / max(size.ops, 1)
            self._measured[device] = DeviceCosts(known.compile_base_s, per_op, known.flops_per_s, True)

    def record_inference(self, device: str, kind: DeviceKind, size: ModelSize, seconds: float) -> None:
        """Learns ``device``'s speed from one inference of a model of ``size``."""
        if seconds <= 0 or size.flops <= 0:
            return
        with self._lock:
            known = self._measured.get(device, self._defaults[kind])
            self._measured[device] = DeviceCosts(
                known.compile_base_s, known.compile_per_op_s, size.flops / seconds, True
            )
