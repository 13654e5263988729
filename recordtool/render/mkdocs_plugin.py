"""The MkDocs plugin ``recordtool`` that ``render --site`` names in ``mkdocs.yml``: what the
pages cannot say for themselves, it tells MkDocs. Mermaid and the site's CSS are served from
the site (``assets/``), so it reads offline. Only MkDocs imports it (an entry point).
"""

from __future__ import annotations

import html
import re
from pathlib import Path
from typing import Any

from mkdocs.plugins import BasePlugin
from mkdocs.structure.files import File, Files

from recordtool.record.load import id_sort_key
from recordtool.render import escape
from recordtool.render.page import PROPERTIES
from recordtool.render.sitemap import kind_page

FENCE = re.compile(r"^(?P<fence>```+|~~~+)mermaid[ \t]*\n(?P<body>.*?)^(?P=fence)[ \t]*$", re.MULTILINE | re.DOTALL)
CLICK = re.compile(r'^(?P<head>[ \t]*click[ \t]+\S+[ \t]+")(?P<href>[^":]*?)\.md(?P<anchor>#[^"]*)?"', re.MULTILINE)
MERMAID = "assets/mermaid.min.js"  # in this package, and in the site
CSS = "assets/site.css"
ASSETS = Path(__file__).parent / "assets"


def site_links(markdown: str) -> str:
    """``markdown`` with the relative ``.md`` targets of Mermaid ``click`` lines made ``.html``, as
    MkDocs makes those of Markdown links (``use_directory_urls: false``) but not in a fence."""

    def fence(match: re.Match[str]) -> str:
        body = CLICK.sub(lambda m: f'{m["head"]}{m["href"]}.html{m["anchor"] or ""}"', match["body"])
        return match.group(0).replace(match["body"], body, 1)

    return FENCE.sub(fence, markdown)


def safe_meta(meta: dict[str, Any]) -> dict[str, Any]:
    """A page's front matter with every string HTML-escaped (in lists too: Material writes it
    into the HTML raw), an entry's title as ``ID: title``, and no ``status`` (Material would
    take it for a status icon of its own)."""

    def safe(value: Any) -> Any:
        if isinstance(value, str):
            return html.escape(value)
        return [safe(v) for v in value] if isinstance(value, list) else value

    out = {key: safe(value) for key, value in meta.items() if key != "status"}
    if isinstance(meta.get("id"), str) and isinstance(meta.get("title"), str):
        out["title"] = html.escape(f"{meta['id']}: {meta['title']}")
    return out


def site_properties(markdown: str, meta: dict[str, Any]) -> str:
    """An entry page's ``markdown`` with the rows its properties table leaves to the front
    matter (kind, version, created, updated), from its front matter ``meta``, for the site
    shows no front matter."""
    head = f"{PROPERTIES}\n| --- | --- |\n"
    if head not in markdown or not isinstance(meta.get("kind"), str):
        return markdown
    kind = meta["kind"]
    rows = [f"| Kind | [{escape.line(kind)}]({escape.href(kind_page(kind))}) |"]
    rows += [f"| {name.capitalize()} | {escape.line(str(meta[name]))} |"
             for name in ("version", "created", "updated") if name in meta]
    return markdown.replace(head, head + "\n".join(rows) + "\n", 1)


def site_nav(nav: list[Any], pages: list[str]) -> list[Any]:
    """``mkdocs.yml``'s navigation, then the entries' pages (those at the top not named
    there) and the tags' pages, each in the record's order."""
    named = {v for item in nav if isinstance(item, dict) for v in item.values() if isinstance(v, str)}
    entries = sorted((p for p in pages if "/" not in p and p not in named), key=lambda p: id_sort_key(p[:-3]))
    tags = sorted(p for p in pages if p.startswith("tags/"))
    return [*nav, *([{"Entries": entries}] if entries else []), *([{"Tags": tags}] if tags else [])]


class MermaidLinks(BasePlugin):  # type: ignore[type-arg,no-untyped-call]
    """The site's Mermaid (links, script, search), escaped front matter and navigation."""

    def on_files(self, files: Files, /, *, config: Any) -> Files:
        config.nav = site_nav(config.nav or [], [f.src_uri for f in files.documentation_pages()])
        for asset in (MERMAID, CSS):
            files.append(File.generated(config, asset, abs_src_path=str(ASSETS / asset.split("/")[-1])))
        return files

    def on_page_markdown(self, markdown: str, /, *, page: Any, **_kwargs: Any) -> str:
        markdown = site_properties(markdown, page.meta)
        page.meta = safe_meta(page.meta)
        return site_links(markdown)

    def on_page_content(self, content: str, /, **_kwargs: Any) -> str:
        return content.replace('<pre class="mermaid">', '<pre class="mermaid" data-search-exclude>')
