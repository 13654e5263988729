"""Link checking: every link, image and Mermaid ``click`` of rendered pages must resolve.

Pages are parsed with the shared markdown-it parser, so what is checked is what a Markdown
viewer sees as a link; URLs and same-page anchors are not followed.
"""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote

from recordtool import parallel
from recordtool.record.mentions import SCHEME, markdown
from recordtool.render.frontmatter import blanked

_CLICK = re.compile(r'^\s*click\s+\S+\s+(?:href\s+)?"([^"]*)"')
PARALLEL_MIN = 1_000  # pages; below this starting workers costs more than they save


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


def check_folder(out: Path, pages: Iterable[str], *, jobs: int | None = None,
                 progress: parallel.Progress | None = None) -> list[BrokenLink]:
    """Check the ``pages`` (Markdown files) in the folder ``out``, in the order of their paths,
    shared by ``jobs`` processes (None: every core); ``progress``: told of the pages checked."""
    base = str(out)

    def path(page: str) -> str:
        return os.path.join(base, *page.split("/"))

    names = sorted(page for page in pages if os.path.isfile(path(page)))
    known = frozenset(names)

    def check(page: str) -> list[BrokenLink]:
        with open(path(page), "rb") as handle:
            text = handle.read().decode("utf-8")
        broken = []
        for line, href in links(text):
            target = resolve(page, href)
            if target is None:
                continue
            if target.startswith("/"):
                broken.append(BrokenLink(page, line, href, "an absolute path; write a relative link"))
            elif target not in known and not os.path.exists(path(target)):
                broken.append(BrokenLink(page, line, href, f"{target} does not exist"))
        return broken

    found = parallel.map_items(lambda chunk: [check(page) for page in chunk], names, jobs=jobs,
                               min_items=PARALLEL_MIN, progress=progress)
    return [broken for page in found for broken in page]
