"""Prose written straight from markdown-it's token stream, held byte for byte to the writer it
replaced: a frozen copy of that writer, which built a syntax tree first (``frozen_prose``);


Compared on realistic bodies (``benchmarks/bench_scale.py``), on bodies with edge cases spliced
in, on hand-written edge cases, and on Markdown generated from pieces; with every kind of
``Style`` a page uses.
"""

from __future__ import annotations

import random
import re
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from recordtool.render import prose
from recordtool.render.prose import Style
from tests.render import frozen_prose

PATTERN = re.compile(r"\b(?:LIT|NOTE|THEORY)-\d+\b")


def _linked(target: str) -> tuple[str, str | None]:
    return (f"{target}.md", None) if target != "THEORY-9" else ("wanted.md", "not in the record")


def _page(target: str) -> tuple[str, str | None]:
    return (f"../x y/{target}(1).md", None) if target != "THEORY-9" else ("../wanted.md", 'not "in" the record')


def _some(target: str) -> tuple[str, str | None] | None:
    return None if target.startswith("NOTE") else (f"{target}.md", None)


STYLES = {
    "linked": Style(PATTERN, _linked),
    "page": Style(PATTERN, _page, lambda href: f"../up/{href}"),
    "some ids left as text": Style(PATTERN, _some, lambda href: f"<{href}>", min_heading=1),
    "headings kept": Style(PATTERN, _linked, min_heading=1),
}


def assert_as_frozen(text: str) -> None:
    """``block`` and ``inline`` write ``text`` as the frozen writer did, in every style."""
    for name, style in STYLES.items():
        assert prose.block(text, style) == frozen_prose.block(text, style), (name, text)
        if name == "linked":  # (inline, in one style)
            assert prose.inline(text, style) == frozen_prose.inline(text, style), (name, text)


EDGES = [
    # lists: nested, loose, tight, ordered with a start, empty items, items holding blocks
    "- a\n  - b THEORY-1\n    1. c\n       - d\n- e\n",
    "- a\n\n- b\n\n  second paragraph\n- c\n",
    "3. x LIT-2\n4. y\n\n7) z\n8) w\n",
    "-\n- a\n-\n\n  after\n",
    "- a\n\n  ```py\n  THEORY-1\n  ```\n- b\n\n      indented code\n",
    "1. # a heading in an item\n2. > a quote\n   > THEORY-2\n",
    "* star\n+ plus\n- dash\n",
    "- a\n- b\n\n\n- c\n",
    "- [ ] task THEORY-3\n- [x] done\n",
    "10. ten\n11. eleven\n",
    "- a\n  b lazily\ncontinued\n",
    # tables: alignment, pipes in code and escaped, ids, short and long rows, empty cells
    "| a | b | c |\n|:--|:-:|--:|\n| `x\\|y` | THEORY-1 | [l](NOTE-2 \"t\") |\n| 1 |\n| 1 | 2 | 3 | 4 |\n",
    "| x |\n| - |\n|  |\n| \\| |\n",
    "a | b\n--|--\nTHEORY-1 | *em*\n",
    "- | a |\n  | - |\n  | b |\n",
    "> | a |\n> | - |\n> | LIT-4 |\n",
    "| h |\n|---|\n",
    # HTML blocks and inline HTML, shown as text
    "<div>\nTHEORY-1\n</div>\n",
    "<!-- a comment THEORY-2 -->\n\ntext",
    "<script>\nalert(1)\n\nmore\n</script>\n",
    "a <b>x</b> <span title='THEORY-7'>y</span> <br/>\nTHEORY-8",
    "<details>\n<summary>s</summary>\n\n- THEORY-1\n\n</details>\n",
    # links: titles, ids, relative, anchors, references, autolinks, empty text
    '[a](THEORY-1 "t") [b](<x y.md> \'title\') [c](rel.md (paren title)) [d](#anchor) [e](/abs)',
    '[a][r] and [r] and [THEORY-2]\n\n[r]: THEORY-2 "ref title"\n[theory-2]: https://x.org',
    "<https://x.org/THEORY-6> <mail@x.org> <THEORY-1>",
    "[](THEORY-1) [](https://x.org) [](rel.md) [ ](THEORY-9)",
    '[it](THEORY-9 "own") [it](THEORY-9) [*LIT-3* and `c`](NOTE-5 "t")',
    "[link **strong THEORY-1**](https://x.org/a_(b))",
    "[a\nb](THEORY-1)\n[c  \nd](THEORY-2)",
    "[a](https://x.org/THEORY-6.md) [b](../notes/NOTE-12.md) [c](THEORY-1.md#part)",
    # code spans with backticks, fences, indented code
    "`` a`b `` ```x``` `` ` `` ` `` ` and `THEORY-1` and ``THEORY-2`` ` a ` `  `",
    "```\nTHEORY-1\n```\n\n~~~py {x}\n```\n~~~\n\n````\n```\n````\n",
    "```a`b\ncode\n```\n",
    "    THEORY-4 indented\n    more\n\n\tTHEORY-5 tab\n",
    "```\nunclosed THEORY-1",
    # emphasis runs
    "***a*** **a *b* c** _a_b_ *a **b*** __THEORY-1__ _THEORY-2_ snake_THEORY-4 *THEORY-1*THEORY-2*",
    "**bold\nacross lines** *em  \nhard*",
    "*a\n# not a heading*",
    "**",
    "* a *\n",
    # escapes, entities, line starts that need escaping
    "\\*not em\\* \\# x a\\\nb \\THEORY-1 THEORY\\-1 \\\\ \\`",
    "&amp; &#45; THEORY&#45;1 &copy; &#10; &nbsp; &bogus; &#x2D;",
    "1986\\. A year\n\\- x\na\n\\+ b\n\\# c\n2\\) d",
    "a\n# b",
    "word\n=== not\n",
    "#hashtag and # spaced\n",
    # math, mentions in code
    "$x_1$ and $$\\sum_i a_i$$ and $W_{OV}$ with THEORY-1 in $THEORY-2$",
    "`THEORY-1` in code and THEORY-2 in prose\n\n```\nTHEORY-3\n```\n",
    # headings, quotes, rules, breaks
    "# a\n## b\n###### f\n####### seven\n#\n# THEORY-1 *x* `c`\n",
    "Setext THEORY-1\n===\n\nTwo\n---\n",
    "> a\n> > b\n>\n> c\n\n> lazy\ncontinued\n\n>\n",
    "***\n---\n___\n* * *\n",
    "a  \nb\\\nc \nd\n",
    # images
    '![alt *x*](fig.png "t") ![a](THEORY-1) ![b](https://x.org/i.png) ![](empty.png)',
    # odd characters
    "a\r\nb\rc\x00d\u2028e\u00a0f",
    "\t- tab list\n\n-\ttab item\n",
    "  \n\n   \n",
    "|",
    "[",
    "> ",
    "1.",
    # lists that end at an empty item, one after the other; paragraphs of a no-break space
    "- a\n-\n\n\n- c\n-\n\n\n- e",
    "1) a\n2)\n\n\n1) b\n\n\u00a0\n\n1) c",
    "a\n\n\u00a0\n\nb\n\n- \u00a0",
]


@pytest.mark.parametrize("text", EDGES)
def test_edge_cases_are_written_as_the_frozen_writer_wrote_them(text: str) -> None:
    assert_as_frozen(text)


def _synthetic() -> Callable[[random.Random, list[str], str | None], str]:
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    from bench_scale import _markdown  # type: ignore[import-not-found]

    return _markdown  # type: ignore[no-any-return]


def test_realistic_bodies_are_written_as_the_frozen_writer_wrote_them() -> None:
    markdown = _synthetic()
    rng = random.Random(14)
    for _ in range(100):
        mentions = [f"{rng.choice(['THEORY', 'NOTE', 'LIT'])}-{rng.randint(1, 12)}" for _ in range(rng.randint(0, 8))]
        assert_as_frozen(markdown(rng, mentions, rng.choice([None, "THEORY-1"])))


def test_realistic_bodies_with_edge_cases_spliced_in() -> None:
    """Edge cases inside realistic structure: between blocks, inside lines, list items, quotes."""
    markdown = _synthetic()
    rng = random.Random(41)
    for _ in range(100):
        lines = markdown(rng, ["THEORY-1", "NOTE-2", "THEORY-9"], None).split("\n")
        for _ in range(rng.randint(1, 4)):
            at = rng.randrange(len(lines))
            edge = rng.choice(EDGES)
            if rng.random() < 0.5:  # inside a line
                cut = rng.randint(0, len(lines[at]))
                lines[at] = lines[at][:cut] + edge + lines[at][cut:]
            else:  # a block of its own, or continuing the block before it
                lines[at:at] = rng.choice(["", "  ", "> ", "- "]) + edge.replace("\n", "\n" + rng.choice(["", "  "]))
        assert_as_frozen("\n".join(lines))


PIECES = ["THEORY-1", "NOTE-22", "LIT-3", "THEORY-9", "word", "x", " ", "  ", "\n", "\n\n", "  \n", "\t", "_", "__",
          "*", "**", "***", "`", "``", "[", "]", "(", ")", "](THEORY-2)", "](LIT-4.md)", "](NOTE-5 \"own title\")",
          "[it](THEORY-9)", "[r](rel.md)", "[a](#b)", "[](THEORY-2)", "](https://x.org)", "![a](THEORY-7)",
          "![b](fig.png \"t\")", "<b>", "</b>", "<div>\n", "<!-- c -->", "<https://x.org/THEORY-6>", "&#45;", "&amp;",
          "\\", "\\-", "\\*", "    ", "> ", "- ", "* ", "+ ", "1. ", "2) ", "# ", "### ", "=", "---", "\n===\n",
          "| a | THEORY-1 |\n| - | :-: |\n| [x](NOTE-5) | `a|b` |\n", "|", "```\n", "~~~py\n", "[r]: THEORY-5\n",
          "[r]", "\"", "'", "%", "$x_1$", "e.g. ", ". ", "Then ", "\x00", "\r\n", "1986. "]


@given(st.lists(st.sampled_from(PIECES), max_size=40))
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_generated_markdown_is_written_as_the_frozen_writer_wrote_it(pieces: list[str]) -> None:
    assert_as_frozen("".join(pieces))


def test_the_comparison_catches_a_writer_that_differs(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each of these changes to the writer shows on the realistic bodies or the edge cases."""
    markdown = _synthetic()
    rng = random.Random(3)
    texts = EDGES + [markdown(rng, ["THEORY-1"], None) for _ in range(30)]

    def differs() -> bool:
        try:
            for text in texts:
                assert_as_frozen(text)
        except AssertionError:
            return True
        return False

    assert not differs()
    for name, broken in [("_tight", lambda tokens, i: False),
                         ("_html_block", lambda content: [content]),
                         ("_table", lambda tokens, i, style: (["|"], i + 1))]:
        with monkeypatch.context() as patch:
            patch.setattr(prose, name, broken)
            assert differs(), name


