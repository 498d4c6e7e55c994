"""Small stateful models for the tests, each with its math written again in plain numpy.

``accumulator``: ReadValue -> Add(x) -> Assign, output the running sum. ``decoder``: a decoder-shaped
model with an explicit KV cache (``past_key_values.N.key|value`` in, ``present.N.key|value`` out, the
new keys and values concatenated along axis 2), whose logits read the whole cache.
"""

from __future__ import annotations

import numpy as np

import hetero_sdk as hs
from hetero_sdk import Type, opset

HEADS, HEAD_DIM, VOCAB, LAYERS = 2, 4, 11, 2
_rng = np.random.default_rng(7)
TABLE = _rng.standard_normal((VOCAB, HEADS * HEAD_DIM)).astype(np.float32)
SCALES = _rng.standard_normal((LAYERS, 2, HEADS, 1, HEAD_DIM)).astype(np.float32)
HEAD = _rng.standard_normal((HEADS * HEAD_DIM, VOCAB)).astype(np.float32)


def accumulator(shape: tuple[int, ...] = (2, 3)) -> hs.Model:
    """``sum = acc + x``, ``acc <- sum``: outputs the running sum of the inputs (acc starts at zeros)."""
    x = opset.parameter(list(shape), np.float32, name="x")
    read = opset.read_value(None, "acc", list(shape), Type.f32, name="read")
    total = opset.add(read, x, name="sum")
    return hs.Model([total], [x], "accumulator", sinks=[opset.assign(total, "acc", name="write")])


def decoder() -> hs.Model:
    """The explicit-cache decoder: inputs ``input_ids`` [batch, seq] and the caches [batch, 2, past, 4]."""
    ids = opset.parameter([-1, -1], np.int64, name="input_ids")
    embedded = opset.gather(opset.constant(TABLE), ids, 0)  # [b, s, h*d]
    split = opset.reshape(embedded, [0, 0, HEADS, HEAD_DIM], special_zero=True)
    heads = opset.transpose(split, [0, 2, 1, 3])  # [b, h, s, d]
    params, outputs, pooled = [ids], [], []
    for layer in range(LAYERS):
        for k, kind in enumerate(("key", "value")):
            past = opset.parameter([-1, HEADS, -1, HEAD_DIM], np.float32, name=f"past_key_values.{layer}.{kind}")
            new = opset.multiply(heads, opset.constant(SCALES[layer, k]))
            present = opset.concat([past, new], 2, name=f"present.{layer}.{kind}")
            params.append(past)
            outputs.append(present)
            pooled.append(opset.reduce_mean(present, [2], keep_dims=False))  # [b, h, d]
    total = pooled[0]
    for value in pooled[1:]:
        total = opset.add(total, value)
    flat = opset.reshape(total, [0, HEADS * HEAD_DIM], special_zero=True)
    logits = opset.matmul(flat, opset.constant(HEAD), name="logits")
    return hs.Model([logits, *outputs], params, "decoder")


def decoder_step(ids: np.ndarray, cache: list[np.ndarray]) -> tuple[np.ndarray, list[np.ndarray]]:
    """One call of :func:`decoder` in numpy: the logits and the new caches (key, value per layer)."""
    heads = TABLE[ids].reshape(ids.shape[0], ids.shape[1], HEADS, HEAD_DIM).transpose(0, 2, 1, 3)
    present = [
        np.concatenate([cache[2 * layer + k], heads * SCALES[layer, k]], axis=2)
        for layer in range(LAYERS)
        for k in range(2)
    ]
    total = sum(p.mean(axis=2) for p in present)
    return total.reshape(ids.shape[0], HEADS * HEAD_DIM) @ HEAD, present


def empty_cache(batch: int) -> list[np.ndarray]:
    """The caches before the first step: no past positions."""
    return [np.zeros((batch, HEADS, 0, HEAD_DIM), np.float32) for _ in range(2 * LAYERS)]
