"""The commands of verdicts: ``verify`` runs the claims' checks and keeps their verdicts,
``status`` shows them."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

import recordtool.cli.common as common
from recordtool.safetext import terminal

if TYPE_CHECKING:
    from recordtool.record.project import Project
    from recordtool.verify.report import Report
    from recordtool.verify.session import Options


@click.command(short_help="Run claims' checks and keep their verdicts.")
@common.root_option
@click.argument("ids", nargs=-1, metavar="[IDS]...")
@click.option("--tag", "tags", multiple=True, callback=lambda _c, _p, v: tuple(map(common.a_tag, v)),
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
              callback=lambda _ctx, _param, value: common.finite(value),
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
@click.option("--watch", is_flag=True, help="With --try: run again each time a selected claim's entry, its check "
              "module or a module that one imports is saved, until Ctrl-C.")
def verify(root: Path | None, ids: tuple[str, ...], tags: tuple[str, ...], keyword: str | None, stale: bool,
           failed: bool, force: bool, trial: bool, jobs: int, seeds: int | None, timeout: float | None,
           device: str, scheduler: str | None, fmt: str, junit_xml: Path | None, strict: bool, watch: bool) -> None:
    """Run the checks of claims and keep their verdicts in record/verdicts/.

    Each check and control runs on each of its `seeds:`, every run in a child process (here,
    or on a Dask cluster with --scheduler: docs/cluster.md); a hang ends in `timeout`, a
    crash in `error`. A claim whose verdict is fresh is not rerun unless --force (but one
    whose run the machine broke is). --try runs and judges without keeping anything.

    Exits 1 when this run leaves a claim worse off than its committed verdict (with --strict:
    unless every selected claim is verified), 0 otherwise; 2 on a usage error or a cluster
    that cannot be used (before anything runs), 5 when --tag or -k select no claim, 75 when
    another verify holds the verdicts' lock (nothing runs; try again), 130 on Ctrl-C (the
    verdicts already finished are kept). The rules: docs/verdicts.md.
    """
    if watch:
        if not trial:
            raise click.UsageError("--watch needs --try: a watch shows each result and keeps no verdict")
        import recordtool.cli.watch as watching

        watching.verify(click.get_current_context(), root, ids)
    inputs = None
    if not (force or trial or junit_xml is not None):  # those always run or write something
        inputs = common.replay(root, "verify")
    from recordtool.verify.report import format_report, report_json
    from recordtool.verify.session import Options

    project = common.open_record(root)
    common.claims_only(project, ids)
    if project.errors:
        for problem in project.errors:
            common.echo(str(problem), err=True)
        count = len(project.errors)
        common.echo(f"the record has {count} error{'s' if count != 1 else ''}; fix {'them' if count != 1 else 'it'} "
             "before verifying", err=True)
        sys.exit(1)
    options = Options(ids=list(ids), tags=list(tags), keyword=keyword, stale=stale, failed=failed, force=force,
                      jobs=jobs, seeds=seeds, timeout=timeout, device=device, scheduler=scheduler, trial=trial)
    report = _run(project, options)
    for note in report.notes:
        common.echo(f"note: {note}", err=True)
    if junit_xml is not None:
        from recordtool.atomic import write_atomic
        from recordtool.verify.junit import junit_xml as to_junit

        write_atomic(junit_xml, to_junit(r.status for r in report.results))
    if fmt == "json":
        common.echo(json.dumps(report_json(report), indent=2, allow_nan=False))
    else:
        common.echo(format_report(report))
    code = (common.interrupted_code() if report.interrupted
            else 0 if (report.all_verified if strict else report.ok) else 1)
    if not (report.interrupted or report.checks_run or report.written or report.tried):  # nothing to do
        common.keep(project, inputs, code)
    sys.exit(code)


def _run(project: Project, options: Options) -> Report:
    """Run ``verify`` on ``project``; exit with a message where it cannot (nothing selected, a
    cluster that cannot be used, another verify holding the lock, storage that fails)."""
    from recordtool.meter import make_display
    from recordtool.verify.cluster import ClusterError
    from recordtool.verify.session import VerifyError, select
    from recordtool.verify.session import verify as run_verify
    from recordtool.verify.store import StoreBusy, StoreError

    try:
        if (options.tags or options.keyword) and not select(project.record.claims(), options):
            filters = [f"--tag {t}" for t in options.tags] + ([f"-k {options.keyword}"] if options.keyword else [])
            hint = common.no_such_tag(tuple(options.tags), project.record.claims(), "claim")
            common.echo(f"no claim matches {' '.join(filters)}{f' ({hint})' if hint else ''}; nothing verified", err=True)
            sys.exit(common.NOTHING_SELECTED)
        return run_verify(project, options, make_display())
    except ClusterError as exc:
        common.echo(f"error: {exc}", err=True)
        sys.exit(2)
    except VerifyError as exc:
        raise click.UsageError(terminal(str(exc))) from None
    except StoreBusy as exc:
        common.echo(f"busy: {exc}", err=True)
        sys.exit(common.BUSY)
    except StoreError as exc:
        raise click.ClickException(terminal(str(exc))) from None
    except OSError as exc:
        common.storage_error(exc, "cannot verify")


@click.command(short_help="Show every claim's verdict, and why it is stale.")
@common.root_option
@click.argument("ids", nargs=-1, metavar="[IDS]...")
@click.option("--why", is_flag=True, help="Show each check's outcome, why a verdict is stale, and dependencies.")
@common.format_option
def status(root: Path | None, ids: tuple[str, ...], why: bool, fmt: str) -> None:
    """Show what holds now: every claim's verdict, and why a stale one is stale.

    Reads the verdicts in record/verdicts/ and the check sources; runs nothing. A claim is
    `verified`, `partly-verified`, `contradicted`, `no-power`, `error`, `timeout`, `skipped`,
    `stale` (something that produced its verdict changed) or `unchecked`. --why adds each
    clause's verdict and each expectation's power and spread over seeds (docs/verdicts.md).
    """
    inputs = common.replay(root, "status")
    from recordtool.verify.session import VerifyError, find_claims
    from recordtool.verify.status import assess, format_status, status_json

    project = common.open_record(root)
    common.report_errors(project)
    common.claims_only(project, ids)
    try:
        chosen = find_claims(ids, project.record.claims()) if ids else None
    except VerifyError as exc:
        raise click.BadParameter(terminal(str(exc)), param_hint="IDS") from None
    statuses = assess(project)
    if chosen is not None:
        statuses = {c.id: statuses[c.id] for c in chosen}
    if fmt == "json":
        common.echo(json.dumps(status_json(statuses), indent=2, allow_nan=False))
    else:
        common.echo(format_status(statuses, why=why))
    common.keep(project, inputs, 0)


@click.command(short_help="Show how the verdicts changed: since the last commit, or between two.")
@common.root_option
@click.argument("revs", nargs=-1, metavar="[REV_A [REV_B]]")
@click.option("--format", "fmt", type=click.Choice(["text", "markdown", "json"]), default="text", show_default=True,
              help="Output format; markdown for a pull-request comment (docs/verdicts.md).")
def diff(root: Path | None, revs: tuple[str, ...], fmt: str) -> None:
    """Compare the verdicts committed at REV_A (default HEAD) with those at REV_B (default:
    the working tree's record/verdicts/, as `verify` or a try left them).

    Shows each claim whose result or clauses changed, each expectation whose numbers moved
    beyond its check's `tolerance:`, and the claims new or removed (docs/verdicts.md). Exits
    1 when a claim is worse off (by the rule of `verify`), 0 otherwise, 2 on a usage error
    (not a git repository, an unknown revision, a damaged verdict).
    """
    from recordtool.render.escape import code
    from recordtool.safetext import one_line
    from recordtool.verify import diff as changes
    from recordtool.verify.store import read_store

    if len(revs) > 2:
        raise click.UsageError("give at most two revisions: REV_A [REV_B]")
    project = common.open_record(root)
    config = project.config
    tolerances = {c.id: {s.name: s.tolerance for s in c.checks} for c in project.record.claims()}
    try:
        before = changes.git_verdicts(config.root, config.verdicts, revs[0] if revs else "HEAD")
        if len(revs) == 2:
            after = changes.git_verdicts(config.root, config.verdicts, revs[1])
        else:
            store = read_store(config, sorted(p.stem for p in config.verdicts.glob("*.json")))
            for claim, why in store.damaged.items():
                raise changes.DiffError(f"{config.relative(config.verdicts)}/{claim}.json: {why}")
            after = store.verdicts
    except changes.DiffError as exc:
        common.echo(f"error: {exc}", err=True)
        sys.exit(2)
    found = changes.compare(before, after, tolerances)
    if fmt == "json":
        common.echo(json.dumps(changes.diff_json(found), indent=2, allow_nan=False))
    elif fmt == "markdown":
        names = [revs[0] if revs else "HEAD", revs[1] if len(revs) == 2 else "the working tree"]
        heading = f"### Verdicts: {code(names[0])} → {code(names[1]) if len(revs) == 2 else names[1]}"
        common.echo("\n".join([heading, "", *changes.format_diff(found, code, "- ")]))
    else:
        common.echo("\n".join(changes.format_diff(found, one_line)))
    sys.exit(1 if any(d.worse for d in found) else 0)
