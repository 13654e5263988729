"""The command line: each command parses its options and calls one function of the library.

Only this module turns the library's exceptions into click errors and exit codes
(0 clean, 1 problems found, 2 usage).
"""

from __future__ import annotations

import contextlib
import json
import math
import signal
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import click

from recordtool import __version__
from recordtool.meter import Meter
from recordtool.safetext import some, terminal

if TYPE_CHECKING:
    from recordtool.record.config import Kind
    from recordtool.record.project import Project
    from recordtool.record.schema import Entry
    from recordtool.verify.snapshot import Inputs

_said: list[tuple[str, bool]] | None = None  # what a command has printed, while it is being kept


def echo(message: str = "", err: bool = False) -> None:
    """``click.echo`` of text that may come from the record: its control characters escaped."""
    if _said is not None:
        _said.append((message, err))
    click.echo(terminal(message), err=err)


def _replay(root: Path | None, command: str, options: dict[str, Any]) -> Inputs | None:
    """Print what ``command`` with ``options`` printed last time and exit as it did, when it
    found nothing to do and nothing it read has changed since (decided from file sizes and
    times, without opening the project: ``recordtool.verify.snapshot``). Otherwise the inputs
    to keep the answer under, if this run too finds nothing to do; and printing is recorded."""
    global _said
    from recordtool.verify import snapshot

    _said = None
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


def _keep(project: Project, inputs: Inputs | None, code: int) -> None:
    """Keep what this command printed, having found nothing to do, for ``_replay``."""
    global _said
    if inputs is not None and _said is not None and not project.errors:  # a broken record: say it each time
        from recordtool.verify import snapshot

        snapshot.keep(project, inputs, snapshot.Answer(_said, code))
    _said = None


def _open(root: Path | None, jobs: int | None = None, *, cache: bool = True, meter: Meter | None = None) -> Project:
    """The project, read with the store (``recordtool.store``) unless ``cache`` is off;
    ``meter``: the command's progress line (``recordtool.meter``), else one of its own, on
    stderr and erased before this returns: every command that reads the record shows what it
    is doing when reading takes a while (a cold run on a large record)."""
    from recordtool.record.config import ConfigError
    from recordtool.record.project import open_project

    with contextlib.nullcontext(meter) if meter is not None else Meter(sys.stderr) as shown:
        try:
            return open_project(root=root, jobs=jobs, cache=cache, meter=shown)
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


class _Commands(click.Group):
    """Every command stops on SIGTERM (a CI timeout, ``kill``) as on Ctrl-C: what it writes
    is written whole or not at all (atomic writes, temporary files removed), one line says
    so, and the exit code says which signal (143, 130). ``render`` and ``verify`` say more."""

    def invoke(self, ctx: click.Context) -> Any:
        with _terminate_as_interrupt():
            try:
                return super().invoke(ctx)
            except KeyboardInterrupt:
                echo("interrupted: nothing half-written is left", err=True)
                sys.exit(_interrupted_code())


@click.group(cls=_Commands, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="recordtool")
def cli() -> None:
    """A knowledge record whose claims check themselves.

    Entries (literature, reading notes, theory claims) are YAML files under record/. Claims
    name executable checks; `verify` runs them and keeps verdicts; `render` writes
    backlinked Markdown pages.
    """


@cli.command(short_help="Check the record: schema, ids, citations, mentions.")
@root_option
@click.option("--strict", is_flag=True, help="Treat warnings as errors.")
@format_option
@jobs_option
@no_cache_option
def validate(root: Path | None, strict: bool, fmt: str, jobs: int | None, no_cache: bool) -> None:
    """Check every entry of the record: schema, ids, citations, mentions.

    Prints each problem with its place (file:line:col) on stderr, the errors first, then
    the orphans (entries that nothing links to and that link to nothing), and exits 0 when there is no error, 1 when
    there is (with --strict, warnings count as errors), 2 on a usage error.
    """
    project = _open(root, jobs, cache=not no_cache)
    errors, warnings = project.errors, project.warnings
    orphans = project.graph.orphans()
    failed = bool(errors) or (strict and bool(warnings))
    if fmt == "json":
        payload = {
            "ok": not failed,
            "entries": len(project.record.entries),
            "errors": len(errors),
            "warnings": len(warnings),
            "problems": [p.as_dict() for p in project.problems],
            "orphans": orphans,
        }
        echo(json.dumps(payload, indent=2))
    else:
        for problem in project.problems:  # one stream, errors first: a cause before its consequences
            echo(str(problem), err=True)
        if orphans:
            echo(f"orphans (nothing links to or from them): {some(orphans, SHOWN_IDS)}")
        n = len(project.record.entries)
        summary = (f"{n} entr{'y' if n == 1 else 'ies'}: {len(errors)} "
                   f"error{'s' if len(errors) != 1 else ''}, {len(warnings)} warning{'s' if len(warnings) != 1 else ''}")
        echo(summary)
    sys.exit(1 if failed else 0)


@cli.command(name="list", short_help="List entries, by kind or tag.")
@root_option
@click.option("--kind", "kind_name", default=None, help="Only entries of this kind (literature, note, theory or a prefix).")
@click.option("--tag", default=None, callback=lambda _c, _p, v: _a_tag(v), help="Only entries with this tag.")
def list_(root: Path | None, kind_name: str | None, tag: str | None) -> None:
    """List the record's entries: id, kind, status and title, one a line."""
    from recordtool.record.load import title_line

    project = _open(root)
    kind = None if kind_name is None else _kind(project, kind_name, "--kind")
    _report_errors(project)
    for entry_id, entry in project.record.entries.items():
        if kind is not None and entry.kind != kind.name:
            continue
        if tag is not None and tag not in entry.tags:
            continue
        title = title_line(entry)
        if len(title) > 100:
            title = title[:99] + "…"
        echo(f"{entry_id:<12} {entry.kind:<10} {entry.status:<10} {title}")
    if tag is not None and (hint := _no_such_tag([tag], project.record.entries.values(), "entry")):
        echo(hint, err=True)


@cli.command(short_help="Show an entry with its citations and backlinks.")
@root_option
@click.argument("entry_id", metavar="ID")
def show(root: Path | None, entry_id: str) -> None:
    """Show one entry with its citations both ways and its backlinks."""
    if not entry_id.strip():
        raise click.BadParameter(f"give an entry's id, e.g. {_example_id(root)}", param_hint="ID")
    project = _open(root)
    entry = project.record.entries.get(entry_id.upper()) or project.record.entries.get(entry_id)
    if entry is None:
        from recordtool.record.problems import did_you_mean_id

        hint = did_you_mean_id(entry_id.upper(), project.record.entries)
        raise click.ClickException(terminal(f"no entry {entry_id} in the record{hint}"))
    from recordtool.record.schema import Theory
    from recordtool.render.terminal import format_entry

    verdict = ""
    if isinstance(entry, Theory):
        from recordtool.verify.status import assess, describe_state

        verdict = describe_state(assess(project)[entry.id])
    echo(format_entry(project.graph, entry.id, verdict))


def _kind(project: Project, name: str, hint: str) -> Kind:
    """The kind called ``name`` (or with that prefix); a usage error naming the known ones."""
    kind = project.config.kind_named(name)
    if kind is None:
        names = ", ".join(k.name for k in project.config.kinds.values())
        raise click.BadParameter(f"unknown kind '{name}'; known kinds: {names}", param_hint=hint)
    return kind


def _example_id(root: Path | None) -> str:
    """An id of the project's first kind, for a hint: the shape its ids take, whatever its
    record holds (``PREFIX-1`` where no configuration can be read)."""
    from recordtool.record.config import ConfigError, find_root, load_config

    try:
        config = load_config(root.resolve() if root is not None else find_root(Path.cwd()))
    except (ConfigError, OSError):
        return "PREFIX-1"
    return f"{next(iter(config.kinds), 'PREFIX')}-1"


@cli.command(short_help="Create an entry with the next free id.")
@root_option
@click.argument("kind_name", metavar="KIND")
@click.option("--title", required=True, help="The new entry's title.")
def new(root: Path | None, kind_name: str, title: str) -> None:
    """Create an entry of KIND (literature, note, theory) with the next free id.

    Writes a valid file from a template and prints its path; never overwrites a file.
    """
    from recordtool.record.template import TemplateError, create_entry

    project = _open(root)
    kind = _kind(project, kind_name, "KIND")
    try:
        path = create_entry(project.config, kind, title)
    except TemplateError as exc:
        raise click.ClickException(terminal(str(exc))) from None
    except OSError as exc:
        _storage_error(exc, "cannot write the entry")
    echo(project.config.relative(path))


@cli.command(short_help="Run claims' checks and keep their verdicts.")
@root_option
@click.argument("ids", nargs=-1, metavar="[IDS]...")
@click.option("--tag", "tags", multiple=True, callback=lambda _c, _p, v: tuple(map(_a_tag, v)),
              help="Only claims with this tag (repeatable).")
@click.option("-k", "keyword", default=None, metavar="TEXT",
              help="Only claims whose id, title, statement, tags or check names contain TEXT.")
@click.option("--stale", is_flag=True, help="Only claims that are stale or never verified.")
@click.option("--failed", is_flag=True, help="Only claims whose last verdict did not pass; rerun them.")
@click.option("--force", is_flag=True, help="Rerun claims whose verdict is fresh too.")
@click.option("--try", "trial", is_flag=True, help="Run the selected claims (fresh ones too) and show the judged "
              "result, keeping the committed verdicts and figures as they are.")
@click.option("-j", "--jobs", type=click.IntRange(min=1), default=1, show_default=True,
              help="Cores to run checks on: runs start (the slowest first) while their checks' `threads:` "
                   "add up to at most N (a wider run goes alone); each run has its check's own "
                   "`threads:`, so -j changes no number.")
@click.option("--seeds", type=click.IntRange(min=1), default=None, metavar="N",
              help="Run every check on seeds 0..N-1 instead of its own `seeds:` (a quick look; the verdict "
                   "is then stale until a plain verify runs each check on its own seeds).")
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True), default=None, metavar="S",
              callback=lambda _ctx, _param, value: _finite(value),
              help="Seconds per check run, overriding `timeout:` in the YAML and the project's default.")
@click.option("--device", type=click.Choice(["cpu", "cuda"]), default="cpu", show_default=True,
              help="Where checks run; checks that need a GPU are skipped on cpu.")
@click.option("--scheduler", default=None, metavar="ADDRESS",
              help="Run each check run as a task on a Dask cluster: a scheduler (tcp://host:8786), "
                   "local:N (N worker processes here) or none (this machine's runner); "
                   "default: [tool.recordtool] scheduler. See docs/cluster.md.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="Output format of the summary (progress goes to stderr).")
@click.option("--junit-xml", type=click.Path(dir_okay=False, path_type=Path), default=None, metavar="PATH",
              help="Also write a JUnit XML report, one test case per check.")
@click.option("--strict", is_flag=True, help="Exit 1 unless every selected claim is verified (every clause), "
              "not only when a claim is worse off than its committed verdict.")
def verify(root: Path | None, ids: tuple[str, ...], tags: tuple[str, ...], keyword: str | None, stale: bool,
           failed: bool, force: bool, trial: bool, jobs: int, seeds: int | None, timeout: float | None,
           device: str, scheduler: str | None, fmt: str, junit_xml: Path | None, strict: bool) -> None:
    """Run the checks of claims and keep their verdicts in record/verdicts/.

    Each check runs on its `seeds:` (default 1), and so does each control, every run in a
    child process (here, or on a Dask cluster with --scheduler: docs/cluster.md); a hang
    ends in `timeout`, a crash in `error`, and neither stops the run. Claims whose verdict
    is fresh (nothing that produced it has changed) are not rerun unless --force, except a
    timeout or error that the run caused (a timeout, a crash, a signal), not the claim.
    --try runs and judges without keeping anything.

    The committed verdicts are the baseline. Exits 1 when this run leaves a claim worse off
    than its committed verdict (a result or a clause that held got worse; a claim with no
    verdict before that is not verified; a check in error or timeout), 0 otherwise, so a
    claim the record already shows as contradicted is a finding, not a failure; with
    --strict, 1 unless every selected claim is verified (every clause; or skipped). Exits 2
    on a usage error (an id that is not a claim, say) or a cluster that cannot be used
    (before anything runs), 5 when --tag or -k select no claim at all, 130 on Ctrl-C (the
    verdicts already finished are kept). The rules: docs/verdicts.md.
    """
    inputs = None
    if not (force or trial or junit_xml is not None):  # those always run or write something
        inputs = _replay(root, "verify", {
            "ids": ids, "tags": tags, "keyword": keyword, "stale": stale, "failed": failed, "jobs": jobs,
            "seeds": seeds, "timeout": timeout, "device": device, "scheduler": scheduler, "format": fmt,
            "strict": strict})
    from recordtool.meter import make_display
    from recordtool.verify.cluster import ClusterError
    from recordtool.verify.report import format_report, report_json
    from recordtool.verify.session import Options, VerifyError, select
    from recordtool.verify.session import verify as run_verify
    from recordtool.verify.store import StoreError

    project = _open(root)
    _claims_only(project, ids)
    if project.errors:
        for problem in project.errors:
            echo(str(problem), err=True)
        count = len(project.errors)
        echo(f"the record has {count} error{'s' if count != 1 else ''}; fix {'them' if count != 1 else 'it'} "
             "before verifying", err=True)
        sys.exit(1)
    options = Options(ids=list(ids), tags=list(tags), keyword=keyword, stale=stale, failed=failed, force=force,
                      jobs=jobs, seeds=seeds, timeout=timeout, device=device, scheduler=scheduler, trial=trial)
    try:
        if (tags or keyword) and not select(project.record.claims(), options):
            filters = [f"--tag {t}" for t in tags] + ([f"-k {keyword}"] if keyword else [])
            hint = _no_such_tag(tags, project.record.claims(), "claim")
            echo(f"no claim matches {' '.join(filters)}{f' ({hint})' if hint else ''}; nothing verified", err=True)
            sys.exit(NOTHING_SELECTED)
        with _terminate_as_interrupt():
            report = run_verify(project, options, make_display())
    except ClusterError as exc:
        echo(f"error: {exc}", err=True)
        sys.exit(2)
    except VerifyError as exc:
        raise click.UsageError(terminal(str(exc))) from None
    except StoreError as exc:
        raise click.ClickException(terminal(str(exc))) from None
    except OSError as exc:
        _storage_error(exc, "cannot verify")
    for note in report.notes:
        echo(f"note: {note}", err=True)
    if junit_xml is not None:
        from recordtool.atomic import write_atomic
        from recordtool.verify.junit import junit_xml as to_junit

        write_atomic(junit_xml, to_junit(r.status for r in report.results))
    if fmt == "json":
        echo(json.dumps(report_json(report), indent=2, allow_nan=False))
    else:
        echo(format_report(report))
    code = (_interrupted_code() if report.interrupted
            else 0 if (report.all_verified if strict else report.ok) else 1)
    if not (report.interrupted or report.checks_run or report.written or report.tried):  # nothing to do
        _keep(project, inputs, code)
    sys.exit(code)


@cli.command(short_help="Show every claim's verdict, and why it is stale.")
@root_option
@click.argument("ids", nargs=-1, metavar="[IDS]...")
@click.option("--why", is_flag=True, help="Show each check's outcome, why a verdict is stale, and dependencies.")
@format_option
def status(root: Path | None, ids: tuple[str, ...], why: bool, fmt: str) -> None:
    """Show what holds now: every claim's verdict, and why a stale one is stale.

    Reads the verdicts in record/verdicts/ and the check sources; runs nothing. A claim is
    `verified` (every clause), `partly-verified` ("partly verified: 4 of 5 clauses"),
    `contradicted`, `no-power`, `error`, `timeout`, `skipped`, `stale` (something that
    produced its verdict changed: the statement, a check's spec, its code, the environment)
    or `unchecked`. --why adds each clause's verdict and each expectation's power and
    spread over seeds (docs/verdicts.md).
    """
    inputs = _replay(root, "status", {"ids": ids, "why": why, "format": fmt})
    from recordtool.verify.session import VerifyError, find_claims
    from recordtool.verify.status import assess, format_status, status_json

    project = _open(root)
    _report_errors(project)
    _claims_only(project, ids)
    try:
        chosen = find_claims(ids, project.record.claims()) if ids else None
    except VerifyError as exc:
        raise click.BadParameter(terminal(str(exc)), param_hint="IDS") from None
    statuses = assess(project)
    if chosen is not None:
        statuses = {c.id: statuses[c.id] for c in chosen}
    if fmt == "json":
        echo(json.dumps(status_json(statuses), indent=2, allow_nan=False))
    else:
        echo(format_status(statuses, why=why))
    _keep(project, inputs, 0)


@cli.command()
@root_option
@click.option("-o", "--output", "output", type=click.Path(file_okay=False, path_type=Path), default=None,
              metavar="DIR", help="The folder to write into (default: [tool.recordtool] pages, record/pages).")
@click.option("--check", is_flag=True, help="Then parse the pages and report every link or image that does "
              "not resolve (exit 1 if any).")
@jobs_option
@click.option("--site", is_flag=True, help="Also write mkdocs.yml beside the pages folder, so that "
              "`mkdocs build -f record/mkdocs.yml --strict` builds a static site with navigation, search "
              "and the graphs drawn (pip install \".[site]\").")
@no_cache_option
def render(root: Path | None, output: Path | None, check: bool, jobs: int | None, site: bool,
           no_cache: bool) -> None:
    """Write the record as backlinked Markdown pages, one per entry, with index pages.

    Each page shows the entry's properties, typed citations both ways, a graph view, its
    body with every id linked, and its backlinks; a claim's page shows its verdict and the
    evidence for it. Only pages whose content changed are rewritten; pages of deleted
    entries are removed, while an entry whose file is there but does not load keeps its last
    page, marked stale on the index page. A file recordtool did not write is never written
    over (render names it and writes nothing). With --site, also the configuration of a
    static site made of the pages (MkDocs with the Material theme). Exits 0 when done, 1 when
    --check finds a broken link (each printed as page:line) or an entry file does not load,
    2 on a usage error (or such a file), 130 on Ctrl-C.
    """
    from recordtool.render.site import render as render_site
    from recordtool.render.write import RenderError

    project: Project | None = None
    try:
        # (a progress line on a terminal, erased before anything else is printed)
        with Meter(sys.stderr) as meter:
            project = _open(root, jobs, cache=not no_cache, meter=meter)
            meter.erase()
            _report_errors(project)
            config = project.config
            with _terminate_as_interrupt():
                report = render_site(project, output, check=check, jobs=jobs, fresh=no_cache, meter=meter)
            if site:
                from recordtool.render.mkdocs import write_mkdocs_config

                site_config, _changed = write_mkdocs_config(config, report.out)
    except RenderError as exc:
        raise click.UsageError(terminal(str(exc))) from None
    except KeyboardInterrupt:
        echo("interrupted: the pages written so far are whole, the others as they were; "
             "render again to finish", err=True)
        sys.exit(_interrupted_code())
    except OSError as exc:
        _storage_error(exc, "cannot write the pages")
    for figure in report.missing:
        echo(f"warning: figure {figure} is named by a verdict but missing; it is not shown", err=True)
    for figure in report.refused:
        echo(f"warning: figure {figure}; it is not copied", err=True)
    where = config.relative(report.out)
    for link in report.broken or []:
        echo(f"{where}/{link}", err=True)
    echo(report.summary(where))
    if site:
        echo(f"site: mkdocs build -f {config.relative(site_config)} --strict")
    if report.broken:
        echo(f"{len(report.broken)} broken link{'s' if len(report.broken) != 1 else ''}", err=True)
    if report.unloaded:  # (each file's error said above: ``_report_errors``)
        count = len(report.unloaded)
        kept = (f"; {'its page is' if count == 1 else 'their pages are'} kept as the last render wrote "
                f"{'it' if count == 1 else 'them'}, marked stale on the index page" if report.stale else "")
        echo(f"error: {count} entry file{'s' if count != 1 else ''} {'does' if count == 1 else 'do'} not load "
             f"({some(sorted(report.unloaded), 5)}){kept}; fix {'it' if count == 1 else 'them'} and render again",
             err=True)
    if report.broken or report.unloaded:
        sys.exit(1)


def _storage_error(exc: OSError, doing: str) -> NoReturn:
    """One line for a fault of the machine (a full disk, a read-only or missing folder), exit 1:
    what was being done, where, and why; what was written before is whole."""
    where = f" {exc.filename}:" if exc.filename else ""
    echo(f"error: {doing}:{where} {exc.strerror or exc}; nothing half-written is left", err=True)
    sys.exit(1)


_TERMINATED = False  # set when SIGTERM interrupted the command


@contextlib.contextmanager
def _terminate_as_interrupt() -> Iterator[None]:
    """SIGTERM (a CI timeout, ``kill``) stops the command as Ctrl-C does: children ended,
    what is finished kept, one message; the exit code then says which (143, 130)."""
    global _TERMINATED
    _TERMINATED = False

    def handler(signum: int, frame: Any) -> None:
        global _TERMINATED
        _TERMINATED = True
        raise KeyboardInterrupt

    try:
        previous = signal.signal(signal.SIGTERM, handler)
    except ValueError:  # not the main thread: leave signals as they are
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _interrupted_code() -> int:
    return 128 + signal.SIGTERM if _TERMINATED else 130


SHOWN_IDS = 20  # orphans named by `validate` (a large record has thousands)
NOTHING_SELECTED = 5  # `verify` whose --tag / -k select no claim (as pytest's "no tests collected")


def _a_tag(tag: str | None) -> str | None:
    if tag is not None and not tag.strip():
        raise click.BadParameter("give a tag, e.g. --tag attention", param_hint="--tag")
    return tag


def _no_such_tag(tags: Iterable[str], entries: Iterable[Entry], noun: str) -> str:
    """``no claim has tag 'atention'; did you mean 'attention'?`` for the first of ``tags`` that
    none of ``entries`` has (a typo selects nothing), else ``""``."""
    from recordtool.record.problems import did_you_mean

    known = {t for entry in entries for t in entry.tags}
    for tag in tags:
        if tag not in known:
            return terminal(f"no {noun} has tag '{tag}'{did_you_mean(tag, sorted(known))}")
    return ""


def _claims_only(project: Project, ids: tuple[str, ...]) -> None:
    """A usage error for an id that is an entry of the record but not a claim."""
    from recordtool.record.schema import Theory

    for raw in ids:
        entry = project.record.entries.get(raw.upper()) or project.record.entries.get(raw)
        if entry is not None and not isinstance(entry, Theory):
            kinds = ", ".join(f"{k.prefix}-" for k in project.config.kinds.values() if k.schema == "theory")
            raise click.BadParameter(f"{entry.id} is a {entry.kind} entry, not a claim; only claims ({kinds}...) "
                                     "have checks", param_hint="IDS")


def _finite(value: float | None) -> float | None:
    """A number option's value, refused when it is not finite (FloatRange lets 'nan' and 'inf' through)."""
    if value is not None and not math.isfinite(value):
        raise click.BadParameter(f"{value} is not a finite number; give one such as 600")
    return value


def _report_errors(project: Project) -> None:
    """Tell, on stderr, the record's first errors with their places, and that entries with
    errors are left out (without stopping)."""
    for line in project.errors_said():
        echo(line, err=True)


def main(argv: list[str] | None = None) -> Any:
    return cli.main(args=argv, prog_name="recordtool")


def run() -> None:
    """The command line as a program (``python -m recordtool``, the ``recordtool`` script)."""
    main()
