"""The pages as a static site, through MkDocs with the Material theme: ``render --site``
writes ``mkdocs.yml`` beside the pages folder. It names only the index pages, so it does not
go stale as entries come and go: the plugin (``mkdocs_plugin``) adds the others at build time.
"""

from __future__ import annotations

from pathlib import Path

from recordtool.atomic import write_atomic
from recordtool.record.config import SITE_CONFIG, Config, site_dir
from recordtool.render.frontmatter import quoted
from recordtool.render.sitemap import GRAPH, INDEX, WANTED, kind_page
from recordtool.render.write import RenderError

MARK = "# Written by `recordtool render --site`"


def mkdocs_config(config: Config, out: Path) -> str:
    """The text of ``mkdocs.yml`` for the pages in ``out``."""
    where = config.relative(out.parent / SITE_CONFIG)
    kinds = [f"      - {quoted(k.name)}: {quoted(kind_page(k.name))}" for k in config.kinds.values()]
    return "\n".join([
        f"{MARK}; written again by every such render.",
        f"# Build the site: mkdocs build -f {where} --strict  (pip install \".[site]\")",
        f"site_name: {quoted('The record')}",
        f"docs_dir: {quoted(out.name)}",
        f"site_dir: {quoted(site_dir(out))}",
        "use_directory_urls: false  # LIT-1.md is LIT-1.html: the pages' relative links hold",
        "validation:",
        "  anchors: warn  # with --strict, a link to a heading that is not there fails the build",
        "exclude_docs: |",
        "  .recordtool-*",
        "theme:",
        "  name: material",
        "  font: false  # the system's fonts: the site reads offline",
        "  features:",
        "    - search.highlight",
        "    - navigation.top",
        "plugins:",
        "  - search",
        "  - recordtool  # Mermaid, escaping, entries in the nav (recordtool/render/mkdocs_plugin.py)",
        "extra_css:",
        "  - assets/site.css  # code in tables wraps between words; a wide graph scrolls",
        "extra_javascript:",
        "  - assets/mermaid.min.js  # served by the site, from recordtool's package: no CDN",
        "markdown_extensions:",
        "  - md_in_html  # <details markdown=\"1\">",
        "  - pymdownx.escapeall  # a backslash escapes any character, as in CommonMark",
        "  - pymdownx.superfences:",
        "      custom_fences:",
        "        - name: mermaid",
        "          class: mermaid",
        "          format: !!python/name:pymdownx.superfences.fence_code_format",
        "nav:",
        f"  - {quoted('The record')}: {quoted(INDEX)}",
        f"  - {quoted('Graph')}: {quoted(GRAPH)}",
        f"  - {quoted('Wanted')}: {quoted(WANTED)}",
        f"  - {quoted('Kinds')}:",
        *kinds,
        "",
    ])


def write_mkdocs_config(config: Config, out: Path) -> Path:
    """Write ``mkdocs.yml`` beside ``out`` (resolved) unless it says the same; its path.
    RenderError when a ``mkdocs.yml`` is there that recordtool did not write."""
    path = out.parent / SITE_CONFIG
    text = mkdocs_config(config, out)
    try:
        before = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        before = None
    except (OSError, UnicodeDecodeError) as exc:
        raise RenderError(f"cannot read {config.relative(path)}: {exc}") from None
    if before is not None and not before.startswith(MARK):
        raise RenderError(f"{config.relative(path)} is not one recordtool wrote; move it away, or render the "
                          "site's pages into a folder of their own with -o")
    if before != text:
        write_atomic(path, text)
    return path
