"""Value specialisation: compiling a model once per value of the inputs that decide its shapes.

XLA compiles static shapes, so an op input that decides an output shape or a static attribute (a
Reshape's target shape, a Reduce's ``axes``, a Resize's ``sizes``, a TopK's ``k``...) must be known
at compile time. When such an input is computed from model inputs (and only from them), the model is
compiled per distinct value of those inputs, as JAX's ``static_argnums`` does: the values are
substituted as Constants, every shape is inferred again, and the model is lowered as usual. The
executables are kept by input shapes and values, the last ``XLA_SHAPE_CACHE_SIZE`` (default 8),
least recently used first out.

Only small inputs are specialised (at most :data:`MAX_VALUE_ELEMENTS` elements): a value that decides
a shape is a handful of integers, and compiling per value of a large tensor would recompile nearly
every call. Models without such inputs never reach this module's run path.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import jax
import numpy as np
from hetero_sdk import Model, Node, Output, PartialShape, opset
from hetero_sdk.errors import CompilationError, HeteroSDKError, InferenceError
from hetero_sdk.plugin import ConstantFolding, RunContext

from hetero_sdk_jax.context import XlaTensor, x64_scope
from hetero_sdk_jax.executable_cache import Executable, ExecutableCache
from hetero_sdk_jax.lowering import Analysis, analyze, get_lowering, specialize

if TYPE_CHECKING:
    from hetero_sdk_jax.compiled_model import XlaCompiledModel

__all__ = ["MAX_VALUE_ELEMENTS", "ValueSpecializer", "bind_values", "plan_values"]

MAX_VALUE_ELEMENTS = 1024
"""The most elements a model input may have to be specialised on (larger ones are not)."""

_FOLD_LIMIT = 1 << 20
"""The largest output (in elements) folded while binding values (as the lowering's own folding)."""
_FOLD_ROUNDS = 8

_DECIDING = {"Loop": frozenset({0, 1})}
"""Inputs that decide shapes beyond the lowerings' static ones: a Loop's trip count and initial
condition decide how long its stacked outputs grow (with them known, a Loop of known inputs folds)."""

Key = tuple[tuple[tuple[int, ...], ...], tuple[bytes, ...]]
"""An executable's key: every input's shape, and the specialised inputs' values (as bytes)."""


def plan_values(model: Model) -> tuple[Analysis, tuple[int, ...]]:
    """Which inputs of ``model`` to specialise on, and what XLA makes of the model once they are known.

    An input is chosen when it is small and a node XLA cannot otherwise run has a shape-deciding
    input computed from it (through ops other than ``ShapeOf``); choosing repeats until nothing
    changes. The indices are empty when the model needs no specialisation. Where the analysis still
    has reasons, XLA cannot run those nodes even so (data-dependent output shapes, say).
    """
    parameters = model.get_parameters()
    index = {id(p): i for i, p in enumerate(parameters)}
    known: set[int] = set()
    analysis = analyze(model)
    while analysis.reasons:
        wanted: set[int] = set()
        for node in model.get_ops():
            lowered = get_lowering(node.type_name)
            if analysis.supports(node) or node.op.data_dependent or lowered is None:
                continue
            for port in sorted(lowered.static | _DECIDING.get(node.type_name, frozenset())):
                if port < node.get_input_size():
                    wanted |= _sources(node.input_value(port), index)
        wanted = {i for i in wanted - known if _small(parameters[i])}
        if not wanted:
            break
        known |= wanted
        analysis = analyze(model, known)
    return analysis, tuple(sorted(known))


def _sources(value: Output, index: dict[int, int]) -> set[int]:
    """The model inputs ``value`` is computed from, not counting those reached through ``ShapeOf``."""
    found: set[int] = set()
    stack, seen = [value.node], set()
    while stack:
        node = stack.pop()
        if id(node) in seen or node.type_name == "ShapeOf":
            continue
        seen.add(id(node))
        if node.type_name == "Parameter":
            found.add(index[id(node)])
        stack.extend(source.node for source in node.input_values())
    return found


def _small(parameter: Node) -> bool:
    shape = parameter.get_output_partial_shape(0)
    return shape.is_dynamic or int(np.prod(shape.to_shape())) <= MAX_VALUE_ELEMENTS


def bind_values(model: Model, values: dict[int, np.ndarray], shapes: Sequence[Sequence[int]]) -> Model:
    """A copy of ``model`` whose inputs in ``values`` (by index) are Constants of those values, and
    whose other inputs have the static ``shapes`` (in order), every shape inferred again.

    :raises InferenceError: when the values give shapes the model's ops reject (naming the inputs).
    :raises CompilationError: when a shape stays dynamic (it depends on other inputs' values).
    """
    clone = model.clone()
    parameters = clone.get_parameters()
    users = clone.consumers()
    for i, value in values.items():
        parameter = parameters[i]
        bound = opset.constant(value, parameter.get_output_element_type(0), name=parameter.friendly_name)
        for node, port in users.get(parameter.output(0), []):
            node.set_input(port, bound.output(0))
    rest = [p for i, p in enumerate(parameters) if i not in values]
    try:
        specialised = Model(clone.get_results(), rest, clone.friendly_name)
        specialised.reshape({i: PartialShape(shape) for i, shape in enumerate(shapes)})
        specialised.validate_nodes_and_infer_types()
        # shape inference reads constant inputs only: fold what the values decide (pads built by a
        # ScatterUpdate, say), inferring again after each round
        for _ in range(_FOLD_ROUNDS):
            if not ConstantFolding(_FOLD_LIMIT).run(specialised):
                break
            specialised.validate_nodes_and_infer_types()
        return specialize(specialised, shapes)
    except CompilationError:
        raise
    except HeteroSDKError as exc:
        given = ", ".join(f"'{parameters[i].friendly_name}' = {v.tolist()}" for i, v in values.items())
        raise InferenceError(
            f"model '{model.friendly_name}': XLA compiles the values of inputs {given} into the executable, "
            f"and the model rejects them: {exc}. Pass values that give valid shapes"
        ) from exc


class ValueSpecializer:
    """The executables of a model specialised on the values of some inputs.

    :param owner: the compiled model (its device, precision, 64-bit mode and cache size).
    :param indices: the inputs whose values are compiled in.
    """

    def __init__(self, owner: XlaCompiledModel, indices: Sequence[int]) -> None:
        self.owner = owner
        self.indices = tuple(indices)
        self._types = [p.get_output_element_type(0).numpy for p in owner.model.get_parameters()]
        self._cache: ExecutableCache[Key, Executable] = ExecutableCache(owner.cache_size)
        self._compiles = 0

    @property
    def input_names(self) -> list[str]:
        """The friendly names of the inputs whose values are compiled in."""
        parameters = self.owner.model.get_parameters()
        return [parameters[i].friendly_name for i in self.indices]

    @property
    def compile_count(self) -> int:
        """How many executables were compiled so far (a repeated key reuses its executable)."""
        return self._compiles

    @property
    def cached_values(self) -> list[tuple[np.ndarray, ...]]:
        """The specialised inputs' values of the executables kept, least recently used first."""
        keys = self._cache.kept_keys()
        return [
            tuple(np.frombuffer(raw, self._types[i]).reshape(shapes[i]) for i, raw in zip(self.indices, values))
            for shapes, values in keys
        ]

    def run(self, inputs: Sequence[Any], context: RunContext) -> list[Any]:
        """Runs the executable for the inputs' shapes and specialised values (compiling it if new)."""
        values = {i: self._host(inputs[i], self._types[i]) for i in self.indices}
        shapes = tuple(tuple(int(d) for d in v.shape) for v in inputs)
        key = (shapes, tuple(values[i].tobytes() for i in self.indices))
        executable = self._executable(key, values)
        rest = [v for i, v in enumerate(inputs) if i not in values]
        owner = self.owner
        with x64_scope(owner.x64):
            return owner._run_scoped(executable, rest, context)  # type: ignore[arg-type]

    @staticmethod
    def _host(value: Any, dtype: np.dtype) -> np.ndarray:
        array = np.asarray(value.array) if isinstance(value, XlaTensor) else np.asarray(value)
        return np.asarray(array, dtype=dtype)

    def _executable(self, key: Key, values: dict[int, np.ndarray]) -> Executable:
        return self._cache.get_or_make(key, lambda: self._compile(key[0], values))

    def _compile(self, shapes: tuple[tuple[int, ...], ...], values: dict[int, np.ndarray]) -> Executable:
        owner = self.owner
        rest = [s for i, s in enumerate(shapes) if i not in values]
        graph = bind_values(owner.model, values, rest)
        specs = [
            jax.ShapeDtypeStruct(shape, port.element_type.numpy, sharding=owner._sharding)
            for shape, port in zip(rest, graph.inputs)
        ]
        executable = owner.compile_graph(
            graph, specs,
            lambda: f"device {owner.device_name}: XLA failed to compile '{owner.model.friendly_name}' for input "
            f"shapes {[list(s) for s in shapes]} and the values of {self.input_names}",
        )  # fmt: skip
        self._compiles += 1
        return executable
