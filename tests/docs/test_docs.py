"""The documentation cannot rot: its marked examples run, the outputs it shows are the outputs printed,
its reference pages name everything the code has (the built site is checked in test_site.py).

A ```python block right after a ``<!-- test -->`` line runs; the tested blocks of one page share one
namespace, in page order (``<!-- test: fresh -->`` starts a new one). A ```text block right after an
``<!-- output -->`` line must equal what the tested block before it printed.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import re
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import pytest

import hetero_sdk
import hetero_sdk.conformance.onnx_node
from hetero_sdk.errors import __all__ as ERROR_NAMES

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
TUTORIAL = ROOT / "plugins" / "tutorial"

_FENCE = re.compile(r"^```(\w*)\s*$")
_SNIPPET = re.compile(r'--8<-- "([^":]+)(?::([\w-]+))?:?"')


@dataclass
class Block:
    """A fenced block of a page: its language, first line number, text and the marker before it."""

    language: str
    line: int
    text: str
    marker: str


def pages() -> list[Path]:
    """Every Markdown page of the site."""
    return sorted(p for p in DOCS.rglob("*.md") if "_hooks" not in p.parts)


def blocks(page: Path) -> list[Block]:
    """The fenced blocks of ``page`` with the HTML comment (if any) on the line before each."""
    lines = page.read_text().splitlines()
    found: list[Block] = []
    i = 0
    while i < len(lines):
        match = _FENCE.match(lines[i].strip())
        if match is None:
            i += 1
            continue
        previous = next((lines[j].strip() for j in range(i - 1, -1, -1) if lines[j].strip()), "")
        marker = previous if previous.startswith("<!--") else ""
        end = next(j for j in range(i + 1, len(lines)) if lines[j].strip() == "```")
        found.append(Block(match.group(1), i + 2, "\n".join(lines[i + 1 : end]) + "\n", marker))
        i = end + 1
    return found


def pages_with_tests() -> list[Path]:
    return [p for p in pages() if any(b.marker.startswith("<!-- test") for b in blocks(p))]


@pytest.fixture
def tutorial_importable(monkeypatch: pytest.MonkeyPatch) -> None:
    """Examples register the tutorial's TUTORIAL device in-process: make it importable uninstalled."""
    if importlib.util.find_spec("hetero_sdk_tutorial") is None:
        monkeypatch.syspath_prepend(str(TUTORIAL))


@pytest.mark.parametrize("page", pages_with_tests(), ids=lambda p: str(p.relative_to(DOCS)))
def test_page_examples_run_and_print_what_the_page_shows(
    page: Path, tutorial_importable: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HETERO_SDK_VISUALIZE", "0")  # recorded, so that teardown restores the original
    monkeypatch.delenv("HETERO_SDK_VISUALIZE")
    namespace: dict[str, object] = {}
    printed = ""
    for block in blocks(page):
        where = f"{page.relative_to(ROOT)}:{block.line}"
        if block.marker.startswith("<!-- test"):
            assert block.language == "python", f"{where}: only python blocks can be tested"
            if block.marker == "<!-- test: fresh -->":
                namespace = {}
            namespace.setdefault("__name__", f"docs_{page.stem}")
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                exec(compile(block.text, where, "exec"), namespace)
            printed = out.getvalue()
        elif block.marker == "<!-- output -->":
            assert printed.rstrip() == block.text.rstrip(), f"{where}: the page shows other output than printed"


def test_every_output_block_follows_a_tested_block() -> None:
    for page in pages():
        previous: Block | None = None
        for block in blocks(page):
            if block.marker == "<!-- output -->":
                assert previous is not None and previous.marker.startswith("<!-- test"), (
                    f"{page.relative_to(ROOT)}:{block.line}: an output block must follow a tested block"
                )
            previous = block


def test_snippets_name_existing_files_and_sections() -> None:
    for page in pages():
        for path, section in _SNIPPET.findall(page.read_text()):
            source = ROOT / path
            assert source.is_file(), f"{page.name} includes {path}, which does not exist"
            if section.isdigit():  # from that line on
                assert len(source.read_text().splitlines()) >= int(section), f"{page.name}: {path} is shorter"
            elif section:
                text = source.read_text()
                for edge in ("start", "end"):
                    assert f"--8<-- [{edge}:{section}]" in text, f"{page.name}: {path} has no [{edge}:{section}]"


def _page(name: str) -> str:
    return (DOCS / name).read_text()


def test_errors_page_names_every_error() -> None:
    text = _page("reference/errors.md")
    assert [name for name in ERROR_NAMES if f"`{name}`" not in text] == []


def test_properties_page_names_every_property_of_template_and_hetero() -> None:
    from hetero_sdk.hetero.plugin import HeteroPlugin
    from template_plugin import TemplatePlugin

    core = hetero_sdk.Core(plugins={"TEMPLATE": TemplatePlugin, "HETERO": HeteroPlugin}, autoload=False)
    text = _page("reference/properties.md")
    for device in ("TEMPLATE", "HETERO"):
        missing = [key for key in core.get_property(device, "SUPPORTED_PROPERTIES") if f"`{key}`" not in text]
        assert missing == [], f"{device}'s properties missing from the page"


def test_properties_page_names_every_typed_property() -> None:
    from hetero_sdk import properties

    text = _page("reference/properties.md")
    names = [n for n in properties.__all__ if isinstance(getattr(properties, n), properties.Property)]
    for group in ("device", "hint", "hetero"):
        module = getattr(properties, group)
        names += [f"{group}.{n}" for n in module.__all__ if isinstance(getattr(module, n), properties.Property)]
    assert [n for n in names if f"`properties.{n}`" not in text] == []


def test_cli_page_names_every_command_and_option() -> None:
    cli = pytest.importorskip("hetero_sdk.cli").cli
    text = _page("cli.md")
    missing = []
    for name, command in cli.commands.items():
        if f"hetero-sdk {name}" not in text:
            missing.append(name)
        for param in command.params:
            longest = max(getattr(param, "opts", []), key=len, default="")
            if longest.startswith("-") and longest not in text:
                missing.append(f"{name} {longest}")
    assert missing == []


def _hook(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, DOCS / "_hooks" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_code_shown_as_source_is_in_that_file_verbatim() -> None:
    """A block after ``<!-- source: PATH -->`` quotes PATH: the page reads on its own and cannot rot."""
    for page in pages():
        for block in blocks(page):
            if block.marker.startswith("<!-- source:") and ":" not in block.marker.removeprefix("<!-- source:"):
                path = block.marker.removeprefix("<!-- source:").removesuffix("-->").strip()
                assert block.text in (ROOT / path).read_text(), f"{page.name}:{block.line} is not in {path}"


def test_code_shown_as_a_section_equals_that_region_of_the_source() -> None:
    """A block after ``<!-- source: PATH:SECTION -->`` is exactly the SECTION region of PATH (rerun
    docs/_hooks/inline_sources.py after changing the code)."""
    inline = _hook("inline_sources")
    quoted = 0
    for page in pages():
        for block in blocks(page):
            match = re.fullmatch(r"<!-- source: ([^\s:]+):([\w-]+) -->", block.marker)
            if match is None:
                continue
            quoted += 1
            want = inline.region(match[1], match[2])
            assert block.text == want, (
                f"{page.relative_to(ROOT)}:{block.line} differs from {match[1]} [{match[2]}]: "
                "run python docs/_hooks/inline_sources.py"
            )
    assert quoted >= 5  # the tutorial's device, section by section


@pytest.mark.parametrize("page", ["hooks.md", "plugin-api.md", "graph-api.md"])
def test_api_reference_pages_are_what_the_docstrings_generate(page: str) -> None:
    """The hook, plugin API and graph API pages are Markdown generated from the code (rerun
    docs/_hooks/api_reference.py), so that they read unbuilt and cannot drift."""
    generator = _hook("api_reference")
    assert (DOCS / "reference" / page).read_text() == generator.PAGES[page](), (
        f"docs/reference/{page} is stale: run python docs/_hooks/api_reference.py"
    )
    assert "\n::: " not in (DOCS / "reference" / page).read_text()


def test_the_plugin_api_page_names_every_public_plugin_name() -> None:
    import hetero_sdk.plugin as api

    text = _page("reference/plugin-api.md")
    documented = {"Check", "hookimpl", "standard"}  # a type alias, the hook marker (hooks page), the module
    assert [n for n in api.__all__ if n not in documented and f"### {n}\n" not in text] == []


@pytest.mark.parametrize("cls", [hetero_sdk.Model, hetero_sdk.Node, hetero_sdk.Output, hetero_sdk.Input])
def test_the_graph_api_page_documents_every_public_method_and_property(cls: type) -> None:
    """Every public method (with its signature) and property of the graph classes, inherited ones
    included (Output and Input take theirs from a private base), is on the graph API page."""
    import inspect

    text = _page("reference/graph-api.md")
    section = text.split(f"\n### {cls.__name__}\n", 1)[1].split("\n### ", 1)[0]
    missing = []
    for name, value in inspect.getmembers(cls):
        if name.startswith("_"):
            continue
        if isinstance(inspect.getattr_static(cls, name), property):
            found = f"- `{name}`: " in section
        else:
            parameters = [p for p in inspect.signature(value).parameters if p != "self"]
            heading = f"#### {cls.__name__}.{name}\n\n```python\n{name}("
            found = heading in section and all(p in section.split(heading, 1)[1].split("\n")[0] for p in parameters)
        if not found:
            missing.append(name)
    assert missing == []


def test_op_reference_shows_each_op_s_factory_with_its_arguments_in_order() -> None:
    """Each op's section shows the opset function that builds it, every argument in order."""
    import inspect

    from hetero_sdk import opset
    from hetero_sdk.ops import sdk_op_types

    text = _page("reference/ops.md")
    sections = {part.split("\n", 1)[0]: part for part in text.split("\n### ")[1:]}
    assert sections["Convolution"].count("opset.convolution(") == 1
    assert "auto_pad='explicit',\n    name=None,\n)" in sections["Convolution"]
    assert "opset.if_op(cond, then_body, else_body, inputs=(), name=None)" in sections["If"]
    assert "opset.parameter(shape, dtype=Type.f32, name=None)" in sections["Parameter"]
    missing = []
    for type_name in sdk_op_types():
        code = sections[type_name].split("```python\n", 1)[-1].split("```", 1)[0]
        factory = next((f for f in opset.__all__ if code.startswith(f"opset.{f}(")), None)
        if factory is None:
            missing.append(type_name)
            continue
        arguments = [p.removeprefix("*").split("=")[0] for p in re.split(r"[,\s]+", code[code.index("(") + 1 :])]
        wanted = list(inspect.signature(getattr(opset, factory)).parameters)
        if [a for a in arguments if a in wanted] != wanted:
            missing.append(type_name)
    assert missing == []


def test_the_conformance_page_reads_unbuilt() -> None:
    """The page opens with its own title and prose (what the kit checks, how to run it, when a device
    conforms) before it includes the kit's README, and names the README for readers of the file."""
    text = _page("conformance.md")
    before = text.split("--8<--", 1)[0]
    assert text.startswith("# Conformance kit\n")
    assert len(before.split()) > 200
    assert "hetero-sdk conformance MYDEV" in before and "every mandatory check" in before
    assert "`hetero_sdk/conformance/README.md`" in before


def test_the_tutorial_reads_unbuilt() -> None:
    """No include directives in the plugin tutorial: every line of code is on the page."""
    assert "--8<--" not in _page("plugin-tutorial.md")


def test_op_reference_is_what_the_op_definitions_generate() -> None:
    """The op reference page is generated from the op definitions (rerun docs/_hooks/op_reference.py)."""
    generator = _hook("op_reference")
    assert (DOCS / "reference" / "ops.md").read_text() == generator.op_reference()


def test_onnx_coverage_table_counts_what_the_expected_files_leave_out() -> None:
    """The ONNX coverage page's table (a hook) agrees with the shipped expected-failures files."""
    spec = importlib.util.spec_from_file_location("onnx_coverage", DOCS / "_hooks" / "onnx_coverage.py")
    assert spec is not None and spec.loader is not None
    hook = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hook)
    page = hook.on_page_markdown(_page("reference/onnx-coverage.md"))
    assert "<!-- onnx-coverage -->" not in page
    rows = {cells[0]: cells[1:] for line in page.splitlines() if line.startswith("| ") for cells in [
        [c.strip() for c in line.strip("|").split("|")]
    ]}  # fmt: skip
    assert rows["ONNX op"] == ["cases", "TEMPLATE passed", "XLA passed", "frontend"]
    assert rows["Abs"] == ["1", "1", "1", "rule"]  # test_abs, listed in neither file
    assert rows["ImageDecoder"] == ["9", "0", "0", "-"]  # no rule, no function body
    assert {r[-1] for r in rows.values()} <= {"frontend", "rule", "function body", "function body, rule", "-"}
    node_tests = hetero_sdk.conformance.onnx_node
    total = len(node_tests.ensure_cache())
    for device in ("TEMPLATE", "XLA"):
        listed = node_tests.read(node_tests.expected.SHIPPED / f"{device}.txt")
        assert f"{device} passes {total - len(listed):,}" in page
