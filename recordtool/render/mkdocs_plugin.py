"""The MkDocs plugin ``recordtool`` that `render --site` names in ``mkdocs.yml``.

What the pages cannot say for themselves, it tells MkDocs:

- The Mermaid graphs' ``click`` lines. A page links to another as ``LIT-1.md``, which GitHub
  and Obsidian follow and which MkDocs rewrites to ``LIT-1.html`` in ordinary Markdown links,
  but not inside a Mermaid fence. The plugin rewrites those targets as MkDocs would
  (``use_directory_urls: false``), only inside ``mermaid`` fences, only in ``click`` lines, only
  relative ``.md`` targets.
- The front matter is record text, and MkDocs Material writes ``page.meta`` into the HTML
  raw (the ``<title>``, the header, the navigation): every string of it is HTML-escaped here,
  and an entry's title is shown as ``ID: title`` (the browser's tab carries the id).

It is registered as an entry point (``mkdocs.plugins``) and imported only by MkDocs, so the
rest of recordtool never imports mkdocs.
"""

from __future__ import annotations

import html
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


def safe_meta(meta: dict[str, Any]) -> dict[str, Any]:
    """A page's front matter with every string HTML-escaped (in lists too), and an entry's
    title as ``ID: title``."""

    def safe(value: Any) -> Any:
        if isinstance(value, str):
            return html.escape(value)
        return [safe(v) for v in value] if isinstance(value, list) else value

    out = {key: safe(value) for key, value in meta.items()}
    if isinstance(meta.get("id"), str) and isinstance(meta.get("title"), str):
        out["title"] = html.escape(f"{meta['id']}: {meta['title']}")
    return out


class MermaidLinks(BasePlugin):  # type: ignore[type-arg,no-untyped-call]
    """The site's Mermaid links, and its front matter escaped."""

    def on_page_markdown(self, markdown: str, /, *, page: Any, **_kwargs: Any) -> str:
        page.meta = safe_meta(page.meta)
        return site_links(markdown)
