"""The schema of an entry: what each field of a YAML entry must be.

One model per kind of schema (literature, note, theory) over a common base. A check's
expectations are parsed here, so a typo in ``"< 1e-9"`` is an error long before anything runs.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic.json_schema import models_json_schema

from recordtool.record.expect import Expectation, parse_expectation

Status = Literal["active", "superseded", "retracted", "draft"]

_CHECK_NAME = re.compile(r"^[a-z0-9][a-z0-9-]*$")
_CLAUSE = re.compile(r"^[a-z0-9][a-z0-9-]*$")
STATEMENT_CLAUSE = "statement"  # the one clause of a claim that declares no ``clauses:``
_METRIC = re.compile(r"^[A-Za-z_][A-Za-z0-9_.]*$")
_TAG = re.compile(r"^[a-z0-9][a-z0-9-]*(/[a-z0-9][a-z0-9-]*)*$")
# Ids, check names, control names and tags become file and folder names in the pages and verdicts
# (with a temporary name beside each): these limits keep every such name under 255 bytes.
NAME_MAX = 64  # characters of an id, a check's name, a control's name
TAG_MAX = 100  # characters of a tag
_RUN = re.compile(r"^(?P<module>[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*):(?P<function>[A-Za-z_][A-Za-z0-9_]*)$")


def _fits(value: str, what: str) -> str:
    """``value``, or a ValueError when it is too long to name a file or folder (``NAME_MAX``)."""
    if len(value) > NAME_MAX:
        raise ValueError(f"'{value[:20]}...' is {len(value)} characters long; {what} names a folder of the "
                         f"pages and verdicts, so it holds at most {NAME_MAX}: shorten it")
    return value


def _metric_name(metric: str) -> str:
    if not _METRIC.match(metric):
        raise ValueError(f"'{metric}' is not a metric name; use letters, digits and underscores")
    return metric


class _Strict(BaseModel):
    # defer_build: each model's validator is built when it first validates, not on import,
    # which every command pays for; a command after one edit validates one or two kinds of
    # entry. Subclasses inherit it (arbitrary types: an ``Expectation``).
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True, defer_build=True,
                              arbitrary_types_allowed=True)


def _date(value: Any) -> Any:
    if isinstance(value, dt.date):
        return value
    try:
        return dt.date.fromisoformat(value)
    except (TypeError, ValueError):
        shown = f"'{value}'" if isinstance(value, str) else repr(value)
        raise ValueError(f"{shown} is not a date; write YYYY-MM-DD, e.g. 2026-10-26") from None


Date = Annotated[dt.date, BeforeValidator(_date)]


def _expectation(value: Any) -> Any:
    return value if isinstance(value, Expectation) else parse_expectation(value)


# (each ``json_schema_input_type``: what a YAML file may write there, for ``json_schema``)
ExpectationField = Annotated[Expectation, BeforeValidator(_expectation, json_schema_input_type=str)]


def _clause_list(value: Any) -> Any:
    """``clause: a`` or ``clause: [a, b]``: a list of clause ids either way."""
    return [value] if isinstance(value, str) else value


def _clause_ids(value: list[str]) -> list[str]:
    for clause in value:
        if not _CLAUSE.match(clause):
            raise ValueError(f"'{clause}' is not a clause id; use lowercase words joined by dashes, e.g. previous-token")
    if len(set(value)) != len(value):
        raise ValueError("a clause is named twice; name each once")
    return value


ClauseList = Annotated[list[str], BeforeValidator(_clause_list, json_schema_input_type=str | list[str])]


class Expect(_Strict):
    """One expectation of a check, on one metric (docs/verdicts.md).

    Written as a plain comparison (``err: "< 1e-9"``, only in a claim of one clause) or as a
    mapping ``{is: "> 2", clause: k-composition, null: k_comp_null}``: the comparison, the
    clause(s) it tests (all of them when omitted, which only a one-clause claim may do) and,
    optionally, the metric the check also returns for the value under the null hypothesis.
    """

    is_: ExpectationField = Field(alias="is")
    clause: Annotated[ClauseList, AfterValidator(_clause_ids)] = Field(default_factory=list)
    null: Annotated[str, AfterValidator(_metric_name)] | None = None
    _plain: bool = PrivateAttr(default=False)  # written as a plain comparison

    @property
    def plain(self) -> bool:
        """Whether the YAML wrote this expectation as a plain comparison (``err: "< 1"``)."""
        return self._plain

    def holds(self, value: float) -> bool:
        """Whether ``value`` satisfies the comparison (never for NaN)."""
        return self.is_.holds(value)

    def key(self) -> Any:
        """What identifies this expectation (for fingerprints): the comparison as written,
        and its clauses and null when given."""
        if not self.clause and self.null is None:
            return str(self.is_)
        return {"is": str(self.is_), "clause": list(self.clause), "null": self.null}

    def __str__(self) -> str:
        return str(self.is_)


def _expect(value: Any) -> Any:
    if isinstance(value, (Expect, dict)):
        return value
    expect = Expect.model_validate({"is": _expectation(value)})
    expect._plain = True
    return expect


ExpectField = Annotated[Expect, BeforeValidator(_expect, json_schema_input_type=str | Expect)]


class Tolerance(_Strict):
    """How close two runs' numbers must be to count as the same: ``|a - b| <= abs + rel * max(|a|, |b|)``."""

    rel: float = Field(default=1e-6, ge=0, allow_inf_nan=False)
    abs: float = Field(default=1e-9, ge=0, allow_inf_nan=False)


class Limits(_Strict):
    """What one run of a check may use (docs/checks.md, "Limits"): its address space in MiB and
    its CPU time in seconds; unset, the defaults that ``verify`` gives."""

    memory_mb: int | None = Field(default=None, gt=0)
    cpu_s: float | None = Field(default=None, gt=0, allow_inf_nan=False)


class Citation(_Strict):
    """A typed citation, declared on the citing side: ``{id: LIT-1534, as: source}``."""

    id: str
    as_: str = Field(alias="as")
    note: str | None = None


class Reference(_Strict):
    """How a piece of literature is cited."""

    authors: list[str] = Field(min_length=1)
    et_al: bool = False
    year: int = Field(ge=1000, le=3000)
    title: str
    venue: str | None = None
    date: Date | None = None
    url: str | None = None
    doi: str | None = None

    @field_validator("url")
    @classmethod
    def _url(cls, value: str | None) -> str | None:
        if value is not None and not _safe_link(value):
            raise ValueError(f"{value[:80]!r} is not a link a page may carry; write an http(s) address, a doi: "
                             "or a path relative to the record (no javascript:, data:, file: or spaces)")
        return value

    @field_validator("doi")
    @classmethod
    def _doi(cls, value: str | None) -> str | None:
        if value is None:
            return None
        match = _DOI.match(value)
        if match is None:
            raise ValueError(f"{value[:80]!r} is not a DOI; write it as 10.NNNN/suffix (doi:10.NNNN/... and "
                             "https://doi.org/10.NNNN/... are fine too)")
        return match.group(1)  # the DOI itself


_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*):")
_WEB = re.compile(r"^https?://[^/]", re.IGNORECASE)
_DOI = re.compile(r"^(?:doi:|https?://(?:dx\.)?doi\.org/)?(10\.[0-9]{4,9}/[^\s\x00-\x1f\x7f]+)$", re.ASCII)


def _safe_link(value: str) -> bool:
    """An http(s) address, a doi: or a relative path; nothing a viewer would run or open locally."""
    if not value or any(c.isspace() or not c.isprintable() for c in value) or "\\" in value:
        return False
    scheme = _SCHEME.match(value)
    if scheme is None:
        return not value.startswith("//")  # a path relative to the page, not another host's
    return scheme.group(1).lower() == "doi" or _WEB.match(value) is not None


class Control(_Strict):
    """A setting under which the claim must NOT hold (a negative control), or, under
    ``positives:``, one where it is known to hold (a positive control): the check's params
    updated by these."""

    name: str = ""
    params: dict[str, Any] = Field(default_factory=dict)

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        return _fits(value, "a control's name")


class CheckSpec(_Strict):
    """One executable check of a claim (docs/checks.md)."""

    name: str
    run: str
    params: dict[str, Any] = Field(default_factory=dict)
    expect: dict[str, ExpectField] = Field(min_length=1)
    observe: dict[str, ClauseList] = Field(default_factory=dict)
    degenerate: dict[str, ExpectationField] = Field(default_factory=dict)
    seeds: int = Field(default=1, ge=1)
    quorum: int | None = Field(default=None, ge=1)
    threads: int = Field(default=1, ge=1)
    tolerance: Tolerance = Field(default_factory=Tolerance)
    keep: list[str] = Field(default_factory=list)  # list metrics kept in full (else summarized when long)
    control: Control | None = None
    controls: list[Control] = Field(default_factory=list)
    # settings where the clause is known to hold (a planted circuit, say): an expectation that
    # holds on every seed of one has sensitivity (docs/verdicts.md)
    positives: list[Control] = Field(default_factory=list)
    setting: str = ""  # one line: what the check runs on, shown beside the verdict
    analogue: bool = False  # the check measures an analogue of the model the claim is about
    timeout: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    limits: Limits = Field(default_factory=Limits)  # address space and CPU time of each run
    needs: list[Literal["gpu"]] = Field(default_factory=list)

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if not _CHECK_NAME.match(value):
            raise ValueError(f"'{value}' is not a check name; use lowercase words joined by dashes, e.g. exact-expansion")
        return _fits(value, "a check's name")

    @field_validator("run")
    @classmethod
    def _run(cls, value: str) -> str:
        if "/" in value or "\\" in value or value.startswith(".") or ".." in value:
            raise ValueError(
                f"'{value}' is a path; name a function in a module inside checks/ as 'checks.module:function'"
            )
        if not _RUN.match(value):
            raise ValueError(f"'{value}' is not 'module:function'; write e.g. 'checks.path_expansion:measure'")
        return value

    @field_validator("expect", "observe", "degenerate", "keep")
    @classmethod
    def _metric_names(cls, value: Any) -> Any:
        for metric in value:  # a mapping's keys, or the names a list holds
            _metric_name(metric)
        return value

    @field_validator("observe")
    @classmethod
    def _observed_clauses(cls, value: dict[str, list[str]]) -> dict[str, list[str]]:
        for clauses in value.values():
            _clause_ids(clauses)
        return value

    @field_validator("quorum")
    @classmethod
    def _quorum(cls, value: int | None, info: ValidationInfo) -> int | None:
        seeds = info.data.get("seeds")
        if value is not None and isinstance(seeds, int) and value > seeds:
            raise ValueError(f"quorum {value} is more than the {seeds} seed{'s' if seeds != 1 else ''} the check "
                             f"runs on; give seeds: {value} or more, or a quorum of at most {seeds}")
        return value

    @model_validator(mode="after")
    def _one_control_field(self) -> CheckSpec:
        if self.control is not None and self.controls:
            raise ValueError("give either 'control' (one) or 'controls' (a list), not both")
        names = [c.name for c in self.all_controls]
        positives = [c.name for c in self.all_positives]
        for what, named in (("controls", names), ("positives", positives)):
            if len(set(named)) != len(named):
                raise ValueError(f"{what} need distinct names")
        if set(positives) & set(names):
            raise ValueError(f"'{sorted(set(positives) & set(names))[0]}' names both a control and a positive; "
                             "give them distinct names")
        return self

    @field_validator("setting")
    @classmethod
    def _setting(cls, value: str) -> str:
        if "\n" in value.strip():
            raise ValueError("the setting is one line: what the check runs on, e.g. 'two-layer attention-only "
                             "toy, d_model 64, trained on repeated random tokens'")
        return " ".join(value.split())

    def required(self, seeds: int) -> int:
        """How many of ``seeds`` seeds an expectation must hold on: the quorum (at most
        ``seeds``, when ``verify --seeds`` runs fewer), else all of them."""
        return seeds if self.quorum is None else min(self.quorum, seeds)

    @property
    def all_controls(self) -> list[Control]:
        """Every control, each with a name (``control`` alone is named ``control``)."""
        if self.control is not None:
            return [self.control if self.control.name else self.control.model_copy(update={"name": "control"})]
        return [c if c.name else c.model_copy(update={"name": f"control-{i + 1}"}) for i, c in enumerate(self.controls)]

    @property
    def all_positives(self) -> list[Control]:
        """Every positive control, each with a name (``positive-1``, ... when it has none)."""
        return [c if c.name else c.model_copy(update={"name": f"positive-{i + 1}"})
                for i, c in enumerate(self.positives)]

    @property
    def module(self) -> str:
        return self.run.split(":", 1)[0]

    @property
    def function(self) -> str:
        return self.run.split(":", 1)[1]


class Entry(_Strict):
    """Fields every entry has."""

    id: str
    kind: str
    title: str = Field(min_length=1)
    status: Status = "active"
    status_note: str | None = None
    version: int = Field(default=1, ge=1)
    tags: list[str] = Field(default_factory=list)
    created: Date | None = None
    updated: Date | None = None
    cites: list[Citation] = Field(default_factory=list)
    body: str = ""

    @field_validator("tags")
    @classmethod
    def _tags(cls, value: list[str]) -> list[str]:
        for tag in value:
            if not _TAG.match(tag):
                raise ValueError(f"'{tag}' is not a tag; use lowercase words joined by dashes, e.g. induction-heads")
            if len(tag) > TAG_MAX:
                raise ValueError(f"the tag '{tag[:20]}...' is {len(tag)} characters long; a tag names a page file, "
                                 f"so it holds at most {TAG_MAX}: shorten it")
        return value

    @property
    def display_title(self) -> str:
        return self.title

    def prose(self) -> list[tuple[str, str]]:
        """The Markdown prose fields that may mention other entries, as (field, text)."""
        out = [("body", self.body)] if self.body else []
        if self.status_note:
            out.insert(0, ("status_note", self.status_note))
        return out


class Note(Entry):
    """A reading note, or any entry with no fields of its own."""


class Literature(Entry):
    """A paper, book or article: an entry with a reference."""

    reference: Reference


class Theory(Entry):
    """A claim: a versioned statement and the checks that measure it."""

    title: str = ""
    statement: str = Field(min_length=1)
    clauses: dict[str, str] = Field(default_factory=dict)
    checks: list[CheckSpec] = Field(default_factory=list)

    @field_validator("clauses")
    @classmethod
    def _clause_texts(cls, value: dict[str, str]) -> dict[str, str]:
        _clause_ids(list(value))
        for clause, text in value.items():
            if not text.strip():
                raise ValueError(f"clause '{clause}' has no text; say what the clause claims")
        return value

    @property
    def clause_ids(self) -> list[str]:
        """The claim's clauses in order: those of ``clauses:``, else the one ``statement``."""
        return list(self.clauses) or [STATEMENT_CLAUSE]

    def clause_text(self, clause: str) -> str:
        return self.clauses.get(clause, self.statement if clause == STATEMENT_CLAUSE else "")

    @property
    def display_title(self) -> str:
        return self.title or self.statement

    def prose(self) -> list[tuple[str, str]]:
        out = super().prose()
        out.insert(1 if self.status_note else 0, ("statement", self.statement))
        return out

    @model_validator(mode="after")
    def _unique_checks(self) -> Theory:
        names = [check.name for check in self.checks]
        for i, name in enumerate(names):
            if name in names[:i]:
                raise ValueError(f"two checks are named '{name}'; give each a distinct name")
        return self


MODELS: dict[str, type[Entry]] = {"literature": Literature, "note": Note, "theory": Theory}


def json_schema(kinds: Mapping[str, str]) -> dict[str, Any]:
    """The JSON Schema (draft 7) of an entry file, made from the models: ``kinds`` maps each
    kind's name to its schema. An entry that leaves ``kind:`` out may be any of them."""
    names = sorted(set(kinds.values()))
    refs, found = models_json_schema([(MODELS[n], "validation") for n in names], ref_template="#/definitions/{model}")
    definitions = found["$defs"]
    for name in names:
        definitions[MODELS[name].__name__]["required"].remove("kind")  # (the folder gives it)
    ref = {name: refs[(MODELS[name], "validation")] for name in names}
    return {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "title": "An entry of the record (recordtool schema)",
        "type": "object",
        "properties": {"kind": {"enum": sorted(kinds)}},
        "allOf": [{"if": {"required": ["kind"], "properties": {"kind": {"enum": sorted(k for k, n in kinds.items()
                                                                                       if n == name)}}},
                   "then": ref[name]} for name in names]
                 + [{"if": {"not": {"required": ["kind"]}}, "then": {"anyOf": list(ref.values())}}],
        "definitions": definitions,
    }
