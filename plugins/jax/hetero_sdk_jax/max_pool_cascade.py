"""What XLA does to max pools of one tensor with growing windows (YOLOX's SPP block): the larger pool from the
smaller one's result.

A stride-1 max pool padded by ``(k - 1) / 2`` on each side ("same" windows of odd size ``k``) composes:
``pool_a(pool_b(x)) = pool_(a + b - 1)(x)``, each window of the outer pool being the union of the inner pool's
windows it covers (padding never wins; a window of padding alone gives the lowest value, which never wins
either). YOLOX's SPP block pools one tensor by 5x5, 9x9 and 13x13 windows; XLA fused each pool's two separable
passes into one loop that recomputed the first pass for every tap of the second (``k * k`` comparisons an
output): 288 us at 13x13 by 192 channels. :class:`MaxPoolCascade` computes the 9x9 pool as a 5x5 pool of the
5x5 result and the 13x13 as a 5x5 pool of the 9x9 (as YOLOv5's SPPF does by construction). The same maxima;
only the sign of a zero may differ where ``-0.0`` and ``0.0`` tie in a window.
"""

from __future__ import annotations

from hetero_sdk import Model, Node, opset
from hetero_sdk.plugin import ConsumerMap, MatcherPass, replace_node

__all__ = ["MaxPoolCascade"]


def _same_window(pool: Node, users: ConsumerMap) -> tuple[int, ...] | None:
    """The kernel of ``pool`` when it is a MaxPool of stride 1 and dilation 1, of odd windows padded by half
    a window on each side, whose indices nobody reads; else None."""
    if pool.type_name != "MaxPool" or users.count(pool.output(1)) or users.feeds_result(pool.output(1)):
        return None
    attrs = pool.attrs
    kernel = tuple(int(k) for k in attrs["kernel_shape"])
    if any(s != 1 for s in attrs["strides"]) or any(d != 1 for d in attrs["dilations"]):
        return None
    if any(k % 2 == 0 for k in kernel):
        return None
    half = [(k - 1) // 2 for k in kernel]
    if attrs["auto_pad"] in ("same_upper", "same_lower"):
        return kernel
    if attrs["auto_pad"] not in ("explicit", "notset"):
        return None
    return kernel if list(attrs["pads_begin"]) == half == list(attrs["pads_end"]) else None


class MaxPoolCascade(MatcherPass):
    """Rewrites a MaxPool of ``x`` (stride 1, dilation 1, odd "same" windows ``k``, indices unused) that has a
    sibling MaxPool of the same kind on ``x`` with another window ``m`` no larger on any axis into a MaxPool of window
    ``k - m + 1`` of the sibling's result (the largest such sibling); repeated, 5/9/13 pools become a chain of
    5x5 pools."""

    name = "XlaMaxPoolCascade"
    anchors = ("MaxPool",)

    def apply(self, model: Model, node: Node, users: ConsumerMap) -> bool:
        kernel = _same_window(node, users)
        if kernel is None:
            return False
        best: tuple[tuple[int, ...], Node] | None = None
        for sibling in users.nodes(node.input_value(0)):
            smaller = None if sibling is node else _same_window(sibling, users)
            if (
                smaller is None
                or len(smaller) != len(kernel)
                or smaller == kernel
                or any(m > k for m, k in zip(smaller, kernel))
            ):
                continue
            if best is None or all(m >= b for m, b in zip(smaller, best[0])):
                best = (smaller, sibling)
        if best is None:
            return False
        smaller, sibling = best
        outer = [k - m + 1 for k, m in zip(kernel, smaller)]
        half = [(k - 1) // 2 for k in outer]
        attrs = node.attrs
        pool = opset.max_pool(
            sibling.output(0), [1] * len(outer), [1] * len(outer), half, half, outer,
            attrs["rounding_type"], "explicit", attrs["index_element_type"], attrs["axis"],
        )  # fmt: skip
        replace_node(model, node, pool, consumers=users)
        return True
