"""Confinement: the files the record is made of are regular files inside their folders.

An entry, a check module or a figure that is a link leading out of its folder (to
``~/.ssh``, to ``.git/config``, to another project) is refused before it is read or run: its
text would otherwise be published on a page, or its code run by ``verify``. A link that stays
inside its folder is followed; anything that is not a regular file (a named pipe, a device)
is refused too.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from recordtool.record.config import Config
from recordtool.record.problems import Problem


def refused(path: Path | str, folder: Path | str) -> str | None:
    """Why ``path`` may not be read as a file of ``folder`` (None when it may): it leads out
    of the folder (it, or a folder on its way, is a link), or it is not a regular file."""
    real_folder = os.path.realpath(folder)
    real = os.path.realpath(path)
    if real != real_folder and not real.startswith(real_folder.rstrip(os.sep) + os.sep):
        return f"is a link to {real}, outside {os.path.basename(real_folder)}/"
    try:
        info = os.stat(real)
    except OSError as exc:
        return f"cannot be read: {exc.strerror}"
    if not stat.S_ISREG(info.st_mode):
        return "is not a regular file"
    return None


def checks_problems(config: Config) -> list[Problem]:
    """A problem for every file or folder of the checks package that leads out of it (a link)
    or that is a module but not a regular file: refused before anything there is read or run."""
    package = config.root / config.checks
    if not package.is_dir() and not package.is_symlink():
        return []
    problems = []
    if package.is_symlink():
        why = refused(package, config.root)
        if why is not None:
            return [Problem(config.relative(package), 0, 0, f"the checks package {why}; check modules must be "
                            "files inside the project", code="outside")]
    real_package = os.path.realpath(package)
    for dirpath, dirnames, filenames in os.walk(package):
        for name in sorted(dirnames + filenames):
            path = os.path.join(dirpath, name)
            if not os.path.islink(path) and not (name.endswith(".py") and name in filenames):
                continue
            real = os.path.realpath(path)
            if os.path.islink(path) and real != real_package and not real.startswith(real_package + os.sep):
                problems.append(Problem(config.relative(Path(path)), 0, 0,
                                        f"is a link to {real}, outside {config.checks}/; check modules must be "
                                        f"files inside {config.checks}/ (copy it in instead)", code="outside"))
            elif name.endswith(".py") and not os.path.isdir(path) and not os.path.isfile(path):
                problems.append(Problem(config.relative(Path(path)), 0, 0,
                                        "is not a regular file; a check module is a Python file", code="not-a-file"))
    return problems
