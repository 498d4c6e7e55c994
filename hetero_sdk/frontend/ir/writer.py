"""Writing a :class:`~hetero_sdk.Model` as OpenVINO IR v11: ``model.xml`` (the ``<net>``: layers with
type, version, data attributes, ports with precision and dims, edges, rt_info) and ``model.bin`` (every
Constant's bytes, 4-bit types packed two to a byte, low nibble first)."""

from __future__ import annotations

import os
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import numpy as np

from hetero_sdk.element_type import Type
from hetero_sdk.errors import ModelFormatError, UnsupportedOperationError
from hetero_sdk.frontend.ir.vocabulary import (
    WRITTEN_VERSIONS,
    format_value,
    ir_attr_name,
    ir_type_name,
    join_names,
    port_rt_info_key,
    precision_of,
)
from hetero_sdk.graph.model import Model
from hetero_sdk.graph.node import Node

__all__ = ["save_ir"]

_ALIGNMENT = 8
_XML_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*")


def save_ir(model: Model, path: str | os.PathLike[str]) -> None:
    """Writes ``model`` as ``path`` (``model.xml``) and ``model.bin`` beside it.

    :raises UnsupportedOperationError: listing every node whose op has no IR form (an ONNX-only op,
        a sub-graph op), by name and type.
    :raises ModelFormatError: for an attribute or rt_info value IR cannot hold, naming the node.
    """
    path = Path(path)
    # Parameters first and Results last, each in the model's order: readers (OpenVINO's and ours) take
    # the order of inputs and outputs from the order of the layers
    boundary = {id(n) for n in (*model.get_parameters(), *model.get_results())}
    inner = [n for n in model.get_ordered_ops() if id(n) not in boundary]
    nodes = [*model.get_parameters(), *inner, *model.get_results()]
    refused = [n for n in nodes if _no_ir_form(n)]
    if refused:
        listed = ", ".join(f"'{n.friendly_name}' ({n.type_name} {n.version})" for n in refused)
        raise UnsupportedOperationError(
            f"{path}: these nodes have no OpenVINO IR form: {listed}; save as .json (hetero-sdk's format) instead"
        )
    ids = {id(n): i for i, n in enumerate(nodes)}
    net = ET.Element("net", {"name": model.friendly_name or "model", "version": "11"})
    layers = ET.SubElement(net, "layers")
    edges = ET.SubElement(net, "edges")
    weights = bytearray()
    for node in nodes:
        layer = ET.SubElement(
            layers,
            "layer",
            {"id": str(ids[id(node)]), "name": node.friendly_name, "type": ir_type_name(node.type_name),
             "version": WRITTEN_VERSIONS.get(node.type_name, node.version)},
        )  # fmt: skip
        data = _data(node, weights, str(path))
        if data:
            ET.SubElement(layer, "data", data)
        ports = {port_rt_info_key(i) for i in range(node.get_output_size())}
        _rt_info(ET.SubElement(layer, "rt_info"), {k: v for k, v in node.get_rt_info().items() if k not in ports})
        count = node.get_input_size()
        if count:
            group = ET.SubElement(layer, "input")
            for i, value in enumerate(node.input_values()):
                _port(group, i, value.element_type, value.partial_shape.dims, None)
                source_port = value.node.get_input_size() + value.index
                ends = {
                    "from-layer": ids[id(value.node)],
                    "from-port": source_port,
                    "to-layer": ids[id(node)],
                    "to-port": i,
                }
                ET.SubElement(edges, "edge", {k: str(v) for k, v in ends.items()})
        if node.get_output_size() and node.type_name != "Result":
            group = ET.SubElement(layer, "output")
            for i, out in enumerate(node.outputs()):
                port = _port(group, count + i, out.element_type, out.partial_shape.dims, out.get_names())
                port_info = node.get_rt_info().get(port_rt_info_key(i))
                if isinstance(port_info, dict) and port_info:
                    _rt_info(ET.SubElement(port, "rt_info"), port_info)
    _model_rt_info(ET.SubElement(net, "rt_info"), model.get_rt_info())
    ET.indent(net, "\t")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(ET.tostring(net, encoding="utf-8", xml_declaration=True) + b"\n")
    path.with_suffix(".bin").write_bytes(bytes(weights))


def _no_ir_form(node: Node) -> bool:
    return not node.version.startswith("opset") or any(
        isinstance(v, Model) or (isinstance(v, np.ndarray) and node.type_name != "Constant")
        for v in node.attrs.values()
    )


def _data(node: Node, weights: bytearray, source: str) -> dict[str, str]:
    if node.type_name == "Constant":
        return _constant(node, weights, source)
    data = {}
    for name, value in node.attrs.items():
        try:
            data[ir_attr_name(node.type_name, name)] = format_value(value)
        except TypeError as exc:
            raise ModelFormatError(
                f"{source}: node '{node.friendly_name}' ({node.type_name}) attribute '{name}': {exc}"
            ) from None
    return data


def _constant(node: Node, weights: bytearray, source: str) -> dict[str, str]:
    value = node.attrs["value"]
    element_type = Type.of(value.dtype)
    if element_type is Type.string:
        raise ModelFormatError(f"{source}: Constant '{node.friendly_name}' holds strings, which IR Consts cannot")
    weights.extend(b"\0" * (-len(weights) % _ALIGNMENT))
    offset = len(weights)
    if element_type.bitwidth == 4:
        nibbles = np.asarray(value).astype(np.int8).reshape(-1).astype(np.uint8) & 0x0F
        if nibbles.size % 2:
            nibbles = np.append(nibbles, np.uint8(0))
        weights.extend((nibbles[0::2] | (nibbles[1::2] << 4)).astype(np.uint8).tobytes())
    else:
        weights.extend(np.ascontiguousarray(value).tobytes())
    return {
        "element_type": element_type.value,
        "shape": ",".join(str(d) for d in value.shape),
        "offset": str(offset),
        "size": str(len(weights) - offset),
    }


def _port(
    group: ET.Element, port_id: int, element_type: Type, dims: tuple[int, ...], names: set[str] | None
) -> ET.Element:
    attrs = {"id": str(port_id), "precision": precision_of(element_type)}
    if names:
        attrs["names"] = join_names(names)
    port = ET.SubElement(group, "port", attrs)
    for d in dims:
        ET.SubElement(port, "dim").text = str(d)
    return port


def _rt_info(element: ET.Element, info: dict[str, Any]) -> None:
    """Layer or port rt_info: ``<attribute name= version= value=>``; a layout's field is ``layout``."""
    for key, value in info.items():
        if isinstance(value, dict):
            attrs = {"name": key, "version": "0", **{k: _text(v) for k, v in value.items()}}
        else:
            attrs = {"name": key, "version": "0", ("layout" if key == "layout" else "value"): _text(value)}
        ET.SubElement(element, "attribute", attrs)


def _model_rt_info(element: ET.Element, info: dict[str, Any]) -> None:
    for key, value in info.items():
        child = (
            ET.SubElement(element, key) if _XML_NAME.fullmatch(key) else ET.SubElement(element, "info", {"name": key})
        )
        if isinstance(value, dict):
            _model_rt_info(child, value)
        else:
            child.set("value", _text(value))


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return ",".join(str(v) for v in value)
    return str(value)
