"""One entry file: read, validated, its problems placed, the mentions in its prose found.

All the work on one file that needs nothing of the other files (done in a worker on a large
record, kept in the store by ``recordtool.record.load``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from pydantic import BaseModel, ValidationError

from recordtool.record.config import Config, Kind
from recordtool.record.confine import NOT_REGULAR, Refused
from recordtool.record.mentions import find_mentions
from recordtool.record.problems import Problem, did_you_mean, field_path
from recordtool.record.schema import MODELS, NAME_MAX, CheckSpec, Entry, Theory
from recordtool.record.source import (
    Loc,
    Mark,
    Source,
    SourceError,
    bytes_digest,
    parse_source,
    read_bytes,
)

ID = re.compile(r"^(?P<prefix>[A-Z][A-Z0-9]*)-(?P<number>[0-9]+)$", re.ASCII)
ID_RULE = "ids are ASCII: PREFIX-NUMBER, capital letters A-Z then '-' then digits 0-9"
OUTSIDE = "an entry must be a file inside the record (copy it in instead of linking): it is not read"


class Places(NamedTuple):
    """Where an entry's parts are in its file (1-based line, col), kept for later stages."""

    path: str  # the file, from the project's root
    id: Mark  # where the id is
    cites: tuple[Mark, ...]  # where each citation is, in order
    prose: tuple[tuple[str, int], ...]  # each prose field and the line its text starts on
    digest: str  # a hash of the file's bytes: the same bytes make the same entry


class Mention(NamedTuple):
    """``source`` writes ``target`` in the prose of ``field``, on ``line`` of its file."""

    source: str
    target: str
    field: str
    line: int
    sentence: str


@dataclass(slots=True)
class Loaded:
    """What loading one file gives: its entry and places (None when it cannot be used), its
    own problems, its mentions, and the hash of its bytes (None when it could not be read)."""

    entry: Entry | None
    places: Places | None
    problems: list[Problem] = field(default_factory=list)
    mentions: list[Mention] = field(default_factory=list)
    digest: str | None = None


def load_file(path: str, kind: Kind, config: Config, rel: str) -> Loaded:
    """Read, parse and validate the entry file ``path`` (``rel``: from the project's root, in
    ``kind``'s folder) and find the mentions in its prose."""
    try:
        raw = read_bytes(path, str(config.record))  # still inside the record as it is read
    except SourceError as exc:
        return Loaded(None, None, [Problem(rel, exc.line, exc.col, exc.message, code=exc.code)])
    except Refused as exc:
        if exc.why == NOT_REGULAR:
            return Loaded(None, None, [Problem(rel, 0, 0, "not a regular file; an entry is a YAML file",
                                               code="not-a-file")])
        return Loaded(None, None, [Problem(rel, 0, 0, f"{exc.why}; {OUTSIDE}", code="outside")])
    except OSError as exc:
        return Loaded(None, None, [Problem(rel, 0, 0, f"cannot read: {exc.strerror or exc}", code="io")])
    digest = bytes_digest(raw)
    try:
        source = parse_source(raw)
    except SourceError as exc:
        return Loaded(None, None, [Problem(rel, exc.line, exc.col, exc.message, code=exc.code)], [], digest)
    entry, places, problems = load_entry(Path(path), kind, config, rel, source)
    mentions: list[Mention] = []  # the ids in its prose (its own left out), with their lines in the file
    if entry is not None and places is not None:
        starts = dict(places.prose)
        for name, text in entry.prose():
            mentions.extend(Mention(entry.id, m.id, name, starts.get(name, 0) + m.line, m.sentence)
                            for m in find_mentions(text, config.id_pattern) if m.id != entry.id)
    return Loaded(entry, places, problems, mentions, digest)


def load_entry(path: Path, kind: Kind, config: Config, rel: str, source: Source
               ) -> tuple[Entry | None, Places | None, list[Problem]]:
    """Validate one file, given its parsed source; the entry is None when it cannot be used."""
    data = source.data
    model = MODELS[kind.schema]
    if "kind" not in data and "id" in data:
        data = {**data, "kind": kind.name}
    try:
        entry = model.model_validate(data)
    except ValidationError as exc:
        return None, None, _schema_problems(exc, model, source, rel)
    problems = _identity_problems(entry, path, kind, config, source, rel)
    if any(p.code == "bad-id" for p in problems):
        return None, None, problems  # an id that is not one cannot be cited, linked or paged
    marks = source.mark
    problems.extend(_relation_problems(entry, config, marks, rel))
    if isinstance(entry, Theory):
        problems += _check_problems(entry, config, marks, rel) + _clause_problems(entry, marks, rel)
    places = Places(rel, source.mark(("id",)), tuple(source.mark(("cites", i)) for i in range(len(entry.cites))),
                    tuple((name, _prose_start(source, name)) for name, _text in entry.prose()), source.digest)
    return entry, places, problems


def _prose_start(source: Source, name: str) -> int:
    line, _col = source.mark((name,))
    # A block scalar ('|' or '>') starts on the line after its indicator.
    return line + 1 if source.styles.get((name,)) in ("|", ">") else line


def _identity_problems(entry: Entry, path: Path, kind: Kind, config: Config, source: Source, rel: str
                       ) -> list[Problem]:
    problems = []
    match = ID.match(entry.id)
    if not match:
        problems.append(Problem(rel, *source.mark(("id",)),
                                f"{_shown(entry.id)} is not an id; {ID_RULE}, e.g. {kind.prefix}-1",
                                field="id", code="bad-id"))
    elif len(entry.id) > NAME_MAX:
        problems.append(Problem(rel, *source.mark(("id",)),
                                f"{entry.id[:20]}... is {len(entry.id)} characters long; an id names its page and "
                                f"figure files, so it holds at most {NAME_MAX}: give it a shorter number",
                                field="id", code="bad-id"))
    elif match["prefix"] != kind.prefix:
        other = config.kinds.get(match["prefix"])
        where = f"{config.relative(config.record / other.folder)}/" if other else f"a folder of its own (no kind has prefix {match['prefix']})"
        problems.append(Problem(rel, *source.mark(("id",)),
                                f"{entry.id} has prefix {match['prefix']}, but {kind.folder}/ holds {kind.name} "
                                f"entries ({kind.prefix}-...); move it to {where} or give it a {kind.prefix}- id",
                                field="id", code="wrong-prefix"))
    stem = path.stem
    if entry.id != stem:
        # only what would be right: a file named after an id of this kind, an id of this kind
        named = ID.match(stem)
        fixes = [*([f"rename the file to {entry.id}{path.suffix}"] if match and match["prefix"] == kind.prefix else []),
                 *([f"set id: {stem}"] if named and named["prefix"] == kind.prefix else [])]
        problems.append(Problem(rel, *source.mark(("id",)),
                                f"id {entry.id} does not match the file name {path.name}; "
                                + (" or ".join(fixes) if fixes else
                                   f"give the entry an id such as {kind.prefix}-1 and name its file after it"),
                                field="id", code="id-mismatch"))
    if entry.kind != kind.name:
        problems.append(Problem(rel, *source.mark(("kind",)),
                                f"kind '{entry.kind}' does not match the folder {kind.folder}/; "
                                f"write kind: {kind.name} (or leave it out){_move_hint(entry.kind, config)}",
                                field="kind", code="wrong-kind"))
    return problems


def _shown(text: str) -> str:
    """``text`` quoted for a message, with anything outside printable ASCII written as an escape
    (``\\U0001d7cf`` for a mathematical digit that looks like 1)."""
    return "'" + "".join(c if " " <= c <= "~" else ascii(c)[1:-1] for c in text) + "'"


def _move_hint(kind_name: str, config: Config) -> str:
    other = config.kind_named(kind_name)
    if other is not None:
        return f", or move the file to record/{other.folder}/ with a {other.prefix}- id"
    return did_you_mean(kind_name, [k.name for k in config.kinds.values()])


def _relation_problems(entry: Entry, config: Config, mark: Callable[[Loc], Mark], rel: str) -> list[Problem]:
    problems = []
    for i, citation in enumerate(entry.cites):
        if citation.as_ not in config.relations:
            known = ", ".join(sorted(config.relations))
            hint = did_you_mean(citation.as_, config.relations) or f"; known relations: {known}"
            problems.append(Problem(rel, *mark(("cites", i, "as")),
                                    f"unknown relation '{citation.as_}'{hint}",
                                    field=f"cites[{i}].as", code="unknown-relation"))
        if citation.id == entry.id:
            problems.append(Problem(rel, *mark(("cites", i, "id")),
                                    f"{entry.id} cites itself; remove this citation",
                                    field=f"cites[{i}].id", code="self-citation"))
    return problems


def _check_problems(entry: Theory, config: Config, mark: Callable[[Loc], Mark], rel: str) -> list[Problem]:
    return [Problem(rel, *mark(("checks", i, "run")), f"'{check.run}' is outside {config.checks}/; checks run only "
                    f"code inside the record's {config.checks} package: write '{config.checks}.module:function'",
                    field=f"checks[{i}].run", code="run-outside-checks")
            for i, check in enumerate(entry.checks)
            if check.module.split(".", 1)[0] != config.checks or check.module == config.checks]


def _clause_problems(entry: Theory, mark: Callable[[Loc], Mark], rel: str) -> list[Problem]:
    """Expectations and observations against the claim's clauses (docs/verdicts.md): each
    clause named exists, each expectation says which it tests, and each is tested."""
    known = entry.clause_ids
    named: set[str] = set()
    problems = []
    for i, check in enumerate(entry.checks):
        problems += _named_clauses(check, i, known, named, mark, rel)
    if entry.clauses and not entry.checks:
        problems.append(Problem(rel, *mark(("checks",) if "checks" in entry.model_fields_set else ("clauses",)),
                                f"the claim has {len(known)} clauses and no check: none of them can be verified; "
                                "add a check that tests them (docs/checks.md)",
                                field="checks", severity="warning", code="unchecked-clauses"))
    elif entry.checks:
        for clause in known:
            if clause not in named:
                loc = ("clauses", clause) if entry.clauses else ("statement",)
                problems.append(Problem(rel, *mark(loc),
                                        f"clause '{clause}' is tested by no expectation and observed by no check: "
                                        "it stays untested and the claim cannot be verified; name it in an "
                                        f"expectation's 'clause:' or under 'observe:'",
                                        field=f"clauses.{clause}" if entry.clauses else "statement",
                                        severity="warning", code="untested-clause"))
    return problems


def _named_clauses(check: CheckSpec, i: int, known: list[str], named: set[str], mark: Callable[[Loc], Mark],
                   rel: str) -> list[Problem]:
    """The problems of check ``i``'s expectations and observations with the clauses they name
    (``known``: the claim's); the clauses it tests are added to ``named``."""
    shown = ", ".join(known)
    problems = []

    def name(clauses: list[str], loc: Loc, field: str) -> None:
        """Add ``clauses`` to ``named``; a problem for each that the claim does not have."""
        for clause in clauses:
            if clause in known:
                named.add(clause)
            else:
                hint = did_you_mean(clause, known) or f"; the claim's clauses: {shown}"
                problems.append(Problem(rel, *mark(loc), f"unknown clause '{clause}'{hint}", field=field,
                                        code="unknown-clause"))

    for metric, expect in check.expect.items():
        loc: tuple[str | int, ...] = ("checks", i, "expect", metric)
        field = f"checks[{i}].expect.{metric}"
        if not expect.clause and len(known) > 1:
            example = f'{{is: "{expect}", clause: {known[0]}}}'
            written = "a plain comparison" if expect.plain else "an expectation without 'clause:'"
            problems.append(Problem(rel, *mark(loc),
                                    f"{written} in a claim of {len(known)} clauses; say which clause it tests: "
                                    f"{metric}: {example} (clauses: {shown})",
                                    field=field, code="expectation-without-clause"))
        name(expect.clause, (*loc, "clause"), f"{field}.clause")
        if not expect.clause and len(known) == 1:
            named.add(known[0])
        if expect.null is not None and expect.null == metric:
            problems.append(Problem(rel, *mark((*loc, "null")),
                                    f"'{metric}' is its own null; name the metric the check returns for the "
                                    f"null hypothesis, e.g. {metric}_null",
                                    field=f"{field}.null", code="bad-null"))
    for metric, clauses in check.observe.items():
        loc = ("checks", i, "observe", metric)
        field = f"checks[{i}].observe.{metric}"
        if metric in check.expect:
            problems.append(Problem(rel, *mark(loc), f"'{metric}' is both expected and observed; keep one",
                                    field=field, code="observed-and-expected"))
        name(clauses, loc, field)
    return problems


def _model_at(model: type[BaseModel], loc: Loc) -> type[BaseModel] | None:
    """The pydantic model that owns the mapping at ``loc`` (for 'did you mean' hints)."""
    current: type[BaseModel] = model
    for part in loc:
        if isinstance(part, int):
            continue
        info = current.model_fields.get(str(part)) or next(
            (f for f in current.model_fields.values() if f.alias == part), None)
        inner = _submodel(info.annotation) if info is not None else None
        if inner is None:
            return None
        current = inner
    return current


def _submodel(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in getattr(annotation, "__args__", ()) or ():
        found = _submodel(arg)
        if found is not None:
            return found
    return None


def _schema_problems(exc: ValidationError, model: type[BaseModel], source: Source, rel: str) -> list[Problem]:
    problems: dict[tuple[str, str], Problem] = {}
    for error in exc.errors(include_url=False):
        loc = tuple(p for p in error["loc"] if not (isinstance(p, str) and p[:1].isupper()))
        kind = error["type"]
        name = loc[-1] if loc else ""
        ctx = error.get("ctx") or {}
        line, col = source.mark(loc)
        group, code = "value", "bad-expectation" if "expect" in loc else "invalid-value"
        if kind == "missing":
            line, col = source.mark(loc[:-1])
            where = field_path(loc[:-1])
            message = f"missing required field '{name}'" + (f" in {where}" if where else "")
            group, code = "missing", "missing-field"
        elif kind == "extra_forbidden":
            owner = _model_at(model, loc[:-1])
            known = [info.alias or name for name, info in owner.model_fields.items()] if owner else []
            hint = (did_you_mean(str(name), known) or f"; known fields: {', '.join(known)}") if owner else ""
            line, col = source.mark(loc, key=True)
            message = f"unknown field '{name}'{hint}"
            group, code = kind, "unknown-field"
        elif isinstance(ctx.get("error"), ValueError) and kind == "value_error":  # (ours: its message)
            message = str(ctx["error"])
        elif kind == "literal_error":
            given = error.get("input")
            expected = str(ctx.get("expected", "")).replace("'", "").replace(" or ", ", ")
            choices = [c.strip() for c in expected.split(",")]
            message = f"'{given}' is not one of: {', '.join(choices)}{did_you_mean(str(given), choices)}"
        elif kind == "too_short":
            message = f"is empty; give at least {ctx.get('min_length', 1)}"
        elif error.get("input", "") is None:  # ``title:`` with nothing after it, or ``~``
            message = "has no value (it is empty or null); write one"
        else:
            given = error.get("input")
            shown = repr(given) if not isinstance(given, (dict, list)) else type(given).__name__
            message = f"{error['msg'][0].lower()}{error['msg'][1:]} (got {shown})"
        problems.setdefault((field_path(loc), group), Problem(rel, line, col, message, field_path(loc), code=code))
    return list(problems.values())
