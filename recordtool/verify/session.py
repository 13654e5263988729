"""`recordtool verify`: select claims, run what is not fresh, judge, keep the verdicts.

Gather first, without running or importing anything (so a verify with nothing changed returns
at once); then run the jobs left (``runner``), and judge and write each claim as soon as all of
its jobs are done, so a Ctrl-C keeps every verdict already finished.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import shutil
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from recordtool.meter import PlainDisplay
from recordtool.record.config import Config
from recordtool.record.problems import RecordError, did_you_mean_id
from recordtool.record.schema import CheckSpec, Theory
from recordtool.safetext import some
from recordtool.verify.context import is_sidecar
from recordtool.verify.fingerprint import covered_paths, environment, git_commit, git_dirty
from recordtool.verify.judge import as_judged_now
from recordtool.verify.kept import KeptVerdicts
from recordtool.verify.limits import run_limits
from recordtool.verify.report import ClaimResult, Report
from recordtool.verify.rules import (
    claim_result,
    judge_check,
    judge_clauses,
    judge_control,
    judge_run,
    last_successful,
    skipped_check,
)
from recordtool.verify.runner import Executor, Job, JobResult, Runner
from recordtool.verify.snapshot import ALWAYS, RUNS, leftovers
from recordtool.verify.status import (
    add_dependencies,
    assess_claims,
    claim_status,
    run_failure,
)
from recordtool.verify.store import (
    Store,
    StoreError,
    figures_dir,
    figures_id,
    keep_verdict,
    locked,
    read_store,
    set_aside,
    sweep_store,
    verdict_path,
)
from recordtool.verify.verdict import (
    CheckVerdict,
    ClaimStatus,
    ClaimVerdict,
    Run,
    worst,
)

FAILED_OUTCOMES = ("fail", "not-reproduced", "error", "timeout", "no-power")
SHOWN_UNCHECKED = 20  # claims named in the note on those without checks (a large record has thousands)


class VerifyError(Exception):
    """A usage error of verify (an unknown id); exit status 2."""


@dataclass
class Options:
    ids: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    keyword: str | None = None
    stale: bool = False
    failed: bool = False
    force: bool = False
    jobs: int = 1
    seeds: int | None = None  # every check on seeds 0..N-1 (default: each check's own ``seeds:``)
    timeout: float | None = None
    device: str = "cpu"
    scheduler: str | None = None  # a Dask scheduler or local:N; None: the project's, "none": here
    trial: bool = False  # `--try`: run and judge, but keep the committed verdicts and figures as they are


def find_claims(ids: Iterable[str], claims: list[Theory]) -> list[Theory]:
    """The claims named by ``ids`` (any case), in record order; VerifyError for one that is
    not a claim of the record."""
    by_id = {c.id: c for c in claims}
    wanted: set[str] = set()
    for raw in ids:
        claim = by_id.get(raw) or by_id.get(raw.upper())
        if claim is None:
            raise VerifyError(f"no claim {raw} in the record{did_you_mean_id(raw.upper(), by_id)}")
        wanted.add(claim.id)
    return [c for c in claims if c.id in wanted]


def select(claims: list[Theory], options: Options) -> list[Theory]:
    """Claims named by id, tag and keyword (all of them when none is given)."""
    chosen = find_claims(options.ids, claims) if options.ids else claims
    if options.tags:
        chosen = [c for c in chosen if any(t in c.tags for t in options.tags)]
    if options.keyword:
        text = options.keyword.lower()
        chosen = [c for c in chosen if text in " ".join(
            [c.id, c.title, c.statement, *c.tags, *(k.name for k in c.checks)]).lower()]
    return chosen


def check_timeout(config: Config, check: CheckSpec, options: Options) -> float:
    """``--timeout`` if given, else the check's ``timeout:``, else the project's default."""
    if options.timeout is not None:
        return options.timeout
    return check.timeout if check.timeout is not None else config.timeout


def _expected(previous: ClaimVerdict | None, check: str, variant: str, seed: int) -> float:
    """The last duration of this run (or of its check), for starting the slowest first."""
    last = next((c for c in previous.checks if c.name == check), None) if previous is not None else None
    if last is None:
        return float("inf")
    runs = next((c.runs for c in [*last.controls, *last.positives] if c.name == variant), []) if variant else last.runs
    return next((run.duration_s for run in runs if run.seed == seed), last.duration_s)


@dataclass
class _Plan:
    claim: Theory
    fingerprint: dict[str, str]
    packages: set[str]
    previous: ClaimVerdict | None
    comparable: set[str]  # checks whose previous verdict came from the same spec, code and env
    jobs: list[Job] = field(default_factory=list)
    results: dict[tuple[str, str, int], JobResult] = field(default_factory=dict)


def verify(project: Any, options: Options, display: PlainDisplay | None = None) -> Report:
    """Verify the selected claims of ``project`` (a ``recordtool.record.project.Project``)."""
    t0 = time.perf_counter()
    if project.errors:
        raise RecordError(project.errors)
    config: Config = project.config
    leftovers(config)  # what a verify that was killed left (figures left half-kept: under the lock)
    record = project.record
    ids = record.claim_ids()

    def claim(claim_id: str) -> Theory:
        return cast(Theory, record.entries[claim_id])

    def has_checks(claim_id: str) -> bool:  # (known from loading, the entry not made: ``Record.modules``)
        return bool(record.modules.get(claim_id)) if record.modules is not None else bool(claim(claim_id).checks)

    # The claims, made only where a filter reads them: a plain `verify` after an edit of a large
    # record makes those it runs, and those whose verdict or entry changed (``assess_claims``).
    filtered = bool(options.ids or options.tags or options.keyword)
    chosen = [c.id for c in select([claim(i) for i in ids], options)] if filtered else ids
    report = Report()
    if not options.ids:
        unchecked = [i for i in chosen if not has_checks(i)]
        if unchecked:
            report.notes.append(f"no checks, not verified: {some(unchecked, SHOWN_UNCHECKED)}")
        chosen = [i for i in chosen if has_checks(i) or claim(i).clauses]  # (clauses: meant to be checked)

    # The selected claims and those they use: enough to say what to run and on what they rest.
    chosen_ids = set(chosen)
    used = {cited for i in chosen for cited, relation in record.cites(i) if relation == "uses"}
    needed = [i for i in ids if i in chosen_ids or i in used]
    kept = KeptVerdicts(config) if project.cached and options.seeds is None else None  # as status reads them
    store = read_store(config, needed, kept)
    statuses, prints = assess_claims(project, chosen, store, seeds=options.seeds, kept=kept)
    # what they use is judged as it stands: `--seeds` is for the claims run, not theirs
    statuses |= assess_claims(project, [i for i in needed if i not in chosen_ids], store, kept=kept)[0]
    if kept is not None:
        kept.save()

    if options.stale or options.failed:
        chosen = [i for i in chosen if
                  (options.stale and statuses[i].state in ("stale", "unchecked"))
                  or (options.failed and statuses[i].outcome in FAILED_OUTCOMES)]
    to_run = [claim(i) for i in chosen if has_checks(i) and _runs(statuses[i], config, options)]
    if to_run:
        report.interrupted, report.checks_run = _run(project, options, to_run, statuses, prints,
                                                     store.verdicts, report, display or PlainDisplay())
    add_dependencies(project, statuses)
    scheduled = {c.id for c in to_run}
    for claim_id in chosen:
        ran = claim_id in report.written or claim_id in report.tried
        report.results.append(ClaimResult(claim_id, statuses[claim_id], ran=ran,
                                          cut_short=report.interrupted and claim_id in scheduled and not ran,
                                          before=store.verdicts.get(claim_id)))
    report.duration_s = time.perf_counter() - t0
    return report


def _runs(status: ClaimStatus, config: Config, options: Options) -> bool:
    """Whether a selected claim is run: when asked, when its verdict is stale or missing, when
    its run failed on the machine (not on the claim), or when it was skipped and can run now."""
    return (options.force or options.failed or options.trial or status.state in ("stale", "unchecked")
            or (status.verdict is not None and run_failure(status.verdict) is not None)
            or (status.state == "skipped" and (options.device == "cuda" or bool(_scheduler(config, options)))))


def _scheduler(config: Config, options: Options) -> str | None:
    """Where the runs go: a Dask scheduler's address (``--scheduler``, else the project's
    ``scheduler``), or None for this machine's runner."""
    address = options.scheduler if options.scheduler is not None else config.scheduler
    return None if address is None or address.strip().lower() == "none" else address.strip()


def _executor(config: Config, options: Options, workdir: Path, display: PlainDisplay) -> tuple[Executor, str | None]:
    """What runs the jobs, and why checks that need a GPU cannot run there (None: they can).
    Connecting to a cluster happens here, before anything runs (``ClusterError`` if it cannot)."""
    address = _scheduler(config, options)
    if address is not None:
        from recordtool.verify.cluster import ClusterRunner  # imports distributed: only when asked

        cluster = ClusterRunner.connect(address, root=config.root, package=config.checks, cache_dir=config.cache,
                                        device=options.device, display=display)
        return cluster, None if cluster.gpus else "needs a GPU; no worker of the cluster declares a GPU resource"
    runner = Runner(root=config.root, package=config.checks, workdir=workdir, cache_dir=config.cache,
                    device=options.device, jobs=options.jobs, display=display)
    return runner, None if options.device.startswith("cuda") else "needs a GPU; run with --device cuda on a machine with one"


def _run(project: Any, options: Options, to_run: list[Theory], statuses: dict[str, ClaimStatus],
         prints: dict[str, tuple[dict[str, str], set[str]]], previous: dict[str, ClaimVerdict],
         report: Report, display: PlainDisplay) -> tuple[bool, int]:
    """Run the claims' checks; returns (interrupted, number of runs finished)."""
    config: Config = project.config
    config.cache.mkdir(parents=True, exist_ok=True)  # (the runs' folder is in it: a fault there is named by it)
    workdir = config.cache / RUNS / f"{os.getpid()}-{int(time.time() * 1000)}"
    try:
        executor, no_gpu = _executor(config, options, workdir, display)
    except KeyboardInterrupt:  # while connecting to a cluster: nothing ran
        return True, 0
    with contextlib.closing(executor), locked(config):
        sweep_store(config)  # what a run that died left half-written
        # Read again under the lock: another run may have written since.
        store = read_store(config, [c.id for c in to_run])
        previous = {**previous, **store.verdicts}
        run = _Session(project, options, workdir, no_gpu, git_commit(config.root), store, statuses, report, display)
        plans = {claim.id: run.plan(claim, *prints[claim.id], previous.get(claim.id)) for claim in to_run}
        finished = 0
        try:
            for plan in plans.values():
                if not plan.jobs:
                    run.finish(plan)
            results = executor.run([job for plan in plans.values() for job in plan.jobs])
            try:
                for result in results:
                    finished += 1
                    plan = plans[result.job.claim]
                    plan.results[(result.job.check, result.job.variant, result.job.seed)] = result
                    if len(plan.results) == len(plan.jobs):
                        run.finish(plan)
            finally:
                results.close()
        except KeyboardInterrupt:
            return True, finished
        finally:
            display.close()
            shutil.rmtree(workdir, ignore_errors=True)
    return False, finished


@dataclass
class _Session:
    """What the claims of one verify run share while their checks run: the options, where the
    runs write, the store as read under the lock, and what the run reports."""

    project: Any
    options: Options
    workdir: Path
    no_gpu: str | None
    commit: str | None
    store: Store
    statuses: dict[str, ClaimStatus]
    report: Report
    display: PlainDisplay

    def plan(self, claim: Theory, fp: dict[str, str], packages: set[str], prev: ClaimVerdict | None) -> _Plan:
        """The claim's jobs: each check (not one that needs a GPU where there is none) on each
        seed, and each control and positive control on the same seeds."""
        if prev is not None and prev.fingerprint == fp:
            prev, why = as_judged_now(claim, prev)  # (an older format: as today's rules judge its numbers)
            if why is not None:
                prev = None  # its numbers do not give what it says (edited?): nothing to compare with, or keep
        plan = _Plan(claim, fp, packages, prev, _comparable(claim, fp, prev))
        config = self.project.config
        for check in claim.checks:
            if "gpu" in check.needs and self.no_gpu:
                continue
            timeout = check_timeout(config, check, self.options)
            variants = [("", check.params, False)] + [
                (c.name, {**check.params, **c.params}, kind) for kind, group in
                enumerate((check.all_controls, check.all_positives)) for c in group]
            for variant, params, positive in variants:
                stage = self.workdir / "figures" / claim.id / check.name / variant  # (no variant: no folder)
                for seed in seeds_of(check, self.options):
                    plan.jobs.append(Job(
                        claim=claim.id, check=check.name, variant=variant, seed=seed, module=check.module,
                        function=check.function, params=params, timeout=timeout,
                        figures_dir=stage / (f"seed-{seed}" if seed else ""),
                        expected_s=_expected(prev, check.name, variant, seed), threads=check.threads,
                        needs=tuple(check.needs), positive=bool(positive),
                        **run_limits(check, timeout, self.options.device)))
        return plan

    def finish(self, plan: _Plan) -> None:
        """Judge a claim whose runs are all done, and keep its verdict (under ``--try``: show it,
        keep nothing)."""
        config, claim_id = self.project.config, plan.claim.id
        verdict = self.judge(plan)
        status = self.statuses[claim_id] = claim_status(plan.claim, verdict, plan.fingerprint)
        staged = self.workdir / "figures" / claim_id
        if self.options.trial:  # judged and shown; the committed verdict and its figures stay
            tried = config.cache / "tried" / claim_id
            shutil.rmtree(tried, ignore_errors=True)
            if staged.is_dir():
                shutil.copytree(staged, tried)
            self.report.tried.append(claim_id)
            self.display.claim(f"{claim_id}: {status.label} (tried; {config.relative(verdict_path(config, claim_id))} "
                               "left as it was)")
            return
        if claim_id in self.store.damaged:
            aside = set_aside(config, claim_id)
            if aside is not None:
                self.report.notes.append(f"{config.relative(verdict_path(config, claim_id))} was damaged "
                                         f"({self.store.damaged[claim_id]}); kept as {config.relative(aside)}")
        try:
            keep_verdict(config, verdict, staged)
        except OSError as exc:
            raise StoreError(f"cannot keep the verdict of {claim_id} in {config.relative(config.verdicts)}/: "
                             f"{exc.strerror or exc}; its previous verdict and figures are kept as they were"
                             ) from None
        self.report.written.append(claim_id)
        bad = [c for c in verdict.checks if c.outcome != "pass"]
        self.display.claim(f"{claim_id}: {status.label}"
                           + (" — " + "; ".join(f"{c.name}: {c.outcome}: {c.message}" for c in bad) if bad else ""))

    def judge(self, plan: _Plan) -> ClaimVerdict:
        """The claim's verdict from the results of its runs."""
        claim, commit = plan.claim, self.commit
        dirty = git_dirty(self.project.config.root, covered_paths(self.project.record.places[claim.id].path,
                                                                  plan.fingerprint)) if commit else None
        checks: list[CheckVerdict] = []
        kept = figures_id(self.workdir / "figures" / claim.id)  # the folder the figures will be kept in
        for check in claim.checks:
            if "gpu" in check.needs and self.no_gpu:
                checks.append(skipped_check(check, self.no_gpu, claim.clause_ids))
            else:
                checks.append(self.check_verdict(plan, check, kept))
        clauses = judge_clauses(claim, checks)
        result = claim_result(clauses, checks)
        verified_at = dt.datetime.now(dt.timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z")
        since = plan.previous.since if plan.previous is not None and plan.previous.result == result else verified_at
        return ClaimVerdict(
            claim=claim.id, outcome=worst([c.outcome for c in checks]), statement=claim.statement, checks=checks,
            fingerprint=plan.fingerprint, verified_at=verified_at, since=since,
            duration_s=round(sum(c.duration_s for c in checks), 3), seeds=sorted({r.seed for c in checks for r in c.runs}),
            git_commit=commit, git_dirty=dirty, versions=environment({*ALWAYS, *plan.packages}),
            device=_where(self.options.device, plan.results.values()), result=result, clauses=clauses)

    def check_verdict(self, plan: _Plan, check: CheckSpec, kept: str | None) -> CheckVerdict:
        """One check judged from its runs, with its figures named where they will be kept, and
        compared with its last verdict where that came from the same spec, code and environment."""
        claim, config, options = plan.claim, self.project.config, self.options
        seeds = seeds_of(check, options)

        def runs_of(variant: str) -> list[Run]:
            out = []
            for seed in seeds:
                r = plan.results[(check.name, variant, seed)]
                out.append(judge_run(check, seed, r.outcome, r.metrics, r.duration_s, r.error,
                                     r.log if r.outcome != "ok" else "", main=not variant))
            return out

        controls = [judge_control(c.name, {**check.params, **c.params}, runs_of(c.name)) for c in check.all_controls]
        positives = [judge_control(c.name, {**check.params, **c.params}, runs_of(c.name), positive=True)
                     for c in check.all_positives]
        staged = self.workdir / "figures" / claim.id / check.name
        final = figures_dir(config, claim.id) / (kept or "") / check.name
        # the check's own figures first, then those of other seeds and of controls
        figures = sorted(
            (config.relative(final / p.relative_to(staged)) for p in staged.rglob("*")
             if p.is_file() and not is_sidecar(p)),  # a figure's title and caption stay beside it
            key=lambda rel: (rel.count("/"), rel),
        ) if staged.is_dir() else []
        duration = sum(r.duration_s for (name, _v, _s), r in plan.results.items() if name == check.name)
        last = next((c for c in plan.previous.checks if c.name == check.name), None) if plan.previous else None
        prev_check = last if check.name in plan.comparable else None
        # numbers measured on another CPU's kernels (or a GPU) may move beyond the tolerance: the
        # machine's doing, not nondeterminism (the last verdict's devices: ``_where`` before workers)
        check_devices = _devices(options.device, (plan.results[(check.name, "", seed)] for seed in seeds))
        elsewhere = plan.previous.device if plan.previous is not None and prev_check is not None \
            and not set(check_devices) <= set(plan.previous.device.split(", worker", 1)[0].split("; ")) else ""
        return judge_check(check, runs_of(""), controls, timeout=check_timeout(config, check, options), figures=figures,
                           duration_s=duration, previous=prev_check, clause_ids=claim.clause_ids,
                           last_ok=last_successful(last), previous_elsewhere=elsewhere, positives=positives)


def _comparable(claim: Theory, fp: dict[str, str], prev: ClaimVerdict | None) -> set[str]:
    """The checks whose last verdict came from the same spec, code and environment (on as
    many seeds or not: compared seed by seed), so that their numbers are compared with it."""
    if prev is None:
        return set()
    out = set()
    for check in claim.checks:
        keys = [k for k in set(fp) | set(prev.fingerprint)
                if (not k.startswith("check:") or k.startswith(f"check:{check.name}:"))
                and k != f"check:{check.name}:seeds"]
        if all(fp.get(k) == prev.fingerprint.get(k) for k in keys):
            out.add(check.name)
    return out


def seeds_of(check: CheckSpec, options: Options) -> list[int]:
    """The seeds a check runs on: 0..N-1, N from ``--seeds`` or else the check's ``seeds:``."""
    return list(range(options.seeds if options.seeds is not None else check.seeds))


def _devices(device: str, results: Iterable[JobResult]) -> list[str]:
    """The devices the runs say they ran on (``recordtool.verify.kernels``), sorted; ``device``
    when none says. A plain ``cpu`` (no torch loaded) is left out beside a CPU that is named."""
    named = sorted({r.device for r in results if r.device})
    if any(d.startswith(f"{device} (") for d in named):
        named = [d for d in named if d != device]
    return named or [device]


def _where(device: str, results: Iterable[JobResult]) -> str:
    """Where the claim's runs ran: each device (several when the cluster's workers differ, or a
    claim has CPU and GPU checks), then the cluster's workers (none: this machine)."""
    results = list(results)
    where = "; ".join(_devices(device, results))
    hosts = sorted({r.host for r in results if r.host})
    if not hosts:
        return where
    return f"{where}, worker{'s' if len(hosts) > 1 else ''} {', '.join(hosts)}"
