"""How a check is found and imported: only modules inside the record's checks package, read
only as regular files inside it, and none that imports local code from outside it (which no
fingerprint would follow). Used by the processes that run checks (``recordtool.verify.child``).
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import os
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from recordtool.record.confine import Refused, read_inside


class CheckLoadError(Exception):
    """The check cannot be loaded under the contract (outside checks/, no such function)."""


def load_check(root: Path, package: str, module: str, function: str) -> Any:
    """Import ``module`` (inside ``package``) and return its ``function``."""
    refuse_outside(package, module, function)
    return check_function(import_check(root, package, module), module, function)


def refuse_outside(package: str, module: str, function: str) -> None:
    if module.split(".", 1)[0] != package or module == package:
        raise CheckLoadError(f"'{module}:{function}' is outside {package}/; checks run only code inside {package}/")


def import_check(root: Path, package: str, module: str) -> ModuleType:
    """Import the check module ``module`` under the contract (the test for local code from
    outside ``package`` looks at the modules its import added: exact on its first import)."""
    if not any(isinstance(f, _ConfinedFinder) and f.package == package for f in sys.meta_path):
        sys.meta_path.insert(0, _ConfinedFinder(root, package))  # (once: from now on)
    before = set(sys.modules)
    try:
        mod = importlib.import_module(module)
    except Refused as exc:
        raise CheckLoadError(f"{exc.filename or module} {exc.why}; check modules must be files inside "
                             f"{package}/ (copy it in instead): it is not run") from None
    added = set(sys.modules) - before
    package_dir = (root / package).resolve()
    mod_file = Path(getattr(mod, "__file__", "") or "").resolve()
    if not mod_file.is_relative_to(package_dir):
        raise CheckLoadError(f"'{module}' was imported from {mod_file}, not from {package}/")
    outside = local_imports_outside(root, package_dir, added)
    if outside:
        names = ", ".join(f"'{name}' ({path})" for name, path in outside)
        raise CheckLoadError(
            f"'{module}' imports local code from outside {package}/: {names}; move it into {package}/ "
            "so that its changes make verdicts stale"
        )
    return mod


class _ConfinedLoader(importlib.machinery.SourceFileLoader):
    """Reads a module of the checks package (source and bytecode) only as a regular file inside
    it, checked as it is opened: a file swapped for a link out after a look is never run."""

    def __init__(self, fullname: str, path: str, folder: str, root: Path) -> None:
        super().__init__(fullname, path)
        self.folder, self.root = folder, root

    def get_data(self, path: str) -> bytes:
        try:
            return read_inside(path, self.folder)
        except Refused as exc:
            exc.filename = os.path.relpath(path, self.root)
            raise


class _ConfinedFinder(importlib.abc.MetaPathFinder):
    """Finds the checks package's modules as Python does, and has them read by ``_ConfinedLoader``."""

    def __init__(self, root: Path, package: str) -> None:
        self.root, self.package, self.folder = root, package, os.path.realpath(root / package)

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if fullname != self.package and not fullname.startswith(self.package + "."):
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is not None and type(spec.loader) is importlib.machinery.SourceFileLoader and spec.origin:
            spec.loader = _ConfinedLoader(fullname, spec.origin, self.folder, self.root)
        return spec


def check_function(mod: ModuleType, module: str, function: str) -> Any:
    fn = getattr(mod, function, None)
    if not callable(fn):
        raise CheckLoadError(f"'{module}' has no function '{function}'")
    return fn


def local_imports_outside(root: Path, package_dir: Path, names: set[str]) -> list[tuple[str, str]]:
    root = root.resolve()
    prefixes = {Path(p).resolve() for p in (sys.prefix, sys.exec_prefix, sys.base_prefix) if p}
    tool = Path(__file__).resolve().parents[1]  # recordtool/
    out = []
    for name in sorted(names):
        file = getattr(sys.modules.get(name), "__file__", None)
        if not file or not os.path.isabs(file) or not os.path.isfile(file):
            continue  # built-in or synthetic modules (torch.ops reports a bare "_ops.py")
        path = Path(file).resolve()
        if not path.is_relative_to(root) or path.is_relative_to(package_dir) or path.is_relative_to(tool):
            continue
        if any(path.is_relative_to(p) for p in prefixes) or "site-packages" in path.parts:
            continue
        out.append((name, path.relative_to(root).as_posix()))
    return out
