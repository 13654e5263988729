"""The schema of an entry: what each field of a YAML entry must be.

One model per kind of schema (literature, note, theory) over a common base. Checks of a
claim follow the check contract (docs/checks.md); their expectations are parsed here, so a typo in
``"< 1e-9"`` is an error at load time, long before anything runs.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, field_validator, model_validator

from recordtool.record.expect import Expectation, parse_expectation

STATUSES = ("active", "superseded", "retracted", "draft")
Status = Literal["active", "superseded", "retracted", "draft"]

_CHECK_NAME = re.compile(r"^[a-z0-9][a-z0-9-]*$")
_METRIC = re.compile(r"^[A-Za-z_][A-Za-z0-9_.]*$")
_TAG = re.compile(r"^[a-z0-9][a-z0-9-]*(/[a-z0-9][a-z0-9-]*)*$")
_RUN = re.compile(r"^(?P<module>[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*):(?P<function>[A-Za-z_][A-Za-z0-9_]*)$")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


def _date(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return dt.date.fromisoformat(value)
        except ValueError:
            raise ValueError(f"'{value}' is not a date; write YYYY-MM-DD, e.g. 2026-10-26") from None
    if isinstance(value, dt.date):
        return value
    raise ValueError(f"{value!r} is not a date; write YYYY-MM-DD, e.g. 2026-10-26")


Date = Annotated[dt.date, BeforeValidator(_date)]


def _expectation(value: Any) -> Any:
    return value if isinstance(value, Expectation) else parse_expectation(value)


ExpectationField = Annotated[Expectation, BeforeValidator(_expectation)]


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


class Control(_Strict):
    """A setting under which the claim must NOT hold: the check's params updated by these."""

    name: str = ""
    params: dict[str, Any] = Field(default_factory=dict)


class CheckSpec(_Strict):
    """One executable check of a claim (docs/checks.md)."""

    name: str
    run: str
    params: dict[str, Any] = Field(default_factory=dict)
    expect: dict[str, ExpectationField] = Field(min_length=1)
    control: Control | None = None
    controls: list[Control] = Field(default_factory=list)
    timeout: float | None = Field(default=None, gt=0)
    needs: list[Literal["gpu"]] = Field(default_factory=list)

    model_config = ConfigDict(extra="forbid", frozen=True, arbitrary_types_allowed=True)

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if not _CHECK_NAME.match(value):
            raise ValueError(f"'{value}' is not a check name; use lowercase words joined by dashes, e.g. exact-expansion")
        return value

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

    @field_validator("expect")
    @classmethod
    def _metric_names(cls, value: dict[str, Expectation]) -> dict[str, Expectation]:
        for metric in value:
            if not _METRIC.match(metric):
                raise ValueError(f"'{metric}' is not a metric name; use letters, digits and underscores")
        return value

    @model_validator(mode="after")
    def _one_control_field(self) -> CheckSpec:
        if self.control is not None and self.controls:
            raise ValueError("give either 'control' (one) or 'controls' (a list), not both")
        names = [c.name for c in self.all_controls]
        if len(set(names)) != len(names):
            raise ValueError("controls need distinct names")
        return self

    @property
    def all_controls(self) -> list[Control]:
        """Every control, each with a name (``control`` alone is named ``control``)."""
        if self.control is not None:
            return [self.control if self.control.name else self.control.model_copy(update={"name": "control"})]
        return [c if c.name else c.model_copy(update={"name": f"control-{i + 1}"}) for i, c in enumerate(self.controls)]

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
    checks: list[CheckSpec] = Field(default_factory=list)

    @property
    def display_title(self) -> str:
        return self.title or self.statement

    def prose(self) -> list[tuple[str, str]]:
        out = super().prose()
        out.insert(1 if self.status_note else 0, ("statement", self.statement))
        return out

    @model_validator(mode="after")
    def _unique_checks(self) -> Theory:
        seen: set[str] = set()
        for check in self.checks:
            if check.name in seen:
                raise ValueError(f"two checks are named '{check.name}'; give each a distinct name")
            seen.add(check.name)
        return self


MODELS: dict[str, type[Entry]] = {"literature": Literature, "note": Note, "theory": Theory}


# One set of field names per distinct set, shared by every model that has it (see ``compact``).
_FIELD_SETS: dict[frozenset[str], set[str]] = {}


def compact(model: BaseModel) -> None:
    """Let ``model``, and the models inside it, share their set of explicitly set field names
    with every model that has the same: a set per model instance is, after its text, the
    largest part of an entry's memory (100,000 entries: about 130 MB). The models are frozen,
    so nothing changes these sets (pydantic's ``model_copy`` copies one before changing it)."""
    names = model.__pydantic_fields_set__
    key = frozenset(names)
    shared = _FIELD_SETS.get(key)
    if shared is None:
        shared = _FIELD_SETS[key] = set(key)
    object.__setattr__(model, "__pydantic_fields_set__", shared)
    for value in model.__dict__.values():
        if isinstance(value, BaseModel):
            compact(value)
        elif isinstance(value, list):
            for item in value:
                if isinstance(item, BaseModel):
                    compact(item)

