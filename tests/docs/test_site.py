"""The documentation site: ``mkdocs build --strict`` passes with no warning, and the built pages have
what Material for MkDocs gives (read from their HTML, no browser): the sidebar and the tabs of the nav
groups, Pygments-highlighted code with copy buttons, search, and a light/dark palette toggle."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


class Page(HTMLParser):
    """A built page as its elements' ``(tag, attributes)``, in document order, and the theme's config
    (the ``__config`` JSON script)."""

    def __init__(self, path: Path) -> None:
        super().__init__()
        self.elements: list[tuple[str, dict[str, str]]] = []
        self.config: dict[str, object] = {}
        self._in_config = False
        self.feed(path.read_text(encoding="utf-8"))

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = {k: v or "" for k, v in attrs}
        self.elements.append((tag, attributes))
        self._in_config = attributes.get("id") == "__config"

    def handle_data(self, data: str) -> None:
        if self._in_config:
            self.config = json.loads(data)
            self._in_config = False

    def with_class(self, name: str, tag: str | None = None) -> list[dict[str, str]]:
        """The attributes of each element (of ``tag``) whose class list has ``name``."""
        return [a for t, a in self.elements if name in a.get("class", "").split() and tag in (None, t)]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site, built once for this module; the build must be strict-clean (no warning at all)."""
    pytest.importorskip("material", reason="pip install -e '.[docs]' (mkdocs-material)")
    pytest.importorskip("mkdocstrings_handlers.python")
    folder = tmp_path_factory.mktemp("site")
    done = subprocess.run(  # not --quiet: it hides the warnings that --strict counts
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(folder)],
        cwd=ROOT,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    assert "WARNING" not in done.stderr, done.stderr[-4000:]
    return folder


def _nav() -> list[object]:
    """mkdocs.yml's nav (tags such as ``!!python/name:`` read as None: only the nav matters here)."""
    import yaml  # mkdocs's dependency: the tests that read the nav need the site built

    class Loader(yaml.SafeLoader):
        pass

    Loader.add_multi_constructor("", lambda loader, suffix, node: None)
    return yaml.load((ROOT / "mkdocs.yml").read_text(), Loader=Loader)["nav"]  # a SafeLoader


def _nav_pages(entries: list[object]) -> list[str]:
    pages: list[str] = []
    for entry in entries:
        value = next(iter(entry.values())) if isinstance(entry, dict) else entry
        pages += _nav_pages(value) if isinstance(value, list) else [str(value)]
    return pages


def test_every_page_of_the_docs_folder_is_in_the_nav_and_built(site: Path) -> None:
    listed = _nav_pages(_nav())
    docs = ROOT / "docs"
    on_disk = sorted(str(p.relative_to(docs)) for p in docs.rglob("*.md") if "_hooks" not in p.parts)
    assert sorted(listed) == on_disk
    for page in listed:
        built = site / ("index.html" if page == "index.md" else page.removesuffix(".md") + "/index.html")
        assert built.is_file(), page


def test_nav_groups_are_tabs_and_the_sidebar_lists_the_group_s_pages(site: Path) -> None:
    page = Page(site / "plugin-tutorial" / "index.html")
    nav = _nav()
    assert len(page.with_class("md-tabs__item", "li")) == len(nav) <= 6  # one row of tabs, not three
    assert page.with_class("md-nav--primary", "nav"), "no sidebar navigation"
    active = page.with_class("md-nav__item--section", "li")
    assert any("md-nav__item--active" in a["class"] for a in active)  # the page's group, as a section
    links = {a.get("href") for t, a in page.elements if t == "a" and "md-nav__link" in a.get("class", "")}
    assert {"./", "../adding-an-op/", "../conformance/", "../fuzzing/"} <= links  # the group's pages
    tabs = {a.get("href") for t, a in page.elements if t == "a" and "md-tabs__link" in a.get("class", "")}
    assert {"..", "../onnx/", "./", "../reference/hooks/"} == tabs  # the other groups, one tab each


def test_code_is_highlighted_by_language_with_copy_buttons(site: Path) -> None:
    page = Page(site / "plugin-tutorial" / "index.html")
    blocks = {a["class"].split()[0] for a in page.with_class("highlight", "div")}
    assert {"language-python", "language-toml", "language-bash", "language-text"} <= blocks
    token_classes = {a["class"] for t, a in page.elements if t == "span" and "class" in a}
    assert {"kn", "k", "nc"} <= token_classes  # Pygments' keyword, import and class-name tokens
    assert "content.code.copy" in page.config["features"]  # type: ignore[operator]
    assert "clipboard.copy" in page.config["translations"]  # type: ignore[operator]


def test_search_covers_the_generated_references(site: Path) -> None:
    page = Page(site / "index.html")
    assert page.with_class("md-search", "div")
    index = json.loads((site / "search" / "search_index.json").read_text())
    locations = {doc["location"] for doc in index["docs"]}
    assert {"reference/graph-api/#node", "reference/ops/#convolution"} <= locations


def test_light_and_dark_schemes_with_a_toggle(site: Path) -> None:
    page = Page(site / "index.html")
    toggles = [a for t, a in page.elements if t == "input" and "data-md-color-scheme" in a]
    assert {a["data-md-color-scheme"] for a in toggles} >= {"default", "slate"}
    assert page.with_class("md-header__button", "label")


def test_op_and_coverage_tables_are_tables_and_signatures_are_highlighted(site: Path) -> None:
    ops = Page(site / "reference" / "ops" / "index.html")
    assert len([t for t, _ in ops.elements if t == "table"]) > 100
    headings = [a for t, a in ops.elements if t == "h3"]
    assert len(ops.with_class("language-python", "div")) == len(headings)  # one factory signature per op
    coverage = Page(site / "reference" / "onnx-coverage" / "index.html")
    assert [t for t, _ in coverage.elements].count("table") == 1
    assert len([t for t, _ in coverage.elements if t == "tr"]) > 150


def test_the_conformance_page_is_one_page_with_the_kit_readme_inside(site: Path) -> None:
    page = Page(site / "conformance" / "index.html")
    assert [a.get("id") for t, a in page.elements if t == "h1"] == ["conformance-kit"]
    sections = [a.get("id") for t, a in page.elements if t == "h2"]
    assert {"running-it", "what-it-checks", "reading-a-failure", "for-a-new-device"} <= set(sections)
