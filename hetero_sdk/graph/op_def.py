"""What an op type is: its inputs, its attributes, and how its outputs' types and shapes follow.

An :class:`OpDef` is written once, in the op's family module under :mod:`hetero_sdk.ops`, and drives
everything else: a :class:`~hetero_sdk.graph.Node` checks its inputs and attributes against it and
runs its shape inference; the op reference is generated from it; the conformance kit draws element
types and attribute values from it; devices attach kernels to its type name, and ops whose math is the
same on every array library carry one kernel (:attr:`OpDef.evaluate`) that all devices may use.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

import numpy as np

from hetero_sdk.element_type import Type
from hetero_sdk.errors import UnsupportedOperationError, suggest
from hetero_sdk.registry import Registry
from hetero_sdk.shape import PartialShape

if TYPE_CHECKING:
    from hetero_sdk.graph.node import Node

__all__ = [
    "ANY", "ARRAY", "Attr", "AttrKind", "BOOL", "ELEMENT_TYPE", "FLOAT", "FLOATS", "INT", "INTS", "InPlaceCache",
    "Input", "LOWER_STRING", "OPS", "OpDef", "OutputSpec", "PARTIAL_SHAPE", "REQUIRED", "STRING", "STRINGS", "define",
]  # fmt: skip

OutputSpec = tuple[Type, PartialShape | Sequence[int]]
"""One output's element type and (partial) shape, as shape inference returns it."""

InferFn = Callable[["Node"], Sequence[OutputSpec]]
EvaluateFn = Callable[..., Any]


class _Required:
    def __repr__(self) -> str:
        return "REQUIRED"


REQUIRED: Final = _Required()
"""The default of an attribute that has none: the node must set it."""


# -- attribute kinds: each normalises a value or raises ValueError saying what it must be ------------


@dataclass(frozen=True)
class AttrKind:
    """A kind of attribute value: its name in docs, and the function that checks and normalises it.

    :ivar name: shown in the op reference (``int``, ``list of int``...).
    :ivar normalize: returns the normalised value, or raises ``ValueError`` saying what it must be
        (``"must be an integer"``) or what is wrong with it.
    """

    name: str
    normalize: Callable[[Any], Any]


def _int(value: Any) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise ValueError("must be an integer")
    return int(value)


def _float(value: Any) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ValueError("must be a number")
    return float(value)


def _bool(value: Any) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError("must be a bool (True or False)")
    return bool(value)


def _string(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError("must be a string")
    return value


def _ints(value: Any) -> list[int]:
    try:
        if isinstance(value, (str, bytes)):
            raise TypeError
        ints = [int(v) for v in value]
    except (TypeError, ValueError):
        raise ValueError("must be a list of integers") from None
    return ints


def _lower_strings(value: Any) -> list[str]:
    if isinstance(value, str) or not all(isinstance(v, str) for v in value):
        raise ValueError("must be a list of strings")
    return [v.lower() for v in value]


def _floats(value: Any) -> list[float]:
    try:
        return [float(v) for v in value]
    except (TypeError, ValueError):
        raise ValueError("must be a list of numbers") from None


def _element_type(value: Any) -> Type:
    try:
        return Type.of(value)
    except (TypeError, ValueError) as exc:
        raise ValueError(str(exc)) from None


def _partial_shape(value: Any) -> PartialShape:
    try:
        return PartialShape.of(value)
    except (TypeError, ValueError) as exc:
        raise ValueError(str(exc)) from None


def _array(value: Any) -> np.ndarray:
    if not isinstance(value, np.ndarray):
        raise ValueError(f"must be a numpy array, got {type(value).__name__}")
    return value


INT = AttrKind("int", _int)
FLOAT = AttrKind("float", _float)
BOOL = AttrKind("bool", _bool)
STRING = AttrKind("string", _string)
LOWER_STRING = AttrKind("string (case-insensitive)", lambda v: _string(v).lower())
INTS = AttrKind("list of int", _ints)
FLOATS = AttrKind("list of float", _floats)
STRINGS = AttrKind("list of string (case-insensitive)", _lower_strings)
ELEMENT_TYPE = AttrKind("element type", _element_type)
PARTIAL_SHAPE = AttrKind("shape", _partial_shape)
ARRAY = AttrKind("array", _array)
ANY = AttrKind("any", lambda v: v)


def _shown(value: Any) -> str:
    return value.value if isinstance(value, Type) else repr(value)


@dataclass(frozen=True)
class Attr:
    """One attribute of an op type.

    :ivar name: the attribute's name, as in OpenVINO's op specification, in snake_case.
    :ivar kind: what its value is (:data:`INT`, :data:`INTS`, :data:`STRING`...).
    :ivar default: the value when a node does not set it; :data:`REQUIRED` when it must.
    :ivar choices: the values allowed, when the attribute is an enumeration.
    :ivar doc: one line for the op reference.
    :ivar minimum: the smallest value allowed (of each value, for a list), when there is one.
    :ivar maximum: the largest value allowed (of each value, for a list), when there is one.
    :ivar axis_of: the input whose axes the value names (each value, for a list): it must lie in
        ``[-rank, rank)`` of that input (``rank + axis_extra``), checked once the inputs are known.
    :ivar axis_extra: dims the op adds to ``axis_of``'s rank before the axis applies (Unsqueeze-like ops).
    """

    name: str
    kind: AttrKind
    default: Any = REQUIRED
    choices: tuple[Any, ...] | None = None
    doc: str = ""
    minimum: int | None = None
    maximum: int | None = None
    axis_of: int | None = None
    axis_extra: int = 0

    @property
    def required(self) -> bool:
        """True when a node must set the attribute."""
        return self.default is REQUIRED

    def normalize(self, node: Node, value: Any) -> Any:
        """``value`` checked and normalised.

        :raises ModelValidationError: naming the node, the attribute and what it must be.
        """
        try:
            value = self.kind.normalize(value)
        except ValueError as exc:
            said = str(exc)  # "must be ..." reads after the value; a whole sentence names the value itself
            where = f"{self.name}={value!r} " if said.startswith("must") else f"{self.name}: "
            raise node.error(f"attribute {where}{said}") from None
        if self.choices is not None and value not in self.choices:
            shown = ", ".join(c.value if isinstance(c, Type) else repr(c) for c in self.choices)
            raise node.error(f"attribute {self.name}={_shown(value)} is invalid; expected one of: {shown}")
        if self.minimum is None and self.maximum is None and self.kind not in (INT, INTS):
            return value  # (an integer attribute is an int64 at the least; other kinds declare their bounds)
        low = -(2**63) if self.minimum is None else self.minimum
        high = 2**63 - 1 if self.maximum is None else self.maximum
        outside = [v for v in _values(value) if not low <= v <= high]
        if outside:
            bounds = "..".join("" if b is None else str(b) for b in (self.minimum, self.maximum))
            raise node.error(f"attribute {self.name}={_shown(value)} is outside its domain {bounds}")
        return value

    def check_axes(self, node: Node, value: Any) -> None:
        """Checks that ``value`` names axes of input :attr:`axis_of` (nothing to check without one, or
        without that input).

        :raises ModelValidationError: naming the node, the attribute and the input's rank.
        """
        if self.axis_of is None or self.axis_of >= node.get_input_size():
            return
        shape = node.input_value(self.axis_of).partial_shape
        if not shape.rank_is_static:  # checked when it runs
            return
        rank = shape.rank + self.axis_extra
        outside = [v for v in _values(value) if not -rank <= v < rank]
        if outside:
            expected = f"expected {-rank}..{rank - 1}" if rank else "a scalar has no axis"
            raise node.error(f"attribute {self.name}={_shown(value)}: axis {outside[0]} is out of range for rank "
                             f"{rank}; {expected}")  # fmt: skip


def _values(value: Any) -> list[Any]:
    """The integers an attribute value holds (itself, or a list's items); none for other kinds."""
    items = value if isinstance(value, list) else [value]
    return [v for v in items if isinstance(v, int) and not isinstance(v, bool)]


@dataclass(frozen=True)
class Input:
    """One input of an op type.

    :ivar name: the operand's name in messages and docs (``data``, ``axes``); empty for the
        interchangeable operands of elementwise ops, which messages call ``input 0``, ``input 1``...
    :ivar types: the element types it accepts; None accepts every type.
    :ivar optional: the input may be left out (only trailing inputs are optional).
    :ivar variadic: the input takes one or more values (only the last input is variadic).
    :ivar decides_shape: the output shapes depend on its values (axes, target shapes, pads), so a
        device that compiles for static shapes needs them known before it runs.
    :ivar doc: one line for the op reference.
    """

    name: str = ""
    types: frozenset[Type] | None = None
    optional: bool = False
    variadic: bool = False
    decides_shape: bool = False
    doc: str = ""

    def label(self, index: int) -> str:
        """How messages name the operand at ``index``."""
        return self.name or f"input {index}"


@dataclass(frozen=True)
class InPlaceCache:
    """Declares that an op writes a key/value cache in place: output :attr:`present` is input
    :attr:`past` with the step's new entries written along :attr:`axis` at the filled length.

    The op learns the filled length from the values of its inputs :attr:`lengths` (GroupQueryAttention's
    ``seqlens_k``), never from ``past``'s shape, and:

    - ``present`` holds ``past``'s filled entries, then the new ones, and has ``past``'s length along
      ``axis`` when its shape-deciding inputs allow it (it may be longer: the entries after the new ones
      are then zeros or ``past``'s);
    - no output depends on the entries after the new ones (the op masks them).

    So ``past`` may be a buffer of any capacity: the fixed-capacity decode path
    (:mod:`hetero_sdk.transformations.fixed_capacity_cache`) feeds the op such buffers and keeps
    ``present`` as the next buffer, with no copy, and ``make_stateful`` pairs a model input the op reads
    as ``past`` with the model output ``present`` feeds.

    :ivar past: the index of the cache input.
    :ivar present: the index of the output that returns the updated cache.
    :ivar axis: the axis the cache grows along (negative counts from the end).
    :ivar lengths: the indices of the inputs whose values give the filled length (never inputs that
        decide a shape).
    """

    past: int
    present: int
    axis: int
    lengths: tuple[int, ...] = ()


@dataclass(frozen=True)
class OpDef:
    """The definition of one op type.

    :ivar type_name: the OpenVINO op type name (``MatMul``).
    :ivar family: the family it belongs to (``elementwise``, ``convolution``...): the module of
        :mod:`hetero_sdk.ops` it is defined in, mirrored by each device's kernels.
    :ivar infer: returns one ``(Type, shape)`` per output once inputs and attributes are checked;
        raises ``node.error(...)`` for what the declarative checks cannot say.
    :ivar inputs: the inputs, in order.
    :ivar attrs: the attributes.
    :ivar version: the opset the op comes from (``opset1``...).
    :ivar evaluate: the op's computation written once against the array API standard
        (``evaluate(node, *inputs)``, the namespace taken from the inputs), so numpy and ``jax.numpy``
        both run it; None when each device needs a kernel of its own.
    :ivar data_dependent: output shapes depend on input values (NonZero, NonMaxSuppression).
    :ivar structural: the op is graph structure, not computation (Parameter, Constant, Result):
        it takes no device of its own and is never folded or profiled.
    :ivar caches: the key/value caches the op writes in place (:class:`InPlaceCache`): which input each
        output returns updated, along which axis, and which inputs say the filled length.
    :ivar doc: a paragraph for the op reference.
    """

    type_name: str
    family: str
    infer: InferFn
    inputs: tuple[Input, ...] = ()
    attrs: tuple[Attr, ...] = ()
    version: str = "opset1"
    evaluate: EvaluateFn | None = None
    data_dependent: bool = False
    structural: bool = False
    caches: tuple[InPlaceCache, ...] = ()
    doc: str = ""

    def __deepcopy__(self, memo: dict[int, Any]) -> OpDef:
        return self  # a definition is shared by every node of its type, never copied

    def __post_init__(self) -> None:
        if any(i.variadic for i in self.inputs[:-1]):
            raise ValueError(f"{self.type_name}: only the last input may be variadic")
        optional = [i.optional for i in self.inputs]
        if optional != sorted(optional):
            raise ValueError(f"{self.type_name}: optional inputs must come after the required ones")
        for cache in self.caches:
            named = [cache.past, *cache.lengths]
            if any(not 0 <= i < len(self.inputs) for i in named) or cache.present < 0:
                raise ValueError(
                    f"{self.type_name}: InPlaceCache(past={cache.past}, present={cache.present}, "
                    f"lengths={cache.lengths}) names an input it does not have (inputs 0..{len(self.inputs) - 1}) "
                    "or a negative output"
                )
            if cache.past in cache.lengths:
                raise ValueError(f"{self.type_name}: input {cache.past} is both a cache and its length")
            deciding = [i for i in cache.lengths if self.inputs[i].decides_shape]
            if deciding:
                raise ValueError(
                    f"{self.type_name}: input {deciding[0]} gives a cache's filled length and decides a shape; "
                    "a length written in place is a value (the shape follows the buffer's capacity)"
                )

    def cache_of(self, output: int) -> InPlaceCache | None:
        """The declaration of the cache output ``output`` returns written in place, or None."""
        return next((c for c in self.caches if c.present == output), None)

    @property
    def input_counts(self) -> tuple[int, int | None]:
        """The fewest and the most inputs a node may have (None: no upper bound)."""
        required = sum(1 for i in self.inputs if not i.optional)
        variadic = bool(self.inputs) and self.inputs[-1].variadic
        return required, None if variadic else len(self.inputs)

    def input_spec(self, index: int) -> Input | None:
        """The spec of input ``index`` (the variadic one for every index past the end)."""
        if index < len(self.inputs):
            return self.inputs[index]
        return self.inputs[-1] if self.inputs and self.inputs[-1].variadic else None

    def attr(self, name: str) -> Attr | None:
        """The spec of attribute ``name``, or None."""
        return next((a for a in self.attrs if a.name == name), None)

    def shape_inputs(self) -> frozenset[int]:
        """Indices of the inputs whose values decide output shapes (see :attr:`Input.decides_shape`)."""
        return frozenset(i for i, spec in enumerate(self.inputs) if spec.decides_shape)

    def check(self, node: Node) -> None:
        """Checks ``node``'s input count, input element types and attributes, filling defaults.

        An attribute the definition does not declare is an error: a misspelt one would otherwise be
        ignored and its default used.

        :raises ModelValidationError: naming the node and what does not fit.
        """
        count = node.get_input_size()
        least, most = self.input_counts
        if count < least or (most is not None and count > most):
            wanted = f"at least {least}" if most is None else " or ".join(map(str, range(least, most + 1)))
            raise node.error(f"expects {wanted} input(s), got {count}")
        for index, value in enumerate(node.input_values()):
            spec = self.input_spec(index)
            if spec is not None and spec.types is not None and value.element_type not in spec.types:
                allowed = ", ".join(sorted(t.value for t in spec.types))
                raise node.error(
                    f"{spec.label(index)} has element type {value.element_type.value}; expected one of: {allowed}"
                )
        attrs = node.attrs
        unknown = [name for name in attrs if self.attr(name) is None]
        if unknown:
            known = [a.name for a in self.attrs]
            declared = ", ".join(known) if known else "none"
            raise node.error(
                f"{self.type_name} has no attribute {unknown[0]!r} (its attributes: {declared})"
                + (f"; {hint}" if (hint := suggest(unknown[0], known)) else "")
            )
        for attr in self.attrs:
            if attr.name in attrs:
                attrs[attr.name] = attr.normalize(node, attrs[attr.name])
            elif attr.required:
                raise node.error(f"attribute {attr.name!r} is required")
            else:
                attrs[attr.name] = copy.deepcopy(attr.default)
            attr.check_axes(node, attrs[attr.name])


OPS: Registry[OpDef] = Registry(
    "op type",
    UnsupportedOperationError,
    hint="the opset's op types are defined in hetero_sdk.ops; a device defines its own ops with define(); an "
    "extension package adds ops (Core.extensions lists the installed ones)",
)
"""Every op type's definition, by type name: the SDK's opset and the ops devices define for themselves."""


def define(op: OpDef) -> OpDef:
    """Registers ``op`` in :data:`OPS` and returns it.

    :raises ValueError: when its type name is taken.
    """
    return OPS.register(op.type_name, op)
