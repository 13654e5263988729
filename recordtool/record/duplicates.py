"""One work in two literature entries: the same DOI, the same URL or the same title, each
compared as written differently for one work (``https://doi.org/`` or not, ``http`` or
``https``, a trailing slash, case, punctuation, spacing). ``validate`` warns of each such pair
(``duplicate_problems``); ``new`` refuses to write one (``same_work``)."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from recordtool.record.load import Record
from recordtool.record.problems import Problem
from recordtool.record.schema import Literature
from recordtool.record.source import SourceError, read_source

WHAT = {"doi": "DOI", "url": "URL", "title": "title"}


def doi_key(doi: str) -> str:
    """``https://doi.org/10.1/X`` -> ``10.1/x``: a DOI is case-insensitive."""
    return re.sub(r"^(doi:|https?://(dx\.)?doi\.org/)", "", doi.strip(), flags=re.IGNORECASE).casefold()


def url_key(url: str) -> str:
    """``HTTPS://www.Example.org/a/`` -> ``example.org/a``: without scheme, ``www.`` or trailing slash."""
    parts = urlsplit(url.strip())
    query = f"?{parts.query}" if parts.query else ""
    return parts.netloc.casefold().removeprefix("www.") + parts.path.rstrip("/") + query


def title_key(title: str) -> str:
    """A title with case, punctuation and spacing folded: ``In-context  Learning!`` -> ``in context learning``."""
    return " ".join(re.sub(r"[\W_]+", " ", title.casefold()).split())


def _keys(title: str, doi: str | None, url: str | None) -> list[tuple[str, str]]:
    """(field, key) for each field that names the work, the most telling first."""
    keys = [("doi", doi_key(doi) if doi else ""), ("url", url_key(url) if url else ""), ("title", title_key(title))]
    return [(field, key) for field, key in keys if key]


def same_work(record: Record, title: str, doi: str | None = None, url: str | None = None) -> tuple[str, str] | None:
    """The first literature entry of ``record`` with the same DOI, URL or title, and what it shares."""
    wanted = dict(_keys(title, doi, url))
    for entry_id, entry in record.entries.items():
        if isinstance(entry, Literature):
            ref = entry.reference
            shared = [field for field, key in _keys(ref.title, ref.doi, ref.url) if wanted.get(field) == key]
            if shared:
                return entry_id, WHAT[shared[0]]
    return None


def duplicate_problems(record: Record) -> list[Problem]:
    """A warning on each literature entry that shares its DOI, URL or title with an earlier one
    (in id order), at the field's place, naming the earlier entry and its place."""
    first: dict[tuple[str, str], str] = {}
    problems = []
    for entry_id, entry in record.entries.items():
        if not isinstance(entry, Literature):
            continue
        shared: dict[str, list[str]] = {}  # the earlier entry -> the fields it shares
        for field, key in _keys(entry.reference.title, entry.reference.doi, entry.reference.url):
            shared.setdefault(first.setdefault((field, key), entry_id), []).append(field)
        for other, fields in shared.items():
            if other != entry_id:
                path, line, col = _place(record, entry_id, fields[0])
                there = ":".join(map(str, _place(record, other, fields[0])))
                names = [WHAT[f] for f in fields]
                what = f"{', '.join(names[:-1])} and {names[-1]}" if len(names) > 1 else names[0]
                problems.append(Problem(path, line, col, f"the same {what} as {other} ({there}); if both are one "
                                        f"work, keep one entry and cite it", field=f"reference.{fields[0]}",
                                        severity="warning", code="duplicate"))
    return problems


def _place(record: Record, entry_id: str, field: str) -> tuple[str, int, int]:
    """Where ``entry_id``'s ``reference.<field>`` is written (its id's place if its file cannot be read)."""
    places = record.places[entry_id]
    try:
        line, col = read_source(record.config.root / places.path).mark(("reference", field))
    except (SourceError, OSError):
        line, col = places.id
    return places.path, line, col
