"""BibTeX in: one entry of a ``.bib`` file as the reference of a literature entry (``recordtool
new literature --bibtex``). bibtexparser parses the file and decodes its LaTeX, so that
``{G}\\"{o}del -- a study`` is ``Gödel – a study``; names become ``Surname, I.`` as the record
writes them. Nothing is fetched: a DOI is looked for in the file, never on the network."""

from __future__ import annotations

import logging
from pathlib import Path

from bibtexparser import middlewares
from bibtexparser.entrypoint import parse_string
from bibtexparser.middlewares.names import NameParts
from bibtexparser.model import Entry as BibEntry
from pydantic import ValidationError
from pylatexenc.latex2text import LatexNodes2Text

from recordtool.record.duplicates import doi_key
from recordtool.record.schema import Reference
from recordtool.safetext import some

logging.getLogger("bibtexparser").addHandler(logging.NullHandler())  # its parse errors are told once, here
VENUES = ("journal", "booktitle", "publisher")  # the first one given is the venue
SHOWN_KEYS = 10
_LATEX = LatexNodes2Text()


class BibtexError(Exception):
    """No entry can be read from the BibTeX; the message says where and what to do."""


def read_reference(path: Path, key: str | None = None, doi: str | None = None) -> Reference:
    """The reference of the entry of the BibTeX file ``path`` with ``key`` and/or ``doi``, or
    of its only entry when neither is given."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise BibtexError(f"cannot read {path}: {getattr(exc, 'strerror', None) or 'it is not UTF-8 text'}") from None
    library = parse_string(text, append_middleware=[
        middlewares.NormalizeFieldKeys(), middlewares.SeparateCoAuthors(), middlewares.SplitNameParts(),
        middlewares.LatexDecodingMiddleware()])
    entries = library.entries
    chosen = [e for e in entries if key in (None, e.key) and (doi is None or doi_key(_text(e, "doi")) == doi_key(doi))]
    if len(chosen) == 1 and (key or doi or not library.failed_blocks):  # (a broken one may be the one meant)
        return _reference(chosen[0], path)
    if library.failed_blocks:
        block = library.failed_blocks[0]
        why = getattr(block.error, "abort_reason", "") or str(block.error) or type(block.error).__name__
        raise BibtexError(f"{path}:{(block.start_line or 0) + 1}: not valid BibTeX ({why.rstrip('.')}); "
                          "fix it or export it again")
    if chosen:
        raise BibtexError(f"{path} holds {len(chosen)} entries; choose one with --key: "
                          f"{some([e.key for e in chosen], SHOWN_KEYS)}")
    if not entries:
        raise BibtexError(f"{path} holds no BibTeX entry; export one from your reference manager")
    wanted = " ".join(part for part in (key and f"'{key}'", doi and f"with DOI {doi}") if part)
    raise BibtexError(f"no entry {wanted} in {path}; its keys: {some([e.key for e in entries], SHOWN_KEYS)}")


def _text(entry: BibEntry, name: str) -> str:
    field = entry.fields_dict.get(name)
    return " ".join(str(field.value).split()) if field is not None else ""


def _name(parts: NameParts) -> str:
    """``Surname, I. J.`` (``von Surname, Jr., J.-P.``), the LaTeX in it decoded."""
    def plain(words: list[str]) -> str:
        return " ".join(_LATEX.latex_to_text(" ".join(words)).split())

    initials = " ".join("-".join(f"{piece[0]}." for piece in word.split("-") if piece)
                        for word in plain(parts.first).split())
    return ", ".join(part for part in (plain(parts.von + parts.last), plain(parts.jr), initials) if part)


def _reference(entry: BibEntry, path: Path) -> Reference:
    where = f"{path}:{(entry.start_line or 0) + 1}: @{entry.entry_type}{{{entry.key}}}"
    field = entry.fields_dict.get("author")
    authors = [_name(parts) for parts in (field.value if field is not None else [])]
    title, year = _text(entry, "title"), _text(entry, "year")
    missing = [name for name, value in (("author", authors), ("title", title), ("year", year)) if not value]
    if missing:
        raise BibtexError(f"{where} has no {' or '.join(missing)}; add {'it' if len(missing) == 1 else 'them'} "
                          "to the BibTeX")
    venue = next(filter(None, (_text(entry, name) for name in VENUES)), None)
    try:
        return Reference.model_validate({
            "authors": [a for a in authors if a != "others"], "et_al": "others" in authors, "year": year,
            "title": title, "venue": venue, "url": _text(entry, "url") or None, "doi": _text(entry, "doi") or None})
    except ValidationError as exc:
        error = exc.errors()[0]  # (a year, URL or DOI: the others are checked above)
        raise BibtexError(f"{where}: {error['loc'][0]}: {error['msg'].removeprefix('Value error, ')}; "
                          "fix it in the BibTeX") from None
