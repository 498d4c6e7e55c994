"""The benchmark models: an MLP, a small CNN and a pre-norm transformer block, each in four forms.

One builder per model takes an *opset module*, so the same code, weights and friendly names make the
hetero-sdk model (:mod:`hetero_sdk.opset`) and the OpenVINO model (``openvino.opset13``): the two
opsets share op names, attributes and argument order. The hetero-sdk model runs on ONNX Runtime through
the SDK's exporter (:func:`hetero_sdk.frontend.onnx_export.export_model`), and each model has a
plain-numpy forward pass over the same weights.

Every op's friendly name begins with its *stage* (``fc1/matmul``, ``attention/scores``): HETERO
splits follow stages (:func:`stage_devices`, :func:`set_affinities`), so a split never cuts a fused
MatMul+Add.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

import hetero_sdk as hs
from hetero_sdk import opset as sdk_opset

__all__ = [
    "MODELS", "BenchModel", "mlp", "set_affinities", "small_cnn", "stage_devices", "transformer_block",
]  # fmt: skip

Graph = Callable[[Any], tuple[Any, Any]]
"""Builds a model's ops with an opset module; returns (the output, the parameter)."""


@dataclass(frozen=True)
class BenchModel:
    """A benchmark model: its builder, its numpy forward pass and its stages, over one set of weights."""

    name: str
    input_shape: tuple[int, ...]
    stages: tuple[str, ...]
    graph: Graph
    numpy: Callable[[np.ndarray], np.ndarray]
    input_name: str = "x"

    def sample_input(self, seed: int = 1) -> np.ndarray:
        """A deterministic f32 input."""
        return np.random.default_rng(seed).standard_normal(self.input_shape).astype(np.float32)

    def build(self) -> hs.Model:
        """The hetero-sdk model (a fresh one per call: affinities are written into it)."""
        out, param = self.graph(sdk_opset)
        return hs.Model([sdk_opset.result(out, name=f"{self.stages[-1]}/result")], [param], self.name)

    def build_openvino(self) -> Any:
        """The same model as an ``openvino.Model``, with the same friendly names."""
        import openvino as ov
        from openvino import opset13

        out, param = self.graph(opset13)
        return ov.Model([opset13.result(out, name=f"{self.stages[-1]}/result")], [param], self.name)


def _const(ops: Any, value: Any, name: str, dtype: Any = np.float32) -> Any:
    return ops.constant(np.asarray(value, dtype=dtype), name=name)


def _dense_weights(rng: np.random.Generator, n_in: int, n_out: int) -> tuple[np.ndarray, np.ndarray]:
    w = (rng.standard_normal((n_in, n_out)) * np.sqrt(2.0 / n_in)).astype(np.float32)
    return w, (0.1 * rng.standard_normal(n_out)).astype(np.float32)


def _dense(ops: Any, x: Any, w: np.ndarray, b: np.ndarray, prefix: str) -> Any:
    h = ops.matmul(x, _const(ops, w, f"{prefix}/weights"), False, False, name=f"{prefix}/matmul")
    return ops.add(h, _const(ops, b, f"{prefix}/bias"), name=f"{prefix}/add")


def _softmax(x: np.ndarray, axis: int) -> np.ndarray:
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def mlp(batch: int = 8, features: int = 256, hidden: int = 512, layers: int = 3, classes: int = 10) -> BenchModel:
    """``layers`` hidden Dense+Relu layers and a Dense+Softmax head; one stage per layer (``fc1``...).

    :param batch: rows of the input ``x`` ``[batch, features]``.
    :param features: the input width.
    :param hidden: the hidden layers' width.
    :param layers: how many hidden layers.
    :param classes: the output width.
    """
    rng = np.random.default_rng(0)
    widths = [features] + [hidden] * layers + [classes]
    weights = [_dense_weights(rng, a, b) for a, b in itertools.pairwise(widths)]
    stages = tuple(f"fc{i + 1}" for i in range(len(weights)))

    def graph(ops: Any) -> tuple[Any, Any]:
        x = ops.parameter([batch, features], np.float32, name="x")
        h = x
        for stage, (w, b) in zip(stages, weights):
            h = _dense(ops, h, w, b, stage)
            if stage != stages[-1]:
                h = ops.relu(h, name=f"{stage}/relu")
        return ops.softmax(h, 1, name=f"{stages[-1]}/softmax"), x

    def forward(x: np.ndarray) -> np.ndarray:
        h = x
        for i, (w, b) in enumerate(weights):
            h = h @ w + b
            if i < len(weights) - 1:
                h = np.maximum(h, 0)
        return _softmax(h, 1)

    return BenchModel("mlp", (batch, features), stages, graph, forward)


def _conv3x3_numpy(x: np.ndarray, w: np.ndarray, b: np.ndarray) -> np.ndarray:
    padded = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    windows = sliding_window_view(padded, (3, 3), axis=(2, 3))  # [N, C, H, W, 3, 3]
    out = np.tensordot(windows, w, axes=([1, 4, 5], [1, 2, 3]))  # [N, H, W, O]
    return out.transpose(0, 3, 1, 2) + b


def small_cnn(image: int = 32, channels: Sequence[int] = (16, 32, 64), classes: int = 10) -> BenchModel:
    """Three stages of 3x3 Convolution (same padding) + bias + Relu + 2x2 MaxPool, then a Dense head.

    Stages ``conv1``... and ``head``; the input ``x`` is ``[1, 3, image, image]``.

    :param image: the input's side, divisible by ``2 ** len(channels)``.
    :param channels: output channels per convolution stage.
    :param classes: the output width.
    :raises ValueError: when ``image`` is not divisible by ``2 ** len(channels)``.
    """
    if image % 2 ** len(channels):
        raise ValueError(f"image {image} is not divisible by 2 ** {len(channels)}")
    rng = np.random.default_rng(0)
    convs = []
    c_in = 3
    for c_out in channels:
        w = (rng.standard_normal((c_out, c_in, 3, 3)) * np.sqrt(2.0 / (9 * c_in))).astype(np.float32)
        convs.append((w, (0.1 * rng.standard_normal((1, c_out, 1, 1))).astype(np.float32)))
        c_in = c_out
    side = image // 2 ** len(channels)
    head_w, head_b = _dense_weights(rng, c_in * side * side, classes)
    stages = (*(f"conv{i + 1}" for i in range(len(channels))), "head")

    def graph(ops: Any) -> tuple[Any, Any]:
        x = ops.parameter([1, 3, image, image], np.float32, name="x")
        h = x
        for stage, (w, b) in zip(stages, convs):
            conv = ops.convolution(
                h, _const(ops, w, f"{stage}/weights"), [1, 1], [1, 1], [1, 1], [1, 1], "explicit", name=f"{stage}/conv"
            )
            h = ops.relu(ops.add(conv, _const(ops, b, f"{stage}/bias"), name=f"{stage}/add"), name=f"{stage}/relu")
            h = ops.max_pool(h, [2, 2], [1, 1], [0, 0], [0, 0], [2, 2], "floor", "explicit", name=f"{stage}/pool")
            h = h.output(0)
        flat = ops.reshape(h, _const(ops, [1, -1], "head/shape", np.int64), False, name="head/flatten")
        return _dense(ops, flat, head_w, head_b, "head"), x

    def forward(x: np.ndarray) -> np.ndarray:
        h = x
        for w, b in convs:
            h = np.maximum(_conv3x3_numpy(h, w, b), 0)
            n, c, hh, ww = h.shape
            h = h.reshape(n, c, hh // 2, 2, ww // 2, 2).max(axis=(3, 5))
        return h.reshape(1, -1) @ head_w + head_b

    return BenchModel("cnn", (1, 3, image, image), stages, graph, forward)


_LN_EPS = 1e-5


def _layer_norm(ops: Any, x: Any, gamma: np.ndarray, beta: np.ndarray, stage: str) -> Any:
    axes = _const(ops, [-1], f"{stage}/axes", np.int64)
    norm = ops.mvn(x, axes, True, _LN_EPS, "inside_sqrt", name=f"{stage}/mvn")
    scaled = ops.multiply(norm, _const(ops, gamma, f"{stage}/gamma"), name=f"{stage}/scale")
    return ops.add(scaled, _const(ops, beta, f"{stage}/beta"), name=f"{stage}/shift")


def _layer_norm_numpy(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray) -> np.ndarray:
    centered = x - x.mean(axis=-1, keepdims=True)
    return centered / np.sqrt((centered * centered).mean(axis=-1, keepdims=True) + np.float32(_LN_EPS)) * gamma + beta


def _gelu_tanh_numpy(x: np.ndarray) -> np.ndarray:
    c = np.float32(np.sqrt(2.0 / np.pi))
    return np.float32(0.5) * x * (1 + np.tanh(c * (x + np.float32(0.044715) * x * x * x)))


def transformer_block(seq: int = 64, d_model: int = 128, heads: int = 4, ffn: int = 512) -> BenchModel:
    """A pre-norm transformer encoder block on ``x`` ``[1, seq, d_model]``.

    ``r = x + Attention(LayerNorm(x))``, ``y = r + Dense(Gelu(Dense(LayerNorm(r))))``: LayerNorm is
    MVN over the last axis (eps inside the square root) with a scale and shift; attention splits heads
    with Reshape and Transpose, and scales ``Q K^T`` by ``1/sqrt(head_dim)`` before Softmax; Gelu is
    the tanh approximation. Stages: ``attn_norm``, ``attention``, ``mlp_norm``, ``mlp``.

    :param seq: the sequence length.
    :param d_model: the embedding width, divisible by ``heads``.
    :param heads: attention heads.
    :param ffn: the MLP's hidden width.
    :raises ValueError: when ``d_model`` is not divisible by ``heads``.
    """
    if d_model % heads:
        raise ValueError(f"d_model {d_model} is not divisible by heads {heads}")
    rng = np.random.default_rng(0)
    head_dim = d_model // heads

    def norm_params() -> tuple[np.ndarray, np.ndarray]:
        gamma = (1 + 0.1 * rng.standard_normal(d_model)).astype(np.float32)
        return gamma, (0.1 * rng.standard_normal(d_model)).astype(np.float32)

    ln1, ln2 = norm_params(), norm_params()
    q, k, v, o = (_dense_weights(rng, d_model, d_model) for _ in range(4))
    up, down = _dense_weights(rng, d_model, ffn), _dense_weights(rng, ffn, d_model)
    scale = np.float32(1 / np.sqrt(head_dim))
    stages = ("attn_norm", "attention", "mlp_norm", "mlp")

    def graph(ops: Any) -> tuple[Any, Any]:
        x = ops.parameter([1, seq, d_model], np.float32, name="x")
        a = "attention"
        split_shape = _const(ops, [1, seq, heads, head_dim], f"{a}/split_shape", np.int64)
        heads_order = _const(ops, [0, 2, 1, 3], f"{a}/heads_order", np.int64)
        h1 = _layer_norm(ops, x, *ln1, "attn_norm")

        def split(w: tuple[np.ndarray, np.ndarray], part: str, order: Any) -> Any:
            h = ops.reshape(_dense(ops, h1, *w, f"{a}/{part}"), split_shape, False, name=f"{a}/{part}/split")
            return ops.transpose(h, order, name=f"{a}/{part}/heads")

        k_order = _const(ops, [0, 2, 3, 1], f"{a}/k_order", np.int64)
        scores = ops.matmul(split(q, "q", heads_order), split(k, "k", k_order), False, False, name=f"{a}/scores")
        scaled = ops.multiply(scores, _const(ops, scale, f"{a}/scale"), name=f"{a}/scaled")
        probs = ops.softmax(scaled, 3, name=f"{a}/softmax")
        context = ops.matmul(probs, split(v, "v", heads_order), False, False, name=f"{a}/context")
        merged = ops.transpose(context, heads_order, name=f"{a}/merge")
        merge_shape = _const(ops, [1, seq, d_model], f"{a}/merge_shape", np.int64)
        merged = ops.reshape(merged, merge_shape, False, name=f"{a}/merge_heads")
        r = ops.add(x, _dense(ops, merged, *o, f"{a}/out"), name=f"{a}/residual")
        h2 = _layer_norm(ops, r, *ln2, "mlp_norm")
        hidden = ops.gelu(_dense(ops, h2, *up, "mlp/up"), "tanh", name="mlp/gelu")
        return ops.add(r, _dense(ops, hidden, *down, "mlp/down"), name="mlp/residual"), x

    def forward(x: np.ndarray) -> np.ndarray:
        h = _layer_norm_numpy(x, *ln1)

        def split(w: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
            return (h @ w[0] + w[1]).reshape(1, seq, heads, head_dim).transpose(0, 2, 1, 3)

        probs = _softmax((split(q) @ split(k).transpose(0, 1, 3, 2)) * scale, 3)
        context = (probs @ split(v)).transpose(0, 2, 1, 3).reshape(1, seq, d_model)
        r = x + (context @ o[0] + o[1])
        hidden = _gelu_tanh_numpy(_layer_norm_numpy(r, *ln2) @ up[0] + up[1])
        return r + (hidden @ down[0] + down[1])

    return BenchModel("transformer", (1, seq, d_model), stages, graph, forward)


MODELS: dict[str, Callable[[], BenchModel]] = {"mlp": mlp, "cnn": small_cnn, "transformer": transformer_block}
"""The benchmark models at their default sizes, by name."""


def stage_devices(stages: Sequence[str], devices: Sequence[str], parts: int) -> dict[str, str]:
    """Cuts ``stages`` into ``parts`` contiguous runs and gives run ``i`` to ``devices[i % len(devices)]``.

    With two devices and ``parts`` equal to the number of stages, devices alternate stage by stage.
    """
    if not 1 <= parts <= len(stages):
        raise ValueError(f"parts must be in 1..{len(stages)}, got {parts}")
    runs = np.array_split(np.arange(len(stages)), parts)
    return {stages[i]: devices[r % len(devices)] for r, run in enumerate(runs) for i in run}


def set_affinities(model: Any, devices: Mapping[str, str]) -> None:
    """Writes ``rt_info["affinity"]`` on every op of a hetero-sdk or OpenVINO model from its stage.

    An op's stage is its friendly name up to the first ``/``; the parameter, which has none, goes with
    the first stage.

    :raises ValueError: for an op other than a Parameter whose stage ``devices`` does not name.
    """
    first = next(iter(devices.values()))
    for op in model.get_ordered_ops():
        stage = op.get_friendly_name().split("/")[0]
        if stage not in devices and op.get_type_name() != "Parameter":
            raise ValueError(f"op {op.get_friendly_name()!r} has no stage among {sorted(devices)}")
        op.get_rt_info()["affinity"] = devices.get(stage, first)
