"""Compressed weights computed as OpenVINO computes them: NNCF writes int8/int4 weights as
``Const(u8/i8/u4/i4) -> Convert(f16) -> Subtract(zero point) -> Multiply(scale) -> Convert(f32)``, and
OpenVINO's devices decompress such a constant sub-graph straight to f32 (the f16 is a storage type).
:func:`decompress_in_f32` rebuilds such a sub-graph with its arithmetic in f32, the weights themselves
left in their compressed type (and in the memory-mapped ``.bin``), so results match OpenVINO's."""

from __future__ import annotations

from hetero_sdk.element_type import Type
from hetero_sdk.graph.node import Node, Output
from hetero_sdk.ops.basic import convert

__all__ = ["decompress_in_f32"]

_ARITHMETIC = frozenset({"Subtract", "Multiply", "Add", "Divide"})


def decompress_in_f32(node: Node) -> Node:
    """``node`` itself, or, for a ``Convert`` f16 -> f32 of a constant sub-graph that computes in f16, the
    same sub-graph computing in f32 (the returned node takes ``node``'s name and rt_info)."""
    if node.type_name != "Convert" or node.attrs["destination_type"] is not Type.f32:
        return node
    source = node.input_value(0)
    if source.element_type is not Type.f16 or source.index != 0 or not _computes_on_constants(source.node):
        return node
    rebuilt = _in_f32(source, {}).node
    rebuilt.friendly_name = node.friendly_name
    rebuilt.get_rt_info().update(node.get_rt_info())
    return rebuilt


def _computes_on_constants(node: Node) -> bool:
    """Whether ``node`` depends on Constants only and does f16 arithmetic on the way."""
    seen: set[int] = set()
    stack, arithmetic = [node], False
    while stack:
        current = stack.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        if current.type_name == "Parameter" or (current.type_name != "Constant" and current.get_output_size() != 1):
            return False
        arithmetic |= current.type_name in _ARITHMETIC and current.get_output_element_type(0) is Type.f16
        stack.extend(v.node for v in current.input_values())
    return arithmetic


def _in_f32(value: Output, memo: dict[int, Output]) -> Output:
    node = value.node
    if id(node) in memo:
        return memo[id(node)]
    if node.type_name == "Constant":
        out = (
            convert(node, Type.f32, name=f"{node.friendly_name}/f32").output(0)
            if value.element_type is Type.f16
            else value
        )
    elif node.type_name == "Convert" and node.attrs["destination_type"] is Type.f16:
        out = convert(_in_f32(node.input_value(0), memo), Type.f32, name=node.friendly_name).output(0)
    else:
        inputs = [_in_f32(v, memo) for v in node.input_values()]
        rebuilt = Node(node.op, inputs, node.attrs, node.friendly_name)
        rebuilt.get_rt_info().update(node.get_rt_info())
        out = rebuilt.output(0)
    memo[id(node)] = out
    return out
