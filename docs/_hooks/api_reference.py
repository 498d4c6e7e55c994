"""Writes the API reference pages, ``docs/reference/hooks.md``, ``docs/reference/plugin-api.md`` and
``docs/reference/graph-api.md``, from the docstrings and signatures of the code itself.

The pages are plain Markdown, readable unbuilt (on GitHub, in an editor). Run
``python docs/_hooks/api_reference.py`` after changing a hook, a public name of ``hetero_sdk.plugin``
or a method of the graph (``Model``, ``Node``, ``Output``, ``Input``); ``tests/docs`` fails while a
page differs from what this script writes.
"""

from __future__ import annotations

import inspect
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

REFERENCE = Path(__file__).resolve().parents[1] / "reference"

_ROLE = re.compile(r":(?:class|func|meth|data|attr|mod|exc):`(~?)([^`]+)`")
_FIELD = re.compile(r"^:(param|ivar|returns|raises|type|rtype)\s*([^:]*):\s*(.*)$")
_INLINE_FIELD = re.compile(r"(?<=\S) +(:(?:param|returns|raises)\b[^:]*:)")
_LABELS = {"param": "", "ivar": "", "returns": "returns", "raises": "raises"}


def _inline(text: str) -> str:
    """reStructuredText roles and literals as Markdown code."""

    def role(match: re.Match[str]) -> str:
        target = match[2]
        return f"`{target.rsplit('.', 1)[-1] if match[1] else target}`"

    return _ROLE.sub(role, text).replace("``", "`")


def _markdown(doc: str) -> str:
    """A docstring as Markdown: paragraphs kept, ``::`` blocks fenced, fields as a list."""
    text = _INLINE_FIELD.sub(r"\n\1", inspect.cleandoc(doc))  # "The shape. :raises X: ..." on one line
    lines = text.splitlines()
    out: list[str] = []
    fields: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        field = _FIELD.match(line)
        if field:
            kind, name, text = field[1], field[2].strip(), field[3]
            i += 1
            while i < len(lines) and lines[i].startswith((" ", "\t")) and lines[i].strip():
                text += " " + lines[i].strip()
                i += 1
            if kind in _LABELS:
                label = f"{_LABELS[kind]} `{name}`" if kind == "raises" else (_LABELS[kind] or f"`{name}`")
                fields.append(f"- **{label.strip()}**: {_inline(text)}")
            continue
        if line.rstrip().endswith("::"):
            out.append(_inline(line.rstrip()[:-2].rstrip() + ":" if line.strip() != "::" else ""))
            i += 1
            block: list[str] = []
            while i < len(lines) and (not lines[i].strip() or lines[i].startswith((" ", "\t"))):
                block.append(lines[i])
                i += 1
            while block and not block[-1].strip():
                block.pop()
            body = inspect.cleandoc("\n".join(block))
            out += ["", "```python", body, "```", ""]
            continue
        out.append(_inline(line))
        i += 1
    text = "\n".join(out).strip()
    if fields:
        text += "\n\n" + "\n".join(fields)
    return re.sub(r"\n{3,}", "\n\n", text).strip()


def _summary(doc: str) -> str:
    """The first paragraph of a docstring, as one Markdown line, without its fields."""
    paragraph = inspect.cleandoc(doc).split("\n\n")[0]
    return _inline(" ".join(paragraph.split()).split(" :raises ")[0].split(" :returns: ")[0])


def _annotation(annotation: Any) -> str:
    return annotation if isinstance(annotation, str) else inspect.formatannotation(annotation)


def _default(value: Any) -> str:
    """A default value as written; a function by its name (a lambda as ``...``), never a memory address."""
    if inspect.isfunction(value):
        return "..." if value.__name__ == "<lambda>" else value.__name__
    return "..." if " at 0x" in repr(value) else repr(value)  # a sentinel object


def _signature(name: str, obj: Callable[..., Any]) -> str:
    """``name(params) -> result`` with the annotations as written (``self`` left out)."""
    try:
        signature = inspect.signature(obj)
    except (TypeError, ValueError):
        return name
    parts: list[str] = []
    star = positional_only = False
    for param in signature.parameters.values():
        if param.name in ("self", "cls") and not parts:
            continue
        if positional_only and param.kind is not param.POSITIONAL_ONLY:
            parts.append("/")
        positional_only = param.kind is param.POSITIONAL_ONLY
        text = param.name
        if param.kind is param.VAR_POSITIONAL:
            text, star = f"*{text}", True
        elif param.kind is param.VAR_KEYWORD:
            text = f"**{text}"
        elif param.kind is param.KEYWORD_ONLY and not star:
            parts.append("*")
            star = True
        if param.annotation is not param.empty:
            text += f": {_annotation(param.annotation)}"
        if param.default is not param.empty:
            text += f" = {_default(param.default)}"
        parts.append(text)
    if positional_only:
        parts.append("/")
    result = "" if signature.return_annotation is signature.empty else f" -> {_annotation(signature.return_annotation)}"
    return f"{name}({', '.join(parts)}){result}"


def _members(cls: type) -> list[tuple[str, Any]]:
    """The public methods and properties ``cls`` defines itself or takes from a private base class
    (``Output`` from ``_Port``), in source order, the base's first; an override keeps the base's place."""
    found: dict[str, Any] = {}
    for owner in reversed(cls.__mro__):
        if owner is not cls and not owner.__name__.startswith("_"):
            continue
        for name, value in vars(owner).items():
            if name.startswith("_") and name != "__call__":
                continue
            if isinstance(value, (staticmethod, classmethod)):
                value = value.__func__
            if (inspect.isfunction(value) or isinstance(value, property)) and value.__doc__:
                found[name] = value
    return list(found.items())


def _entry(name: str, obj: Any, level: int) -> list[str]:
    """One name's heading, signature and documentation."""
    hashes = "#" * level
    lines = [f"{hashes} {name}", ""]
    if inspect.isclass(obj):
        init = obj.__init__ if "__init__" in vars(obj) else None
        shown = _signature(name, init).removesuffix(" -> None") if init is not None else name
        lines += ["```python", f"class {shown}", "```", "", _markdown(obj.__doc__ or ""), ""]
        members = _members(obj)
        properties = [(member, value) for member, value in members if isinstance(value, property)]
        if properties:
            lines += ["Properties:", ""]
            lines += [f"- `{member}`: {_summary(value.__doc__ or '')}" for member, value in properties]
            lines.append("")
        for member, value in members:
            if isinstance(value, property):
                continue
            lines += ["", f"{hashes}# {name}.{member}", "", "```python"]
            lines += [_signature(member, value), "```", ""]
            lines += [_markdown(value.__doc__ or ""), ""]
        return [*lines, ""]
    if callable(obj) and not inspect.ismodule(obj):
        lines += ["```python", _signature(name, obj), "```", ""]
        return [*lines, _markdown(getattr(obj, "__doc__", "") or ""), ""]
    if inspect.ismodule(obj):
        return [*lines, _markdown((obj.__doc__ or "").split("\n\n")[0]), ""]
    return [*lines, _CONSTANTS.get(name, f"`{name} = {obj!r}`"), ""]


_CONSTANTS = {
    "BOOL": 'An attribute kind (`Attr("name", BOOL)`): a bool.',
    "INT": "An attribute kind: an int.",
    "INTS": "An attribute kind: a list of ints.",
    "FLOAT": "An attribute kind: a float.",
    "FLOATS": "An attribute kind: a list of floats.",
    "STRING": "An attribute kind: a string.",
    "STRINGS": "An attribute kind: a list of strings (case-insensitive).",
    "LOWER_STRING": "An attribute kind: a string compared case-insensitively.",
    "INDEX_TYPES": "The element types of indices: i32, i64.",
    "NUMERIC_TYPES": "Every numeric element type (the integer and floating-point types).",
    "REAL_TYPES": "The floating-point element types: f16, bf16, f32, f64.",
    "STRUCTURAL_OPS": "The op types that are graph structure, not computation (Parameter, Constant, Result...).",
    "OPS": 'The registry of op definitions by type (`OPS.find("Add")`); `define` adds to it.',
    "KERNELS": 'The reference kernel registry by op type; `@kernel("Type")` adds to it.',
    "ONNX_RULES": 'The ONNX frontend\'s rule registry by ONNX op type; `@onnx_rule("Op", since=N)` adds to it.',
    "REFERENCE": "`'reference'`: the backend key of an extension's numpy kernels (the oracle's; TEMPLATE runs them).",
    "DYNAMIC": "`-1`: the value of a dynamic dimension.",
    "COMMON_OPTIMIZATIONS": "The name of the SDK's common graph optimizations pass (`common_optimizations()`).",
}
"""What a constant of the facade is, where its value would not read well (or not the same on each run)."""


_HOOKS_HEADER = """# Hook reference

Generated from `hetero_sdk/plugin/hookspecs.py`, the single source of the plugin contract, by
`docs/_hooks/api_reference.py`. [Writing a device plugin](../plugin-tutorial.md) builds a complete
device with these hooks. A plugin method implementing a hook is marked with `@hookimpl` and takes every
argument of the hook, by the hook's names: registration rejects one that leaves an argument out with a
`PluginValidationError` naming the hook and the argument (hetero-sdk is before 1.0: this rule came
without a deprecation period), and `hetero_sdk.plugin.DevicePlugin` states the signatures for mypy.
"""

_HOOKS = [
    "get_version",
    "get_property",
    "set_property",
    "compile_model",
    "query_model",
    "import_model",
    "create_context",
    "get_default_context",
]


def hooks_page() -> str:
    """The Markdown of the hook reference."""
    from hetero_sdk.plugin import hookspecs

    lines = [_HOOKS_HEADER.rstrip(), "", "## The contract", "", _markdown(hookspecs.__doc__ or ""), ""]
    lines += ["## Hooks", ""]
    for hook in _HOOKS:
        lines += _entry(hook, getattr(hookspecs, hook), 3)
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).rstrip() + "\n"


_API_HEADER = """# Plugin author API

Everything a device plugin imports from the SDK comes from the facade `hetero_sdk.plugin`, the user
API `hetero_sdk` (`Model`, `Node`, `Type`, `PartialShape`, `Core`...), `hetero_sdk.errors`,
`hetero_sdk.properties` and `hetero_sdk.opset`; the other SDK modules may change without notice, and
`tests/test_architecture.py` holds the shipped devices to this list. hetero-sdk is before 1.0: the
facade itself may change between minor releases without a deprecation period. The hooks themselves
are in the [hook reference](hooks.md). Generated from the docstrings by `docs/_hooks/api_reference.py`.
"""

_API_SECTIONS: list[tuple[str, str, list[str]]] = [
    (
        "The contract, typed",
        "Each Protocol states hook signatures for mypy (`if TYPE_CHECKING: _: DevicePlugin = MyPlugin()`); "
        "registration checks the same rule at run time.",
        ["DevicePlugin", "ModelImporter", "ContextProvider", "VersionReporter"],
    ),
    (
        "Compiled models and running them",
        "",
        ["CompiledModel", "RunContext", "ProfilingInfo", "Status", "Version", "rt_info"],
    ),
    (
        "Properties",
        "",
        [
            "DeviceConfig",
            "ConfiguredDevice",
            "PropertySpec",
            "Mutability",
            "read_only",
            "as_bool",
            "as_int",
            "one_of",
            "as_element_type",
        ],
    ),
    (
        "Standard properties",
        "`hetero_sdk.plugin.standard` declares OpenVINO's standard keys, with the same defaults and checks on "
        "every device.",
        [
            "standard.device_id",
            "standard.perf_count",
            "standard.performance_hint",
            "standard.performance_hint_num_requests",
            "standard.num_streams",
            "standard.inference_num_threads",
            "standard.execution_mode_hint",
            "standard.inference_precision_hint",
            "standard.exclusive_async_requests",
        ],
    ),
    (
        "Answering `query_model`",
        "A device declares what it runs in a `SupportTable` (op types, the element types each takes, and "
        "limits with the reason a node is declined); the table answers `query_model` through "
        "`get_supported_nodes`'s steps and names a reason for every op it declines. `get_supported_nodes` "
        "takes a plain per-op predicate instead.",
        ["SupportTable", "Limit", "SupportAnswer", "get_supported_nodes"],
    ),
    ("Device names", "", ["format_device_name", "parse_device_name"]),
    (
        "Blobs",
        "",
        ["pack_blob", "unpack_blob", "check_header_fields", "model_to_bytes", "model_from_bytes", "model_from_frame"],
    ),
    ("Remote memory", "", ["RemoteContext", "HostContext", "RemoteTensor"]),
    (
        "Graph rewrites",
        "",
        [
            "PassManager",
            "MatcherPass",
            "ConsumerMap",
            "ConstantFolding",
            "COMMON_OPTIMIZATIONS",
            "common_optimizations",
            "replace_node",
            "constant_operand",
            "channel_scale",
            "channel_bias_and_activation",
            "BiasedActivation",
            "fused_names",
        ],
    ),
    (
        "A device's own ops",
        "A device defines its fused ops as the SDK defines its own: one `OpDef` each, through `define`.",
        [
            "OpDef",
            "define",
            "Attr",
            "Input",
            "InPlaceCache",
            "OutputSpec",
            "as_output",
            "expect_rank",
            "expect_same_types",
            "BOOL",
            "INT",
            "INTS",
            "FLOAT",
            "FLOATS",
            "STRING",
            "STRINGS",
            "LOWER_STRING",
            "INDEX_TYPES",
            "NUMERIC_TYPES",
            "REAL_TYPES",
            "OPS",
            "STRUCTURAL_OPS",
            "DYNAMIC",
        ],
    ),
    (
        "Op semantics",
        "What a kernel shares with the op's definition, so that a device computes what the op means.",
        [
            "apply_resize",
            "backprop_geometry",
            "batch_normalized",
            "bodies",
            "constant_value",
            "erfc_values",
            "gelu_tanh",
            "integer_saturation",
            "loop_iterations",
            "matmul_shape",
            "nearest_indices",
            "recurrent_activation",
            "reduced_axes",
            "reshape_dims",
            "resize_plan",
            "resolve_pads",
            "scatter_positions",
            "slice_index",
            "squeezed_dims",
            "strided_slice_index",
            "type_limits",
            "unsqueezed_dims",
            "namespace",
            "widened",
            "window_output_dims",
        ],
    ),
    (
        "Extension points",
        "Registries that others add to: the reference kernels (`@kernel`), a device's own (`Registry`), and "
        "the ONNX frontend's rules (`@onnx_rule`), with the ONNX exporter. The ONNX names load the ONNX "
        "frontend when first used.",
        [
            "KERNELS",
            "Kernel",
            "kernel",
            "get_kernel",
            "kernel_types",
            "run_node",
            "evaluate",
            "Registry",
            "ONNX_RULES",
            "OnnxRule",
            "onnx_rule",
            "OnnxNodeContext",
            "export_onnx",
            "onnx_exportable_ops",
        ],
    ),
    (
        "Op extensions",
        "Ops from outside the SDK ([extensions](../extensions.md)): the kernel an extension declares for a "
        "device's backend, checked against the op's shape inference.",
        ["device_kernel", "REFERENCE"],
    ),
]


def plugin_api_page() -> str:
    """The Markdown of the plugin author API page."""
    import hetero_sdk.plugin as api

    lines = [_API_HEADER.rstrip(), ""]
    for heading, intro, names in _API_SECTIONS:
        lines += [f"## {heading}", ""]
        if intro:
            lines += [intro, ""]
        for name in names:
            obj: Any = api
            for part in name.split("."):
                obj = getattr(obj, part)
            lines += _entry(name.rsplit(".", 1)[-1], obj, 3)
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).rstrip() + "\n"


_GRAPH_HEADER = """# Graph API

The model graph a device reads in `query_model` and `compile_model`, and rewrites in its
transformations: `Model`, its nodes (`Node`), and their ports (`Output`: a tensor a node produces;
`Input`: where a node consumes one). All are importable from `hetero_sdk` (`hs.Model`, `hs.Node`...), and
follow OpenVINO's Python API (`ov.Model`, `ov.Node`, `ov.Output`, `ov.Input`): each getter
(`get_friendly_name()`) also exists as a property (`friendly_name`). Build nodes with the factories of
`hetero_sdk.opset` (their signatures are in the [op reference](ops.md)). Generated from the docstrings
by `docs/_hooks/api_reference.py`.

A device walks the ops in order and reads each op's type, attributes and inputs; a rewrite reconnects
an input with `set_input` and then re-infers the types and shapes:

<!-- test: fresh -->
```python
import hetero_sdk as hs
from hetero_sdk import opset

x = opset.parameter([2, 3], hs.Type.f32, name="x")
relu = opset.relu(x, name="relu")
softmax = opset.softmax(relu, 1, name="softmax")
model = hs.Model([opset.result(softmax, name="y")], [x], name="m")

for node in model.get_ordered_ops():
    sources = [f"{v.node.friendly_name}:{v.index}" for v in node.input_values()]
    print(node.get_type_name(), node.friendly_name, sources, node.get_attributes())

softmax.set_input(0, x.output(0))  # skip the Relu
model.validate_nodes_and_infer_types()
print([n.friendly_name for n in model.get_ordered_ops()])
print(model.output(0).get_partial_shape(), model.output(0).get_element_type())
```

<!-- output -->
```text
Parameter x [] {'element_type': <Type: f32>, 'shape': <PartialShape: [2,3]>}
Relu relu ['x:0'] {}
Softmax softmax ['relu:0'] {'axis': 1}
Result y ['softmax:0'] {}
['x', 'softmax', 'y']
[2,3] f32
```
"""

_GRAPH_SECTIONS: list[tuple[str, str, list[str]]] = [
    ("Models", "", ["Model"]),
    ("Nodes", "", ["Node"]),
    ("Ports", "", ["Output", "Input"]),
    (
        "Element types and shapes",
        "What a port's `element_type` and `partial_shape` are.",
        ["Type", "PartialShape"],
    ),
]


def graph_api_page() -> str:
    """The Markdown of the graph API page."""
    import hetero_sdk as hs

    lines = [_GRAPH_HEADER.rstrip(), ""]
    for heading, intro, names in _GRAPH_SECTIONS:
        lines += [f"## {heading}", ""]
        if intro:
            lines += [intro, ""]
        for name in names:
            lines += _entry(name, getattr(hs, name), 3)
            if name == "Type":
                lines += ["The element types: " + ", ".join(f"`Type.{t.name}`" for t in hs.Type) + ".", ""]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).rstrip() + "\n"


PAGES: dict[str, Callable[[], str]] = {
    "hooks.md": hooks_page,
    "plugin-api.md": plugin_api_page,
    "graph-api.md": graph_api_page,
}
"""Each generated page of ``docs/reference`` and the function writing it."""


if __name__ == "__main__":
    for page, write in PAGES.items():
        (REFERENCE / page).write_text(write())
        sys.stdout.write(f"wrote {REFERENCE / page}\n")
