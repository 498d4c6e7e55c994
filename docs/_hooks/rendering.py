"""A mkdocs hook fixing two things Python-Markdown and mkdocstrings render literally:

- the Sphinx roles of the SDK's docstrings (``:class:`~hetero_sdk.Core```) become plain code text
  (``Core``);
- an escaped pipe inside inline code in a table cell (```ci\\|thorough``` in GitHub-flavoured
  Markdown, as the conformance kit's README writes it) loses its backslash.
"""

from __future__ import annotations

import re
from typing import Any

_ROLE = re.compile(r":(?:py:)?(?:class|func|meth|attr|data|mod|exc|obj|const):<code>(~?)([^<]+)</code>")
_CODE = re.compile(r"<code>([^<]*\\\|[^<]*)</code>")


def _role(match: re.Match[str]) -> str:
    tilde, target = match.groups()
    return f"<code>{target.rsplit('.', 1)[-1] if tilde else target}</code>"


def on_page_content(html: str, **kwargs: Any) -> str:
    """Rewrites the roles and escaped pipes in a page's rendered HTML."""
    html = _ROLE.sub(_role, html)
    return _CODE.sub(lambda m: "<code>" + m.group(1).replace("\\|", "|") + "</code>", html)
