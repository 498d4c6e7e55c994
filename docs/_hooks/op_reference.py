"""Writes ``docs/reference/ops.md``, the op reference, from the op definitions themselves.

Run ``python docs/_hooks/op_reference.py`` after changing an op; ``tests/docs`` fails while the page
differs from what this script writes, so the page (readable as it is, on GitHub too) cannot drift.
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

PAGE = Path(__file__).resolve().parents[1] / "reference" / "ops.md"
_EXTENSION_MARKER = "<!-- extension-ops -->"

_HEADER = """# Op reference

Every op of the opset, generated from its definition (`hetero_sdk.ops`): the `hetero_sdk.opset`
factory that builds it, with its arguments in order; its inputs and the element types each accepts;
its attributes with their kinds, defaults and allowed values; and which shipped devices run it:
TEMPLATE with its numpy kernels (`kernel`) or the op's array-API kernel (`shared`); XLA with its own
lowering (`lowering`), by tracing the array-API kernel (`shared`), or not (`-`: it declines the op in
`query_model`, so HETERO places it elsewhere). An input marked *shape* decides the
output shape with its values; XLA needs those known while compiling.

"""


def _types(types: frozenset | None) -> str:
    return "any" if types is None else ", ".join(sorted(t.value for t in types))


def _value(value: object) -> str:
    return getattr(value, "value", None) or repr(value)


def _sentence(text: str) -> str:
    text = text.strip().replace("|", "\\|")
    return (text[:1].upper() + text[1:] + ("" if text.endswith(".") else ".")) if text else ""


def factories() -> dict[str, Callable[..., Any]]:
    """Each op type and the ``hetero_sdk.opset`` function that builds it: the op type in snake_case
    (compared without underscores: TopK is ``topk``, HSwish ``hswish``; If is ``if_op``, as in OpenVINO)."""
    from hetero_sdk import opset
    from hetero_sdk.ops import sdk_op_types

    by_key = {name.replace("_", ""): name for name in opset.__all__}
    found = {}
    for type_name in sdk_op_types():
        name = by_key.get(type_name.lower()) or by_key.get(f"{type_name.lower()}op")
        if name is not None:
            found[type_name] = getattr(opset, name)
    return found


def _default(value: object) -> str:
    """A default as code would write it: ``Type.i64`` for an element type, else its repr."""
    from hetero_sdk import Type

    return f"Type.{value.name}" if isinstance(value, Type) else repr(value)


def factory_signature(function: Callable[..., Any], width: int = 100) -> str:
    """``opset.name(arg, ..., name=None)``: the factory's arguments in order, with their defaults; one
    argument a line when the call is longer than ``width``."""
    parts: list[str] = []
    star = False
    for param in inspect.signature(function).parameters.values():
        if param.kind is param.KEYWORD_ONLY and not star:
            parts.append("*")
        star = star or param.kind in (param.KEYWORD_ONLY, param.VAR_POSITIONAL)
        stars = "*" if param.kind is param.VAR_POSITIONAL else "**" if param.kind is param.VAR_KEYWORD else ""
        text = stars + param.name
        parts.append(text if param.default is param.empty else f"{text}={_default(param.default)}")
    call = f"opset.{function.__name__}({', '.join(parts)})"
    if len(call) <= width:
        return call
    return f"opset.{function.__name__}(\n" + "".join(f"    {part},\n" for part in parts) + ")"


def op_reference() -> str:
    """The Markdown of the op reference."""
    from hetero_sdk_jax.lowering import LOWERINGS, get_lowering

    from hetero_sdk.ops import OPS, sdk_op_types
    from hetero_sdk.reference import KERNELS

    builders = factories()
    by_family: dict[str, list[str]] = {}
    for type_name in sdk_op_types():
        by_family.setdefault(OPS.get(type_name).family, []).append(type_name)
    lines = [_HEADER.rstrip(), ""]
    for family in sorted(by_family):
        lines += [f"## {family.replace('_', ' ').capitalize()}", ""]
        for type_name in by_family[family]:
            op = OPS.get(type_name)
            template = "kernel" if type_name in KERNELS else "shared" if op.evaluate else "-"
            xla = "lowering" if type_name in LOWERINGS else "shared" if get_lowering(op) else "-"
            lines += _op_section(op, template, xla, builders.get(type_name))
    lines += [_EXTENSIONS.rstrip(), ""]
    return "\n".join(lines).rstrip() + "\n"


_EXTENSIONS = f"""## Extensions

The ops of the [extensions](../extensions.md) installed where the site is built (`hetero-sdk extensions`
lists those of your installation), each under its extension and distribution; TEMPLATE runs an
extension's numpy kernel (`kernel`) or the op's array-API kernel (`shared`), XLA the extension's
lowering (`lowering`), the array-API kernel (`shared`), or declines it (`-`).

{_EXTENSION_MARKER}
"""


def extension_ops() -> str:
    """The Markdown of the installed extensions' ops (what the page's marker becomes when the site is
    built): each extension a paragraph, each op a level-4 heading (the level-3 ones are the SDK's ops,
    each with its factory)."""
    from hetero_sdk.extensions import REFERENCE, device_kernel, extension_infos
    from hetero_sdk.ops import OPS

    lines: list[str] = []
    for info in extension_infos():
        if info.error:
            where = info.distribution or "added in process"
            lines += [f"**Extension {info.name}** ({where}) is broken: {_sentence(info.error)}", ""]
            continue
        lines += [f"**Extension {info.name}** ({info.distribution or 'added in process'} {info.version}):", ""]
        for type_name in info.ops:
            op = OPS.get(type_name)
            own = device_kernel(type_name, "TEMPLATE", REFERENCE, evaluate=False)
            template = "kernel" if own is not None else "shared" if op.evaluate else "-"
            lowered = device_kernel(type_name, "XLA", evaluate=False)
            xla = "lowering" if lowered is not None else "shared" if op.evaluate and not op.data_dependent else "-"
            lines += _op_section(op, template, xla, None, level="####")
    return "\n".join(lines).rstrip() if lines else "No extension is installed where this page was built."


def on_page_markdown(markdown: str, **kwargs: Any) -> str:
    """A mkdocs hook: the op reference's marker becomes the installed extensions' ops."""
    return markdown.replace(_EXTENSION_MARKER, extension_ops()) if _EXTENSION_MARKER in markdown else markdown


def _op_section(op: Any, template: str, xla: str, builder: Callable[..., Any] | None, level: str = "###") -> list[str]:
    """One op's heading, summary, factory, inputs and attributes."""
    type_name = op.type_name
    summary = _sentence(op.doc)
    lines = [f"{level} {type_name}", "", f"{summary} *{op.version}*; TEMPLATE: {template}; XLA: {xla}.", ""]
    if builder is not None:
        lines += ["```python", factory_signature(builder), "```", ""]
    if op.inputs:
        lines += ["| input | element types | |", "|---|---|---|"]
        for index, spec in enumerate(op.inputs):
            marks = [m for m, on in (("optional", spec.optional), ("variadic", spec.variadic),
                                     ("shape", spec.decides_shape)) if on]  # fmt: skip
            note = "; ".join([*marks, spec.doc] if spec.doc else marks)
            lines.append(f"| {spec.label(index)} | {_types(spec.types)} | {note} |")
        lines.append("")
    for cache in op.caches:  # (an InPlaceCache: see docs/extensions.md)
        lengths = ", ".join(op.inputs[i].label(i) for i in cache.lengths) or "-"
        past = op.inputs[cache.past].label(cache.past)
        lines += [f"Writes a cache in place: output {cache.present} is {past} updated along axis {cache.axis}, "
                  f"its filled length from {lengths}.", ""]  # fmt: skip
    if op.attrs:
        lines += ["| attribute | kind | default | allowed | |", "|---|---|---|---|---|"]
        for attr in op.attrs:
            default = "required" if attr.required else f"`{_value(attr.default)}`"
            allowed = ", ".join(f"`{_value(c)}`" for c in attr.choices) if attr.choices else ""
            lines.append(f"| {attr.name} | {attr.kind.name} | {default} | {allowed} | {attr.doc} |")
        lines.append("")
    return lines


if __name__ == "__main__":
    PAGE.write_text(op_reference())
    sys.stdout.write(f"wrote {PAGE}\n")
