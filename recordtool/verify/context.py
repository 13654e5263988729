"""The context a check function receives (the check contract, docs/checks.md).

A check is a plain function ``measure(ctx, **params) -> dict[str, number | list[number]]``.
It measures; the claim's YAML judges. The context carries everything a check may need from
its runner and nothing else, so a check can also be called by hand or from a test::

    ctx = CheckContext.for_testing(tmp_path)
    metrics = measure(ctx, n_layers=2)
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from recordtool.atomic import write_atomic

SIDECAR = ".json"  # a figure's title and caption: ``loss.png.json`` beside ``loss.png``


def sidecar(figure: Path) -> Path:
    """Where the title and caption of ``figure`` are kept."""
    return figure.with_name(figure.name + SIDECAR)


def is_sidecar(path: Path) -> bool:
    """Whether ``path`` holds another file's title and caption (it is no figure itself)."""
    return path.name.endswith(SIDECAR) and path.with_name(path.name[: -len(SIDECAR)]).is_file()


@dataclass(frozen=True)
class CheckContext:
    """What the runner gives a check (docs/checks.md): the ``seed`` to seed every generator
    from, the ``device``, a ``cache_dir`` shared by all runs, this run's own ``figures_dir``, the
    CPU ``threads`` to use (the check's ``threads:``, whatever ``-j`` is), and ``progress``."""

    seed: int = 0
    device: str = "cpu"
    cache_dir: Path = field(default_factory=lambda: Path(".recordtool-cache"))
    figures_dir: Path = field(default_factory=lambda: Path("figures"))
    threads: int = 1
    progress: Callable[[str], None] = lambda message: print(message, file=sys.stderr, flush=True)

    def figure(self, name: str, *, title: str | None = None, caption: str | None = None) -> Path:
        """The path for a figure called ``name`` (e.g. ``"loss.png"``), its folder made; ``title``
        and ``caption`` go on the claim's page with it, kept beside it in ``<name>.json``."""
        self.figures_dir.mkdir(parents=True, exist_ok=True)
        path = self.figures_dir / name
        if title is not None or caption is not None:
            words = {k: " ".join(v.split()) for k, v in (("title", title), ("caption", caption)) if v}
            write_atomic(sidecar(path), json.dumps(words, ensure_ascii=False, sort_keys=True) + "\n")
        return path

    @classmethod
    def for_testing(cls, root: Path, *, seed: int = 0, threads: int = 1) -> CheckContext:
        """A context whose folders live under ``root`` (a test's temporary folder)."""
        return cls(
            seed=seed,
            cache_dir=root / "cache",
            figures_dir=root / "figures",
            threads=threads,
            progress=lambda _message: None,
        )
