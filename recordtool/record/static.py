"""What can be told about a claim's checks without running them (docs/checks.md).

The check modules are read with ``ast``, never imported (so no check code runs): the
function ``run`` names exists, the params fit its signature, and every metric the YAML names
is one the check declares (a ``TypedDict`` return annotation or ``METRICS = (...)``). Entries
still holding the placeholders of ``recordtool new`` are warned about here too.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from recordtool.record.config import Config
from recordtool.record.confine import refused
from recordtool.record.load import Record
from recordtool.record.problems import Problem, Severity, did_you_mean, field_path
from recordtool.record.schema import CheckSpec, Control, Entry, Literature, Theory
from recordtool.record.source import Loc, SourceError, read_source

# What `recordtool new` writes for the author to replace (recordtool/record/template.py).
PLACEHOLDER_AUTHOR = "Surname, I."
PLACEHOLDER_STATEMENT = "The claim itself, in one paragraph."
PLACEHOLDER_BODY = "Write the body here, in Markdown."


@dataclass(frozen=True)
class Signature:
    """A check function's parameters after the context."""

    line: int
    takes_ctx: bool
    positional_only: tuple[str, ...]
    params: dict[str, bool]  # keyword-settable name -> has a default
    var_keyword: bool
    returns: str | None  # the return annotation when it is a plain name (a TypedDict declares metrics)


@dataclass
class Module:
    """One check module as read from its source."""

    rel: str
    functions: dict[str, Signature] = field(default_factory=dict)
    other_names: set[str] = field(default_factory=set)  # bound at top level otherwise (not checkable)
    metrics: tuple[str, ...] | None = None  # METRICS = (...)
    typed_dicts: dict[str, tuple[str, ...]] = field(default_factory=dict)
    imported: dict[str, tuple[str, str]] = field(default_factory=dict)  # local name -> (module, name)
    error: str = ""
    refused: bool = False  # a link out of the checks package: not read


class Modules:
    """The checks package's modules, each read once."""

    def __init__(self, config: Config) -> None:
        self.config = config
        self.read: dict[str, Module | None] = {}

    def names(self) -> list[str]:
        """Every module of the checks package, dotted."""
        package = self.config.root / self.config.checks
        names = [path.relative_to(self.config.root).with_suffix("").parts for path in sorted(package.rglob("*.py"))]
        return [".".join(parts[:-1] if parts[-1] == "__init__" else parts) for parts in names]

    def get(self, module: str) -> Module | None:
        if module not in self.read:
            path = self.config.module_file(module)
            if path is not None and refused(path, self.config.root / self.config.checks) is not None:
                self.read[module] = Module(self.config.relative(path), refused=True)  # reported by load, not read
            else:
                self.read[module] = None if path is None else _read_module(path, self.config.relative(path))
        return self.read[module]

    def typed_dict(self, module: Module, name: str, depth: int = 0) -> tuple[str, ...] | None:
        """The keys of the TypedDict ``name`` as seen from ``module`` (its own or imported)."""
        if name in module.typed_dicts:
            return module.typed_dicts[name]
        if name in module.imported and depth < 8:
            source, original = module.imported[name]
            other = self.get(source) if source.split(".", 1)[0] == self.config.checks else None
            if other is not None:
                return self.typed_dict(other, original, depth + 1)
        return None


def _read_module(path: Path, rel: str) -> Module:
    module = Module(rel)
    try:
        tree = ast.parse(path.read_bytes(), filename=rel)
    except (SyntaxError, ValueError) as exc:
        line = getattr(exc, "lineno", None) or 0
        module.error = f"{rel}:{line}: {getattr(exc, 'msg', None) or exc}"
        return module
    except OSError as exc:
        module.error = f"{rel}: cannot read: {exc.strerror}"
        return module
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            module.functions[node.name] = _signature(node)
        elif isinstance(node, ast.ClassDef):
            keys = _typed_dict_keys(node, module.typed_dicts)
            if keys is not None:
                module.typed_dicts[node.name] = keys
            module.other_names.add(node.name)
        elif isinstance(node, ast.AsyncFunctionDef):
            module.other_names.add(node.name)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                module.imported[alias.asname or alias.name] = (node.module, alias.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Name):
                    module.other_names.add(target.id)
                    if target.id == "METRICS" and node.value is not None:
                        module.metrics = _strings(node.value)
                    functional = _functional_typed_dict(node.value)
                    if functional is not None:
                        module.typed_dicts[target.id] = functional
    return module


def _signature(node: ast.FunctionDef) -> Signature:
    args = node.args
    positional = [a.arg for a in [*args.posonlyargs, *args.args]]
    takes_ctx = bool(positional) or args.vararg is not None
    first = max(1, len(args.posonlyargs))  # the first parameter after the context that a keyword sets
    defaults_from = len(positional) - len(args.defaults)  # the positional params with defaults
    params = {name: i >= defaults_from for i, name in enumerate(positional[first:], first)}
    for arg, default in zip(args.kwonlyargs, args.kw_defaults, strict=True):
        params[arg.arg] = default is not None
    return Signature(node.lineno, takes_ctx, tuple(positional[1:first]), params, args.kwarg is not None,
                     _annotation_name(node.returns))


def _annotation_name(annotation: ast.expr | None) -> str | None:
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        try:
            annotation = ast.parse(annotation.value, mode="eval").body
        except SyntaxError:
            return None
    if isinstance(annotation, ast.Name):
        return annotation.id
    return None


def _is_typed_dict(base: ast.expr, known: dict[str, tuple[str, ...]]) -> bool:
    name = base.id if isinstance(base, ast.Name) else base.attr if isinstance(base, ast.Attribute) else ""
    return name == "TypedDict" or name in known


def _typed_dict_keys(node: ast.ClassDef, known: dict[str, tuple[str, ...]]) -> tuple[str, ...] | None:
    if not any(_is_typed_dict(base, known) for base in node.bases):
        return None
    keys = [key for base in node.bases if isinstance(base, ast.Name) and base.id in known for key in known[base.id]]
    keys += [s.target.id for s in node.body if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)]
    return tuple(keys)


def _functional_typed_dict(value: ast.expr | None) -> tuple[str, ...] | None:
    """``Name = TypedDict("Name", {"a": float, ...})``."""
    if (isinstance(value, ast.Call) and _is_typed_dict(value.func, {}) and len(value.args) >= 2
            and isinstance(value.args[1], ast.Dict)):
        return tuple(k.value for k in value.args[1].keys if isinstance(k, ast.Constant) and isinstance(k.value, str))
    return None


def _strings(value: ast.expr) -> tuple[str, ...] | None:
    if not isinstance(value, (ast.Tuple, ast.List, ast.Set)):
        return None
    strings = tuple(e.value for e in value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str))
    return strings if len(strings) == len(value.elts) else None


@dataclass
class _Found:
    """A problem before its place is known: the YAML location and the rest."""

    loc: Loc
    field: str
    message: str
    severity: Severity = "error"
    code: str = "check-spec"
    key: bool = False


def static_problems(config: Config, record: Record) -> list[Problem]:
    """Every problem of the record's checks and placeholders that reading the sources shows."""
    modules = Modules(config)
    # Without a checks package there is nothing to read (a record of notes, a test's record):
    # `verify` says so for each check it cannot load.
    readable = (config.root / config.checks).is_dir()
    problems: list[Problem] = []
    for entry_id, entry in record.entries.items():
        found = list(_placeholders(entry))
        if readable and isinstance(entry, Theory):
            for i, check in enumerate(entry.checks):
                found += _check_problems(modules, config, i, check)
        if found:
            problems += _placed(config, record.places[entry_id].path, found)
    return problems


def _placed(config: Config, rel: str, found: list[_Found]) -> list[Problem]:
    try:
        source = read_source(config.root / rel)
        marks = [source.mark(f.loc, key=f.key) for f in found]
    except (SourceError, OSError):
        marks = [(0, 0)] * len(found)
    return [Problem(rel, line, col, f.message, f.field, f.severity, f.code) for f, (line, col) in zip(found, marks, strict=True)]


def _placeholders(entry: Entry) -> Iterator[_Found]:
    hint = "replace it with your own (see docs/record.md)"
    if isinstance(entry, Literature) and PLACEHOLDER_AUTHOR in entry.reference.authors:
        i = entry.reference.authors.index(PLACEHOLDER_AUTHOR)
        yield _Found(("reference", "authors", i), f"reference.authors[{i}]",
                     f"'{PLACEHOLDER_AUTHOR}' is still the template's placeholder; {hint}",
                     severity="warning", code="template-placeholder")
    if isinstance(entry, Theory) and entry.statement.startswith(PLACEHOLDER_STATEMENT):
        yield _Found(("statement",), "statement", f"still the template's placeholder; {hint}",
                     severity="warning", code="template-placeholder")
    if entry.body.startswith(PLACEHOLDER_BODY):
        yield _Found(("body",), "body", f"still the template's placeholder; {hint}",
                     severity="warning", code="template-placeholder")


def _check_problems(modules: Modules, config: Config, i: int, check: CheckSpec) -> list[_Found]:
    at = ("checks", i)
    where = f"checks[{i}]"
    if check.module.split(".", 1)[0] != config.checks or check.module == config.checks:
        return []  # reported by load: outside the checks package
    module = modules.get(check.module)
    if module is not None and module.refused:
        return []  # a link out of the checks package: reported by load, never read
    if module is None:
        hint = did_you_mean(check.module, modules.names()) or f"; write the module as {config.checks}/....py"
        return [_Found((*at, "run"), f"{where}.run", f"no module '{check.module}' in {config.checks}/{hint}")]
    if module.error:
        return [_Found((*at, "run"), f"{where}.run", f"cannot read '{check.module}': {module.error}")]
    signature = module.functions.get(check.function)
    if signature is None:
        if check.function in module.other_names or check.function in module.imported:
            return []  # defined some other way: nothing to read without running it
        hint = did_you_mean(check.function, module.functions) or (
            f"; its functions: {', '.join(module.functions)}" if module.functions else "")
        return [_Found((*at, "run"), f"{where}.run", f"{module.rel} has no function '{check.function}'{hint}")]
    name = f"{check.function}()"
    if not signature.takes_ctx:
        return [_Found((*at, "run"), f"{where}.run",
                       f"{name} in {module.rel}:{signature.line} takes no context; a check is "
                       f"'def {check.function}(ctx, *, ...)'")]
    found = _param_problems(name, module.rel, signature, check.params, (*at, "params"), f"{where}.params",
                            (*at, "params") if check.params else (*at, "run"), f"{where}.params")
    # each control's and positive's params, merged over the check's
    variants: list[tuple[Loc, Control]] = [(("control",), check.control)] if check.control is not None else [
        (("controls", j), control) for j, control in enumerate(check.controls)]
    for path, variant in [*variants, *((("positives", j), p) for j, p in enumerate(check.positives))]:
        loc, field_ = (*at, *path), f"{where}.{field_path(path)}"
        found += _param_problems(name, module.rel, signature, variant.params, (*loc, "params"),
                                 f"{field_}.params", loc, field_, control=True)
    found += _metric_problems(modules, module, signature, check, at, where)
    return found


def _param_problems(name: str, rel: str, signature: Signature, params: dict[str, Any], loc: Loc, field_: str,
                    whole: Loc, whole_field: str, control: bool = False) -> list[_Found]:
    found = []
    shown = ", ".join(signature.params) or "none"
    for key in params:
        if key in signature.positional_only:
            found.append(_Found((*loc, key), f"{field_}.{key}", f"'{key}' is a positional-only parameter of "
                                f"{name} ({rel}:{signature.line}); make it a keyword parameter", key=True))
        elif key not in signature.params and not signature.var_keyword:
            hint = did_you_mean(key, signature.params) or f"; its parameters: {shown}"
            found.append(_Found((*loc, key), f"{field_}.{key}",
                                f"{name} ({rel}:{signature.line}) has no parameter '{key}'{hint}", key=True))
    missing = [p for p, has_default in signature.params.items() if not has_default and p not in params]
    if missing and not control:  # a control's params are merged over these: reported once, here
        found.append(_Found(whole, whole_field, f"{name} ({rel}:{signature.line}) needs "
                            f"{', '.join(repr(m) for m in missing)}, which the check does not give; add "
                            "it to params or give it a default"))
    return found


def _metric_problems(modules: Modules, module: Module, signature: Signature, check: CheckSpec, at: Loc,
                     where: str) -> list[_Found]:
    declared = module.metrics
    how = f"METRICS in {module.rel}"
    if signature.returns is not None:
        keys = modules.typed_dict(module, signature.returns)
        if keys is not None:
            declared, how = keys, f"its return type {signature.returns}"
    named: list[tuple[str, Loc, str]] = []
    for metric, expect in check.expect.items():
        named.append((metric, (*at, "expect", metric), f"{where}.expect.{metric}"))
        if expect.null is not None:
            named.append((expect.null, (*at, "expect", metric, "null"), f"{where}.expect.{metric}.null"))
    named += [(m, (*at, "observe", m), f"{where}.observe.{m}") for m in check.observe]
    named += [(m, (*at, "degenerate", m), f"{where}.degenerate.{m}") for m in check.degenerate]
    if declared is None:
        return [_Found((*at, "run"), f"{where}.run",
                       f"{check.run} does not declare the metrics it returns, so a metric named here is checked "
                       f"only once it has run; annotate its return type with a TypedDict, or set "
                       f"METRICS = (...) in {module.rel} (docs/checks.md)", severity="warning",
                       code="undeclared-metrics")]
    listed = f"; it declares: {', '.join(declared) or 'none'}"
    return [_Found(loc, field_, f"{check.run} does not return '{metric}' ({how}){did_you_mean(metric, declared) or listed}",
                   key=True, code="unknown-metric") for metric, loc, field_ in named if metric not in declared]
