"""Reading one YAML file safely, keeping where every value came from.

Safe YAML only: PyYAML's safe composer makes nodes and this module turns them into plain
data, bounding how many values aliases expand to (an alias bomb is refused). Timestamps stay
strings: the schema parses dates, so a bad date is reported like any other bad value.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from recordtool.record.confine import open_inside

try:  # libyaml's composer is about ten times faster than the pure-Python one.
    from yaml import CSafeLoader as _BaseLoader

    _BYTE_POSITIONS = True  # libyaml says where a bad character is in bytes of UTF-8
except ImportError:  # pragma: no cover
    from yaml import SafeLoader as _BaseLoader  # type: ignore[assignment]

    _BYTE_POSITIONS = False

MAX_BYTES = 1_000_000
MAX_NODES = 50_000
MAX_DEPTH = 100  # levels of nesting (the shipped entries use 5)
MAX_DIGITS = 100  # digits of an integer (Python refuses to print one of over 4,300)

Loc = tuple[str | int, ...]
Mark = tuple[int, int]


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


def read_source(path: Path) -> Source:
    """Read and compose ``path``; raise SourceError with a place on any problem."""
    return parse_source(read_bytes(path))


def read_bytes(path: Path | str, inside: Path | str | None = None, *, follow: bool = True) -> bytes:
    """The bytes of a file of at most ``MAX_BYTES`` (SourceError when larger); ``inside``: the
    folder it must be a regular file of, checked as it is opened (``confine.open_inside``);
    ``follow`` False: OSError when ``path`` is a link."""
    # O_NONBLOCK: a named pipe left in the record reads as empty instead of waiting for a writer
    flags = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0)
    fd = os.open(path, flags | (0 if follow else getattr(os, "O_NOFOLLOW", 0))) if inside is None else open_inside(path, inside)
    with os.fdopen(fd, "rb") as file:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):  # a named pipe, a device: nothing to read
            raise SourceError("not a regular file; an entry is a YAML file", code="not-a-file")
        if info.st_size > MAX_BYTES:
            raise _too_large(info.st_size)
        raw = file.read(info.st_size + 1)  # (asking for no more than is there: much faster)
        if len(raw) > info.st_size:  # it grew since: read on, to just over the limit
            raw += file.read(MAX_BYTES + 1 - len(raw))
    if len(raw) > MAX_BYTES:
        raise _too_large(len(raw))
    return raw


def _too_large(size: int) -> SourceError:
    return SourceError(f"file is {size / 1e6:.1f} MB, over the {MAX_BYTES / 1e6:.0f} MB limit for one entry; "
                       "keep data out of the record and link to it instead", code="too-large")


def parse_source(raw: bytes) -> Source:
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
        if sum(map(text.count, "[{-:?")) > _SAFE_INDICATORS:
            _check_depth(text)
        loader = _Loader(text)
        try:
            node = loader.get_single_node()
        finally:
            loader.dispose()
    except yaml.MarkedYAMLError as exc:
        if exc.problem == _LIBYAML_TOO_DEEP:  # where the values first go deeper than ours
            with contextlib.suppress(yaml.YAMLError):
                _check_depth(text, yaml.SafeLoader)
        mark = exc.problem_mark or exc.context_mark
        line, col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        what = exc.problem or str(exc)
        context = f" ({exc.context})" if exc.context else ""
        raise SourceError(f"invalid YAML: {what}{context}", line, col) from None
    except yaml.reader.ReaderError as exc:  # a character YAML does not allow: say which, and where
        before = (text.encode("utf-8", "surrogatepass")[: exc.position].decode("utf-8", "ignore")
                  if _BYTE_POSITIONS else text[: exc.position])
        line = len(_LINE_BREAK.findall(before)) + 1
        col = len(before) - max((m.end() for m in _LINE_BREAK.finditer(before)), default=0) + 1
        char = exc.character if isinstance(exc.character, str) else chr(exc.character)
        raise SourceError(f"invalid YAML: the control character {char!a} is not allowed in YAML; remove it "
                          "or write it as an escape in a double-quoted string", line, col, code="yaml") from None
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
    builder = _Builder(text)
    data = builder.build(node, ())
    assert isinstance(data, dict)
    return Source(data, builder.marks, builder.key_marks, builder.styles, bytes_digest(raw))


def bytes_digest(raw: bytes) -> str:
    """The hash of a file's bytes (``Source.digest``, ``Places.digest``)."""
    return hashlib.blake2b(raw, digest_size=16).hexdigest()


# libyaml's composer recurses in C once per level of nesting and crashes the interpreter some
# ten thousand levels deep. Every level takes one of these characters; a file with few of them
# is composed at once, any other is first parsed flat (events, no recursion) for its depth.
_SAFE_INDICATORS = 2_000
# Some libyaml builds refuse deep nesting before giving the events of its first levels: PyYAML's
# parser in Python then finds where the values first go deeper than ``MAX_DEPTH``.
_LIBYAML_TOO_DEEP = "exceeded maximum nesting depth"


def _check_depth(text: str, loader_class: Any = None) -> None:
    """Raise ``_too_deep`` where the values of ``text`` first go deeper than ``MAX_DEPTH``, found
    from its events (with libyaml's parser unless ``loader_class`` says otherwise)."""
    loader = (loader_class or _BaseLoader)(text)
    try:
        depth = 0
        while (event := loader.get_event()) is not None and not isinstance(event, yaml.StreamEndEvent):
            if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
                depth += 1
                if depth > MAX_DEPTH + 1 and event.start_mark is not None:  # the top mapping is level 0 of a path
                    raise _too_deep(event.start_mark.line + 1, event.start_mark.column + 1)
            elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
                depth -= 1
    finally:
        loader.dispose()


class _Loader(_BaseLoader):
    """The safe loader, resolving to tags of its own (``?str``, ...), so that the builder can
    tell them from tags written in the file, which it refuses: the schema types every value."""

    def resolve(self, kind: Any, value: Any, implicit: Any) -> Any:
        if kind is yaml.MappingNode or kind is yaml.SequenceNode:
            # Only an untagged collection is 'implicit'; a resolve with implicit false is the bare tag '!'.
            if not implicit:
                return "!"
            return _MAP if kind is yaml.MappingNode else _SEQ
        if not implicit[0]:
            # (False, False): a scalar with the bare tag '!'; (False, True): an untagged quoted one.
            return _STR if implicit[1] else "!"
        return _OURS.get(super().resolve(kind, value, implicit), _STR)  # type: ignore[no-untyped-call]


# The builder's names for what the resolver found (a tag written in the file is none of these).
_STR, _NULL, _BOOL_TAG, _INT, _FLOAT, _MERGE, _MAP, _SEQ = "?str", "?null", "?bool", "?int", "?float", "?merge", "?map", "?seq"
_OURS = {"tag:yaml.org,2002:str": _STR, "tag:yaml.org,2002:null": _NULL, "tag:yaml.org,2002:bool": _BOOL_TAG,
         "tag:yaml.org,2002:int": _INT, "tag:yaml.org,2002:float": _FLOAT, "tag:yaml.org,2002:merge": _MERGE}
_SCALARS = frozenset((_STR, _NULL, _BOOL_TAG, _INT, _FLOAT, _MERGE))  # timestamps and '=' stay text: _STR


def _at(node: yaml.Node) -> tuple[int, int]:
    return node.start_mark.line + 1, node.start_mark.column + 1


def _tag_problem(node: yaml.Node) -> SourceError:
    tag = "!" if node.tag.startswith("?") else node.tag
    shown = "!!" + tag.removeprefix("tag:yaml.org,2002:") if tag.startswith("tag:yaml.org,2002:") else tag
    shown = shown if shown.startswith("!") else f"!<{shown}>"
    what = ("a mapping" if isinstance(node, yaml.MappingNode) else "a list" if isinstance(node, yaml.SequenceNode)
            else "a value")
    return SourceError(f"explicit tag {_printable(shown)} on {what} is not allowed; remove it (the schema types "
                       "every field; quote a value to keep it as text)", *_at(node), code="tag")


def _printable(text: str, limit: int = 60) -> str:
    """``text`` for a message: control characters escaped, long text shortened."""
    shown = text if len(text) <= limit else text[: limit - 1] + "…"
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in shown)


# The bare tag '!' on a plain scalar reaches the resolver as if no tag were written; the text
# at the scalar's start (its properties: an anchor, a tag) tells.
_BARE_TAG = re.compile(r"(?:&\S+\s+)?!")
_LINE_BREAK = re.compile("\r\n|[\r\n\x85\u2028\u2029]")  # what YAML counts as a line break


class _Builder:
    def __init__(self, text: str) -> None:
        self.text = text if "!" in text else ""  # only a file with a '!' can hold a bare tag
        self.line_starts: list[int] = []
        self.marks: dict[Loc, Mark] = {}
        self.key_marks: dict[Loc, Mark] = {}
        self.styles: dict[Loc, str] = {}
        self.count = 0

    def bare_tag(self, node: yaml.Node) -> bool:
        if not self.line_starts:
            self.line_starts = [0, *(m.end() for m in _LINE_BREAK.finditer(self.text))]
        mark = node.start_mark
        if mark.line >= len(self.line_starts):
            return False
        return _BARE_TAG.match(self.text, self.line_starts[mark.line] + mark.column) is not None

    def build(self, node: yaml.Node, loc: Loc) -> Any:
        self.count += 1
        if self.count > MAX_NODES:
            raise SourceError(
                f"refused: the file expands to more than {MAX_NODES} values (an alias bomb?); "
                "entries are small, write values out instead of multiplying aliases",
                *_at(node),
                code="too-many-nodes",
            )
        if len(loc) > MAX_DEPTH:
            raise _too_deep(*_at(node))
        self.marks[loc] = _at(node)
        tag = node.tag
        if tag == _MAP:
            out: dict[str, Any] = {}
            for key_node, value_node in node.value:
                key_tag = key_node.tag
                if key_tag not in (_MAP, _SEQ) and (key_tag not in _SCALARS or (self.text and self.bare_tag(key_node))):
                    raise _tag_problem(key_node)
                if key_tag not in _SCALARS or key_tag == _MERGE:
                    raise SourceError("keys must be plain words (no lists, mappings or '<<' merges as keys)",
                                      *_at(key_node), code="bad-key")
                if key_tag == _NULL and not key_node.value:
                    raise SourceError("a key is missing before ':'; write 'name: value'", *_at(key_node),
                                      code="bad-key")
                key = str(key_node.value)
                child = (*loc, key)
                if key in out:
                    raise SourceError(
                        f"'{_printable(key)}' appears twice in the same mapping; keep one",
                        *_at(key_node),
                        code="duplicate-key",
                    )
                self.key_marks[child] = _at(key_node)
                out[key] = self.build(value_node, child)
            return out
        if tag == _SEQ:
            return [self.build(item, (*loc, i)) for i, item in enumerate(node.value)]
        if tag not in _SCALARS or not isinstance(node, yaml.ScalarNode) or (self.text and self.bare_tag(node)):
            raise _tag_problem(node)
        if node.style:
            self.styles[loc] = node.style
        try:
            return _scalar(node)
        except ValueError as exc:
            why = str(exc) if isinstance(exc, _TooLong) else f"'{_printable(node.value)}' is not a valid number"
            raise SourceError(f"{why}; quote it if it is text", *_at(node), code="bad-number") from None


class _TooLong(ValueError):
    pass


def _too_deep(line: int, col: int) -> SourceError:
    return SourceError(f"values are nested more than {MAX_DEPTH} levels deep here; an entry's data is shallow, "
                       "flatten it", line, col, code="too-deep")


# YAML 1.1's values: integers 0x1f, 0b101, 017 (octal), 1:30 (base 60); yes/no/on/off; .inf, .nan
_YAML_1_1 = yaml.constructor.SafeConstructor()


def _scalar(node: yaml.ScalarNode) -> Any:
    """The value of an untagged scalar, as YAML 1.1 resolved it (ValueError if it is malformed)."""
    tag, value = node.tag, node.value
    if tag == _STR:
        return value
    if tag == _NULL:
        return None
    if tag == _BOOL_TAG:
        return _YAML_1_1.construct_yaml_bool(node)
    if tag == _INT:
        digits = value.replace("_", "").lstrip("+-")
        if len(digits) > MAX_DIGITS:  # (before converting it: that takes time on a long one)
            raise _TooLong(f"an integer of {len(digits)} digits is over the limit of {MAX_DIGITS} digits")
        number = _YAML_1_1.construct_yaml_int(node)
        if abs(number) >= 10**MAX_DIGITS:
            raise _TooLong(f"an integer over {MAX_DIGITS} decimal digits long is over the limit")
        return number
    if tag == _FLOAT:
        return value if ":" in value else _YAML_1_1.construct_yaml_float(node)  # (sexagesimal: text)
    return value  # '<<' as a value: text
