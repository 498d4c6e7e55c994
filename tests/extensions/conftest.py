"""Extensions made in the tests: each test's extensions are removed after it (ops are process-wide)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

from hetero_sdk import Node
from hetero_sdk.array_api import namespace
from hetero_sdk.extensions import Extension, add_extension, remove_extensions
from hetero_sdk.ops import REAL_TYPES, Input, OpDef, OutputSpec


def same_as_input(node: Node) -> list[OutputSpec]:
    """Shape inference of an elementwise op: the input's type and shape."""
    data = node.input_value(0)
    return [(data.element_type, data.partial_shape)]


def softsign(x: Any) -> Any:
    """``x / (1 + |x|)`` on any array-API array."""
    return x / (1 + namespace(x).abs(x))


def unary_op(type_name: str, evaluate: Callable[..., Any] | None = None) -> OpDef:
    """An elementwise op of one float input (not registered)."""
    return OpDef(type_name, "test", same_as_input, (Input("data", REAL_TYPES),), version="test1", evaluate=evaluate)


@pytest.fixture
def register() -> Iterator[Callable[..., Extension]]:
    """``register(extension, **kw)``: adds it process-wide, and removes it after the test."""
    added: list[str] = []

    def add(extension: Extension, **kwargs: Any) -> Extension:
        added.append(extension.name)
        return add_extension(extension, **kwargs)

    yield add
    remove_extensions(added)


DATA = np.linspace(-3, 3, 12, dtype=np.float32).reshape(3, 4)
