"""New entries: the next free id of a kind and a valid file to start from, whose first line
points editors at the record's JSON Schema (``SCHEMA_FILE``, kept up to date by ``new``)."""

from __future__ import annotations

import datetime as dt
import json
import os
import unicodedata
from pathlib import Path

from recordtool.atomic import write_atomic
from recordtool.record.config import Config, Kind
from recordtool.record.entry import ID, load_entry
from recordtool.record.load import entry_files
from recordtool.record.schema import Reference, json_schema
from recordtool.record.source import parse_source
from recordtool.record.static import PLACEHOLDER_AUTHOR, PLACEHOLDER_BODY, PLACEHOLDER_STATEMENT

SCHEMA_FILE = ".schema.json"  # in the record folder (a dotfile: never read as an entry)


class TemplateError(Exception):
    """A new entry cannot be made; the message says why and what to do."""


def next_id(config: Config, kind: Kind) -> str:
    """One more than the highest number used by ``kind``'s prefix (files and ids alike)."""
    files, _ = entry_files(config)
    numbers = [int(match["number"]) for path, file_kind in files
               if file_kind == kind and (match := ID.match(Path(path).stem)) and match["prefix"] == kind.prefix]
    return f"{kind.prefix}-{max(numbers, default=0) + 1}"


def _quote(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)  # a JSON string is a valid YAML scalar


def schema_text(config: Config) -> str:
    """The JSON Schema of the project's entries (``recordtool schema``), as a file holds it."""
    kinds = {kind.name: kind.schema for kind in config.kinds.values()}
    return json.dumps(json_schema(kinds), indent=2, sort_keys=True) + "\n"


def render_template(kind: Kind, entry_id: str, title: str, today: dt.date, schema: str,
                    reference: Reference | None) -> str:
    """The new entry's text; ``schema``: the path of the JSON Schema file relative to it;
    ``reference``: a literature entry's (read from BibTeX), else the template's placeholder."""
    lines = [
        f"# yaml-language-server: $schema={schema}",
        f"id: {entry_id}",
        f"kind: {kind.name}",
        f"title: {_quote(title)}",
        "status: draft",
        "version: 1",
        "tags: []",
        f"created: {today.isoformat()}",
        f"updated: {today.isoformat()}",
        "cites: []",
        "#  - {id: LIT-1, as: source}",
    ]
    if kind.schema == "literature":
        ref = reference or Reference(authors=[PLACEHOLDER_AUTHOR], year=today.year, title=title)
        lines += ["reference:", f"  authors: [{', '.join(map(_quote, ref.authors))}]",
                  *(["  et_al: true"] if ref.et_al else []), f"  year: {ref.year}", f"  title: {_quote(ref.title)}",
                  *(f"  {name}: {_quote(value) if value else 'null'}"
                    for name, value in (("venue", ref.venue), ("url", ref.url), ("doi", ref.doi)))]
    if kind.schema == "theory":
        lines += [
            "statement: >-",
            f"  {PLACEHOLDER_STATEMENT} Changing this text makes its verdict stale.",
            "checks: []",
            "#  - name: my-check",
            "#    run: checks.my_module:measure",
            "#    params: {}",
            "#    expect: {metric: \"< 1e-9\"}",
            "#    controls:",
            "#      - {name: untrained, params: {train: false}}",
        ]
    lines += ["body: |", f"  {PLACEHOLDER_BODY} Mention other entries by id."]
    return "\n".join(lines) + "\n"


def check_title(title: str) -> str:
    """``title`` stripped, or TemplateError when it holds what no entry file may: control
    characters (newlines and tabs included: a title is one line), bytes that were not text."""
    title = title.strip()
    if not title:
        raise TemplateError("give the entry a title: --title \"...\"")
    for position, char in enumerate(title, 1):
        if "\ud800" <= char <= "\udfff":
            raise TemplateError(f"the title is not valid text (character {position} is a byte that is not UTF-8); "
                                "write it in UTF-8")
        if unicodedata.category(char) in ("Cc", "Cs", "Co", "Cn") or char in "\u2028\u2029\ufeff":
            raise TemplateError(f"the title holds the control character {char!a} at character {position}; "
                                "a title is one line of printable text")
    return title


NEW_TRIES = 100  # ids tried one after the other when other processes take them first


def create_entry(config: Config, kind: Kind, title: str, *, reference: Reference | None = None) -> Path:
    """Write a new entry of ``kind`` with the next free id (the next one when another process
    takes it first), validated before it is written, never over a file; then the record's
    JSON Schema, which its first line names, when it differs."""
    title = check_title(title)
    schema = config.record / SCHEMA_FILE
    number = int(next_id(config, kind).rpartition("-")[2])
    for _ in range(NEW_TRIES):
        entry_id = f"{kind.prefix}-{number}"
        path = config.record / kind.folder / f"{entry_id}.yaml"
        text = render_template(kind, entry_id, title, dt.date.today(),
                               Path(os.path.relpath(schema, path.parent)).as_posix(), reference)
        _entry, _places, found = load_entry(path, kind, config, config.relative(path), parse_source(text.encode()))
        problems = [p for p in found if p.severity == "error"]
        if problems:  # a bug here, not the user's: say what, and write nothing
            raise TemplateError(f"the new entry would not load ({problems[0].message}); nothing written")
        try:  # whole or not at all (a full disk, Ctrl-C), and never over a file
            write_atomic(path, text, new=True)
        except FileExistsError:
            number += 1
            continue
        wanted = schema_text(config)
        if not schema.is_file() or schema.read_text(encoding="utf-8") != wanted:
            write_atomic(schema, wanted)
        return path
    raise TemplateError(f"{NEW_TRIES} ids in a row were taken by other processes while this one wrote; "
                        "nothing written: run `recordtool new` again")

