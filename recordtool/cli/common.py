"""What every command shares: printing (``echo``), reading the project (``open_record``), the
common options, the answers kept when nothing changed (``replay``, ``keep``), and how a
command ends on a fault or a signal (exit codes: 0 clean, 1 problems found, 2 usage).
"""

from __future__ import annotations

import contextlib
import math
import signal
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import click

from recordtool.meter import Meter
from recordtool.safetext import terminal

if TYPE_CHECKING:
    from recordtool.record.config import Config
    from recordtool.record.project import Project
    from recordtool.record.schema import Entry
    from recordtool.verify.snapshot import Inputs


_said: list[tuple[str, bool]] | None = None  # what a command has printed, while it is being kept


def echo(message: str = "", err: bool = False) -> None:
    """``click.echo`` of text that may come from the record: its control characters escaped."""
    if _said is not None:
        _said.append((message, err))
    click.echo(terminal(message), err=err)


def replay(root: Path | None, command: str) -> Inputs | None:
    """Print what ``command`` with the same options printed last time and exit as it did, when
    it found nothing to do and nothing it read has changed since (``recordtool.verify.snapshot``);
    otherwise the inputs to keep this run's answer under, and printing is recorded."""
    global _said
    from recordtool.verify import snapshot

    _said = None
    options = {name: value for name, value in click.get_current_context().params.items() if name != "root"}
    inputs = snapshot.take(root, command, options)
    if inputs is None:
        return None
    answer = snapshot.kept_answer(inputs)
    if answer is not None:
        for message, err in answer.said:
            echo(message, err=err)
        sys.exit(answer.code)
    _said = []
    return inputs


def keep(project: Project, inputs: Inputs | None, code: int) -> None:
    """Keep what this command printed, having found nothing to do, for ``replay``."""
    global _said
    if inputs is not None and _said is not None and not project.errors:  # a broken record: say it each time
        from recordtool.verify import snapshot

        snapshot.keep(project, inputs, snapshot.Answer(_said, code))
    _said = None


def open_record(root: Path | None, jobs: int | None = None, *, cache: bool = True, meter: Meter | None = None) -> Project:
    """The project, read with the store unless ``cache`` is off, showing its progress on
    ``meter`` (else on a progress line of its own, erased before this returns)."""
    from recordtool.record.config import ConfigError
    from recordtool.record.project import open_project

    with contextlib.nullcontext(meter) if meter is not None else Meter(sys.stderr) as shown:
        try:
            return open_project(root=root, jobs=jobs, cache=cache, meter=shown)
        except ConfigError as exc:
            raise click.UsageError(terminal(str(exc))) from None


def config_of(root: Path | None) -> Config:
    """The configuration of the project at ``root`` (else the nearest one above the current
    folder); a usage error when there is none or it is wrong."""
    from recordtool.record.config import ConfigError, find_root, load_config

    try:
        return load_config(root.resolve() if root is not None else find_root(Path.cwd()))
    except ConfigError as exc:
        raise click.UsageError(terminal(str(exc))) from None


root_option = click.option(
    "--root",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    default=None,
    help="The project folder (default: the nearest one above the current folder).",
)

jobs_option = click.option(
    "-j", "--jobs", type=click.IntRange(min=1), default=None, metavar="N",
    help="Processes that share the work on a large record (default: every core this process may use).",
)

no_cache_option = click.option(
    "--no-cache", is_flag=True,
    help="Read every entry file again instead of using what the last run kept in the cache folder "
         "(.recordtool-cache/store.sqlite) for the files unchanged since; the results are the same.",
)

format_option = click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text",
                             show_default=True, help="Output format.")


_TERMINATED = False  # set when SIGTERM interrupted the command


class Commands(click.Group):
    """Every command stops on SIGTERM (a CI timeout, ``kill``) as on Ctrl-C: children ended,
    what it writes is whole or not written, and one line says so (``render`` and ``verify`` say
    more); the exit code then says which (143, 130: ``interrupted_code``)."""

    def invoke(self, ctx: click.Context) -> Any:
        global _TERMINATED
        _TERMINATED = False

        def handler(signum: int, frame: Any) -> None:
            global _TERMINATED
            _TERMINATED = True
            raise KeyboardInterrupt

        try:
            previous: Any = signal.signal(signal.SIGTERM, handler)
        except ValueError:  # not the main thread: leave signals as they are
            previous = None
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            echo("interrupted: nothing half-written is left", err=True)
            sys.exit(interrupted_code())
        finally:
            if previous is not None:
                signal.signal(signal.SIGTERM, previous)


def storage_error(exc: OSError, doing: str) -> NoReturn:
    """One line for a fault of the machine (a full disk, a read-only or missing folder), exit 1:
    what was being done, where, and why; what was written before is whole."""
    where = f" {exc.filename}:" if exc.filename else ""
    echo(f"error: {doing}:{where} {exc.strerror or exc}; nothing half-written is left", err=True)
    sys.exit(1)


def interrupted_code() -> int:
    return 128 + signal.SIGTERM if _TERMINATED else 130


SHOWN_IDS = 20  # orphans named by `validate` (a large record has thousands)
SHOWN_ERRORS = 5  # errors shown with their places by a command that goes on despite them
NOTHING_SELECTED = 5  # `verify` whose --tag / -k select no claim (as pytest's "no tests collected")
BUSY = 75  # `verify` while another holds the verdicts' lock: try again later (sysexits' EX_TEMPFAIL)


def a_tag(tag: str | None) -> str | None:
    if tag is not None and not tag.strip():
        raise click.BadParameter("give a tag, e.g. --tag attention", param_hint="--tag")
    return tag


def no_such_tag(tags: Iterable[str], entries: Iterable[Entry], noun: str) -> str:
    """``no claim has tag 'atention'; did you mean 'attention'?`` for the first of ``tags`` that
    none of ``entries`` has (a typo selects nothing), else ``""``."""
    from recordtool.record.problems import did_you_mean

    known = {t for entry in entries for t in entry.tags}
    for tag in tags:
        if tag not in known:
            return terminal(f"no {noun} has tag '{tag}'{did_you_mean(tag, sorted(known))}")
    return ""


def claims_only(project: Project, ids: tuple[str, ...]) -> None:
    """A usage error for an id that is an entry of the record but not a claim."""
    from recordtool.record.schema import Theory

    for raw in ids:
        entry = project.record.entries.get(raw.upper()) or project.record.entries.get(raw)
        if entry is not None and not isinstance(entry, Theory):
            kinds = ", ".join(f"{k.prefix}-" for k in project.config.kinds.values() if k.schema == "theory")
            raise click.BadParameter(f"{entry.id} is a {entry.kind} entry, not a claim; only claims ({kinds}...) "
                                     "have checks", param_hint="IDS")


def finite(value: float | None) -> float | None:
    """A number option's value, refused when it is not finite (FloatRange lets 'nan' and 'inf' through)."""
    if value is not None and not math.isfinite(value):
        raise click.BadParameter(f"{value} is not a finite number; give one such as 600")
    return value


def report_errors(project: Project) -> None:
    """Tell, on stderr, the record's first ``SHOWN_ERRORS`` errors with their places, then how
    many there are (for a command that goes on without the entries that have them)."""
    errors = project.errors
    for problem in errors[:SHOWN_ERRORS]:
        echo(str(problem), err=True)
    if errors:
        more = f" ({len(errors) - SHOWN_ERRORS} more not shown)" if len(errors) > SHOWN_ERRORS else ""
        echo(f"warning: {len(errors)} error{'s' if len(errors) != 1 else ''} in the record{more}; "
             "run `recordtool validate`", err=True)


