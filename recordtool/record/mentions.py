"""Mentions: ids written in Markdown prose, found by parsing it (never inside code).

The prose is parsed with markdown-it-py; ids are looked for in text and link targets only,
so ``THEORY-988`` inside backticks or a fenced block is not a mention. Each mention keeps its
line (counted from the start of the prose) and the sentence around it, for backlinks.
"""

from __future__ import annotations

import bisect
import itertools
import logging
import re
import sys
from collections.abc import Callable, Container, MutableMapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, cast

from markdown_it import MarkdownIt
from markdown_it.common.normalize_url import normalizeLink
from markdown_it.rules_block import StateBlock
from markdown_it.rules_core import StateCore, block, normalize, text_join
from markdown_it.token import Token as MarkdownItToken

from recordtool.record import blocks, inline
from recordtool.record.inline import TERMINATORS
from recordtool.record.token import Token, ours

_SENTENCE_END = re.compile(r"[.!?]\s+(?=[A-Z(\"'“‘])")  # the gap is match.start() + 1 .. end()
# A full stop that ends an abbreviation does not end the sentence: "Musat et al. (2023)",
# "e.g. THEORY-1", "Fig. 3", "vs. GPT-2", and a single capital's "N. Elhage". When an
# abbreviation does end a sentence the quote is one sentence longer, which reads better than
# one cut in the middle of a name.
ABBREVIATIONS = frozenset((
    "al", "cf", "vs", "etc", "viz", "resp", "approx", "ca", "esp", "incl", "fig", "figs", "eq", "eqs",
    "sec", "secs", "ch", "chap", "vol", "vols", "pp", "p", "ref", "refs", "thm", "dr", "mr", "mrs", "ms",
    "prof", "st", "jr", "sr", "univ", "dept", "ed", "eds"))
_LAST_WORD = re.compile(r"(?<![\w.])[\w.]+$")
_LETTERS = re.compile(r"(?:[^\W\d_]\.)+[^\W\d_]")  # e.g, i.e, U.S, a.k.a (before their last stop)
_WORD_BEFORE = 12  # characters before a full stop that can hold an abbreviation ("a.k.a", "approx")
MAX_SENTENCE = 280


def sentence_gaps(text: str) -> list[tuple[int, int]]:
    """The gaps between the sentences of ``text`` (start, end), in order: after ``.``, ``!`` or
    ``?`` and before a capital, a parenthesis or a quote, except after an abbreviation."""
    gaps = []
    for match in _SENTENCE_END.finditer(text):
        at = match.start()
        if text[at] == "." and _is_abbreviation(text[max(0, at - _WORD_BEFORE):at]):
            continue
        gaps.append((at + 1, match.end()))
    return gaps


def _is_abbreviation(before: str) -> bool:
    """Whether the word that ends ``before`` (the text up to a full stop) is an abbreviation:
    one of ``ABBREVIATIONS``, letters with stops between them, or a capital's initial."""
    found = _LAST_WORD.search(before)
    if found is None:
        return False
    word = found.group(0)
    if len(word) == 1:
        return word.isupper()
    return word.lower() in ABBREVIATIONS or _LETTERS.fullmatch(word) is not None


@dataclass(frozen=True, slots=True)
class Found:
    """An id found in a piece of prose: which, on which line (0-based), in which sentence."""

    id: str
    line: int
    sentence: str


@lru_cache(maxsize=1)
def markdown() -> MarkdownIt:
    """The Markdown parser for rendering (CommonMark, plus tables), with its text rule
    stopping only where one of its inline rules can fire (``TERMINATORS``)."""
    _quiet_block_rules()
    md = MarkdownIt("commonmark").enable("table")
    if _rules(md) == _RULES:
        md.inline.terminator_re = TERMINATORS
    setattr(md, "normalizeLink", normalize_link)  # noqa: B010 - this one parser's, the same results
    _dispatch_block_rules(md)
    return md


# A link destination that markdown-it's ``normalizeLink`` gives back as it is: a relative path,
# query or anchor of characters that need no percent-encoding (no '%', space, '@', ':' or
# non-ASCII), or the same after an http(s) scheme and a plain ASCII host name. Most
# destinations of a record are such (an id, ``../x.md``, ``https://arxiv.org/abs/1``), and
# parsing them as URLs (mdurl) took about 5% of parsing a research body. A randomised test compares.
_AS_IT_IS = re.compile(r"(?:https?://[A-Za-z0-9.-]+(?=[/?#]|$))?[A-Za-z0-9\-._~/?#!$&'()*+,;=]*")


def normalize_link(url: str) -> str:
    """markdown-it's ``normalizeLink(url)``, at once where it would give ``url`` back."""
    if _AS_IT_IS.fullmatch(url):  # an ASCII host name is kept as it is (punycode is for others)
        return url
    return normalizeLink(url)


def _nothing(*args: object, **kwargs: object) -> None:
    return None


@lru_cache(maxsize=1)
def _quiet_block_rules() -> None:
    """markdown-it's block rules log every call they get at DEBUG level, about 200 calls for
    a body of research Markdown, which cost a twentieth of the parse even though nothing is
    logged: while DEBUG is off for a rule's logger (as it is unless the process turned it on
    before parsing), its ``debug`` does nothing at once. The tokens are the same."""
    for name, module in list(sys.modules.items()):
        logger = getattr(module, "LOGGER", None) if name.startswith("markdown_it.rules_block.") else None
        if isinstance(logger, logging.Logger) and not logger.isEnabledFor(logging.DEBUG):
            setattr(logger, "debug", _nothing)  # noqa: B010 - an attribute of this one logger object


@lru_cache(maxsize=1)
def scanner() -> MarkdownIt:
    """A CommonMark parser that keeps only what decides where prose is and where its words
    begin and end: code (indented, fenced, inline), raw HTML, links, emphasis (``_THEORY-1_``
    is a mention) and the block structure; the rest is left as text, which makes scanning
    about twice as fast as the full parser that renders the same prose."""
    rules = ["code", "fence", "blockquote", "hr", "list", "reference", "html_block", "heading",
             "lheading", "paragraph", "table", "backticks", "link", "autolink", "html_inline",
             "entity", "escape", "newline", "text", "emphasis"]
    _quiet_block_rules()
    md = MarkdownIt("zero", {"html": True}).enable(rules)
    setattr(md, "normalizeLink", normalize_link)  # noqa: B010 - this one parser's, the same results
    _dispatch_block_rules(md)
    return md


# markdown-it tries its block rules in order at the first line of each block (and, to see
# whether a paragraph, list or quote ends there, at each of their lines), and most of them give
# up at once unless that line starts (after its indent) with their marker: a heading with '#',
# a list with a bullet or a digit, and so on (``BLOCK_MARKERS``). Each chain of rules is made
# one rule that tries only those that can fire at the line's first character: the same tokens
# (a rule that gives up changes nothing), with about half the calls. An indented line (code)
# and a line without a character there try them all.
BLOCK_MARKERS = {"fence": "`~", "blockquote": ">", "hr": "*-_", "list": "*-+0123456789", "reference": "[",
                 "html_block": "<", "heading": "#"}
_BlockRule = Callable[[StateBlock, int, int, bool], bool]


def _dispatch_block_rules(md: MarkdownIt) -> None:
    """Makes each chain of ``md``'s block rules try only those that can fire at a line."""
    ruler = md.block.ruler
    ruler.getRules("")  # compiles the chains
    names = {rule.fn: rule.name for rule in ruler.__rules__}
    chains = ruler.__cache__ or {}
    for chain, rules in chains.items():
        chains[chain] = [_dispatcher([(names[fn], fn) for fn in rules])]


def _dispatcher(rules: list[tuple[str, _BlockRule]]) -> _BlockRule:
    every = [fn for _name, fn in rules]
    by_char = {ch: [fn for name, fn in rules if ch in BLOCK_MARKERS.get(name, ch)]
               for ch in set("".join(BLOCK_MARKERS.values()))}
    others = [fn for name, fn in rules if name not in BLOCK_MARKERS]

    def rule(state: StateBlock, line: int, end: int, silent: bool) -> bool:
        """The first of the rules that fires at ``line`` (True), as markdown-it tries them."""
        first = state.bMarks[line] + state.tShift[line]
        if state.sCount[line] - state.blkIndent >= 4 or first >= state.eMarks[line]:
            tried = every
        else:
            tried = by_char.get(state.src[first], others)
        for fn in tried:  # noqa: SIM110 - a loop: any() over a generator costs a tenth more here
            if fn(state, line, end, silent):
                return True
        return False

    return rule


# Anything that could make Markdown treat part of a text as other than plain paragraphs:
# code, HTML, links, escapes, entities, tables, underscore emphasis (which ends a word where
# an id would otherwise not begin), indented code, block markers at a line start; and what
# CommonMark normalises (a carriage return ends a line, NUL is read as U+FFFD); ``*`` and ``_``
# may be emphasis, which the sentence around a mention leaves out (``THEORY-1*THEORY-2*``); and
# white space other than the space and the newline (a line of U+3000 or U+2028 is blank to
# Python's ``strip``, which the shortcut uses, and not to CommonMark, which sees a paragraph).
_SPECIAL = re.compile(r"[`<\[\\&|_*\0]|[^\S \n]")  # (the tab and the carriage return: white space)
_BLOCK_START = re.compile(r"\n(?: {0,3}(?:[#>*+=_~-]|\d+[.)])| {4})")


def is_plain(text: str) -> bool:
    """Whether ``text`` is plain paragraphs to Markdown: no code, HTML, link, escape, entity,
    emphasis or table character, and no line that starts a block (heading, quote, list, rule,
    fence, setext underline, indented code)."""
    return not _SPECIAL.search(text) and not _BLOCK_START.search("\n" + text)


def find_mentions(text: str, pattern: re.Pattern[str]) -> list[Found]:
    """Every id matching ``pattern`` in the prose ``text``, in order of appearance."""
    if is_plain(text):
        return plain_mentions(text, pattern)
    if not pattern.search(text) and not _may_mention(text, pattern):  # no candidate: nothing to parse
        return []
    return markdown_mentions(text, pattern)


def plain_mentions(text: str, pattern: re.Pattern[str]) -> list[Found]:
    """``find_mentions`` for prose made of plain paragraphs only (nothing in it is code,
    HTML or a link, which ``is_plain`` makes sure of), without building a parse tree: the
    same result as parsing, several times faster."""
    hits = [(m.start(), m.group(0)) for m in pattern.finditer(text)]
    if not hits:
        return []
    lines = text.split("\n")
    starts = list(itertools.accumulate((len(line) + 1 for line in lines[:-1]), initial=0))
    found: list[Found] = []
    paragraphs: dict[int, tuple[str, list[int], list[tuple[int, int]]]] = {}
    for at, entry_id in hits:
        number = bisect.bisect_right(starts, at) - 1
        first = number
        while first > 0 and lines[first - 1].strip():
            first -= 1
        if first not in paragraphs:
            last = number
            while last + 1 < len(lines) and lines[last + 1].strip():
                last += 1
            parts = [line.strip() for line in lines[first:last + 1]]
            joined = " ".join(parts)
            offsets = list(itertools.accumulate((len(part) + 1 for part in parts[:-1]), initial=0))
            paragraphs[first] = (joined, offsets, sentence_gaps(joined))
        joined, offsets, bounds = paragraphs[first]
        line = lines[number]
        column = at - starts[number] - (len(line) - len(line.lstrip()))
        found.append(Found(entry_id, number, _sentence(joined, offsets[number - first] + column, bounds)))
    return found


SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")  # a link to elsewhere: https:, mailto:, ...


def link_target_id(href: str, pattern: re.Pattern[str]) -> str | None:
    """The id a link points to (``THEORY-988``, ``THEORY-988.md``, ``../x/THEORY-988.md``),
    or None: a link to another site is never to an entry, whatever its last part."""
    if SCHEME.match(href):
        return None
    target = href.rsplit("/", 1)[-1].removesuffix(".md")
    return target if pattern.fullmatch(target) else None


def markdown_mentions(text: str, pattern: re.Pattern[str]) -> list[Found]:
    """``find_mentions`` by parsing ``text`` as Markdown: ids in code, raw HTML or link text
    that is not prose are not mentions; link targets that are ids are.

    The blocks are all parsed, but the inline content of a block only when it may hold a
    mention (``_may_mention``), which most lines of a body cannot: the same tokens where it
    matters as ``scanner().parse``, so the same mentions (``reference_mentions`` is that
    parse, kept for the tests that compare them), in about half the time.
    """
    md = scanner()
    state = _blocks(text, md, {})
    every = bool(state.env.get("references"))  # a reference link's target is not in its text
    joins: list[Token] = []
    for token in _tokens(state):
        if token.type != "inline" or not (every or _may_mention(token.content, pattern)):
            continue
        if not _parse_inline(token, md, state.env) or "\\" in token.content:
            joins.append(token)
    _text_join(state, joins)
    return _mentions(_tokens(state), pattern)


# Characters that end an inline token's text (emphasis, code, links, autolinks and HTML, an
# image's '!'): in the raw text they may touch an id that the parsed text shows apart
# (``__THEORY-1__`` is THEORY-1 in bold), so they count as spaces when looking for one.
_MARKUP = str.maketrans("*_`[]()<>!", "          ")


def _may_mention(content: str, pattern: re.Pattern[str]) -> bool:
    """Whether the inline Markdown ``content`` may hold a mention: an id, once markup is taken
    for spaces, or an entity or escape (``THEORY&#45;1`` is THEORY-1 once parsed). An id in
    the raw text is one once markup is taken for spaces: a caller may look for that first."""
    return "&" in content or "\\" in content or pattern.search(content.translate(_MARKUP)) is not None


def mentions_and_tokens(text: str, pattern: re.Pattern[str]) -> tuple[list[Found], list[Token] | None]:
    """``find_mentions(text, pattern)``, and the tokens of ``markdown().parse(text)`` when they
    were parsed for it (None when a shortcut took no parse), so that what renders the prose
    can use the same parse."""
    tokens = tokens_for_mentions(text, pattern)
    if tokens is None:
        return find_mentions(text, pattern), None
    return mentions_in(tokens, pattern), tokens


def tokens_for_mentions(text: str, pattern: re.Pattern[str]) -> list[Token] | None:
    """The tokens of ``markdown().parse(text)``, from which ``mentions_in`` gives what
    ``find_mentions(text, pattern)`` gives; None when ``find_mentions`` takes a shortcut that
    parses nothing (or less). Without an image (``![``) that parse gives the same tokens as
    ``scanner()``: its rules are the scanner's and the image rule, which fires only at ``![``."""
    if is_plain(text) or not (pattern.search(text) or _may_mention(text, pattern)) or "![" in text:
        return None
    return parse(text)[0]


def mentions_in(tokens: list[Token], pattern: re.Pattern[str], unnamed: Container[int] = ()) -> list[Found]:
    """The mentions in ``tokens`` (``tokens_for_mentions``), in order, leaving out the
    ``inline`` tokens whose id() is in ``unnamed``: runs known to name no id (no match of
    ``pattern`` in a text outside links, no link to an id), which hold no mention."""
    found: list[Found] = []
    for token in tokens:
        if token.type == "inline" and token.children and id(token) not in unnamed:
            line = token.map[0] if token.map else 0
            found.extend(_in_inline(token.children, line, pattern))
    return found


# Parsing with markdown-it-py, faster where nothing inline can happen ---------------------------
#
# An inline run (a paragraph's, a heading's or a table cell's text) without any character at
# which one of ``markdown()``'s inline rules can fire (only text and line breaks are left) is
# parsed by markdown-it into text tokens and the line breaks between them, which
# ``_plain_inline`` makes directly, the way markdown-it's ``newline`` rule does. About two in
# three of a research body's inline runs are such (a fifth of its characters). Of the others,
# those whose markup is simple are made by ``recordtool.record.inline`` (``_parse_inline``).

_INLINE_MARKUP = re.compile(r"[\\`*_\[\]!<&~]")  # escape, code, emphasis, links, images, autolinks, HTML, entities
_RULES = (["normalize", "block", "inline", "text_join"],
          ["text", "newline", "escape", "backticks", "emphasis", "link", "image", "autolink", "html_inline", "entity"],
          ["balance_pairs", "emphasis", "fragments_join"])


def _rules(md: MarkdownIt) -> tuple[list[str], list[str], list[str]]:
    return (md.core.ruler.get_active_rules(), md.inline.ruler.get_active_rules(),
            md.inline.ruler2.get_active_rules())


@lru_cache(maxsize=1)
def _fast_inline() -> bool:
    """Whether ``markdown()`` has the rules ``_plain_inline`` stands in for, and no others
    (another version of markdown-it-py may not: its own parse is taken then)."""
    return _rules(markdown()) == _RULES


def parse(text: str, only: re.Pattern[str] | None = None) -> tuple[list[Token], dict[str, Any]]:
    """``markdown().parse(text)`` and the env it fills (reference definitions): the same
    tokens (``recordtool.record.token``'s, equal to markdown-it's field for field), with simple
    blocks made without markdown-it's block parser (``_blocks``), and the
    inline runs that hold no inline markup, or simple markup, without its inline parser
    (``_plain_inline``, ``_parse_inline``; randomised tests compare them). ``only``: parse
    only the inline runs in which it matches (the others are left without children), for a
    caller that looks for what only such runs can hold (links: ``recordtool.render.linkcheck``)."""
    md = markdown()
    env: dict[str, Any] = {}
    if not _fast_inline():
        return ours(md.parse(text, env)), env
    state = _blocks(text, md, env)
    joins: list[Token] = []
    for token in _tokens(state):
        if token.type == "inline" and (only is None or only.search(token.content)):
            if _INLINE_MARKUP.search(token.content):
                if not _parse_inline(token, md, env) or "\\" in token.content:
                    joins.append(token)
            else:
                token.children = _plain_inline(token.content)
    _text_join(state, joins)
    return _tokens(state), env


def _text_join(state: StateCore, runs: list[Token]) -> None:
    """markdown-it's core rule ``text_join`` on the inline tokens ``runs`` of ``state`` only.
    The rule makes each escape (a ``text_special`` token) text and joins it to the text beside
    it. A run made here (``_parse_inline`` says so) without a backslash holds no escape, nor text
    next to text, so the rule would leave it as it is: a caller passes the others only. (The
    rule sets fields of the tokens it is given and makes none: ours take it as markdown-it's do.)"""
    if runs:
        every, state.tokens = state.tokens, cast("list[MarkdownItToken]", runs)
        text_join(state)
        state.tokens = every


def _tokens(state: StateCore) -> list[Token]:
    """The tokens of ``state`` (``_blocks``), ours."""
    return cast("list[Token]", state.tokens)


def _blocks(text: str, md: MarkdownIt, env: dict[str, Any]) -> StateCore:
    """The state of markdown-it's core after its rules ``normalize`` and ``block``: the block
    tokens (ours: ``_tokens``), the simple blocks made directly (``recordtool.record.blocks``;
    ``md`` is ``markdown()`` or ``scanner()``, whose block rules it knows)."""
    state = StateCore(text, md, env)
    if "\r" in text or "\0" in text:  # all that markdown-it's ``normalize`` changes (0.2 s of 10,000 bodies)
        normalize(state)
    if blocks.known(md):
        state.tokens = cast("list[MarkdownItToken]", blocks.tokens(state.src, md, env))
    else:
        block(state)
        state.tokens = cast("list[MarkdownItToken]", ours(state.tokens))
    return state


def _parse_inline(token: Token, md: MarkdownIt, env: MutableMapping[str, Any]) -> bool:
    """Gives the ``inline`` token its children: markdown-it's inline parse of its content with
    ``md``, made directly where its markup is simple (``recordtool.record.inline``; ``md`` is
    ``markdown()`` or ``scanner()``, whose inline rules it knows), else by markdown-it (made
    ours); whether they were made directly."""
    children = inline.tokens(token.content, md) if _known_inline(md) else None
    made = children is not None
    if children is None:
        theirs: list[MarkdownItToken] = []
        md.inline.parse(token.content, md, env, theirs)
        children = [*(token.children or ()), *ours(theirs)]
    token.children = children
    return made


# The inline rules ``inline.tokens`` knows: ``markdown()``'s, of which ``scanner()`` has all but
# the image (``inline.tokens`` leaves images, autolinks, raw HTML and entities to markdown-it).
_LEFT_TO_MARKDOWN_IT = frozenset({"image", "autolink", "html_inline", "entity"})


@lru_cache(maxsize=4)
def _known_inline(md: MarkdownIt) -> bool:
    """Whether ``md``'s inline rules are those ``inline.tokens`` stands in for."""
    rules = set(md.inline.ruler.get_active_rules())
    return (md.inline.ruler2.get_active_rules() == _RULES[2]
            and set(_RULES[1]) - _LEFT_TO_MARKDOWN_IT <= rules <= set(_RULES[1]))


def _plain_inline(content: str) -> list[Token]:
    """The tokens markdown-it's inline parser makes of ``content``, which holds no inline
    markup: a text token per line, a soft break between lines, or a hard break after two or
    more spaces (the spaces before a break and at the start of the next line dropped)."""
    tokens: list[Token] = []
    pos, end = 0, len(content)
    while True:
        newline = content.find("\n", pos)
        if newline < 0:
            if pos < end:
                tokens.append(_text_token(content[pos:]))
            return tokens
        line = content[pos:newline]
        kept = line.rstrip(" ")
        spaces = len(line) - len(kept)
        if spaces == 1:
            line = line[:-1]
        elif spaces > 1:
            line = kept
        if line:
            tokens.append(_text_token(line))
        tokens.append(Token("hardbreak" if spaces > 1 else "softbreak", "br", 0))
        pos = newline + 1
        while pos < end and content[pos] in " \t":
            pos += 1


def _text_token(content: str) -> Token:
    return Token("text", "", 0, 0, content)


def reference_mentions(text: str, pattern: re.Pattern[str]) -> list[Found]:
    """``markdown_mentions`` by parsing all of ``text`` (the reference for its shortcut)."""
    return _mentions(ours(scanner().parse(text)), pattern)


def _mentions(tokens: list[Token], pattern: re.Pattern[str]) -> list[Found]:
    found: list[Found] = []
    for token in tokens:
        if token.type == "inline" and token.children:
            line = token.map[0] if token.map else 0
            found.extend(_in_inline(token.children, line, pattern))
    return found


def _in_inline(children: list[Token], first_line: int, pattern: re.Pattern[str]) -> list[Found]:
    # Plain text of the inline run, with the spans that are prose (not code) and their lines.
    plain: list[str] = []
    spans: list[tuple[int, int, int]] = []  # (start, end, line) of prose text in the joined string
    extra: list[tuple[str, int, int]] = []  # (id, offset, line) from link targets
    offset, line = 0, first_line
    in_link = 0
    for child in children:
        if child.type == "link_close":
            in_link -= 1
        elif child.type == "text" and in_link:  # a link's text: the link is what counts
            plain.append(child.content)
            offset += len(child.content)
        elif child.type == "text":
            spans.append((offset, offset + len(child.content), line))
            plain.append(child.content)
            offset += len(child.content)
        elif child.type == "code_inline":
            plain.append(child.content)
            offset += len(child.content)
        elif child.type in ("softbreak", "hardbreak"):
            plain.append(" ")
            offset += 1
            line += 1
        elif child.type == "link_open":
            in_link += 1
            target = link_target_id(str(child.attrs.get("href", "")), pattern)
            if target is not None:
                extra.append((target, offset, line))
    joined = "".join(plain)
    hits: list[tuple[int, str, int]] = []
    for start, end, span_line in spans:
        # each text on its own, as the page links it (``recordtool.render.prose``): what is
        # next to it beyond markup (``THEORY-1*THEORY-2*``) does not join it into one word
        for match in pattern.finditer(joined[start:end]):
            hits.append((start + match.start(), match.group(0), span_line))
    hits.extend((at, entry_id, link_line) for entry_id, at, link_line in extra)
    if not hits:
        return []
    hits.sort()
    bounds = sentence_gaps(joined)
    return [Found(entry_id, line, _sentence(joined, at, bounds)) for at, entry_id, line in hits]


def _sentence(text: str, at: int, bounds: list[tuple[int, int]]) -> str:
    """The sentence of ``text`` that holds position ``at`` (``bounds``: the gaps between
    sentences), shortened if very long."""
    i = bisect.bisect_right(bounds, (at, at))
    start = bounds[i - 1][1] if i > 0 else 0
    end = bounds[i][0] if i < len(bounds) else len(text)
    sentence = " ".join(text[start:end].split())
    if len(sentence) > MAX_SENTENCE:  # a window around the id, cut between words
        lo = max(0, min(at - start - MAX_SENTENCE // 2, len(sentence) - MAX_SENTENCE))
        hi = lo + MAX_SENTENCE
        if lo > 0:
            space = sentence.find(" ", lo, at - start)
            lo = space + 1 if space >= 0 else lo
        if hi < len(sentence):
            space = sentence.rfind(" ", max(lo, at - start), hi)
            hi = space if space >= 0 else hi
        sentence = ("…" if lo > 0 else "") + sentence[lo:hi].strip() + ("…" if hi < len(sentence) else "")
    return sentence
