"""What the compiled modules compute, printed so that a test can hold it to the pure Python modules.

    python tests/compiled_probe.py DOCUMENTS SEED

Run twice by ``tests/test_compiled.py``, once with ``RECORDTOOL_PURE_PYTHON=1`` and once without,
each a fresh process: for ``DOCUMENTS`` Markdown documents (realistic bodies from
``benchmarks/bench_scale.py``, the same with edge cases spliced in, and documents made of pieces
that interact: block markup, emphasis, links, code, entities, ids), one JSON line per document
with what each function of the compiled modules that a page's prose goes through gives for it:
markdown-it's tokens from ``mentions.parse`` (every field, children included), the mentions
``find_mentions`` and ``compose_body`` find, the prose ``compose_body`` packs, and the prose
``block`` and ``inline`` write in several styles. An exception is printed as its type and message.
The first line says which modules ran (``recordtool.compiled.state``).
"""

from __future__ import annotations

import json
import random
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
PATTERN = re.compile(r"\b(?:LIT|NOTE|THEORY)-\d+\b")

# Pieces whose neighbours change what they are (tests/render/test_prose_stream.py has more on each).
PIECES = ["THEORY-1", "NOTE-22", "LIT-3", "word", "x", " ", "  ", "\n", "\n\n", "  \n", "\t", "_", "__", "*", "**",
          "`", "``", "[", "]", "(", ")", "](THEORY-2)", "](LIT-4.md)", "](NOTE-5 \"own title\")", "[it](THEORY-9)",
          "[r](rel.md)", "[a](#b)", "[](THEORY-2)", "![a](THEORY-7)", "<b>", "<div>\n", "<!-- c -->",
          "<https://x.org/THEORY-6>", "&#45;", "&amp;", "&#35;", "\\", "\\*", "    ", "> ", "- ", "* ", "1. ", "2) ",
          "# ", "### ", "---", "\n===\n", "| a | THEORY-1 |\n| - | :-: |\n| [x](NOTE-5) | `a|b` |\n", "|", "|-|\n",
          "```\n", "~~~py\n", "[r]: THEORY-5\n", "[r]", "\"", "$x_1$", "\x00", "\r\n", "\ud800", "é", "1986. "]


def documents(count: int, seed: int) -> list[str]:
    sys.path.insert(0, str(REPO / "benchmarks"))
    from bench_scale import _markdown  # type: ignore[import-not-found]

    rng = random.Random(seed)
    out: list[str] = []
    for n in range(count):
        ids = [f"{rng.choice(['THEORY', 'NOTE', 'LIT'])}-{rng.randint(1, 12)}" for _ in range(rng.randint(0, 8))]
        if n % 3 == 0:
            out.append(_markdown(rng, ids, rng.choice([None, "THEORY-1"])))
        elif n % 3 == 1:
            lines = _markdown(rng, ids, None).split("\n")
            for _ in range(rng.randint(1, 4)):
                at = rng.randrange(len(lines))
                piece = "".join(rng.choice(PIECES) for _ in range(rng.randint(1, 6)))
                lines[at] = lines[at][: len(lines[at]) // 2] + piece + lines[at][len(lines[at]) // 2:]
            out.append("\n".join(lines))
        else:
            out.append("".join(rng.choice(PIECES) for _ in range(rng.randint(1, 40))))
    return out


def _token(token: Any) -> list[Any]:
    return [token.type, token.tag, token.nesting, sorted(token.attrs.items()), token.map, token.level,
            None if token.children is None else [_token(child) for child in token.children],
            token.content, token.markup, token.info, sorted(token.meta.items(), key=repr), token.block, token.hidden]


def _outcome(work: Callable[..., Any], *args: Any) -> Any:
    """What ``work(*args)`` gives, or what it raised (part of what is compared)."""
    try:
        return work(*args)
    except Exception as exc:
        return f"raised {type(exc).__name__}: {exc}"


def main() -> None:
    from recordtool import compiled
    from recordtool.record.mentions import find_mentions, parse
    from recordtool.render import prose
    from recordtool.render.prose import Style

    def linked(target: str) -> tuple[str, str | None]:
        return (f"{target}.md", None) if target != "LIT-3" else ("wanted.md", 'not "in" the record')

    def some(target: str) -> tuple[str, str | None] | None:
        return None if target.startswith("NOTE") else (f"../x y/{target}(1).md", None)

    styles = [Style(PATTERN, linked), Style(PATTERN, some, lambda href: f"../up/{href}", min_heading=1)]
    count, seed = int(sys.argv[1]), int(sys.argv[2])
    print(json.dumps(compiled.state()))
    for text in documents(count, seed):
        row: list[Any] = [
            _outcome(lambda t: [_token(token) for token in parse(t)[0]], text),
            _outcome(lambda t: repr(find_mentions(t, PATTERN)), text),
            _outcome(lambda t: repr(prose.compose_body(t, PATTERN)), text),
        ]
        for style in styles:
            row.append(_outcome(prose.block, text, style))
            row.append(_outcome(prose.inline, text, style))
        print(json.dumps([text, row], default=repr))


if __name__ == "__main__":
    main()
