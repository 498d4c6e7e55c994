"""From a model graph to one JAX function: what XLA can run (:func:`analyze`) and the function (:func:`lower`).

Every tensor of a model is, while tracing, either *known* (a numpy array: Constants, ``ShapeOf`` of a
static shape, and ops whose inputs are all known, computed with the SDK's reference kernels so the
values match TEMPLATE's bit for bit) or *traced* (a ``jax.Array``: Parameters and whatever depends on
them). Known tensors become XLA constants where traced ops consume them, except the model's weights
(:func:`weights_of`: large Constants), which the function takes as arguments after the model's
inputs: the program and XLA's compile work then follow the graph, not the weights, and the compiled
model hands the same device buffers to every call. A weight whose consumer's lowering reads it in
another layout (a convolution filter: :mod:`.weight_layout`) is an argument in that layout. Inputs
that decide an output shape (axes, target shapes, pads...) must be known: XLA compiles for static
shapes.

A lowering function may also carry ``prepare(node, values) -> {input index: array or None}``:
replacements for some of the node's inputs, computed once when the model compiles from the values of
its Constant inputs (``values[i]``, None where input ``i`` is not a Constant). A replacement array is
passed like a weight and None as None; a Constant whose every consumer replaces it is not passed at all
(:func:`prepared_inputs`; MatMulNBits hands XLA its weight dequantized once this way).
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from hetero_sdk import Model, Node, PartialShape, Type
from hetero_sdk.errors import CompilationError, HeteroSDKError, InferenceError, UnsupportedOperationError
from hetero_sdk.plugin import bodies, kernel_types, run_node

from hetero_sdk_jax.lowering.elementwise import EXACT_DIVISION
from hetero_sdk_jax.lowering.layout import ChannelsLast, channels_last_lowering
from hetero_sdk_jax.lowering.registry import LOWERING_CHECKS, LoweringFn, get_lowering
from hetero_sdk_jax.lowering.weight_layout import Prepared, WeightLayout, aligned_read_only, input_layouts

__all__ = [
    "MAX_TENSOR_BYTES", "WEIGHT_BYTES", "Analysis", "Weight", "analyze", "check_extents", "lower",
    "prepared_inputs", "specialize", "weights_of",
]  # fmt: skip

_KNOWN, _KNOWN_WITH_SHAPES, _TRACED = 0, 1, 2
_WIDE = frozenset({Type.i64, Type.u64, Type.f64})
_INT64_MAX = 2**63 - 1

MAX_TENSOR_BYTES = 1 << 40
"""The largest tensor (in bytes, 1 TiB) a shape may give before XLA sees it: no device holds more."""

WEIGHT_BYTES = 1 << 16
"""Constants of at least this many bytes (64 KiB) are weights: arguments of the lowered function."""


@dataclass(frozen=True)
class Analysis:
    """What XLA makes of a model.

    :ivar reasons: why each unsupported node (by ``id``) cannot run; supported nodes are absent.
    :ivar needs_x64: some traced tensor is i64 or f64, so JAX must run with 64-bit types enabled.
    """

    reasons: dict[int, str]
    needs_x64: bool

    def supports(self, node: Node) -> bool:
        """True when XLA runs ``node`` (as a traced op, or folded to a constant while tracing)."""
        return id(node) not in self.reasons

    def check(self, model: Model, device: str) -> None:
        """:raises UnsupportedOperationError: naming every node of ``model`` XLA cannot run, and why."""
        failed = [
            f"{n.type_name} '{n.friendly_name}' ({self.reasons[id(n)]})"
            for n in model.get_ops()
            if id(n) in self.reasons
        ]
        if failed:
            raise UnsupportedOperationError(
                f"device {device} cannot run {len(failed)} op(s) of model '{model.friendly_name}': "
                f"{'; '.join(failed[:10])}{'; ...' if len(failed) > 10 else ''}. "
                "Run the model on HETERO:XLA,TEMPLATE to send them to another device"
            )


def analyze(model: Model, known: Collection[int] = ()) -> Analysis:
    """Which nodes of ``model`` XLA can run, and whether JAX needs 64-bit types for it.

    ``known`` lists the inputs (by index) whose values are compiled into the executable (value
    specialisation: :mod:`hetero_sdk_jax.specialization`): they count as known, like Constants.

    A node is supported when it is a Parameter, Constant or Result; when its inputs are all known
    while tracing (it is folded); or when it has a lowering, its output shapes do not depend on
    input values (not NonZero or NonMaxSuppression), its static inputs are known once the model's
    input shapes are, and its inputs' shapes are too (a dynamic input dimension is fine: the model
    is then compiled for each concrete input shape).
    """
    level: dict[tuple[int, int], int] = {}
    resolvable: dict[tuple[int, int], bool] = {}
    reasons: dict[int, str] = {}
    folding = frozenset(kernel_types())
    used = {(id(port.node), port.index) for port in model.consumers()}
    needs_x64 = False
    known_ids = {id(p) for i, p in enumerate(model.get_parameters()) if i in known}
    for node in model.get_ops():
        kind = node.type_name
        sources = [(id(s.node), s.index) for s in node.input_values()]
        in_levels = [level[s] for s in sources]
        shapes_ok = all(resolvable[s] for s in sources)
        out_level, out_ok, reason = _TRACED, True, None
        if kind == "Parameter" and id(node) in known_ids:
            out_level = _KNOWN
        elif kind == "Parameter":
            needs_x64 |= node.get_output_element_type(0) in _WIDE
        elif kind == "Constant":
            out_level = _KNOWN
        elif kind == "Result":
            out_level, out_ok = in_levels[0], shapes_ok
            needs_x64 |= node.get_output_element_type(0) in _WIDE
        elif kind == "ShapeOf":
            out_level = _KNOWN_WITH_SHAPES if shapes_ok else _TRACED
            reason = None if shapes_ok else "its input's shape depends on values computed in the model"
        elif max(in_levels, default=_KNOWN) <= _KNOWN_WITH_SHAPES and (kind in folding or get_lowering(kind)):
            out_level = max(in_levels, default=_KNOWN)
            out_ok = _shapes_follow(node, shapes_ok)  # a folded NonZero's value is known, its shape not
        else:
            reason = _lowering_problem(node, in_levels, shapes_ok)
            out_ok = _shapes_follow(node, shapes_ok)
            if reason is None:
                lowered = get_lowering(kind)
                assert lowered is not None
                wide_in = any(
                    node.input_value(i).element_type in _WIDE for i in range(len(sources)) if i not in lowered.static
                )
                wide_out = any(  # an unused i64 output (MaxPool's indices, say) is dropped by XLA
                    node.get_output_element_type(i) in _WIDE and (id(node), i) in used
                    for i in range(node.get_output_size())
                )
                needs_x64 |= wide_in or wide_out or any(analyze(body).needs_x64 for body in bodies(node))
        if reason is not None:
            reasons[id(node)] = reason
        for i in range(node.get_output_size()):
            level[(id(node), i)] = out_level
            resolvable[(id(node), i)] = out_ok
    return Analysis(reasons, needs_x64)


def _shapes_follow(node: Node, inputs_ok: bool) -> bool:
    """Whether the node's output shapes are known once the model's input shapes are (whichever
    device runs it: a HETERO split hands them to XLA as inputs)."""
    if inputs_ok and not node.op.data_dependent:
        return True
    return all(node.get_output_partial_shape(i).is_static for i in range(node.get_output_size()))


def _lowering_problem(node: Node, in_levels: Sequence[int], shapes_ok: bool) -> str | None:
    lowered = get_lowering(node.type_name)
    if node.op.data_dependent:
        return "its output shape depends on input values"
    if lowered is None:
        return f"no XLA lowering for op type {node.type_name}"
    narrow = _sub_byte_types(node)
    if narrow and node.type_name != "Convert":
        return (
            f"it moves {', '.join(narrow)} values, which XLA converts but does not reliably move "
            "(XLA:CPU's compiler aborts on a Concat of 2-bit values)"
        )
    unknown = [i for i in sorted(lowered.static) if i < len(in_levels) and in_levels[i] == _TRACED]
    if unknown:
        return f"input(s) {unknown} must be known at compile time (XLA compiles static shapes)"
    if not shapes_ok:
        return "an input's shape depends on values computed in the model"
    for body in bodies(node):
        inner = analyze(body)
        if inner.reasons:
            failing = [f"{n.type_name} '{n.friendly_name}'" for n in body.get_ops() if not inner.supports(n)]
            return f"its body '{body.friendly_name}' has ops XLA cannot run: {', '.join(failing[:5])}"
    check = LOWERING_CHECKS.find(node.type_name)
    return None if check is None else check(node)


def _sub_byte_types(node: Node) -> list[str]:
    """The 4- and 2-bit element types among ``node``'s inputs and outputs."""
    types = [v.element_type for v in node.input_values()]
    types += [node.get_output_element_type(i) for i in range(node.get_output_size())]
    return sorted({t.value for t in types if t.bitwidth < 8})


def specialize(model: Model, shapes: Sequence[Sequence[int]]) -> Model:
    """A clone of ``model`` whose inputs have the given static shapes, every shape re-inferred
    (``Model.reshape``; control-flow bodies follow).

    :raises CompilationError: when a tensor's shape stays dynamic (it depends on input values).
    :raises InferenceError: when a tensor's shape is too large to exist (see :func:`check_extents`).
    """
    clone = model.clone()
    clone.reshape({index: PartialShape(shape) for index, shape in enumerate(shapes)})
    for node in clone.get_ops():
        for i in range(node.get_output_size()):
            if node.get_output_partial_shape(i).is_dynamic:
                raise CompilationError(
                    f"XLA: {node.type_name} '{node.friendly_name}' output {i} has the dynamic shape "
                    f"{node.get_output_partial_shape(i)} for input shapes {[list(s) for s in shapes]}"
                )
    check_extents(clone, InferenceError, f" for input shapes {[list(s) for s in shapes]}" if shapes else "")
    return clone


def check_extents(model: Model, error: type[HeteroSDKError], where: str = "") -> None:
    """Rejects a model whose static tensors cannot exist: a dimension or an element count beyond int64,
    or more than :data:`MAX_TENSOR_BYTES` bytes.

    XLA computes extents in int64 and aborts the process (a C++ ``BadStatusOr`` access) when a product
    overflows, so shapes computed from input values are checked here before JAX sees them.

    :param error: the error to raise (``InferenceError`` where the inputs decide the shapes).
    :param where: appended to the message (``" for input shapes [...]"``).
    """
    for node in model.get_ops():
        for i in range(node.get_output_size()):
            shape = node.get_output_partial_shape(i)
            if shape.is_dynamic:
                continue
            dims = [int(d) for d in shape.to_shape()]
            elements = math.prod(dims)
            size = -(-elements * node.get_output_element_type(i).bitwidth // 8)
            if max(dims, default=0) <= _INT64_MAX and elements <= _INT64_MAX and size <= MAX_TENSOR_BYTES:
                continue
            raise error(
                f"XLA: {node.type_name} '{node.friendly_name}' output {i} would have the shape {dims}{where}: "
                f"{elements} elements, {size} bytes, more than any device holds (XLA takes at most "
                f"{MAX_TENSOR_BYTES} bytes a tensor, and int64 extents)"
            )


@dataclass(frozen=True)
class Weight:
    """One weight argument of the lowered function: a Constant's value in the layout its consumers read,
    and in the type the model computes in.

    :ivar value: the Constant's array (the graph's own).
    :ivar layout: the layout the executable receives it in (:meth:`prepare` makes it), None: as it is.
    :ivar compute: the type it is stored in when not its own (bf16 for an f32 weight of a model
        computed in bf16), None: its own.
    """

    value: np.ndarray
    layout: WeightLayout | None = None
    compute: np.dtype | None = None

    @property
    def key(self) -> tuple[int, WeightLayout | None, np.dtype | None]:
        """Identifies the argument: the array (by identity), its layout and its type."""
        return id(self.value), self.layout, self.compute

    @property
    def shape(self) -> tuple[int, ...]:
        """The argument's shape (in its layout)."""
        if self.layout is None:
            return tuple(self.value.shape)
        if self.layout.shape is not None:
            return tuple(self.layout.shape)
        return tuple(self.value.shape[axis] for axis in self.layout.permutation)

    @property
    def dtype(self) -> np.dtype:
        """The argument's element type."""
        return self.value.dtype if self.compute is None else self.compute

    @property
    def nbytes(self) -> int:
        """The argument's size in bytes."""
        return self.value.size * self.dtype.itemsize

    def prepare(self) -> np.ndarray:
        """The argument's values: the array itself, or a new (read-only, aligned) one in the layout and
        type (numpy's rounding to bf16 is XLA's: to nearest, ties to even)."""
        if self.layout is None and self.compute is None:
            return self.value
        value = self.value if self.compute is None else self.value.astype(self.compute)
        return aligned_read_only(value) if self.layout is None else self.layout.prepare(value)


def weights_of(model: Model, precision: Type = Type.f32) -> list[Weight]:
    """``model``'s weights: its Constants of at least :data:`WEIGHT_BYTES` bytes whose element type JAX
    holds on a device as it is (8 to 32 bits: 64-bit values depend on JAX's x64 mode, 4- and 2-bit ones
    do not move reliably), in graph order. Each array is one argument per layout its consumers read it
    in (:func:`~.weight_layout.input_layouts`; as it is for the others): a filter read only by
    convolutions is stored in their layout alone. With ``precision=bf16`` (:func:`lower`'s), f32 weights
    are stored in bf16, the type the program computes them in. Constants inside control-flow bodies
    stay in their bodies. The arrays lowerings prepare in place of their inputs (:func:`prepared_inputs`)
    are weights too, as large ones; a Constant read only where it is replaced is left out."""
    compute = _compute_types(precision)
    consumers = model.consumers()
    prepared = {id(node): prepared_inputs(node) for node in model.get_ops()}
    found: dict[tuple[int, WeightLayout | None, np.dtype | None], Weight] = {}
    for node in model.get_ops():
        for replacement in prepared[id(node)].values():
            if replacement is not None and replacement.nbytes >= WEIGHT_BYTES:
                weight = Weight(replacement, None, compute.get(replacement.dtype))
                found.setdefault(weight.key, weight)
        if node.type_name != "Constant":
            continue
        value = node.attrs["value"]
        element = node.get_output_element_type(0)
        if value.nbytes < WEIGHT_BYTES or not 8 <= element.bitwidth <= 32 or element is Type.string:
            continue
        readers = consumers.get(node.output(0), []) or [(node, -1)]
        for consumer, index in readers:
            if index in prepared.get(id(consumer), {}):
                continue
            weight = Weight(value, input_layouts(consumer).get(index), compute.get(value.dtype))
            found.setdefault(weight.key, weight)
    return list(found.values())


def prepared_inputs(node: Node) -> dict[int, np.ndarray | None]:
    """What ``node``'s lowering computes once, at compile time, in place of some of its inputs: its
    function's ``prepare(node, values)`` (see the module's docstring); ``{}`` when it has none. A
    ``prepare`` returns the same arrays each time it is asked about the same constants (it caches them):
    an array it made anew would be compiled into the program instead of passed as a weight."""
    if node.type_name in ("Parameter", "Constant", "Result", "ShapeOf"):
        return {}
    lowered = get_lowering(node.type_name)
    prepare = None if lowered is None else getattr(inspect.unwrap(lowered.fn), "prepare", None)
    if prepare is None:
        return {}
    values = [s.node.attrs["value"] if s.node.type_name == "Constant" else None for s in node.input_values()]
    return dict(prepare(node, values))


def lower(
    model: Model, precision: Type = Type.f32, exact_division: bool = False, weights: Sequence[Weight] = ()
) -> Callable[..., tuple[Any, ...]]:
    """The JAX function computing ``model``: one array per Parameter in, then one per array of
    ``weights``; one per Result out.

    Every shape of ``model`` must be static (see :func:`specialize`). With ``precision=bf16``, f32
    tensors (inputs, weights, intermediate results) are computed in bf16 and outputs are cast back
    to their declared types. ``exact_division`` corrects each f32 Divide for a backend whose division
    is not correctly rounded (:attr:`Backend.divides_inexactly`).

    :param weights: the weights (:func:`weights_of`) taken as arguments, each in its layout: where a
        traced op reads one, it reads the argument instead of a constant baked into the program (an
        input whose lowering declares a layout, :class:`~.weight_layout.Prepared`). Ops whose inputs
        are all known still fold with the values themselves, and inputs that decide shapes stay known.
    :raises CompilationError: naming the node that cannot be lowered (raised while tracing).
    """
    ops = model.get_ops()
    parameters, results = model.get_parameters(), model.get_results()
    compute = _compute_types(precision)
    weight_index = {(id(weight.value), weight.layout): i for i, weight in enumerate(weights)}

    def run(*args: Any) -> tuple[Any, ...]:
        division = EXACT_DIVISION.set(exact_division)
        try:  # f32 means f32 in the shared kernels' products too (XLA:GPU would run them in TF32)
            with jax.default_matmul_precision("highest"):
                return traced(*args)
        finally:
            EXACT_DIVISION.reset(division)

    def traced(*args: Any) -> tuple[Any, ...]:
        weight_args = args[len(parameters) :]

        def as_traced(value: Any, layout: WeightLayout | None = None) -> Any:
            if not isinstance(value, np.ndarray):
                return value
            index = weight_index.get((id(value), layout))
            if index is None:
                if layout is not None:
                    value = layout.prepare(value)
                return jnp.asarray(value.astype(compute.get(value.dtype, value.dtype), copy=False))
            arg = weight_args[index]
            return arg.astype(compute[arg.dtype]) if arg.dtype in compute else arg

        env: dict[tuple[int, int], Any] = {}
        for parameter, arg in zip(parameters, args):
            env[(id(parameter), 0)] = arg.astype(compute[arg.dtype]) if arg.dtype in compute else arg
        for node in ops:
            kind = node.type_name
            if kind == "Parameter":
                continue
            inputs = [env[(id(s.node), s.index)] for s in node.input_values()]
            held = None if kind == "Result" else channels_last_lowering(node, inputs)
            if held is not None:  # computed channels-last, and kept so (see .layout)
                fn, moved = held
                outputs = [ChannelsLast(v) for v in _guard(node, _lowered, node, moved, compute, as_traced, fn)]
                for i, value in enumerate(outputs):
                    env[(id(node), i)] = value
                continue
            inputs = [v.channels_first() if isinstance(v, ChannelsLast) else v for v in inputs]
            if kind in ("Result", "Constant", "ShapeOf"):
                outputs = [_passthrough(node, inputs)]
            elif all(isinstance(v, np.ndarray) for v in inputs) and _foldable(node):
                outputs = _guard(node, run_node, node, inputs)
            else:
                outputs = _guard(node, _lowered, node, inputs, compute, as_traced)
            for i, value in enumerate(outputs):
                env[(id(node), i)] = value
        return tuple(jnp.asarray(env[(id(r), 0)]).astype(r.get_output_element_type(0).numpy) for r in results)

    return run


def _compute_types(precision: Type) -> dict[np.dtype, np.dtype]:
    """The types computed in another type at ``precision``: f32 in bf16 at bf16."""
    return {np.dtype(np.float32): np.dtype(Type.bf16.numpy)} if precision is Type.bf16 else {}


def _passthrough(node: Node, inputs: list[Any]) -> Any:
    if node.type_name == "Result":
        return inputs[0]
    if node.type_name == "Constant":
        return node.attrs["value"]
    return np.array(node.input_value(0).partial_shape.to_shape(), dtype=node.get_output_element_type(0).numpy)


def _lowered(
    node: Node,
    inputs: list[Any],
    compute: dict[np.dtype, np.dtype],
    as_traced: Callable[..., Any],
    fn: LoweringFn | None = None,
) -> list[Any]:
    lowered = get_lowering(node.type_name)
    if lowered is None:
        raise UnsupportedOperationError(f"XLA has no lowering for op type {node.type_name}")
    layouts = input_layouts(node)
    replacements = prepared_inputs(node)
    args: list[Any] = []
    for i, value in enumerate(inputs):
        if i in replacements:
            replacement = replacements[i]
            args.append(None if replacement is None else as_traced(replacement))
        elif i in lowered.static:
            if not isinstance(value, np.ndarray):
                raise CompilationError(f"input {i} must be known at compile time (XLA compiles static shapes)")
            args.append(value)
        elif i in layouts and isinstance(value, np.ndarray):  # a constant, in the layout the lowering reads
            args.append(Prepared(as_traced(value, layouts[i]), layouts[i]))
        else:
            args.append(as_traced(value))
    raw = (fn or lowered.fn)(node, *args)
    outputs = list(raw) if isinstance(raw, (tuple, list)) else [raw]
    typed = []
    for i, value in enumerate(outputs):
        declared = node.get_output_element_type(i).numpy
        target = jax.dtypes.canonicalize_dtype(compute.get(declared, declared))  # i32 for an unused i64 output
        value = jnp.asarray(value)
        typed.append(value if value.dtype == target else value.astype(target))
    return typed


def _guard(node: Node, compute: Callable[..., list[Any]], *args: Any) -> list[Any]:
    try:
        return compute(*args)
    except HeteroSDKError as exc:
        if node.friendly_name in str(exc):
            raise
        raise CompilationError(f"XLA could not lower {node.type_name} '{node.friendly_name}': {exc}") from exc
    except Exception as exc:
        raise CompilationError(
            f"XLA could not lower {node.type_name} '{node.friendly_name}': {type(exc).__name__}: {exc}"
        ) from exc


_FOLD_LIMIT = 1 << 20
"""The most elements a known op's outputs may have to be folded with numpy while tracing; larger
ones (a Broadcast of a scalar to a big shape) are left to XLA, which need not materialise them."""
_FOLDING: frozenset[str] | None = None


def _foldable(node: Node) -> bool:
    global _FOLDING
    if _FOLDING is None:
        _FOLDING = frozenset(kernel_types())
    if node.type_name not in _FOLDING:
        return False
    shapes = [node.get_output_partial_shape(i) for i in range(node.get_output_size())]
    if any(shape.is_dynamic for shape in shapes) or get_lowering(node.type_name) is None:
        return True
    return sum(int(np.prod(shape.to_shape())) for shape in shapes) <= _FOLD_LIMIT
