"""The figures of a check on a claim's page: grouped by run (the main run, then each control;
further seeds collapsed), numbered across the page, each captioned with the title and caption
kept beside it (``loss.png.json``, see ``recordtool.verify.context``) or its file name.
"""

from __future__ import annotations

import html
import json
import os
from typing import TYPE_CHECKING

from recordtool.record.confine import not_plain, read_inside
from recordtool.render import escape
from recordtool.render.sitemap import Context, figure_file, relative
from recordtool.verify.context import SIDECAR

if TYPE_CHECKING:
    from recordtool.verify.verdict import CheckVerdict

MAX_SIDECAR = 64 * 1024  # bytes; a title and a caption are a few hundred


def caption(ctx: Context, figure: str) -> tuple[str, str]:
    """The title and caption a check gave ``figure`` (a path relative to the project root),
    ``("", "")`` when it gave none or they cannot be read: its sidecar is read only as a plain
    file inside the figure folder, no larger than ``MAX_SIDECAR`` (its words reach the page)."""
    root = str(ctx.project.config.root)
    path = os.path.join(root, figure + SIDECAR)
    try:
        if not_plain(path) is not None:
            return "", ""
        raw = read_inside(path, os.path.join(root, ctx.verdicts, "figures"), limit=MAX_SIDECAR)
        if len(raw) > MAX_SIDECAR:
            return "", ""
        data = json.loads(raw.decode("utf-8"))
    except (OSError, ValueError):
        return "", ""
    if not isinstance(data, dict):
        return "", ""
    title, text = data.get("title"), data.get("caption")
    return (title if isinstance(title, str) else "", text if isinstance(text, str) else "")


def figure_lines(ctx: Context, verdict: CheckVerdict, claim: str, page: str, numbers: list[int]) -> list[str]:
    """The figures of ``verdict`` grouped by run, numbered on from ``numbers[0]`` (which is
    advanced: the numbering runs across the page's checks)."""
    controls = [c.name for c in verdict.controls]
    base = f"{ctx.verdicts}/figures/{claim}/"
    groups: dict[tuple[int, int, str], list[tuple[str, str]]] = {}  # -> (figure, its copy)
    outside: list[str] = []
    absent: list[str] = []
    root = ctx.project.config.root
    for figure in verdict.figures:
        target = figure_file(figure, ctx.verdicts, claim)
        if target is None:
            outside.append(figure)
            continue
        if not os.path.lexists(root / figure) or not_plain(root / figure) is not None:
            absent.append(figure)  # (render copies no such file: ``write.read_figure``)
            continue
        rest = _after_check(figure[len(base):].split("/"), verdict.name) if figure.startswith(base) else []
        rest = rest or [figure.rsplit("/", 1)[-1]]
        variant = rest[0] if len(rest) > 1 and rest[0] in controls else ""
        if variant:
            rest = rest[1:]
        seed = 0
        if len(rest) > 1 and rest[0].startswith("seed-") and rest[0][5:].isdigit():
            seed = int(rest[0][5:])
        order = controls.index(variant) if variant else -1
        groups.setdefault((order, seed, variant), []).append((figure, target))
    out: list[str] = []
    for (_order, seed, variant), figures in sorted(groups.items()):
        if seed:  # a further seed's figures: collapsed, the first seed's are the ones to read
            plain = f"control {html.escape(variant)}" if variant else "main run"
            out += ["", '<details markdown="1">', f"<summary>Figures: {plain}, seed {seed}</summary>"]
        else:
            out += ["", f"#### Figures: {f'control {escape.code(variant)}' if variant else 'main run'}"]
        for figure, target in figures:
            numbers[0] += 1
            title, text = caption(ctx, figure)
            file = escape.line(figure.rsplit("/", 1)[-1])
            number = f"Figure {numbers[0]}"
            alt = f"{number}. {escape.line(title) if title else file}"
            words = f"*{number}. {escape.line(title.rstrip('.'))}.*" if title else f"*{number}.* {file}"
            if text:
                words += f" {escape.line(text)}"
            out += ["", f"![{alt}]({escape.href(relative(page, target))})", "", words]
        if seed:
            out += ["", "</details>"]
    for figure in outside:
        out += ["", f"Figure {escape.code(figure)} is not in the claim's figure folder and is not shown."]
    for figure in absent:
        out += ["", f"Figure {escape.code(figure)} is named by the verdict but is not a file there; it is not shown."]
    return out


def _after_check(parts: list[str], check: str) -> list[str]:
    """The parts of a figure's path after its check's folder: ``<check>/...`` or, as ``verify``
    keeps them, ``<kept>/<check>/...`` (``<kept>``: the folder of one verdict's figures)."""
    if len(parts) > 2 and parts[0] != check and parts[1] == check:
        parts = parts[1:]
    return parts[1:] if len(parts) > 1 and parts[0] == check else []
