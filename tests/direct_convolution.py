"""A direct convolution for tests: one einsum per kernel tap and group, in float64."""

from __future__ import annotations

import numpy as np


def direct_convolution(x, w, groups, strides, pads, dilations):
    """``x`` [N, C, s...] with ``w`` [O, C/groups, k...]: a sum over taps of per-group channel products."""
    n = x.ndim - 2
    x = np.pad(x.astype(np.float64), [(0, 0), (0, 0), *[(p, p) for p in pads]])
    kernel = w.shape[2:]
    out = [(x.shape[2 + i] - (kernel[i] - 1) * dilations[i] - 1) // strides[i] + 1 for i in range(n)]
    c_in, o_per = w.shape[1], w.shape[0] // groups
    result = np.zeros((x.shape[0], w.shape[0], *out))
    for tap in np.ndindex(*kernel):
        window = tuple(slice(t * d, t * d + (o - 1) * s + 1, s) for t, d, o, s in zip(tap, dilations, out, strides))
        for g in range(groups):
            part = x[(slice(None), slice(g * c_in, (g + 1) * c_in), *window)]
            taps = w[(slice(g * o_per, (g + 1) * o_per), slice(None), *tap)].astype(np.float64)
            result[:, g * o_per : (g + 1) * o_per] += np.einsum("nc...,oc->no...", part, taps)
    return result
