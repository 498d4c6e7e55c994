"""What op cases are made of: the drawn case (:class:`OpCase`), the :class:`Builder` that draws values
and builds a model around one op, and the :data:`RECIPES` of the ops whose cases cannot be derived
from their definitions alone (a convolution's filter must fit its data; a gather's indices its axis).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np
from hypothesis import strategies as st

from hetero_sdk import opset
from hetero_sdk.conformance.compare import tolerance
from hetero_sdk.graph import Model, Node
from hetero_sdk.registry import Registry

__all__ = [
    "BOOL", "F16", "F32", "FLOATS", "I32", "I64", "KEY_CASES", "RECIPES", "Builder", "OpCase", "RecipeFn", "key_case",
    "recipe", "shapes",
]  # fmt: skip

RecipeFn = Callable[["Builder", str], "OpCase"]
"""``recipe(builder, op_type) -> OpCase``: draws one case of an op whose operands constrain each other."""

F32, F16, I32, I64, BOOL = np.float32, np.float16, np.int32, np.int64, np.bool_
FLOATS = (F32, F16)


@dataclass
class OpCase:
    """One drawn case: a model around ``op_type``, its inputs and the tolerance.

    :ivar op_type: the op under test.
    :ivar model: the model (the op's other operands are Parameters or Constants).
    :ivar inputs: values by input name.
    :ivar rtol: relative tolerance (0 for exact).
    :ivar atol: absolute tolerance.
    """

    op_type: str
    model: Model
    inputs: dict[str, np.ndarray]
    rtol: float
    atol: float
    attrs: dict[str, Any] = field(default_factory=dict)

    def __repr__(self) -> str:
        shown = ", ".join(f"{k}: {v.dtype}{list(v.shape)}" for k, v in self.inputs.items())
        attrs = ", ".join(f"{k}={v!r}" for k, v in self.attrs.items())
        return f"<{self.op_type} case: inputs {shown or 'none'}; {attrs}>"


class Builder:
    """Draws values and builds a model around one op.

    :ivar draw: hypothesis's draw function.
    :ivar rng: a numpy generator seeded by hypothesis (values are drawn with it, not shrunk).
    """

    def __init__(self, draw: st.DrawFn) -> None:
        self.draw = draw
        self.rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
        self.params: list[Node] = []
        self.inputs: dict[str, np.ndarray] = {}

    @classmethod
    def fixed(cls, seed: int = 0) -> Builder:
        """A builder for a key case: values from a numpy generator seeded with ``seed``, nothing drawn
        (``pick``, ``integer``, ``flag``, ``shape`` and an ``operand`` without ``constant`` raise)."""

        def no_draw(strategy: object) -> Any:
            raise TypeError("a key case chooses its shapes and attributes itself; nothing is drawn")

        builder = cls.__new__(cls)
        builder.draw = cast("st.DrawFn", no_draw)
        builder.rng = np.random.default_rng(seed)
        builder.params, builder.inputs = [], {}
        return builder

    def pick(self, options: Sequence[Any]) -> Any:
        """One of ``options`` (hypothesis shrinks toward the first)."""
        return self.draw(st.sampled_from(list(options)))

    def integer(self, low: int, high: int) -> int:
        """An integer in ``[low, high]``."""
        return self.draw(st.integers(low, high))

    def flag(self) -> bool:
        """A boolean."""
        return self.draw(st.booleans())

    def shape(self, min_rank: int = 0, max_rank: int = 4, min_side: int = 1, max_side: int = 4) -> list[int]:
        """A static shape."""
        return self.draw(shapes(min_rank, max_rank, min_side, max_side))

    def values(self, shape: Sequence[int], dtype: Any, low: float = -3.0, high: float = 3.0) -> np.ndarray:
        """Random values of ``dtype`` in ``[low, high]`` (integers: whole numbers; bools: either)."""
        dtype = np.dtype(dtype)
        if dtype == np.bool_:
            return self.rng.random(shape) < 0.5
        if dtype.kind in "iu":
            return self.rng.integers(int(np.ceil(low)), int(np.floor(high)) + 1, shape).astype(dtype)
        return self.rng.uniform(low, high, shape).astype(dtype)

    def away_from(self, array: np.ndarray, points: Sequence[float], gap: float) -> np.ndarray:
        """``array`` with values within ``gap`` of a point moved away (rounding-sensitive ops)."""
        out = array.astype(np.float64)
        for point in points:
            near = np.abs(out - point) < gap
            out[near] = point + np.where(out[near] >= point, gap, -gap)
        return out.astype(array.dtype)

    def input(self, array: np.ndarray, name: str | None = None) -> Node:
        """A Parameter fed with ``array``."""
        name = name or f"in{len(self.params)}"
        node = opset.parameter(list(array.shape), array.dtype, name=name)
        self.params.append(node)
        self.inputs[name] = np.asarray(array)
        return node

    def operand(self, array: np.ndarray, name: str | None = None, constant: bool | None = None) -> Node:
        """A Parameter or (drawn, unless ``constant`` says) a Constant holding ``array``."""
        if constant is None:
            constant = self.flag()
        if constant:
            return opset.constant(np.asarray(array), name=f"const{len(self.params)}_{name or 'c'}")
        return self.input(array, name)

    def case(
        self, op_type: str, outputs: Sequence[Any] | Node, kind: str = "simple", terms: int = 1, /, **attrs: Any
    ) -> OpCase:
        """The case: a model of ``outputs`` with the tolerance of its first output's element type."""
        nodes = [outputs] if isinstance(outputs, Node) else list(outputs)
        model = Model(nodes, self.params, name=f"conformance_{op_type}")
        element_type = model.outputs[0].element_type
        rtol, atol = tolerance(element_type, kind, terms)
        return OpCase(op_type, model, dict(self.inputs), rtol, atol, attrs)


@st.composite
def shapes(draw: st.DrawFn, min_rank: int = 0, max_rank: int = 4, min_side: int = 1, max_side: int = 4) -> list[int]:
    """Static shapes with ranks and sides in the given ranges."""
    rank = draw(st.integers(min_rank, max_rank))
    return [draw(st.integers(min_side, max_side)) for _ in range(rank)]


RECIPES: Registry[RecipeFn] = Registry("op case recipe")
"""Hand-written case recipes by op type; every other compute op's cases derive from its definition."""

recipe = RECIPES
"""Registers the decorated function as the case recipe of each op type named: ``@recipe("Gather")``."""


KeyCaseFn = Callable[[], OpCase]
"""``key_case() -> OpCase``: one fixed case of an op that every profile checks."""

KEY_CASES: dict[str, list[KeyCaseFn]] = {}
"""Fixed cases by op type: configurations a bug was once found in, checked on every run before the
drawn cases (a profile's few draws may miss a rare combination of attributes and shapes)."""


def key_case(op_type: str) -> Callable[[KeyCaseFn], KeyCaseFn]:
    """Registers the decorated function as a key case of ``op_type``: ``@key_case("MatMul")``."""

    def register(fn: KeyCaseFn) -> KeyCaseFn:
        KEY_CASES.setdefault(op_type, []).append(fn)
        return fn

    return register
