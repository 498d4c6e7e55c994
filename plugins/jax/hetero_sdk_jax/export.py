"""Exported XLA models: ``jax.export`` StableHLO inside a checksummed :func:`~hetero_sdk.plugin.pack_blob`.

Frames:

- ``header``: JSON with the format version, the model's name, the platform, whether 64-bit types are
  on, the compute precision, the compile configuration, the inputs and outputs (tensor names, friendly
  names, element types, shapes), the executables (frame name and input shapes) and the extension ops
  the model uses (``extensions``: op, extension, distribution; absent in older blobs), which must be
  defined where the blob is imported, and the native kernels its executables call (``native_kernels``:
  target names of :data:`hetero_sdk_jax.native.KERNELS`; absent in older blobs), which import builds
  and registers before it reads an executable;
- ``executable.<i>``: one serialized ``jax.export.Exported`` per compiled input-shape combination;
- ``model``: the graph in the native format, only for models with dynamic input dimensions (new
  input shapes are compiled from it after import).

Importing parses JSON and calls ``jax.export.deserialize`` only: nothing from the blob is executed
as Python, and the original graph is not traced again for the shapes the blob holds. A blob names native
kernels but never carries or chooses code: only this package's own kernel sources are built, and an
executable calling any other custom call target is refused (:mod:`hetero_sdk_jax.stablehlo_check`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import jax.export
import numpy as np
from hetero_sdk import Model, Type, opset
from hetero_sdk import properties as props
from hetero_sdk.errors import BlobFormatError, UnknownOpTypeError, UnsupportedOperationError
from hetero_sdk.extensions import require_extension_ops, used_extension_ops
from hetero_sdk.plugin import check_header_fields, model_from_bytes, model_to_bytes, pack_blob, rt_info, unpack_blob
from jax._src.interpreters.mlir import make_ir_context  # the context JAX reads StableHLO in (no public one)
from jax.extend import mlir as jax_mlir

from hetero_sdk_jax.native import ENV_VAR, KERNELS, BuildError, register
from hetero_sdk_jax.stablehlo_check import StableHloChecker, custom_call_targets

if TYPE_CHECKING:
    from hetero_sdk_jax.compiled_model import Shapes, XlaCompiledModel

__all__ = ["BLOB_DEVICE", "FORMAT_VERSION", "ImportedBlob", "export_blob", "import_blob"]

BLOB_DEVICE = "XLA"
"""The device name blobs carry: XLA, GPU and TPU share one format; the header names the platform."""
FORMAT_VERSION = 1


@dataclass(frozen=True)
class ImportedBlob:
    """What a blob holds, checked: the model (graph or stand-in), its executables and settings."""

    model: Model
    lowerable: bool
    executables: dict[Shapes, jax.export.Exported]
    x64: bool
    config: dict[str, Any]


def export_blob(compiled: XlaCompiledModel) -> bytes:
    """Packs ``compiled`` (every executable it holds) into a blob."""
    model = compiled.model
    executables = compiled.exported_executables()
    header = {
        "format": FORMAT_VERSION,
        "model": model.friendly_name,
        "platform": compiled.backend.platform,
        "x64": compiled.x64,
        "precision": compiled.precision.value,
        "config": {k: v.value if isinstance(v, Type) else v for k, v in _config(compiled).items()},
        "inputs": [_port(p.output(0), p.friendly_name) for p in model.get_parameters()],
        "outputs": [_port(r.output(0), r.friendly_name) for r in model.get_results()],
        "executables": [
            {"frame": f"executable.{i}", "input_shapes": [list(s) for s in shapes]}
            for i, shapes in enumerate(executables)
        ],
        "graph": (not compiled.is_static or compiled.by_value is not None) and compiled.lowerable,
        "extensions": used_extension_ops(model),
    }
    header["native_kernels"] = sorted({t for e in executables.values() for t in _targets(e)})
    frames = {"header": json.dumps(header, sort_keys=True).encode()}
    for i, exported in enumerate(executables.values()):
        try:
            frames[f"executable.{i}"] = bytes(exported.serialize())
        except KeyError as exc:  # jax.export has no code for some dtypes (int2, uint2)
            raise UnsupportedOperationError(
                f"XLA cannot export model '{model.friendly_name}': jax.export cannot serialize an input or "
                f"output of dtype {exc.args[0] if exc.args else '?'}; convert such inputs and outputs to a "
                "wider type in the model (Convert), or export it from TEMPLATE"
            ) from None
    if header["graph"]:
        frames["model"] = model_to_bytes(model)
    return pack_blob(BLOB_DEVICE, frames)


def import_blob(blob: bytes, platform: str) -> ImportedBlob:
    """Unpacks and checks a blob for a device on ``platform``.

    :raises BlobFormatError: for a truncated, corrupted, foreign, newer or malformed blob, or one
        exported for another platform.
    """
    frames = unpack_blob(blob, BLOB_DEVICE)
    if "header" not in frames:
        raise BlobFormatError("XLA blob lacks its 'header' frame; export the model again")
    try:
        header = json.loads(frames["header"])
    except ValueError as exc:
        raise BlobFormatError(f"XLA blob frame 'header' is not JSON: {exc}") from exc
    _check_header(header, platform)
    require_extension_ops(header.get("extensions", []), "XLA blob header field 'extensions'")
    kernels = _register_native_kernels(header.get("native_kernels", []))
    try:
        executables, names = {}, {}
        for entry in header["executables"]:
            shapes = tuple(tuple(shape) for shape in entry["input_shapes"])
            if shapes in executables:
                raise BlobFormatError(
                    f"XLA blob header field 'executables' holds input shapes {entry['input_shapes']} twice"
                )
            executables[shapes] = _deserialize(frames, entry["frame"], kernels)
            names[shapes] = entry["frame"]
        if header["graph"]:
            if "model" not in frames:
                raise BlobFormatError("XLA blob of a dynamic model lacks its 'model' frame")
            model = model_from_bytes(frames["model"], source="XLA blob")
        else:
            model = _stand_in(header)
        _check_signature(header, executables, names)
        return ImportedBlob(model, header["graph"], executables, header["x64"], header["config"])
    except (BlobFormatError, UnknownOpTypeError):  # the latter: the 'model' frame uses an op nobody defines
        raise
    except Exception as exc:  # a header that passed the checks and still fails: the blob is crafted
        raise BlobFormatError(f"XLA blob is malformed: {type(exc).__name__}: {exc}") from exc


def _check_header(header: Any, platform: str) -> None:
    """Checks every header field's type and range (what :func:`export_blob` writes).

    :raises BlobFormatError: naming the field and what it holds.
    """
    check_header_fields(header, {"format": int}, "XLA blob")
    version = header["format"]
    if version < 1:
        raise BlobFormatError(
            f"XLA blob header field 'format' is {version!r}, not a format version (1 to {FORMAT_VERSION})"
        )
    if version > FORMAT_VERSION:
        raise BlobFormatError(
            f"XLA blob format {str(version)[:20]} is newer than this plugin reads ({FORMAT_VERSION}); "
            "upgrade hetero-sdk-jax"
        )
    check_header_fields(header, _FIELDS, "XLA blob")
    if header["platform"] != platform:
        raise BlobFormatError(
            f"XLA blob was compiled for platform {header['platform']!r}; this device runs on {platform!r}"
        )
    for field in ("inputs", "outputs"):
        for i, port in enumerate(header[field]):
            where = f"XLA blob header field '{field}[{i}]'"
            if not isinstance(port, dict) or not isinstance(port.get("friendly_name"), str):
                raise BlobFormatError(f"{where} is {port!r}, not a port (friendly_name, names, type, shape)")
            names, shape = port.get("names"), port.get("shape")
            if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
                raise BlobFormatError(f"{where}.names is {names!r}, not a list of tensor names")
            if port.get("type") not in _TYPE_NAMES:
                raise BlobFormatError(f"{where}.type is {port.get('type')!r}, not an element type")
            if not isinstance(shape, list) or not all(_is_int(d) and d >= -1 for d in shape):
                raise BlobFormatError(f"{where}.shape is {shape!r}, not a list of dimensions (-1 when dynamic)")
    for i, entry in enumerate(header["executables"]):
        where = f"XLA blob header field 'executables[{i}]'"
        if not isinstance(entry, dict) or not isinstance(entry.get("frame"), str):
            raise BlobFormatError(f"{where} is {entry!r}, not an executable (frame, input_shapes)")
        shapes = entry.get("input_shapes")
        if (
            not isinstance(shapes, list)
            or len(shapes) != len(header["inputs"])
            or not all(isinstance(s, list) and all(_is_int(d) and 0 <= d < 2**63 for d in s) for s in shapes)
        ):
            raise BlobFormatError(
                f"{where}.input_shapes is {shapes!r}, not one static shape for each of the "
                f"{len(header['inputs'])} inputs"
            )


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


_FIELDS: dict[str, type] = {
    "model": str, "platform": str, "precision": str, "x64": bool, "graph": bool, "config": dict, "inputs": list,
    "outputs": list, "executables": list,
}  # fmt: skip
_TYPE_NAMES = frozenset(t.value for t in Type)


_NOT_STORED = frozenset(
    {
        props.model_name,
        props.optimal_number_of_infer_requests,
        props.execution_devices,
        props.loaded_from_cache,
        props.cache_dir,  # a folder of this machine: the importing process passes its own
        props.supported_properties,
        props.device.id,
    }
)


def _config(compiled: XlaCompiledModel) -> dict[str, Any]:
    keys = compiled.get_property(props.supported_properties)
    return {k: compiled.get_property(k) for k in keys if k not in _NOT_STORED}


def _port(output: Any, friendly_name: str) -> dict[str, Any]:
    return {
        "names": sorted(output.names),
        "friendly_name": friendly_name,
        "type": output.element_type.value,
        "shape": list(output.partial_shape.dims),
    }


_STABLEHLO = StableHloChecker()
"""Reads each imported module in a helper process first (see :mod:`hetero_sdk_jax.stablehlo_check`)."""


def _targets(exported: jax.export.Exported) -> list[str]:
    """The custom call targets an executable we exported calls (read in this process: it is our own)."""
    with make_ir_context():
        return custom_call_targets(jax_mlir.deserialize_portable_artifact(exported.mlir_module_serialized))


def _register_native_kernels(entries: Any) -> frozenset[str]:
    """Builds and registers the native kernels a blob's header lists (before any executable is read).

    :raises BlobFormatError: when ``entries`` is not a list of our kernels' names.
    :raises UnsupportedOperationError: naming the kernel that cannot be built here, and how to do without.
    """
    if not isinstance(entries, list) or not all(isinstance(e, str) and e in KERNELS for e in entries):
        raise BlobFormatError(
            f"XLA blob header field 'native_kernels' is {str(entries)[:200]}, not a list of hetero-sdk-jax's "
            f"native kernels ({sorted(KERNELS)})"
        )
    for target in entries:
        try:
            register(target)
        except BuildError as exc:
            raise UnsupportedOperationError(
                f"XLA blob calls native kernel {target!r}, which cannot be built here: {exc}. Install a C++ compiler "
                f"with AVX-512 support (or set CXX to one), or export the model again with native kernels off "
                f"(XLA_NATIVE_KERNELS=False, or {ENV_VAR}=0)"
            ) from None
    return frozenset(entries)


def _deserialize(frames: dict[str, bytes], frame: str, kernels: frozenset[str] = frozenset()) -> jax.export.Exported:
    if frame not in frames:
        raise BlobFormatError(f"XLA blob lacks frame {frame!r} named in its header")
    try:
        exported = jax.export.deserialize(bytearray(frames[frame]))
    except Exception as exc:  # flatbuffer or StableHLO errors: the payload is not an exported module
        raise BlobFormatError(f"XLA blob frame {frame!r} is not a serialized jax.export module: {exc}") from exc
    unlisted = sorted(_STABLEHLO.check(exported.mlir_module_serialized, frame) - kernels)
    if unlisted:
        raise BlobFormatError(
            f"XLA blob frame {frame!r} calls native kernel(s) {unlisted} that its header field 'native_kernels' "
            "does not list; the blob is corrupted or crafted (export the model again)"
        )
    return exported


def _stand_in(header: dict[str, Any]) -> Model:
    """A model with the blob's inputs and outputs; each output comes from a placeholder op (a
    Broadcast of a zero scalar) that names every op the executable fuses in its rt_info."""
    parameters = []
    for port in header["inputs"]:
        parameter = opset.parameter(port["shape"], Type(port["type"]), name=port["friendly_name"])
        parameter.output(0).set_names(port["names"])
        parameters.append(parameter)
    results = []
    for port in header["outputs"]:
        kind = Type(port["type"])
        stub = opset.broadcast(
            opset.constant(np.zeros((), kind.numpy)),
            np.asarray(port["shape"], np.int64),
            name=f"{port['friendly_name']}/xla_executable",
        )
        stub.get_rt_info()[rt_info.LAYER_TYPE] = "XlaExecutable"
        stub.output(0).set_names(port["names"])
        results.append(opset.result(stub, name=port["friendly_name"]))
    return Model(results, parameters, name=str(header["model"]))


def _check_signature(
    header: dict[str, Any], executables: dict[Shapes, jax.export.Exported], names: dict[Shapes, str]
) -> None:
    """Checks each executable's signature (how many inputs and outputs, their element types and shapes)
    against the header's ports, so that a crafted executable fails at import, not at inference."""
    own_shapes = tuple(tuple(p["shape"]) for p in header["inputs"])
    if not header["graph"] and own_shapes not in executables:
        raise BlobFormatError(f"XLA blob holds no executable for its inputs' shapes {[list(s) for s in own_shapes]}")
    ports = {"inputs": header["inputs"], "outputs": header["outputs"]}
    for shapes, exported in executables.items():
        frame = names[shapes]
        trees = (
            jax.tree_util.tree_structure(((0,) * len(header["inputs"]), {})),
            jax.tree_util.tree_structure((0,) * len(header["outputs"])),
        )
        if (exported.in_tree, exported.out_tree) != trees or exported.nr_devices != 1:
            raise BlobFormatError(
                f"XLA blob frame {frame!r} takes {exported.in_tree} on {exported.nr_devices} device(s) and returns "
                f"{exported.out_tree}, not the header's {len(header['inputs'])} inputs and "
                f"{len(header['outputs'])} outputs on one device"
            )
        if header["platform"] not in exported.platforms:
            raise BlobFormatError(
                f"XLA blob frame {frame!r} runs on {list(exported.platforms)}, not the header's {header['platform']!r}"
            )
        for field, avals in (("inputs", exported.in_avals), ("outputs", exported.out_avals)):
            got = [(list(a.shape), np.dtype(a.dtype).name) for a in avals]
            want = [(p["shape"], np.dtype(Type(p["type"]).numpy).name) for p in ports[field]]
            fits = len(got) == len(want) and all(
                kind == wanted_kind and len(shape) == len(wanted) and all(w in (-1, d) for d, w in zip(shape, wanted))
                for (shape, kind), (wanted, wanted_kind) in zip(got, want)
            )
            if field == "inputs":
                fits = fits and [shape for shape, _ in got] == [list(s) for s in shapes]
            if not fits:
                raise BlobFormatError(
                    f"XLA blob frame {frame!r} has {field} {got}, not the header's {field} {want}"
                    + (f" for input shapes {[list(s) for s in shapes]}" if field == "inputs" else "")
                )
