"""The MkDocs plugin ``recordtool`` that `render --site` names in ``mkdocs.yml``.

Its one job: the Mermaid graphs' ``click`` lines. A page links to another as ``LIT-1.md``, which
GitHub and Obsidian follow and which MkDocs rewrites to ``LIT-1.html`` in ordinary Markdown
links, but not inside a Mermaid fence, where it stays a link to a file the site does not have.
The plugin rewrites those targets as MkDocs would (``use_directory_urls: false``), and only
inside ``mermaid`` fences, only in ``click`` lines, only relative ``.md`` targets.

It is registered as an entry point (``mkdocs.plugins``) and imported only by MkDocs, so the
rest of recordtool never imports mkdocs.
"""

from __future__ import annotations

import re
from typing import Any

from mkdocs.plugins import BasePlugin

FENCE = re.compile(r"^(?P<fence>```+|~~~+)mermaid[ \t]*\n(?P<body>.*?)^(?P=fence)[ \t]*$", re.MULTILINE | re.DOTALL)
CLICK = re.compile(r'^(?P<head>[ \t]*click[ \t]+\S+[ \t]+")(?P<href>[^":]*?)\.md(?P<anchor>#[^"]*)?"', re.MULTILINE)


def site_links(markdown: str) -> str:
    """``markdown`` with the ``.md`` targets of Mermaid ``click`` lines made ``.html``."""

    def fence(match: re.Match[str]) -> str:
        body = CLICK.sub(lambda m: f'{m["head"]}{m["href"]}.html{m["anchor"] or ""}"', match["body"])
        return match.group(0).replace(match["body"], body, 1)

    return FENCE.sub(fence, markdown)


class MermaidLinks(BasePlugin):  # type: ignore[type-arg,no-untyped-call]
    """Makes the Mermaid graphs' node links point at the site's pages."""

    def on_page_markdown(self, markdown: str, /, **_kwargs: Any) -> str:
        return site_links(markdown)
