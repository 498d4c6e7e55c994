"""TEMPLATE's fusions of a decoder's small blocks (an RMS norm, a rotary embedding's rotate-half, a tanh GELU,
a layer norm) into the ops of :mod:`template_plugin.decoder_ops`, and of torch's decomposed key transpose into
one Transpose. Each fused op computes what the ops it replaces compute, bit for bit; see each pass."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from hetero_sdk import opset
from hetero_sdk.plugin import ConsumerMap, MatcherPass, reduced_axes, replace_node
from template_plugin.decoder_ops import fits_onto, gelu_tanh_block, layer_norm, rms_norm, rotate_half
from template_plugin.fused_ops import bias_fits

if TYPE_CHECKING:
    from hetero_sdk import Model, Node, Output

__all__ = ["GeluTanhFusion", "LastAxesTransposeFusion", "LayerNormFusion", "RMSNormFusion", "RotateHalfFusion"]

_FUSED_TYPES = frozenset({"f32", "f64"})  # computed as the unfused ops are (f16 and bf16 widen per op)


def _only_use(output: Output, users: ConsumerMap, op: str) -> tuple[Node, int] | None:
    """``(consumer, input index)`` when ``output``'s only use is an ``op`` node, else None."""
    uses = users.of(output)
    return uses[0] if len(uses) == 1 and uses[0][0].type_name == op else None


def _one_value(output: Output) -> bool:
    """True when ``output`` is a Constant holding one value."""
    return output.node.type_name == "Constant" and np.asarray(output.node.attrs["value"]).size == 1


def _other_constant(node: Node, index: int) -> Output | None:
    """The Constant feeding the other input of the binary, numpy-broadcasting ``node``, else None."""
    other = _other_operand(node, index)
    return other if other is not None and other.node.type_name == "Constant" else None


class RMSNormFusion(MatcherPass):
    """Fuses an RMS norm as exporters write it, ``Multiply(weight, Multiply(x, Divide(1, Sqrt(Add(
    ReduceMean(Power(x, 2), -1, keep_dims), eps)))))`` of f32 or f64, into ``TemplateRMSNorm``.

    ``exponent``, ``eps`` and the numerator are Constants holding one value (of rank at most x's, so
    they never enlarge the result), the mean is over the last axis only, x's last dimension is static,
    ``weight`` is a Constant whose dimensions are 1 but the last (1 or x's last), either operand order
    of the Add and the Multiplies; every node of the block but ``x`` has one use. The fused op takes the
    last Multiply's friendly name and tensor names and records the block in ``fused_names``.
    """

    name = "TemplateRMSNormFusion"
    anchors = ("Power",)

    def apply(self, model: Model, power: Node, users: ConsumerMap) -> bool:
        x, exponent = power.input_value(0), power.input_value(1)
        shape = x.partial_shape
        if (
            x.element_type.value not in _FUSED_TYPES
            or not _one_value(exponent)
            or shape.rank < 1
            or shape[-1] <= 0
            or power.output(0).partial_shape != shape
        ):
            return False
        found = _only_use(power.output(0), users, "ReduceMean")
        if found is None or not found[0].attrs["keep_dims"] or found[1] != 0:
            return False
        mean, axes = found[0], found[0].input_value(1).node
        if axes.type_name != "Constant" or list(reduced_axes(shape.rank, axes.attrs["value"])) != [shape.rank - 1]:
            return False
        pattern = [power, mean]
        steps: dict[str, tuple[Node, int]] = {}
        for op in ("Add", "Sqrt", "Divide", "Multiply", "Weight"):
            found = _only_use(pattern[-1].output(0), users, "Multiply" if op == "Weight" else op)
            if found is None:
                return False
            steps[op] = found
            pattern.append(found[0])
        eps = _other_constant(*steps["Add"])
        divide, divisor = steps["Divide"]
        one = divide.input_value(0)
        scaled, weight = _other_operand(*steps["Multiply"]), _other_constant(*steps["Weight"])
        if eps is None or weight is None or divisor != 1 or scaled != x or divide.attrs["auto_broadcast"] != "numpy":
            return False
        scalars = (exponent, eps, one)
        if not all(_one_value(v) for v in scalars) or max(v.partial_shape.rank for v in scalars) > shape.rank:
            return False
        if not bias_fits(weight.partial_shape, shape) or pattern[-1].output(0).partial_shape != shape:
            return False
        fused = rms_norm(x, exponent, eps, one, weight)
        replace_node(model, pattern[-1], fused, fused=pattern[:-1], consumers=users)
        return True


class RotateHalfFusion(MatcherPass):
    """Fuses a rotary embedding's rotate-half, ``Add(Multiply(x, cos), Multiply(Concat(Negative(
    Slice(x, h:)), Slice(x, :h), axis=-1), sin))`` of f32 or f64, into ``TemplateRotateHalf``.

    Both Slices cut x's last axis (static, ``2 * h``) with step 1, by Constants; either operand order
    of the Add and the Multiplies; every node of the block but ``x``, ``cos`` and ``sin`` has one use.
    The fused op takes the Add's friendly name and tensor names and records the block in ``fused_names``.
    """

    name = "TemplateRotateHalfFusion"
    anchors = ("Add",)

    def apply(self, model: Model, add: Node, users: ConsumerMap) -> bool:
        if add.get_input_size() != 2 or add.attrs.get("auto_broadcast", "numpy") != "numpy":
            return False
        for order in ((0, 1), (1, 0)):
            direct, rotary = (add.input_value(i).node for i in order)
            if direct.type_name != "Multiply" or rotary.type_name != "Multiply":
                continue
            for c in (0, 1):
                concat = rotary.input_value(c).node
                if concat.type_name != "Concat" or concat.get_input_size() != 2:
                    continue
                halves = _rotated_halves(concat, users)
                if halves is None:
                    continue
                x, half, inner = halves
                for d in (0, 1):
                    if direct.input_value(d) != x:
                        continue
                    block = [direct, rotary, concat, *inner]
                    if any(len(users.of(n.output(0))) != 1 for n in block) or x.element_type.value not in _FUSED_TYPES:
                        return False
                    if any(n.attrs.get("auto_broadcast", "numpy") != "numpy" for n in (direct, rotary)):
                        return False
                    cos, sin = direct.input_value(1 - d), rotary.input_value(1 - c)
                    if not (
                        fits_onto(cos.partial_shape, x.partial_shape) and fits_onto(sin.partial_shape, x.partial_shape)
                    ):
                        return False
                    fused = rotate_half(x, cos, sin, half)
                    replace_node(model, add, fused, fused=block, consumers=users)
                    return True
        return False


class GeluTanhFusion(MatcherPass):
    """Fuses a tanh GELU as GPT-2's exporter writes it, ``Multiply(Multiply(x, 0.5), Add(Tanh(Multiply(
    Add(x, Multiply(Power(x, 3), 0.044715)), sqrt(2 / pi))), 1))`` of f32 or f64, into ``TemplateGeluTanh``.

    Each constant is a Constant holding one value of rank at most x's (whatever its value: the fused op
    takes them as inputs), either operand order of each Add and Multiply; every node of the block but
    ``x`` has one use. The fused op takes the last Multiply's friendly name and tensor names and records
    the block in ``fused_names``.
    """

    name = "TemplateGeluTanhFusion"
    anchors = ("Tanh",)

    def apply(self, model: Model, tanh: Node, users: ConsumerMap) -> bool:
        scaled = _by_constant(tanh.input_value(0).node, "Multiply")
        inner = None if scaled is None else scaled[0].input_value(scaled[1])
        if scaled is None or inner is None or inner.node.type_name != "Add" or inner.node.get_input_size() != 2:
            return False
        for p in (0, 1):
            x, cubic = inner.node.input_value(1 - p), _by_constant(inner.node.input_value(p).node, "Multiply")
            if cubic is None:
                continue
            power = _by_constant(cubic[0].input_value(cubic[1]).node, "Power", constant_index=1)
            if power is None or power[0].input_value(0) != x:
                continue
            shifted = _only_use(tanh.output(0), users, "Add")
            outer = None if shifted is None else _only_use(shifted[0].output(0), users, "Multiply")
            if shifted is None or outer is None or _other_constant(*shifted) is None:
                return False
            halved = _by_constant(outer[0].input_value(1 - outer[1]).node, "Multiply")
            if halved is None or halved[0].input_value(halved[1]) != x:
                return False
            block = [halved[0], power[0], cubic[0], inner.node, scaled[0], tanh, shifted[0]]
            constants = [_other_operand(node, index) for node, index in (halved, power, cubic, scaled, shifted)]
            shape = x.partial_shape
            if any(len(users.of(n.output(0))) != 1 for n in block) or x.element_type.value not in _FUSED_TYPES:
                return False
            if any(c is None or not _one_value(c) or c.partial_shape.rank > shape.rank for c in constants):
                return False
            if outer[0].output(0).partial_shape != shape or outer[0].attrs["auto_broadcast"] != "numpy":
                return False
            fused = gelu_tanh_block(x, constants)
            replace_node(model, outer[0], fused, fused=block, consumers=users)
            return True
        return False


class LayerNormFusion(MatcherPass):
    """Fuses a layer norm, ``Add(Multiply(MVN(x, axes), gamma), beta)`` of f32 or f64 with Constant ``gamma``
    and ``beta`` whose dimensions are 1 but the last (1 or x's last), into ``TemplateLayerNorm``.

    Either operand order of the Multiply and the Add; the MVN and the Multiply have one use. The fused
    op takes the Add's friendly name and tensor names and records the block in ``fused_names``.
    """

    name = "TemplateLayerNormFusion"
    anchors = ("MVN",)

    def apply(self, model: Model, mvn: Node, users: ConsumerMap) -> bool:
        x = mvn.input_value(0)
        scaled = _only_use(mvn.output(0), users, "Multiply")
        shifted = None if scaled is None else _only_use(scaled[0].output(0), users, "Add")
        if scaled is None or shifted is None or x.element_type.value not in _FUSED_TYPES:
            return False
        gamma, beta = _other_constant(*scaled), _other_constant(*shifted)
        shape = x.partial_shape
        if gamma is None or beta is None or shape.rank < 1 or shifted[0].output(0).partial_shape != shape:
            return False
        if not (bias_fits(gamma.partial_shape, shape) and bias_fits(beta.partial_shape, shape)):
            return False
        fused = layer_norm(x, mvn.input_value(1), gamma, beta, mvn.attrs)
        replace_node(model, shifted[0], fused, fused=[mvn, scaled[0]], consumers=users)
        return True


class LastAxesTransposeFusion(MatcherPass):
    """Replaces torch's export of ``k.transpose(-2, -1)`` in its decomposed attention, ``Reshape(Transpose(
    Reshape(k, [-1, d[-2], d[-1]]), [0, 2, 1]), [*d[:-2], d[-1], d[-2]])`` with ``d`` read from
    ``ShapeOf(k)`` by Slices and Concats, by one ``Transpose`` of ``k``'s last two axes (the same values:
    the reshapes only regroup the leading axes), for a ``k`` of static rank 3 or more.

    The inner Reshape and the Transpose have one use; the shape arithmetic is left to dead-code
    elimination. Where an axis of ``k`` is empty the exported chain cannot reshape (``-1`` of an empty
    array) and fails; the Transpose gives the empty result.
    """

    name = "TemplateLastAxesTransposeFusion"
    anchors = ("Reshape",)

    def apply(self, model: Model, final: Node, users: ConsumerMap) -> bool:
        middle = final.input_value(0).node
        if middle.type_name != "Transpose" or _constant_ints(middle.input_value(1)) != [0, 2, 1]:
            return False
        first = middle.input_value(0).node
        if first.type_name != "Reshape" or any(len(users.of(n.output(0))) != 1 for n in (first, middle)):
            return False
        k = first.input_value(0)
        rank = k.partial_shape.rank
        if rank < 3:
            return False
        inner = [("values", (-1,)), ("dims", (rank - 2, rank - 1)), ("dims", (rank - 1, rank))]
        outer = [("dims", (0, rank - 2)), ("dims", (rank - 1, rank)), ("dims", (rank - 2, rank - 1))]
        if _shape_parts(first.input_value(1), k) != inner or _shape_parts(final.input_value(1), k) != outer:
            return False
        order = np.array([*range(rank - 2), rank - 1, rank - 2], np.int64)
        swapped = opset.transpose(k, order)
        replace_node(model, final, swapped, fused=[first, middle], consumers=users)
        return True


def _constant_ints(output: Output) -> list[int] | None:
    """The values of a Constant of integers, flattened; None for anything else."""
    if output.node.type_name != "Constant" or output.element_type.value not in ("i32", "i64"):
        return None
    return [int(v) for v in np.asarray(output.node.attrs["value"]).reshape(-1)]


def _shape_parts(pattern: Output, of: Output) -> list[tuple[str, tuple[int, ...]]] | None:
    """``pattern`` as a list of ``("values", constants)`` and ``("dims", (start, stop))`` (a slice of
    ``ShapeOf(of)``, non-negative, step 1) when it is a Concat along axis 0 of those, else None."""
    node = pattern.node
    if node.type_name != "Concat" or node.attrs["axis"] not in (0, -1):
        return None
    parts: list[tuple[str, tuple[int, ...]]] = []
    rank = of.partial_shape.rank
    for source in node.input_values():
        values = _constant_ints(source)
        if values is not None:
            parts.append(("values", tuple(values)))
            continue
        cut = source.node
        if cut.type_name != "Slice" or cut.input_value(0).node.type_name != "ShapeOf":
            return None
        if cut.input_value(0).node.input_value(0) != of:
            return None
        bounds = [_constant_ints(cut.input_value(i)) for i in range(1, cut.get_input_size())]
        if any(b is None or len(b) != 1 for b in bounds) or bounds[2] != [1] or bounds[3:] not in ([], [[0]]):
            return None
        start, stop, _ = slice(bounds[0][0], bounds[1][0], 1).indices(rank)  # type: ignore[index]
        parts.append(("dims", (start, stop)))
    return parts


def _by_constant(node: Node, op: str, constant_index: int | None = None) -> tuple[Node, int] | None:
    """``(node, index of its operand that is not the Constant)`` when ``node`` is a numpy-broadcasting
    binary ``op`` with a Constant operand (at ``constant_index`` when given), else None."""
    if node.type_name != op or node.get_input_size() != 2 or node.attrs.get("auto_broadcast", "numpy") != "numpy":
        return None
    for index in (0, 1) if constant_index is None else (1 - constant_index,):
        if node.input_value(1 - index).node.type_name == "Constant":
            return node, index
    return None


def _rotated_halves(concat: Node, users: ConsumerMap) -> tuple[Output, int, list[Node]] | None:
    """``(x, h, [Negative, Slice, Slice])`` when ``concat`` is ``Concat(Negative(x[..., h:]), x[..., :h])``
    along x's static last axis of ``2 * h``, else None."""
    negative, low = concat.input_value(0).node, concat.input_value(1).node
    if negative.type_name != "Negative" or low.type_name != "Slice":
        return None
    high = negative.input_value(0).node
    if high.type_name != "Slice" or high.input_value(0) != low.input_value(0):
        return None
    x = low.input_value(0)
    shape = x.partial_shape
    if shape.rank < 1 or shape[-1] <= 0 or shape[-1] % 2 or concat.attrs["axis"] not in (-1, shape.rank - 1):
        return None
    half = shape[-1] // 2
    if _last_axis_cut(high, shape.rank, shape[-1]) != (half, shape[-1]):
        return None
    if _last_axis_cut(low, shape.rank, shape[-1]) != (0, half):
        return None
    return x, half, [negative, high, low]


def _last_axis_cut(node: Node, rank: int, size: int) -> tuple[int, int] | None:
    """``(start, stop)`` clamped to ``[0, size]`` of a ``Slice(x, start, stop, 1, axes)`` of Constants
    cutting only the last axis, else None."""
    if node.get_input_size() != 5 or any(node.input_value(i).node.type_name != "Constant" for i in range(1, 5)):
        return None
    start, stop, step, axes = (np.asarray(node.input_value(i).node.attrs["value"]).reshape(-1) for i in range(1, 5))
    if not (start.size == stop.size == step.size == axes.size == 1) or int(step[0]) != 1:
        return None
    if int(axes[0]) not in (-1, rank - 1):
        return None
    begin, end, _ = slice(int(start[0]), int(stop[0]), 1).indices(size)
    return begin, end


def _other_operand(node: Node, index: int) -> Output | None:
    """The other input of the binary, numpy-broadcasting ``node``, else None."""
    if node.get_input_size() != 2 or node.attrs.get("auto_broadcast", "numpy") != "numpy":
        return None
    return node.input_value(1 - index)
