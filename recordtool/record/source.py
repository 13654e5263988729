"""Reading one YAML file safely, keeping where every value came from.

Safe YAML only: the file is composed into nodes by PyYAML's safe machinery (libyaml when
present) and turned into plain data here, so nothing but mappings, lists and scalars can
come out. Aliases are followed, but the number of values a file may expand to is bounded,
which refuses an alias bomb before it is expanded. Timestamps stay strings: the schema parses
dates, so a bad date is reported like any other bad value.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

try:  # libyaml's composer is about ten times faster than the pure-Python one.
    from yaml import CSafeLoader as _BaseLoader
except ImportError:  # pragma: no cover
    from yaml import SafeLoader as _BaseLoader  # type: ignore[assignment]

MAX_BYTES = 1_000_000
MAX_NODES = 50_000

Loc = tuple[str | int, ...]
Mark = tuple[int, int]

_BOOL = {"true": True, "false": False, "yes": True, "no": False, "on": True, "off": False}


class SourceError(Exception):
    """The file cannot be read as a YAML mapping; ``line``/``col`` say where (1-based)."""

    def __init__(self, message: str, line: int = 0, col: int = 0, code: str = "yaml") -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.col = col
        self.code = code


@dataclass
class Source:
    """A file's data and the marks (line, col; 1-based) of its values and keys, by field path;
    ``digest``: a hash of the file's bytes (what the data came from, for keys of pages)."""

    data: dict[str, Any]
    marks: dict[Loc, Mark]
    key_marks: dict[Loc, Mark]
    styles: dict[Loc, str]
    digest: str

    def mark(self, loc: Loc, *, key: bool = False) -> Mark:
        """The closest known place for ``loc``: the value, else its key, else its parent."""
        loc = tuple(loc)
        while True:
            if key and loc in self.key_marks:
                return self.key_marks[loc]
            if loc in self.marks:
                return self.marks[loc]
            if loc in self.key_marks:
                return self.key_marks[loc]
            if not loc:
                return (1, 1)
            loc = loc[:-1]


def read_source(path: Path, *, all_marks: bool = False) -> Source:
    """Read and compose ``path``; raise SourceError with a place on any problem.

    Marks are kept for top-level fields and their direct items (enough for later stages);
    ``all_marks`` keeps them for every value, which reporting a deep problem needs.
    """
    return parse_source(read_bytes(path), all_marks=all_marks)


def read_bytes(path: Path | str) -> bytes:
    """The bytes of a file of at most ``MAX_BYTES`` (SourceError when larger, OSError when it
    cannot be read), in four system calls: a record is thousands of small files."""
    # O_NONBLOCK: a named pipe left in the record reads as empty instead of waiting for a writer
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0))
    try:
        size = os.fstat(fd).st_size
        if size > MAX_BYTES:
            raise _too_large(size)
        raw = os.read(fd, size + 1)  # a regular file gives less than asked only at its end
        if len(raw) > size:  # it grew since: read on, up to just over the limit
            parts = [raw]
            total = len(raw)
            while total <= MAX_BYTES and (more := os.read(fd, MAX_BYTES + 1 - total)):
                parts.append(more)
                total += len(more)
            raw = b"".join(parts)
    finally:
        os.close(fd)
    if len(raw) > MAX_BYTES:
        raise _too_large(len(raw))
    return raw


def _too_large(size: int) -> SourceError:
    return SourceError(f"file is {size / 1e6:.1f} MB, over the {MAX_BYTES / 1e6:.0f} MB limit for one entry; "
                       "keep data out of the record and link to it instead", code="too-large")


def parse_source(raw: bytes, *, all_marks: bool = True) -> Source:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        col = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        raise SourceError(
            f"byte 0x{raw[exc.start]:02x} is not UTF-8; save the file as UTF-8",
            line,
            col,
            code="encoding",
        ) from None
    if text.startswith("\ufeff"):
        text = text[1:]
    if not text.strip() or all(not ln.strip() or ln.lstrip().startswith("#") for ln in text.splitlines()):
        raise SourceError("file is empty; an entry is a YAML mapping that starts with 'id: ...'", 1, 1, code="empty")
    try:
        loader = _Loader(text)
        try:
            node = loader.get_single_node()
        finally:
            loader.dispose()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        what = exc.problem or str(exc)
        context = f" ({exc.context})" if exc.context else ""
        raise SourceError(f"invalid YAML: {what}{context}", line, col) from None
    except yaml.YAMLError as exc:
        raise SourceError(f"invalid YAML: {exc}", 1, 1) from None
    if node is None:
        raise SourceError("file is empty; an entry is a YAML mapping that starts with 'id: ...'", 1, 1, code="empty")
    if not isinstance(node, yaml.MappingNode):
        found = "a list" if isinstance(node, yaml.SequenceNode) else f"a single value ({node.value!r})"
        raise SourceError(
            f"expected a mapping of fields (id: ..., title: ...) but found {found}",
            node.start_mark.line + 1,
            node.start_mark.column + 1,
            code="not-mapping",
        )
    builder = _Builder(depth=1_000 if all_marks else 2)
    data = builder.build(node, ())
    assert isinstance(data, dict)
    digest = hashlib.blake2b(raw, digest_size=16).hexdigest()
    return Source(data, builder.marks, builder.key_marks, builder.styles, digest)


class _Loader(_BaseLoader):
    """The safe loader, with a quick answer for the commonest plain scalar: a word."""

    def resolve(self, kind: Any, value: Any, implicit: Any) -> Any:
        # The safe resolver's answers, without its regular expressions where they cannot match.
        if kind is yaml.MappingNode:
            return "tag:yaml.org,2002:map"
        if kind is yaml.SequenceNode:
            return "tag:yaml.org,2002:seq"
        if not implicit[0] or (value and value[0] not in _MAYBE_TYPED):
            return "tag:yaml.org,2002:str"
        if value[0] in _WORDY:  # a word is a bool or null only when it is one of these
            return _WORDS.get(value, "tag:yaml.org,2002:str")
        return super().resolve(kind, value, implicit)  # type: ignore[no-untyped-call]


# Plain scalars starting with anything else resolve to strings under YAML 1.1's rules.
_MAYBE_TYPED = frozenset("0123456789+-.~nNtTfFyYoO=<")
_WORDY = frozenset("nNtTfFyYoO")
_WORDS = {
    **{w: "tag:yaml.org,2002:bool" for w in ("yes", "Yes", "YES", "no", "No", "NO", "true", "True", "TRUE", "false",
                                             "False", "FALSE", "on", "On", "ON", "off", "Off", "OFF")},
    **{w: "tag:yaml.org,2002:null" for w in ("null", "Null", "NULL")},
}


class _Builder:
    def __init__(self, depth: int) -> None:
        self.depth = depth
        self.marks: dict[Loc, Mark] = {}
        self.key_marks: dict[Loc, Mark] = {}
        self.styles: dict[Loc, str] = {}
        self.count = 0

    def build(self, node: yaml.Node, loc: Loc) -> Any:
        self.count += 1
        if self.count > MAX_NODES:
            raise SourceError(
                f"refused: the file expands to more than {MAX_NODES} values (an alias bomb?); "
                "entries are small, write values out instead of multiplying aliases",
                node.start_mark.line + 1,
                node.start_mark.column + 1,
                code="too-many-nodes",
            )
        keep = len(loc) <= self.depth
        if keep:
            self.marks[loc] = (node.start_mark.line + 1, node.start_mark.column + 1)
        if isinstance(node, yaml.MappingNode):
            out: dict[str, Any] = {}
            for key_node, value_node in node.value:
                if not isinstance(key_node, yaml.ScalarNode) or key_node.tag == "tag:yaml.org,2002:merge":
                    raise SourceError(
                        "keys must be plain words (no lists, mappings or '<<' merges as keys)",
                        key_node.start_mark.line + 1,
                        key_node.start_mark.column + 1,
                    )
                key = str(key_node.value)
                child = (*loc, key)
                if key in out:
                    raise SourceError(
                        f"'{key}' appears twice in the same mapping; keep one",
                        key_node.start_mark.line + 1,
                        key_node.start_mark.column + 1,
                        code="duplicate-key",
                    )
                if keep:
                    self.key_marks[child] = (key_node.start_mark.line + 1, key_node.start_mark.column + 1)
                out[key] = self.build(value_node, child)
            return out
        if isinstance(node, yaml.SequenceNode):
            return [self.build(item, (*loc, i)) for i, item in enumerate(node.value)]
        assert isinstance(node, yaml.ScalarNode)
        if node.style and keep:
            self.styles[loc] = node.style
        return _scalar(node)


def _scalar(node: yaml.ScalarNode) -> Any:
    tag, value = node.tag, node.value
    if tag == "tag:yaml.org,2002:str" or tag == "tag:yaml.org,2002:timestamp":
        return value
    if tag == "tag:yaml.org,2002:null":
        return None
    if tag == "tag:yaml.org,2002:bool":
        return _BOOL[value.lower()]
    if tag == "tag:yaml.org,2002:int":
        cleaned = value.replace("_", "")
        sign = -1 if cleaned.startswith("-") else 1
        digits = cleaned.lstrip("+-")
        if digits.startswith("0x"):
            return sign * int(digits[2:], 16)
        if digits.startswith("0o"):
            return sign * int(digits[2:], 8)
        if digits.startswith("0b"):
            return sign * int(digits[2:], 2)
        if ":" in digits:  # sexagesimal, YAML 1.1
            total = 0
            for part in digits.split(":"):
                total = total * 60 + int(part)
            return sign * total
        return sign * int(digits, 8 if len(digits) > 1 and digits.startswith("0") else 10)
    if tag == "tag:yaml.org,2002:float":
        lowered = value.lower().replace("_", "")
        if lowered in (".nan",):
            return float("nan")
        if lowered in (".inf", "+.inf"):
            return float("inf")
        if lowered == "-.inf":
            return float("-inf")
        if ":" in lowered:
            return value
        return float(lowered)
    raise SourceError(
        f"unsupported YAML tag {tag}; only plain mappings, lists and scalars are allowed",
        node.start_mark.line + 1,
        node.start_mark.column + 1,
        code="tag",
    )
