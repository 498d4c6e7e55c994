"""Hypothesis strategies that mutate models as an attacker or a broken exporter would.

ONNX models are mutated in their structure (nodes dropped, duplicated, reordered, rewired; values
renamed, also to bytes that are not UTF-8), their attributes (ints at the edges: 0, negative, ``2**62``;
other types; removed or unknown ones), their element types, their declared shapes (huge and zero
dims), their opset, their external data (offsets, lengths and locations that are not numbers, escape
the model's folder, or lie past the file) and their serialized bytes (flips, truncations, insertions).
The native format and blobs are mutated at the byte level, and the native format's JSON document too.
"""

from __future__ import annotations

import json
import struct

import onnx
from hypothesis import strategies as st
from onnx import AttributeProto, TensorProto

from hetero_sdk.blob import pack_blob, unpack_blob
from hetero_sdk.conformance.fuzz.outcome import Case
from hetero_sdk.conformance.fuzz.seeds import OnnxSeed
from hetero_sdk.serialization.container import MAGIC, pack, unpack

__all__ = ["EDGE_INTS", "blob_cases", "byte_edits", "native_cases", "onnx_cases"]

EDGE_INTS = (0, 1, 2, 3, -1, -2, -(2**31), 2**31 - 1, 2**31, 2**62, -(2**62), 100_000)
"""Integers at the edges of what attributes and dimensions may hold."""
_ODD_NAMES = ("", " ", "a b", "x/../../y", "é", "\u202e", "\x00", "0" * 300, "input", "output")
_ELEMENT_TYPES = (*tuple(v for k, v in TensorProto.DataType.items() if k != "UNDEFINED"), 0, 99)
_LOCATIONS = (
    "weights.bin", "../weights.bin", "/etc/hostname", "sub/../../weights.bin", "weights.bin\x00.txt", "",
    "missing.bin", "w" * 300, ".", "/dev/zero", "/proc/self/environ",
)  # fmt: skip
_NUMBERS = ("abc", "-4", "-1", "", "1e3", " 8", str(2**62), str(2**64), "0x10", "3.5")
_OPS = ("Relu", "Identity", "Add", "Conv", "Scan", "Loop", "If", "Reshape", "Gather", "Unknown", "")


def byte_edits(data: bytes) -> st.SearchStrategy[tuple[bytes, str]]:
    """``data`` with one byte-level edit: bits flipped, truncated, bytes inserted or overwritten."""
    size = max(len(data), 1)
    positions = st.integers(0, size - 1)
    flips = st.lists(st.tuples(positions, st.integers(1, 255)), min_size=1, max_size=8).map(
        lambda edits: (_flip(data, edits), f"flip{len(edits)}")
    )
    truncations = st.integers(0, max(len(data) - 1, 0)).map(lambda n: (data[:n], f"truncate@{n}"))
    insertions = st.tuples(positions, st.binary(min_size=1, max_size=16)).map(
        lambda pi: (data[: pi[0]] + pi[1] + data[pi[0] :], f"insert@{pi[0]}")
    )
    overwrites = st.tuples(positions, st.sampled_from([b"\xff" * 8, b"\x00" * 8, struct.pack("<q", 2**62)])).map(
        lambda pv: (data[: pv[0]] + pv[1] + data[pv[0] + len(pv[1]) :], f"overwrite@{pv[0]}")
    )
    return st.one_of(flips, truncations, insertions, overwrites)


def _flip(data: bytes, edits: list[tuple[int, int]]) -> bytes:
    out = bytearray(data)
    for position, mask in edits:
        if position < len(out):
            out[position] ^= mask
    return bytes(out)


# -- ONNX ------------------------------------------------------------------------------------------


def _copy(model: onnx.ModelProto) -> onnx.ModelProto:
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    return copy


def _value_names(graph: onnx.GraphProto) -> list[str]:
    names = [v.name for v in graph.input] + [t.name for t in graph.initializer]
    return names + [o for node in graph.node for o in node.output]


def _structure(draw: st.DrawFn, model: onnx.ModelProto) -> str:
    graph = model.graph
    nodes = graph.node
    kind = draw(st.sampled_from(["drop", "duplicate", "swap", "rewire", "rename", "op_type", "opset", "domain"]))
    if not nodes:
        kind = "opset"
    if kind == "drop":
        del nodes[draw(st.integers(0, len(nodes) - 1))]
    elif kind == "duplicate":
        nodes.append(nodes[draw(st.integers(0, len(nodes) - 1))])
    elif kind == "swap" and len(nodes) > 1:
        i, j = draw(st.integers(0, len(nodes) - 1)), draw(st.integers(0, len(nodes) - 1))
        a, b = onnx.NodeProto(), onnx.NodeProto()
        a.CopyFrom(nodes[i])
        b.CopyFrom(nodes[j])
        nodes[i].CopyFrom(b)
        nodes[j].CopyFrom(a)
    elif kind == "rewire":
        node = nodes[draw(st.integers(0, len(nodes) - 1))]
        names = [*_value_names(graph), "dangling", ""]
        target = draw(st.sampled_from(names))
        if node.input and draw(st.booleans()):
            node.input[draw(st.integers(0, len(node.input) - 1))] = target
        else:
            node.input.append(target)
    elif kind == "rename":
        old = draw(st.sampled_from(_value_names(graph) or [""]))
        new = draw(st.sampled_from(_ODD_NAMES))
        everywhere = draw(st.booleans())
        for node in nodes:
            for field in (node.input, node.output):
                for i, name in enumerate(field):
                    if name == old:
                        field[i] = new
                        if not everywhere:
                            break
        for value in [*graph.input, *graph.output, *graph.initializer]:
            if value.name == old and everywhere:
                value.name = new
        kind = f"rename{'_all' if everywhere else ''}"
    elif kind == "op_type":
        nodes[draw(st.integers(0, len(nodes) - 1))].op_type = draw(st.sampled_from(_OPS))
    elif kind == "domain":
        nodes[draw(st.integers(0, len(nodes) - 1))].domain = draw(st.sampled_from(["ai.onnx.ml", "com.x", "x" * 50]))
    else:
        if model.opset_import:
            model.opset_import[0].version = draw(st.sampled_from([1, 6, 7, 9, 11, 13, 18, 99, 2**40]))
        kind = "opset"
    return kind


def _attribute(draw: st.DrawFn, model: onnx.ModelProto) -> str:
    nodes = [n for n in model.graph.node if n.attribute] or list(model.graph.node)
    if not nodes:
        return "none"
    node = draw(st.sampled_from(nodes))
    if not node.attribute or draw(st.integers(0, 5)) == 0:
        name = draw(st.sampled_from(["axis", "keepdims", "strides", "kernel_shape", "unknown_attr", "num_scan_inputs"]))
        node.attribute.append(onnx.helper.make_attribute(name, draw(st.sampled_from(EDGE_INTS))))
        return f"add_attr:{name}"
    attr = node.attribute[draw(st.integers(0, len(node.attribute) - 1))]
    how = draw(st.sampled_from(["edge", "edge", "list", "type", "drop"]))
    if how == "drop":
        node.attribute.remove(attr)
    elif how == "type":
        new_type = draw(st.sampled_from([AttributeProto.INT, AttributeProto.FLOAT, AttributeProto.STRING,
                                         AttributeProto.INTS, AttributeProto.TENSOR]))  # fmt: skip
        attr.type = new_type
    elif how == "list" or attr.type == AttributeProto.INTS:
        values = draw(st.lists(st.sampled_from(EDGE_INTS), min_size=0, max_size=6))
        del attr.ints[:]
        attr.ints.extend(values)
        attr.type = AttributeProto.INTS
    elif attr.type == AttributeProto.FLOAT:
        attr.f = draw(st.sampled_from([0.0, -1.0, float("nan"), float("inf"), 1e30]))
    else:
        attr.i = draw(st.sampled_from(EDGE_INTS))
        attr.type = AttributeProto.INT
    return f"attr:{node.op_type}.{attr.name}:{how}"


def _types_and_shapes(draw: st.DrawFn, model: onnx.ModelProto) -> str:
    graph = model.graph
    values = [*graph.input, *graph.output, *graph.value_info]
    if draw(st.booleans()) and graph.initializer:
        tensor = draw(st.sampled_from(list(graph.initializer)))
        if draw(st.booleans()):
            tensor.data_type = draw(st.sampled_from(_ELEMENT_TYPES))
            return "initializer_dtype"
        del tensor.dims[:]
        tensor.dims.extend(draw(st.lists(st.sampled_from(EDGE_INTS), max_size=4)))
        return "initializer_dims"
    if not values:
        return "none"
    value = draw(st.sampled_from(values))
    if not value.type.HasField("tensor_type"):
        return "none"
    tensor_type = value.type.tensor_type
    if draw(st.booleans()):
        tensor_type.elem_type = draw(st.sampled_from(_ELEMENT_TYPES))
        return "value_dtype"
    dims = tensor_type.shape.dim
    if dims and draw(st.booleans()):
        dim = dims[draw(st.integers(0, len(dims) - 1))]
        if draw(st.integers(0, 3)) == 0:
            dim.dim_param = draw(st.sampled_from(["N", "", "é"]))
        else:
            dim.dim_value = draw(st.sampled_from(EDGE_INTS))
        return "declared_dim"
    tensor_type.shape.dim.add().dim_value = draw(st.sampled_from(EDGE_INTS))
    return "declared_rank"


def _external_data(draw: st.DrawFn, model: onnx.ModelProto) -> tuple[str, dict[str, bytes]]:
    """Moves an initializer's bytes to ``weights.bin``, then (mostly) spoils its entries."""
    contents = {}
    for index, tensor in enumerate(model.graph.initializer):
        try:  # an earlier mutation may have made the tensor unreadable: it is then left as it is
            contents[index] = onnx.numpy_helper.to_array(tensor).tobytes()
        except Exception:
            continue
    if not contents:
        return "none", {}
    index = draw(st.sampled_from(sorted(contents)))
    tensor, raw = model.graph.initializer[index], contents[index]
    offset = draw(st.sampled_from([0, 4096]))
    data = b"\x00" * offset + raw
    onnx.external_data_helper.set_external_data(tensor, "weights.bin", offset=offset, length=len(raw))
    tensor.ClearField("raw_data")
    for field in ("float_data", "int32_data", "int64_data", "double_data", "uint64_data", "string_data"):
        tensor.ClearField(field)
    tensor.data_location = TensorProto.EXTERNAL
    how = draw(st.sampled_from(["valid", "location", "offset", "length", "truncated", "extra_key", "missing"]))
    entries = {e.key: e for e in tensor.external_data}
    if how == "location":
        entries["location"].value = draw(st.sampled_from(_LOCATIONS))
    elif how in ("offset", "length"):
        entries[how].value = draw(st.one_of(st.sampled_from(_NUMBERS), st.sampled_from(EDGE_INTS).map(str)))
    elif how == "truncated":
        data = data[: draw(st.integers(0, max(len(data) - 1, 0)))]
    elif how == "extra_key":
        extra = tensor.external_data.add()
        extra.key, extra.value = draw(st.sampled_from([("checksum", "x"), ("location", "other.bin"), ("", "")]))
    elif how == "missing":
        return "external:missing", {}
    return f"external:{how}", {"weights.bin": data}


def _rename_bytes(draw: st.DrawFn, data: bytes, model: onnx.ModelProto) -> tuple[bytes, str]:
    """Overwrites one occurrence of a name or op type in the serialized bytes with bytes of the same
    length (so the protobuf framing still holds), often not UTF-8."""
    words = {w for w in _value_names(model.graph) if len(w) >= 1}
    words |= {n.op_type for n in model.graph.node} | {n.name for n in model.graph.node if n.name}
    words_in = sorted(w for w in words if w.encode() in data)
    if not words_in:
        return data, "rename_bytes:none"
    word = draw(st.sampled_from(words_in)).encode()
    replacement = draw(st.sampled_from([b"\xff", b"\xc3", b"\x00", b"\x80"])) * len(word)
    at = data.find(word)
    return data[:at] + replacement + data[at + len(word) :], "rename_bytes"


@st.composite
def _onnx_case(draw: st.DrawFn, seeds: tuple[OnnxSeed, ...]) -> Case:
    seed = draw(st.sampled_from(seeds))
    model = _copy(seed.model)
    labels = [seed.name]
    files: dict[str, bytes] = {}
    for _ in range(draw(st.integers(1, 2))):
        family = draw(st.sampled_from(["structure", "attribute", "attribute", "types", "external", "none"]))
        try:  # a mutation that an earlier one made impossible (an unreadable tensor) is skipped
            if family == "structure":
                labels.append(_structure(draw, model))
            elif family == "attribute":
                labels.append(_attribute(draw, model))
            elif family == "types":
                labels.append(_types_and_shapes(draw, model))
            elif family == "external" and not files:
                label, files = _external_data(draw, model)
                labels.append(label)
        except (ValueError, TypeError, KeyError, IndexError, AttributeError):
            labels.append(f"{family}:skipped")
    data = model.SerializeToString()
    tail = draw(st.sampled_from(["none", "none", "none", "bytes", "rename_bytes"]))
    if tail == "bytes":
        data, label = draw(byte_edits(data))
        labels.append(label)
    elif tail == "rename_bytes":
        data, label = _rename_bytes(draw, data, model)
        labels.append(label)
    return Case("onnx", data, tuple(sorted(files.items())), label=" ".join(labels))


def onnx_cases(seeds: list[OnnxSeed]) -> st.SearchStrategy[Case]:
    """Mutated ONNX models (with external data files where the mutation made some) from ``seeds``."""
    return _onnx_case(tuple(seeds))


# -- the native format and blobs ---------------------------------------------------------------------


def _document_edit(draw: st.DrawFn, data: bytes) -> tuple[bytes, str]:
    """Edits a value of the native format's JSON document in place (keeping its length when it can),
    so that the sha256 is recomputed by nobody: the reader must refuse or read a consistent model."""
    start, end = data.find(b"{"), data.rfind(b"}")
    if start < 0 or end < start:
        return data, "json:none"
    try:
        json.loads(data[start : end + 1])
    except ValueError:
        return data, "json:none"
    numbers = [i for i in range(start, end) if data[i : i + 1].isdigit()]
    if not numbers:
        return data, "json:none"
    at = draw(st.sampled_from(numbers))
    return data[:at] + draw(st.sampled_from([b"9", b"0", b"-", b"e", b'"'])) + data[at + 1 :], "json:digit"


_JSON_VALUES: tuple[object, ...] = (
    *EDGE_INTS,
    -1.5,
    1e308,
    "",
    "\x00",
    "é",
    "../x",
    "__import__('os')",
    None,
    True,
    [],
    {},
    [0] * 64,
)


def _json_paths(tree: object, path: tuple[object, ...] = (), out: list | None = None) -> list[tuple[object, ...]]:
    """Every path (keys and indices) to a value of a JSON tree, the first 2,000."""
    out = [] if out is None else out
    if len(out) < 2000:
        out.append(path)
        items = tree.items() if isinstance(tree, dict) else enumerate(tree) if isinstance(tree, list) else ()
        for key, child in items:
            _json_paths(child, (*path, key), out)
    return out


def _json_tree_edit(draw: st.DrawFn, document: bytes) -> tuple[bytes, str]:
    """A JSON document with one value replaced by an edge value, or removed."""
    try:
        tree = json.loads(document)
    except ValueError:
        return document, "json:none"
    paths = [p for p in _json_paths(tree) if p]
    if not paths:
        return document, "json:none"
    path = draw(st.sampled_from(paths))
    parent = tree
    for key in path[:-1]:
        parent = parent[key]  # type: ignore[index]
    if draw(st.integers(0, 4)) == 0:
        del parent[path[-1]]  # type: ignore[attr-defined]
        how = "drop"
    else:
        parent[path[-1]] = draw(st.sampled_from(_JSON_VALUES))  # type: ignore[index]
        how = "set"
    return json.dumps(tree).encode(), f"json:{how}:{'/'.join(map(str, path))[-80:]}"


def _resealed_native(draw: st.DrawFn, data: bytes) -> tuple[bytes, str]:
    """The native bytes with an edit of the JSON document and the header's checksum made right again,
    as a broken exporter would write them: only the reader's own checks stand in the way."""
    document, weights, _ = unpack(data, "seed")
    edited, label = _json_tree_edit(draw, bytes(document))
    return pack(edited, bytes(weights)), f"resealed {label}"


@st.composite
def _native_case(draw: st.DrawFn, seeds: tuple[tuple[str, bytes], ...]) -> Case:
    name, data = draw(st.sampled_from(seeds))
    how = draw(st.sampled_from(["resealed", "resealed", "document", "bytes"]))
    if how == "resealed":
        data, label = _resealed_native(draw, data)
    elif how == "document":
        data, label = _document_edit(draw, data)
    else:
        data, label = draw(byte_edits(data))
    return Case("native", data, label=f"{name} {label}")


def native_cases(seeds: list[tuple[str, bytes]]) -> st.SearchStrategy[Case]:
    """Native-format bytes (:func:`~hetero_sdk.serialization.model_to_bytes`) with byte and JSON edits,
    most with the checksum made right again."""
    return _native_case(tuple(seeds))


def _resealed_blob(draw: st.DrawFn, blob: bytes) -> tuple[bytes, str]:
    """The blob with one frame edited (a native model's or a JSON header's contents, else its bytes)
    and the frame checksums made right again."""
    (name_length,) = struct.unpack_from("<H", blob, 10)
    owner = blob[16 : 16 + name_length].decode()
    frames = unpack_blob(blob, owner)
    name = draw(st.sampled_from(sorted(frames)))
    payload = frames[name]
    if payload.startswith(MAGIC):
        payload, label = _resealed_native(draw, payload)
    elif payload.startswith(b"{"):
        payload, label = _json_tree_edit(draw, payload)
    elif payload.startswith(b"HSDKBLOB"):  # a HETERO submodel's own blob
        payload, label = _resealed_blob(draw, payload)
    else:
        payload, label = draw(byte_edits(payload))
    return pack_blob(owner, {**frames, name: payload}), f"resealed {name}: {label}"


@st.composite
def _blob_case(draw: st.DrawFn, seeds: tuple[tuple[str, bytes], ...]) -> Case:
    device, blob = draw(st.sampled_from(seeds))
    if draw(st.integers(0, 3)) == 0:
        data, label = draw(byte_edits(blob))
    else:
        data, label = _resealed_blob(draw, blob)
    return Case("blob", data, device=device, label=f"{device} {label}")


def blob_cases(seeds: list[tuple[str, bytes]]) -> st.SearchStrategy[Case]:
    """Exported blobs, as (device, bytes), with byte edits or resealed edits of a frame, imported on
    their device."""
    return _blob_case(tuple(seeds))
