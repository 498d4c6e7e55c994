"""TEMPLATE's transformation pipeline and its fusion pass (``transform_model`` in the plugin guide).

``compile_model`` and ``query_model`` both run :func:`transform_model`, so a device answers
``query_model`` about exactly the ops it will compile.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

import numpy as np

from hetero_sdk import opset
from hetero_sdk.ops import reduced_axes
from hetero_sdk.transformations import (
    COMMON_OPTIMIZATIONS,
    ConsumerMap,
    MatcherPass,
    PassManager,
    channel_scale,
    common_optimizations,
    constant_operand,
    replace_node,
)
from template_plugin.bound_conv import is_pointwise
from template_plugin.decoder_ops import gelu_tanh_block, layer_norm, rms_norm, rotate_half
from template_plugin.fused_conv import CONVOLUTION, fused_convolution
from template_plugin.fused_ops import bias_fits, fully_connected
from template_plugin.squeeze_excitation import squeeze_excitation

if TYPE_CHECKING:
    from hetero_sdk import Model, Node, Output

__all__ = [
    "COMMON_OPTIMIZATIONS",
    "ConvolutionFusion",
    "FullyConnectedFusion",
    "GeluTanhFusion",
    "LastAxesTransposeFusion",
    "LayerNormFusion",
    "RMSNormFusion",
    "RotateHalfFusion",
    "SqueezeExcitationFusion",
    "build_pass_manager",
    "transform_model",
]

_ACTIVATIONS = {"Relu": "relu", "Sigmoid": "sigmoid", "Tanh": "tanh"}
_CONV_ACTIVATIONS = {"Relu": "relu", "HSwish": "hswish"}
_FUSED_TYPES = frozenset({"f32", "f64"})  # computed as the unfused ops are (f16 and bf16 widen per op)


class FullyConnectedFusion(MatcherPass):
    """Fuses ``MatMul -> Add(bias Constant) [-> Relu | Sigmoid | Tanh | Gelu]`` into ``TemplateFullyConnected``.

    The pattern fires when the MatMul's output has exactly one use, the Add, whose other input is a
    Constant that :func:`~template_plugin.fused_ops.bias_fits` the product (it broadcasts along the
    last axis only, so the Add does not change the product's shape). The activation joins when it is
    the Add output's only use. The fused op keeps the MatMul's inputs and ``transpose_a`` /
    ``transpose_b``, consumes the bias Constant as it is, takes the friendly name and tensor names of
    the pattern's last node and records the whole pattern in ``fused_names``.
    """

    name = "TemplateFullyConnectedFusion"
    anchors = ("MatMul",)

    def apply(self, model: Model, matmul: Node, users: ConsumerMap) -> bool:
        product = matmul.output(0)
        uses = users.of(product)
        if len(uses) != 1 or uses[0][0].type_name != "Add":
            return False
        add, index = uses[0]
        bias = add.input_value(1 - index)
        if bias.node.type_name != "Constant" or add.output(0).partial_shape != product.partial_shape:
            return False
        if not bias_fits(bias.partial_shape, product.partial_shape):
            return False
        pattern = [matmul, add]
        activation = "none"
        after = users.of(add.output(0))
        if len(after) == 1:
            follower = after[0][0]
            if follower.type_name in _ACTIVATIONS:
                activation = _ACTIVATIONS[follower.type_name]
            elif follower.type_name == "Gelu":
                activation = "gelu_" + str(follower.attrs.get("approximation_mode", "ERF")).lower()
            if activation != "none":
                pattern.append(follower)
        fused = fully_connected(
            matmul.input_value(0),
            matmul.input_value(1),
            bias,
            transpose_a=bool(matmul.attrs.get("transpose_a", False)),
            transpose_b=bool(matmul.attrs.get("transpose_b", False)),
            activation=activation,
        )
        replace_node(model, pattern[-1], fused, fused=pattern[:-1], consumers=users)
        return True


class ConvolutionFusion(MatcherPass):
    """Fuses ``Convolution | GroupConvolution -> Add(per-channel Constant) [-> Relu | HSwish]
    [-> Multiply(per-channel Constant) [-> Add(per-channel Constant)]]`` of a real element type into
    ``TemplateConvolution``.

    The convolution's output must have exactly one use, the Add, whose constant operand holds one
    value per output channel (:func:`~hetero_sdk.transformations.linear_fusion.channel_scale`); the
    activation joins when it is the Add output's only use, and so does an affine map after it (a
    Multiply, then maybe an Add, by per-channel constants: PP-LCNetV3's learnable affine blocks). The
    fused op takes the friendly name and tensor names of the pattern's last node and records the
    whole pattern in ``fused_names``.
    """

    name = "TemplateConvolutionFusion"
    anchors = ("Convolution", "GroupConvolution")

    def apply(self, model: Model, conv: Node, users: ConsumerMap) -> bool:
        uses = users.of(conv.output(0))
        if len(uses) != 1 or uses[0][0].type_name != "Add" or conv.output(0).element_type.value not in _FUSED_TYPES:
            return False
        add = uses[0][0]
        found = constant_operand(add)
        shape = conv.output(0).partial_shape
        if found is None or found[0] != conv.output(0) or shape.rank < 3:
            return False
        if shape[1] < 0 or channel_scale(found[1], shape[1], shape.rank) is None:
            return False
        pattern, activation = [conv, add], "none"
        after = users.of(add.output(0))
        if len(after) == 1 and after[0][0].type_name in _CONV_ACTIVATIONS:
            pattern.append(after[0][0])
            activation = _CONV_ACTIVATIONS[after[0][0].type_name]
        bias = add.input_value(1 - uses[0][1])
        affine: dict[str, Output] = {}
        for op, role in (("Multiply", "scale"), ("Add", "shift")):
            found_constant = _channel_constant(pattern[-1], op, users)
            if found_constant is None:
                break
            pattern.append(found_constant[0])
            affine[role] = found_constant[1]
        fused = fused_convolution(conv, bias, activation, scale=affine.get("scale"), shift=affine.get("shift"))
        replace_node(model, pattern[-1], fused, fused=pattern[:-1], consumers=users)
        return True


def _channel_constant(node: Node, op: str, users: ConsumerMap) -> tuple[Node, Output] | None:
    """``(follower, constant)`` when ``node``'s output has one use, an ``op`` of it and a constant holding
    one value per channel (the follower's output keeps ``node``'s shape), else None."""
    after = users.of(node.output(0))
    if len(after) != 1 or after[0][0].type_name != op:
        return None
    follower, index = after[0]
    found = constant_operand(follower)
    shape = node.output(0).partial_shape
    if found is None or found[0] != node.output(0) or channel_scale(found[1], shape[1], shape.rank) is None:
        return None
    return follower, follower.input_value(1 - index)


class SqueezeExcitationFusion(MatcherPass):
    """Fuses a squeeze-and-excitation block, ``Multiply(x, Clamp(TemplateConvolution(TemplateConvolution(
    ReduceMean(x))))`` of f32 or f64, into ``TemplateSqueezeExcitation``.

    The ReduceMean averages ``x`` over all its spatial axes and keeps them; both convolutions are
    pointwise (:func:`~template_plugin.bound_conv.is_pointwise`) with Constant filters, a bias and no
    affine map, the second one without an activation; every node of the block but ``x`` has one use.
    The fused op takes the Multiply's friendly name and tensor names and records the block in
    ``fused_names``.
    """

    name = "TemplateSqueezeExcitationFusion"
    anchors = ("Multiply",)

    def apply(self, model: Model, multiply: Node, users: ConsumerMap) -> bool:
        for index in (0, 1):
            x, clamp = multiply.input_value(1 - index), multiply.input_value(index).node
            if clamp.type_name != "Clamp" or len(users.of(clamp.output(0))) != 1:
                continue
            expand = _pointwise_source(clamp, users, ("none",))
            if expand is None:
                continue
            reduce = _pointwise_source(expand, users, ("relu", "hswish", "none"))
            if reduce is None:
                continue
            pool = reduce.input_value(0).node
            if pool.type_name != "ReduceMean" or pool.input_value(0) != x:
                continue
            shape, axes = x.partial_shape, pool.input_value(1).node
            if (
                len(users.of(pool.output(0))) != 1
                or not pool.attrs["keep_dims"]
                or axes.type_name != "Constant"
                or shape.rank < 3
                or x.element_type.value not in _FUSED_TYPES
                or multiply.output(0).partial_shape != shape
                or sorted(reduced_axes(shape.rank, axes.attrs["value"])) != list(range(2, shape.rank))
            ):
                continue
            fused = squeeze_excitation(
                x,
                reduce.input_value(1),
                reduce.input_value(2),
                expand.input_value(1),
                expand.input_value(2),
                reduce.attrs["activation"],
                (clamp.attrs["min"], clamp.attrs["max"]),
            )
            replace_node(model, multiply, fused, fused=[pool, reduce, expand, clamp], consumers=users)
            return True
        return False


def _pointwise_source(node: Node, users: ConsumerMap, activations: tuple[str, ...]) -> Node | None:
    """The node feeding ``node``'s first input when it is a pointwise ``TemplateConvolution`` of Constant
    filters, a bias and no affine map, with one of ``activations`` and ``node`` as its only use."""
    source = node.input_value(0).node
    if source.type_name != CONVOLUTION or source.get_input_size() != 3 or source.attrs["activation"] not in activations:
        return None
    filters = source.input_value(1).node
    if filters.type_name != "Constant" or not is_pointwise(source, filters.attrs["value"]):
        return None
    return source if len(users.of(source.output(0))) == 1 else None


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
                    fused = rotate_half(x, direct.input_value(1 - d), rotary.input_value(1 - c), half)
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


def build_pass_manager(*, disabled: Iterable[str] = ()) -> PassManager:
    """TEMPLATE's pipeline, with the named passes (or groups) disabled.

    1. ``CommonOptimizations`` (:func:`~hetero_sdk.transformations.common_optimizations`), repeated
       to a fixed point;
    2. ``TemplateFullyConnectedFusion``;
    3. ``TemplateConvolutionFusion``;
    4. ``TemplateSqueezeExcitationFusion``;
    5. ``TemplateRMSNormFusion``;
    6. ``TemplateRotateHalfFusion``;
    7. ``TemplateGeluTanhFusion``;
    8. ``TemplateLayerNormFusion``;
    9. ``TemplateLastAxesTransposeFusion``.

    :param disabled: pass or group names to skip (``PassConfig.disable``).
    """
    manager = PassManager()
    manager.register_group(common_optimizations(), COMMON_OPTIMIZATIONS)
    manager.register_pass(FullyConnectedFusion())
    manager.register_pass(ConvolutionFusion())
    manager.register_pass(SqueezeExcitationFusion())
    manager.register_pass(RMSNormFusion())
    manager.register_pass(RotateHalfFusion())
    manager.register_pass(GeluTanhFusion())
    manager.register_pass(LayerNormFusion())
    manager.register_pass(LastAxesTransposeFusion())
    manager.get_pass_config().disable(*disabled)
    return manager


def transform_model(model: Model, *, disabled: Iterable[str] = ()) -> PassManager:
    """Applies TEMPLATE's transformations to ``model`` in place (``transform_model`` in the plugin guide).

    :param model: the model to transform (``compile_model`` and ``query_model`` pass a clone).
    :param disabled: pass or group names to skip.
    :returns: the pass manager that ran, whose ``records`` and ``summary()`` say what each pass did.
    :raises ModelValidationError: when a pass leaves an invalid model (names the pass).
    """
    manager = build_pass_manager(disabled=disabled)
    manager.run_passes(model)
    return manager
