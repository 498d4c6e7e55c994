"""Rules for the optimizers of ONNX's ``ai.onnx.preview.training`` domain: Adagrad, Momentum (standard
and Nesterov) and Adam, one update step of n tensors each, as elementwise arithmetic (the update count
``T``, an input, chooses between branches with Select)."""

from __future__ import annotations

from collections.abc import Callable

from hetero_sdk import opset
from hetero_sdk.frontend.onnx.node_context import NodeContext
from hetero_sdk.frontend.onnx.rules import Outputs, rule
from hetero_sdk.graph.node import Output

__all__: list[str] = []

_DOMAIN = "ai.onnx.preview.training"


def _out(node: object) -> Output:
    return node.output(0)  # type: ignore[attr-defined, no-any-return]


class _Math:
    """Elementwise arithmetic in the element type of the tensors updated."""

    def __init__(self, ctx: NodeContext, like: Output) -> None:
        self.ctx, self.type = ctx, like.element_type

    def c(self, value: float) -> Output:
        return self.ctx.const(value, self.type)

    def cast(self, x: Output) -> Output:
        return x if x.element_type == self.type else _out(opset.convert(x, self.type))

    def add(self, a: Output, b: Output) -> Output:
        return _out(opset.add(a, b))

    def sub(self, a: Output, b: Output) -> Output:
        return _out(opset.subtract(a, b))

    def mul(self, a: Output, b: Output) -> Output:
        return _out(opset.multiply(a, b))

    def div(self, a: Output, b: Output) -> Output:
        return _out(opset.divide(a, b))

    def sqrt(self, a: Output) -> Output:
        return _out(opset.sqrt(a))


def _groups(ctx: NodeContext, count: int) -> list[list[Output]]:
    """The ``count`` groups of n tensors after the rate and the update count (X, G, then the states)."""
    tensors = [ctx.input(i) for i in range(2, len(ctx.inputs))]
    if not tensors or len(tensors) % count:
        raise ctx.error(f"{ctx.op_type} takes R, T and {count} groups of n tensors; got {len(tensors)} tensors")
    n = len(tensors) // count
    return [tensors[i * n : (i + 1) * n] for i in range(count)]


def _step(ctx: NodeContext, count: int, update: Callable[..., tuple[Output, ...]]) -> Outputs:
    groups = _groups(ctx, count)
    math = _Math(ctx, groups[0][0])
    rate, steps = math.cast(ctx.input(0)), ctx.input(1)
    started = _out(opset.greater(steps, ctx.const(0, steps.element_type)))
    results = [update(math, rate, steps, started, *values) for values in zip(*groups)]
    return [r[k] for k in range(len(results[0])) for r in results]


@rule("Adagrad", domain=_DOMAIN)
def adagrad(ctx: NodeContext) -> Outputs:
    decay, epsilon, norm = ctx.attr("decay_factor", 0.0), ctx.attr("epsilon", 1e-6), ctx.attr("norm_coefficient", 0.0)

    def update(
        m: _Math, rate: Output, steps: Output, started: Output, x: Output, g: Output, h: Output
    ) -> tuple[Output, ...]:
        r = m.div(rate, m.add(m.c(1.0), m.mul(m.cast(steps), m.c(decay))))
        regularized = m.add(m.mul(m.c(norm), x), g)
        h_new = m.add(h, m.mul(regularized, regularized))
        x_new = m.sub(x, m.div(m.mul(r, regularized), m.add(m.sqrt(h_new), m.c(epsilon))))
        return x_new, h_new

    return _step(ctx, 3, update)


@rule("Momentum", domain=_DOMAIN)
def momentum(ctx: NodeContext) -> Outputs:
    alpha, beta, norm = ctx.attr("alpha"), ctx.attr("beta"), ctx.attr("norm_coefficient")
    mode = ctx.attr("mode")
    if mode not in ("standard", "nesterov"):
        raise ctx.error(f"mode must be 'standard' or 'nesterov', not {mode!r}")

    def update(
        m: _Math, rate: Output, steps: Output, started: Output, x: Output, g: Output, v: Output
    ) -> tuple[Output, ...]:
        regularized = m.add(m.mul(m.c(norm), x), g)
        scale = _out(opset.select(started, m.c(beta), m.c(1.0)))  # the first step takes the whole gradient
        v_new = m.add(m.mul(m.c(alpha), v), m.mul(scale, regularized))
        direction = v_new if mode == "standard" else m.add(regularized, m.mul(m.c(alpha), v_new))
        return m.sub(x, m.mul(rate, direction)), v_new

    return _step(ctx, 3, update)


@rule("Adam", domain=_DOMAIN)
def adam(ctx: NodeContext) -> Outputs:
    alpha, beta = ctx.attr("alpha", 0.9), ctx.attr("beta", 0.999)
    epsilon, norm, post = (
        ctx.attr("epsilon", 1e-6),
        ctx.attr("norm_coefficient", 0.0),
        ctx.attr("norm_coefficient_post", 0.0),
    )

    def update(
        m: _Math, rate: Output, steps: Output, started: Output, x: Output, g: Output, v: Output, h: Output
    ) -> tuple[Output, ...]:
        regularized = m.add(m.mul(m.c(norm), x), g)
        v_new = m.add(m.mul(m.c(alpha), v), m.mul(m.c(1 - alpha), regularized))
        h_new = m.add(m.mul(m.c(beta), h), m.mul(m.c(1 - beta), m.mul(regularized, regularized)))
        t = m.cast(steps)
        bias = m.div(
            m.sqrt(m.sub(m.c(1.0), _out(opset.power(m.c(beta), t)))),
            m.sub(m.c(1.0), _out(opset.power(m.c(alpha), t))),
        )
        adjusted = _out(opset.select(started, m.mul(rate, bias), rate))
        x_new = m.sub(x, m.mul(adjusted, m.div(v_new, m.add(m.sqrt(h_new), m.c(epsilon)))))
        return m.mul(m.c(1 - post), x_new), v_new, h_new

    return _step(ctx, 4, update)
