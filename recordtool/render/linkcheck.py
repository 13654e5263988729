"""Link checking: every link and image of rendered pages must resolve.

Pages are parsed with the shared markdown-it parser, so what is checked is what a Markdown
viewer sees as a link (not a regex's guess); the ``click`` lines of Mermaid graph views are
checked too. A relative destination is resolved against its page's folder; URLs (``https:``,
``mailto:``) and same-page anchors are not followed.
"""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote

from recordtool.record.mentions import SCHEME, markdown
from recordtool.render.frontmatter import blanked

_CLICK = re.compile(r'^\s*click\s+\S+\s+(?:href\s+)?"([^"]*)"')


@dataclass(frozen=True)
class BrokenLink:
    """A link on ``page`` (relative to the output folder), line ``line``, that goes nowhere."""

    page: str
    line: int
    target: str
    reason: str

    def __str__(self) -> str:
        return f"{self.page}:{self.line}: broken link '{self.target}': {self.reason}"


def links(text: str) -> list[tuple[int, str]]:
    """Every (line, destination) of links, images and Mermaid clicks in ``text`` (1-based lines)."""
    out: list[tuple[int, str]] = []
    for token in markdown().parse(blanked(text)):
        if token.type == "fence" and token.info.strip().split(" ")[0] == "mermaid":
            first = (token.map[0] if token.map else 0) + 2
            for offset, text_line in enumerate(token.content.split("\n")):
                match = _CLICK.match(text_line)
                if match:
                    out.append((first + offset, match.group(1)))
            continue
        if token.type != "inline" or not token.children:
            continue
        line = (token.map[0] if token.map else 0) + 1
        for child in token.children:
            if child.type in ("softbreak", "hardbreak"):
                line += 1
            elif child.type == "link_open":
                out.append((line, str(child.attrs.get("href", ""))))
            elif child.type == "image":
                out.append((line, str(child.attrs.get("src", ""))))
    return out


def resolve(page: str, href: str) -> str | None:
    """Where ``href`` on ``page`` points, relative to the output folder (``../`` when outside
    it); None for what is not a file link (a URL, an anchor on the same page)."""
    if not href or href.startswith("#") or SCHEME.match(href) or href.startswith("//"):
        return None
    path = unquote(href.split("#", 1)[0].split("?", 1)[0])
    if not path:
        return None
    if path.startswith("/"):
        return path
    return posixpath.normpath(posixpath.join(posixpath.dirname(page), path))


def check_pages(pages: Mapping[str, bytes | str], exists: Callable[[str], bool]) -> list[BrokenLink]:
    """Check the Markdown ``pages`` (path -> content); ``exists(path)`` says whether a path
    that is not one of the pages exists (a figure, a file of the project)."""
    broken: list[BrokenLink] = []
    for page in sorted(pages):
        if not page.endswith(".md"):
            continue
        content = pages[page]
        text = content.decode("utf-8") if isinstance(content, bytes) else content
        for line, href in links(text):
            target = resolve(page, href)
            if target is None:
                continue
            if target.startswith("/"):
                broken.append(BrokenLink(page, line, href, "an absolute path; write a relative link"))
            elif target not in pages and not exists(target):
                broken.append(BrokenLink(page, line, href, f"{target} does not exist"))
    return broken


def check_folder(out: Path, pages: Iterable[str] | None = None) -> list[BrokenLink]:
    """Check the pages in the folder ``out`` (every ``.md`` file under it, or ``pages``)."""
    if pages is None:
        pages = sorted(p.relative_to(out).as_posix() for p in out.rglob("*.md") if p.is_file())
    contents = {p: (out / p).read_bytes() for p in pages if p.endswith(".md") and (out / p).is_file()}
    base = str(out)

    def exists(target: str) -> bool:
        return os.path.exists(os.path.join(base, *target.split("/")))

    return check_pages(contents, exists)
