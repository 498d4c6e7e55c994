"""Writes ``docs/reference/ops.md``, the op reference, from the op definitions themselves.

Run ``python docs/_hooks/op_reference.py`` after changing an op; ``tests/docs`` fails while the page
differs from what this script writes, so the page (readable as it is, on GitHub too) cannot drift.
"""

from __future__ import annotations

import sys
from pathlib import Path

PAGE = Path(__file__).resolve().parents[1] / "reference" / "ops.md"

_HEADER = """# Op reference

Every op of the opset, generated from its definition (`hetero_sdk.ops`): its inputs and the element
types each accepts, its attributes with their kinds, defaults and allowed values, and which shipped
devices run it: TEMPLATE with its numpy kernels (`kernel`) or the op's array-API kernel (`shared`);
XLA with its own lowering (`lowering`), by tracing the array-API kernel (`shared`), or not (`-`: it
declines the op in `query_model`, so HETERO places it elsewhere). An input marked *shape* decides the
output shape with its values; XLA needs those known while compiling.

"""


def _types(types: frozenset | None) -> str:
    return "any" if types is None else ", ".join(sorted(t.value for t in types))


def _value(value: object) -> str:
    return getattr(value, "value", None) or repr(value)


def _sentence(text: str) -> str:
    text = text.strip().replace("|", "\\|")
    return (text[:1].upper() + text[1:] + ("" if text.endswith(".") else ".")) if text else ""


def op_reference() -> str:
    """The Markdown of the op reference."""
    from hetero_sdk_jax.lowering import LOWERINGS, get_lowering

    from hetero_sdk.ops import OPS, sdk_op_types
    from hetero_sdk.reference import KERNELS

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
            summary = _sentence(op.doc)
            lines += [f"### {type_name}", "", f"{summary} *{op.version}*; TEMPLATE: {template}; XLA: {xla}.", ""]
            if op.inputs:
                lines += ["| input | element types | |", "|---|---|---|"]
                for index, spec in enumerate(op.inputs):
                    marks = [m for m, on in (("optional", spec.optional), ("variadic", spec.variadic),
                                             ("shape", spec.decides_shape)) if on]  # fmt: skip
                    note = "; ".join([*marks, spec.doc] if spec.doc else marks)
                    lines.append(f"| {spec.label(index)} | {_types(spec.types)} | {note} |")
                lines.append("")
            if op.attrs:
                lines += ["| attribute | kind | default | allowed | |", "|---|---|---|---|---|"]
                for attr in op.attrs:
                    default = "required" if attr.required else f"`{_value(attr.default)}`"
                    allowed = ", ".join(f"`{_value(c)}`" for c in attr.choices) if attr.choices else ""
                    lines.append(f"| {attr.name} | {attr.kind.name} | {default} | {allowed} | {attr.doc} |")
                lines.append("")
    return "\n".join(lines).rstrip() + "\n"


if __name__ == "__main__":
    PAGE.write_text(op_reference())
    sys.stdout.write(f"wrote {PAGE}\n")
