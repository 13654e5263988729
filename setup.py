"""Build recordtool, compiling the modules a cold render spends its CPU in with mypyc.

Everything else about the package is in pyproject.toml; this file only adds the compiled
modules. mypyc is mypy's compiler for type-annotated Python (mypy and black ship compiled with
it): it turns each module in ``COMPILED`` into a C extension from the very same source, so there
is no second implementation to keep in step. The Python source is installed beside them and is
what runs whenever the compiled modules cannot be trusted (``recordtool/compiled.py``): when
the build could not compile (no C compiler, no mypy), when ``RECORDTOOL_PURE_PYTHON=1`` is set,
or when a source file was edited after the build (an editable install then runs the edit, not
the stale extension). ``RECORDTOOL_COMPILE=0`` builds without compiling.

The build writes ``recordtool/compiled.json`` beside the extensions: the SHA-256 of each
compiled source file, which ``recordtool/compiled.py`` compares with the sources it finds.
What compiling gains is measured in docs/performance.md ("Compiled with mypyc").
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any, ClassVar

from setuptools import setup
from setuptools.command.build_ext import build_ext

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "recordtool"))
from compiled import (  # (it lives with the code that trusts it)
    COMPILED,
    GROUP,
    MANIFEST,
    digest,
    source_path,
)

sys.path.pop(0)


def _source(module: str) -> str:
    return source_path(module, "recordtool")  # (relative: mypyc names the modules by their paths)


class BuildExt(build_ext):
    """Builds the extensions, then writes the manifest of the sources they were built from
    beside them (into the source tree for an in-place or editable build), only when every one
    was built: an optional extension that fails to compile leaves the one built before it in
    place, which must not run beside the new sources (without a manifest, none runs)."""

    digests: ClassVar[dict[str, str]] = {}  # set by _extensions

    def build_extension(self, ext: Any) -> None:
        super().build_extension(ext)  # (a failure of an optional one raises, and is caught above us)
        self.built.add(ext.name)

    def run(self) -> None:
        if not self.extensions:
            super().run()
            return
        self.built: set[str] = set()
        folder = "recordtool" if self.inplace else os.path.join(self.build_lib, "recordtool")
        os.makedirs(folder, exist_ok=True)
        manifest = os.path.join(folder, MANIFEST)
        if os.path.exists(manifest):
            os.remove(manifest)
        super().run()
        failed = sorted({ext.name for ext in self.extensions} - self.built)
        if failed:
            print(f"recordtool: {', '.join(failed)} not compiled; the pure Python modules will run", file=sys.stderr)
            return
        tmp = manifest + ".tmp"
        with open(tmp, "w", encoding="utf-8") as handle:
            json.dump({"group": GROUP, "sources": self.digests}, handle, indent=1, sort_keys=True)
            handle.write("\n")
        os.replace(tmp, manifest)

    def get_outputs(self) -> list[str]:
        outputs = list(super().get_outputs())
        if self.extensions:
            outputs.append(os.path.join(self.build_lib, "recordtool", MANIFEST))
        return outputs


# The type check mypyc runs to compile: pyproject.toml's strict one, less what a build without the
# runtime's packages cannot pass. pip builds in an environment of the build requirements only, where
# pydantic and PyYAML (which the pages' modules reach through recordtool's others) are missing:
# their types are then Any, which strict mode refuses to subclass, decorate with or return, and the
# ignores written for their real types go unused (a fresh install compiled nothing: found on
# Python 3.10, 3.12 and 3.13 on 5 December 2026). CI's own mypy run holds the code to the strict
# check; tests/test_compiled.py holds the compiled modules to this one with no package installed.
LENIENT = ("--ignore-missing-imports", "--allow-subclassing-any", "--allow-untyped-decorators",
           "--no-warn-return-any", "--no-warn-unused-ignores")


def _extensions() -> list[Any]:
    if os.environ.get("RECORDTOOL_COMPILE", "1") == "0":
        return []
    try:
        from mypyc.build import mypycify
    except ImportError:
        print("recordtool: mypyc is not installed; installing the pure Python modules only", file=sys.stderr)
        return []
    BuildExt.digests = {module: digest(_source(module)) for module in COMPILED}
    try:
        # (mypy's python_version in pyproject.toml is the one the type check targets; the
        # extensions are built for the Python that runs this build)
        version = f"{sys.version_info.major}.{sys.version_info.minor}"
        extensions = mypycify(["--python-version", version, *LENIENT, *(_source(module) for module in COMPILED)],
                              opt_level="3", group_name=GROUP)
    except (Exception, SystemExit) as exc:  # mypyc reports a type error by exiting
        print(f"recordtool: mypyc could not compile ({exc!r}); installing the pure Python modules only",
              file=sys.stderr)
        return []
    for extension in extensions:
        extension.optional = True  # a failed compile leaves the pure Python modules (compiled.py checks)
    return extensions


setup(ext_modules=_extensions(), cmdclass={"build_ext": BuildExt})
