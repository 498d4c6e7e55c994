"""Reading OpenVINO IR (``model.xml`` + ``model.bin``, IR v10 and v11) into a :class:`~hetero_sdk.Model`.

The XML is parsed by :func:`~hetero_sdk.frontend.ir.safe_xml.parse_xml` (no DOCTYPE, no entities);
layers become nodes of the SDK's op of the same type (names as :mod:`~hetero_sdk.frontend.ir.vocabulary`
maps them) when the layer's version is the SDK's or one whose semantics are a subset of it; Const data
are read-only views of the memory-mapped ``.bin``. Every defect is a
:class:`~hetero_sdk.errors.ModelFormatError` naming the layer (id, name, type, version), the attribute
or the byte offset; an op type the SDK does not define is an
:class:`~hetero_sdk.errors.UnknownOpTypeError`.
"""

from __future__ import annotations

import math
import mmap
import os
import xml.etree.ElementTree as ET
from collections import deque
from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np

from hetero_sdk.element_type import Type
from hetero_sdk.errors import ModelFormatError, UnknownOpTypeError
from hetero_sdk.extensions import load_installed
from hetero_sdk.frontend.ir.decompression import decompress_in_f32
from hetero_sdk.frontend.ir.safe_xml import parse_xml
from hetero_sdk.frontend.ir.vocabulary import (
    ATTR_NAMES,
    IR_ONLY_ATTRS,
    OLDER_DEFAULTS,
    OLDER_VERSIONS,
    OP_NAMES,
    PRECISIONS,
    parse_value,
    port_rt_info_key,
    split_names,
)
from hetero_sdk.graph.model import Model
from hetero_sdk.graph.node import Node, Output
from hetero_sdk.ops import OPS
from hetero_sdk.ops.basic import constant

__all__ = ["IR_VERSIONS", "read_ir"]

IR_VERSIONS = (10, 11)
"""The IR versions read."""


def read_ir(path: str | os.PathLike[str], weights: str | os.PathLike[str] | None = None) -> Model:
    """Reads an IR model: ``path`` (``model.xml``) and its weights (``model.bin`` beside it by default).

    :raises ModelFormatError: naming the file and the element, attribute or byte offset at fault.
    :raises UnknownOpTypeError: for a layer type the SDK does not define, naming the layer.
    """
    path = Path(path)
    source = str(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ModelFormatError(f"{source}: cannot read the IR file: {exc.strerror or exc}") from None
    bin_path = Path(weights) if weights is not None else path.with_suffix(".bin")
    return _IRReader(parse_xml(data, source), source, bin_path).model()


class _IRReader:
    def __init__(self, root: ET.Element, source: str, bin_path: Path) -> None:
        self.root = root
        self.source = source
        self.bin_path = bin_path
        self._bin: bytes | mmap.mmap | None = None

    def error(self, where: str, message: str) -> ModelFormatError:
        return ModelFormatError(f"{self.source}: {where}: {message}")

    # -- the document -------------------------------------------------------------------------------

    def model(self) -> Model:
        if self.root.tag != "net":
            raise self.error(f"<{self.root.tag}>", "the root element must be <net>; this is not OpenVINO IR")
        version = self.root.get("version", "")
        if not version.isdigit() or int(version) not in IR_VERSIONS:
            raise self.error("<net version>", f"IR version {version!r} is not read; hetero-sdk reads IR v10 and v11")
        layers = self._layers()
        order = self._order(layers)
        built: dict[str, Node] = {}
        port_index: dict[str, dict[str, int]] = {}
        parameters, results, sinks = [], [], []
        for layer_id in order:
            layer = layers[layer_id]
            node, outputs = self._node(layer, built, port_index)
            built[layer_id] = node
            port_index[layer_id] = outputs
            if node.type_name == "Parameter":
                parameters.append(node)
            elif node.type_name == "Result":
                results.append(node)
            elif node.type_name == "Assign":
                sinks.append(node)
        by_order = {id(layers[k]): i for i, k in enumerate(layers)}
        parameters.sort(key=lambda n: by_order[id(layers[self._id_of(built, n)])])
        results.sort(key=lambda n: by_order[id(layers[self._id_of(built, n)])])
        try:
            model = Model(results, parameters, self.root.get("name"), sinks=sinks)
        except Exception as exc:
            raise self.error("<net>", f"the graph is invalid: {exc}") from exc
        rt = self.root.find("rt_info")
        if rt is not None:
            model.get_rt_info().update(_model_rt_info(rt))
        return model

    @staticmethod
    def _id_of(built: dict[str, Node], node: Node) -> str:
        return next(k for k, v in built.items() if v is node)

    def _layers(self) -> dict[str, ET.Element]:
        container = self.root.find("layers")
        if container is None:
            raise self.error("<net>", "has no <layers> element")
        layers: dict[str, ET.Element] = {}
        for i, layer in enumerate(container):
            if layer.tag != "layer":
                raise self.error(f"<layers> child {i}", f"is <{layer.tag}>, not <layer>")
            for key in ("id", "type"):
                if not layer.get(key):
                    raise self.error(f"layer {i} ({layer.get('name', '?')!r})", f"has no '{key}' attribute")
            if layer.get("id") in layers:
                raise self.error(f"layer id {layer.get('id')}", "another layer has this id")
            layers[layer.get("id", "")] = layer
        return layers

    def _order(self, layers: dict[str, ET.Element]) -> list[str]:
        """Layer ids in a topological order of the edges; the edges checked and kept by target."""
        self.edges: dict[tuple[str, str], tuple[str, str]] = {}
        successors: dict[str, list[str]] = {k: [] for k in layers}
        waiting = dict.fromkeys(layers, 0)
        container = self.root.find("edges")
        for i, edge in enumerate(container if container is not None else []):
            ends = [edge.get(k) for k in ("from-layer", "from-port", "to-layer", "to-port")]
            if any(e is None for e in ends):
                raise self.error(f"edge {i}", "needs from-layer, from-port, to-layer and to-port")
            src, src_port, dst, dst_port = (str(e) for e in ends)
            for layer_id, port, side in ((src, src_port, "output"), (dst, dst_port, "input")):
                if layer_id not in layers:
                    raise self.error(f"edge {i}", f"names layer {layer_id}, which does not exist")
                if not any(p.get("id") == port for p in _ports(layers[layer_id], side)):
                    raise self.error(
                        f"edge {i}", f"names {side} port {port} of {_label(layers[layer_id])}, which has no such port"
                    )
            if (dst, dst_port) in self.edges:
                raise self.error(f"edge {i}", f"input port {dst_port} of {_label(layers[dst])} has two producers")
            self.edges[(dst, dst_port)] = (src, src_port)
            successors[src].append(dst)
            waiting[dst] += 1
        ready = deque(k for k, n in waiting.items() if n == 0)
        order = []
        while ready:
            k = ready.popleft()
            order.append(k)
            for s in successors[k]:
                waiting[s] -= 1
                if waiting[s] == 0:
                    ready.append(s)
        if len(order) != len(layers):
            stuck = next(k for k, n in waiting.items() if n > 0)
            raise self.error(_label(layers[stuck]), "lies on a cycle of edges")
        return order

    # -- layers ---------------------------------------------------------------------------------------

    def _node(
        self, layer: ET.Element, built: dict[str, Node], port_index: dict[str, dict[str, int]]
    ) -> tuple[Node, dict[str, int]]:
        label = _label(layer)
        ir_type, version = layer.get("type", ""), layer.get("version", "")
        type_name = OP_NAMES.get(ir_type, ir_type)
        if type_name not in OPS:
            load_installed()  # an installed extension may define it
        if type_name not in OPS:
            raise UnknownOpTypeError(
                f"{self.source}: {label}: the op type {ir_type} ({version}) is not defined by hetero-sdk"
            )
        if layer.find("body") is not None or layer.find("then_body") is not None:
            raise UnknownOpTypeError(
                f"{self.source}: {label}: layers with sub-graphs ({ir_type}) are not read from IR yet; "
                "convert the source model (ONNX) instead"
            )
        op = OPS.get(type_name)
        if version != op.version and version not in OLDER_VERSIONS.get(type_name, ()):
            raise ModelFormatError(
                f"{self.source}: {label}: {ir_type} of {version} is not read: its semantics differ from the "
                f"{op.version} op hetero-sdk defines; convert the model with an OpenVINO that writes {op.version}"
            )
        inputs: list[Output] = []
        for port in _ports(layer, "input"):
            source = self.edges.get((layer.get("id", ""), port.get("id", "")))
            if source is None:
                raise self.error(f"{label} input port {port.get('id')}", "has no edge feeding it")
            producer = built[source[0]]
            inputs.append(producer.output(port_index[source[0]][source[1]]))
        data = layer.find("data")
        attrs = dict(data.attrib) if data is not None else {}
        if type_name == "Constant":
            node = constant(self._const(attrs, label), name=layer.get("name"), share=True)
        else:
            node = self._build(type_name, ir_type, inputs, attrs, layer, label)
        rt = layer.find("rt_info")
        if rt is not None:
            node.get_rt_info().update(_layer_rt_info(rt))
        node = decompress_in_f32(node)
        outputs = _ports(layer, "output")
        if len(outputs) > node.get_output_size():
            raise self.error(label, f"lists {len(outputs)} output ports; {ir_type} has {node.get_output_size()}")
        index = {}
        for i, port in enumerate(outputs):
            index[port.get("id", "")] = i
            self._check_port(node, i, port, label)
        return node, index

    def _build(
        self, type_name: str, ir_type: str, inputs: list[Output], text: dict[str, str], layer: ET.Element, label: str
    ) -> Node:
        op = OPS.get(type_name)
        renames = ATTR_NAMES.get(type_name, {})
        attrs: dict[str, Any] = {}
        for key, value in text.items():
            name = renames.get(key, key)
            spec = op.attr(name)
            if spec is None:
                if key in IR_ONLY_ATTRS.get(type_name, ()) and value.lower() in ("false", "0"):
                    continue
                raise self.error(f"{label} attribute '{key}'", f"{ir_type} in hetero-sdk has no attribute '{key}'")
            try:
                attrs[name] = parse_value(spec, value)
            except ValueError as exc:
                raise self.error(f"{label} attribute '{key}'", f"{value!r} does not read: {exc}") from None
        older = OLDER_DEFAULTS.get((type_name, layer.get("version", "")))
        if older is not None:
            attrs.update(older(attrs))
        if type_name == "Parameter":
            for key in ("shape", "element_type"):
                if key not in text:
                    raise self.error(label, f"has no '{key}' data attribute")
        try:
            return Node(type_name, inputs, attrs, layer.get("name"))
        except Exception as exc:  # the file is untrusted: any failure to build is a format error here
            raise self.error(label, f"the layer does not build: {exc}") from exc

    def _check_port(self, node: Node, index: int, port: ET.Element, label: str) -> None:
        where = f"{label} output port {port.get('id')}"
        try:
            dims = [int((d.text or "").strip()) for d in port.findall("dim")]
        except ValueError:
            raise self.error(where, "a <dim> is not an integer") from None
        shape = node.get_output_partial_shape(index)
        if len(dims) != shape.rank or not shape.compatible(dims):
            raise self.error(where, f"the file says shape {dims}, the op infers {list(shape.dims)}")
        precision = port.get("precision")
        expected = PRECISIONS.get(precision.upper()) if precision else None
        if expected is not None and expected != node.get_output_element_type(index):
            raise self.error(
                where, f"the file says precision {precision}, the op infers {node.get_output_element_type(index).value}"
            )
        names = port.get("names")
        if names:
            node.output(index).set_names(split_names(names))
        rt = port.find("rt_info")
        if rt is not None:
            node.get_rt_info()[port_rt_info_key(index)] = _layer_rt_info(rt)

    # -- weights --------------------------------------------------------------------------------------

    def _const(self, attrs: dict[str, str], label: str) -> np.ndarray:
        for key in ("element_type", "shape", "offset", "size"):
            if key not in attrs:
                raise self.error(label, f"a Const needs the data attribute '{key}'")
        try:
            element_type = Type.of(attrs["element_type"])
        except (TypeError, ValueError):
            raise self.error(
                f"{label} attribute 'element_type'", f"{attrs['element_type']!r} is no element type"
            ) from None
        try:
            shape = [int(d) for d in attrs["shape"].split(",") if d.strip()]
            offset, size = int(attrs["offset"]), int(attrs["size"])
        except ValueError:
            raise self.error(label, "shape, offset and size must be non-negative integers") from None
        if min([offset, size, *shape], default=0) < 0:
            raise self.error(label, "shape, offset and size must be non-negative integers")
        if element_type is Type.string:
            raise self.error(label, "string Consts are not read from IR")
        count = math.prod(shape)
        needed = math.ceil(count * element_type.bitwidth / 8)
        if size != needed:
            raise self.error(
                label, f"size is {size} bytes; {count} {element_type.value} element(s) of shape {shape} take {needed}"
            )
        blob = self._weights()
        if offset + size > len(blob):
            raise self.error(
                label,
                f"bytes {offset}..{offset + size} lie beyond the end of {self.bin_path} ({len(blob)} bytes)",
            )
        if element_type.bitwidth == 4:
            return _unpack_nibbles(np.frombuffer(blob, np.uint8, size, offset), count, element_type).reshape(shape)
        array = np.frombuffer(blob, element_type.numpy, count, offset) if count else np.zeros(0, element_type.numpy)
        if element_type is Type.boolean:
            array = np.frombuffer(blob, np.uint8, count, offset).astype(bool)
        array = array.reshape(shape)
        if array.flags.writeable:
            array.setflags(write=False)
        return array

    def _weights(self) -> bytes | mmap.mmap:
        if self._bin is None:
            try:
                with self.bin_path.open("rb") as file:
                    if os.fstat(file.fileno()).st_size == 0:
                        self._bin = b""
                    else:
                        self._bin = mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ)
            except OSError as exc:
                raise ModelFormatError(
                    f"{self.bin_path}: the weights file cannot be read ({exc.strerror or exc}); put it beside "
                    f"{Path(self.source).name} or pass weights="
                ) from None
        return self._bin


def _unpack_nibbles(packed: np.ndarray, count: int, element_type: Type) -> np.ndarray:
    """4-bit values as IR packs them: two per byte, the first in the low nibble."""
    low, high = packed & 0x0F, packed >> 4
    values = np.stack([low, high], axis=-1).reshape(-1)[:count].astype(np.int8)
    if element_type is Type.i4:
        values = np.where(values > 7, values - 16, values).astype(np.int8)
    out = values.astype(ml_dtypes.int4 if element_type is Type.i4 else ml_dtypes.uint4)
    out.setflags(write=False)
    return out


def _ports(layer: ET.Element, side: str) -> list[ET.Element]:
    group = layer.find(side)
    return [] if group is None else group.findall("port")


def _label(layer: ET.Element) -> str:
    return (
        f"layer {layer.get('id')} ({layer.get('name', '')!r}, {layer.get('type', '?')} "
        f"{layer.get('version', '')})".replace(" )", ")")
    )


def _layer_rt_info(element: ET.Element) -> dict[str, Any]:
    info: dict[str, Any] = {}
    for attribute in element.findall("attribute"):
        name = attribute.get("name")
        if not name:
            continue
        extra = {k: v for k, v in attribute.attrib.items() if k not in ("name", "version")}
        info[name] = extra.get(name if name in extra else "value", "") if len(extra) <= 1 else extra
    return info


def _model_rt_info(element: ET.Element) -> dict[str, Any]:
    info: dict[str, Any] = {}
    for child in element:
        key = child.get("name") or child.tag if child.tag == "info" else child.tag
        info[key] = _model_rt_info(child) if len(child) else child.get("value", "")
    return info
