"""Which modules run compiled: the mypyc extensions built by setup.py, when they can be trusted.

setup.py compiles the modules in ``COMPILED`` with mypyc (the same source turned into C
extensions: docs/performance.md, "Compiled with mypyc") and writes ``MANIFEST`` beside them,
the SHA-256 of each source it compiled. Python's import system prefers an extension to a
``.py`` file of the same name, so a stale extension would run in place of an edited source.
``install`` (called by ``recordtool/__init__.py``) puts a finder in front of the import system
that, on the first import of a compiled module, decides once for all of them:

- compiled, when the manifest is there, every source still has the digest it was compiled
  from, every module's extension is there and their shared library imports;
- the Python source otherwise: when nothing was compiled, when ``RECORDTOOL_PURE_PYTHON`` is
  set (to anything but ``0``), when a source was edited after the build, or when part of the
  build is missing.

Every other module of recordtool runs from its source, always, even with an extension of its
name beside it: one left by a build that compiled more modules (an editable install moved to
an older commit, a tried build) is stale code, and would run, or fail to load, in place of
the source (``source_instead``); an extension left of a module whose source is gone is not
imported at all.

All or none: the compiled modules call each other inside their shared library, so one module
from its source beside the others compiled would be two copies of it. Nothing here imports
more than the standard library (setup.py reads ``COMPILED`` from it before anything is
installed), and nothing is read until a compiled module is imported: commands that never
import one (``status``, ``verify`` with nothing changed) pay nothing.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import os
import sys
from collections.abc import Mapping, Sequence
from types import ModuleType

# The modules a cold render spends most of its CPU in (docs/performance.md): the parser, the prose
# written back, and the entry pages composed from the project. mypyc compiles ``key in d``,
# ``d.get(key)`` and ``len(d)`` for a ``d`` typed as a dict (or a set) to the dict's own C
# functions, which never call a subclass's methods: given one of recordtool's lazy mappings (the
# record's entries, made from the entry cache when first asked for; a worker's slice of the
# project, which answers ``Missing`` for what it does not hold) as a dict, a compiled module would
# read the cache's raw tuple, or an entry outside the slice as "not in the record". So recordtool
# has no subclass of dict or set (its lazy mappings are ``Mapping``s holding a dict, which
# compiled code reads through their own methods), and no public function of a compiled module
# takes a dict or a set, which a caller's subclass could be: tests/test_compiled.py holds both.
COMPILED = (
    "recordtool.record.blocks",
    "recordtool.record.inline",
    "recordtool.record.mentions",
    "recordtool.record.token",
    "recordtool.render.escape",
    "recordtool.render.prose",
    "recordtool.render.page",
    "recordtool.render.mermaid",
    "recordtool.render.frontmatter",
    "recordtool.render.evidence",
)
GROUP = "recordtool.native"  # mypyc's shared library: the module recordtool.native__mypyc
LIBRARY = GROUP + "__mypyc"  # (the one module of recordtool with no source: an extension only)
MANIFEST = "compiled.json"
PURE = "RECORDTOOL_PURE_PYTHON"

_PACKAGE = os.path.dirname(os.path.abspath(__file__))


def source_path(module: str, package: str = _PACKAGE) -> str:
    """The source file of ``module`` (``recordtool.x.y``) in ``package``, recordtool's folder."""
    return os.path.join(package, *module.split(".")[1:]) + ".py"


def digest(path: str) -> str:
    """The SHA-256 of a file's bytes, as the manifest keeps it for each compiled source."""
    import hashlib

    with open(path, "rb") as handle:
        return hashlib.sha256(handle.read()).hexdigest()


def why_not_compiled(package: str = _PACKAGE, environ: Mapping[str, str] = os.environ,
                     library: str = LIBRARY) -> str | None:
    """None when the compiled modules of ``package`` (a folder) may run; else why the Python
    source runs instead. ``library``: the module of their shared library."""
    import json

    if environ.get(PURE, "0") != "0":
        return f"{PURE} is set"
    try:
        with open(os.path.join(package, MANIFEST), encoding="utf-8") as handle:
            manifest = json.load(handle)
        sources = manifest["sources"]
        group = manifest["group"]
    except FileNotFoundError:
        return "not compiled (no C compiler or mypyc when it was installed, or RECORDTOOL_COMPILE=0)"
    except (OSError, ValueError, KeyError, TypeError) as exc:
        return f"{MANIFEST} cannot be read ({type(exc).__name__}: {exc})"
    if group != GROUP or not isinstance(sources, dict) or sorted(sources) != sorted(COMPILED):
        return f"{MANIFEST} names other modules than this recordtool compiles: install it again"
    for module in COMPILED:
        source = source_path(module, package)
        try:
            held = digest(source)
        except OSError as exc:
            return f"{source} cannot be read ({exc.strerror})"
        if held != sources[module]:
            return f"{source} was changed after it was compiled: install again to compile it"
        if not any(os.path.isfile(source[: -len(".py")] + suffix) for suffix in importlib.machinery.EXTENSION_SUFFIXES):
            return f"{module} was not compiled (its build failed): the rest would run without it"
    try:
        importlib.import_module(library)
    except ImportError as exc:
        return f"the compiled modules' library does not load ({exc})"
    return None


class _Finder:
    """Imports the modules of ``COMPILED`` from their source unless the compiled ones may run
    (``why_not_compiled``, decided on the first import of one of them), and recordtool's other
    modules from their source always (``source_instead``)."""

    def __init__(self) -> None:
        self.why: str | bool | None = False  # False: not decided yet

    def decide(self) -> str | None:
        """``why_not_compiled``, worked out on the first call."""
        if self.why is False:
            self.why = why_not_compiled()
        assert self.why is not True
        return self.why

    def find_spec(self, name: str, path: Sequence[str] | None = None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        if not name.startswith(_PREFIX) or (name in COMPILED and self.decide() is None):
            return None  # the import system finds the module (a compiled one's extension), as it would anyway
        # (the search the import system would make next, made here: nothing is looked for twice)
        spec = source_instead(importlib.machinery.PathFinder.find_spec(name, path))
        if spec is not None and isinstance(spec.loader, importlib.machinery.ExtensionFileLoader) \
                and name != LIBRARY:
            raise ModuleNotFoundError(f"No module named {name!r}: only an extension of it is left ({spec.origin}), "
                                      "built from a source that is gone; delete it", name=name)
        return spec

    def invalidate_caches(self) -> None:
        pass


_PREFIX = __name__.rpartition(".")[0] + "."  # "recordtool.": the modules the finder answers for


def source_instead(spec: importlib.machinery.ModuleSpec | None) -> importlib.machinery.ModuleSpec | None:
    """``spec`` (the import system's, for one of recordtool's modules that is not to run
    compiled), or, when it would load an extension that has a Python source beside it, a spec
    that loads the source: an extension is never taken for a module that has one, unless
    ``_Finder`` decided the compiled modules run. (A module with no source, such as the compiled
    modules' shared library, keeps its extension.)"""
    if spec is None or not isinstance(spec.loader, importlib.machinery.ExtensionFileLoader) or not spec.origin:
        return spec
    stem = spec.origin
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        if stem.endswith(suffix):
            stem = stem[: -len(suffix)]
            break
    source = stem + ".py"
    if not os.path.isfile(source):
        return spec
    loader = importlib.machinery.SourceFileLoader(spec.name, source)
    found = importlib.machinery.ModuleSpec(spec.name, loader, origin=source)
    found.has_location = True  # __file__ is the source, as the import system would set it
    return found


_finder = _Finder()


def install() -> None:
    """Put the finder first on ``sys.meta_path`` (once)."""
    if _finder not in sys.meta_path:
        sys.meta_path.insert(0, _finder)


def running_compiled() -> bool:
    """Whether the compiled modules run in this process (deciding now if no import has)."""
    return _finder.decide() is None


def state() -> str:
    """One line for people: which modules run, and why."""
    why = _finder.decide()
    return f"compiled with mypyc ({len(COMPILED)} modules)" if why is None else f"pure Python: {why}"
