"""`recordtool verify`: select claims, run what is not fresh, judge, keep the verdicts.

Gather first, then run: the selection, every claim's fingerprint and its verdict's state
are decided without running or importing anything (so a verify with nothing changed
returns at once). The claims left to run become jobs (each check under each seed, and each
control) for ``recordtool.verify.runner``; as soon as all of a claim's jobs are done it is judged
(``recordtool.verify.judge``) and its verdict written (``recordtool.verify.store``), so a Ctrl-C keeps
every verdict already finished.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import shutil
import subprocess
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from recordtool.atomic import sweep
from recordtool.meter import PlainDisplay
from recordtool.record.config import Config
from recordtool.record.problems import RecordError, did_you_mean_id
from recordtool.record.schema import CheckSpec, Theory
from recordtool.safetext import some
from recordtool.verify.context import is_sidecar
from recordtool.verify.fingerprint import environment
from recordtool.verify.judge import as_judged_now
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
from recordtool.verify.status import (
    add_dependencies,
    assess_claims,
    claim_ids,
    claim_status,
    run_failure,
)
from recordtool.verify.store import (
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
    ControlResult,
    Run,
    worst,
)

FAILED_OUTCOMES = ("fail", "not-reproduced", "error", "timeout", "no-power")
SHOWN_UNCHECKED = 20  # claims named in the note on those without checks (a large record has thousands)


class VerifyError(Exception):
    """A usage error of verify (an unknown id, bad options); exit status 2."""


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


# How good a claim's result is, for telling whether a run left it worse off than the verdict
# it replaces (higher is better).
RANK = {"verified": 6, "partly-verified": 5, "skipped": 4, "no-power": 3, "not-reproduced": 2, "contradicted": 1,
        "error": 0, "timeout": 0}


@dataclass
class ClaimResult:
    """One selected claim after the run: its status now, whether it was run, and the
    committed verdict it was measured against (None: there was none)."""

    claim: str
    status: ClaimStatus
    ran: bool
    cut_short: bool = False  # it was to run, and Ctrl-C came first: its last verdict stands, not rechecked
    before: ClaimVerdict | None = None

    @property
    def verified(self) -> bool:
        return self.status.state in ("verified", "skipped")

    @property
    def regressed(self) -> str | None:
        """Why this run leaves the claim worse off than its committed verdict (None: it does not).

        The committed verdicts are the baseline: a claim that the record already shows as
        contradicted is a finding, not a fault of this run. A broken check (error, timeout)
        always counts; so does a claim run for the first time that is not verified, and one
        whose result, or any clause that held, got worse."""
        verdict = self.status.verdict
        if self.status.state in ("error", "timeout"):
            return f"its check ended in {self.status.state}"
        if not self.ran or verdict is None:
            return None
        if self.before is None:
            return None if self.verified else f"{self.status.label}, with no verdict before"
        was, now = self.before.result, verdict.result
        if RANK.get(now, 0) < RANK.get(was, 0):
            return f"{self.before.summary} before, {verdict.summary} now"
        held = {c.clause for c in self.before.clauses if c.state == "verified"}
        lost = sorted(held - {c.clause for c in verdict.clauses if c.state == "verified"})
        if lost:
            return f"clause{'s' if len(lost) > 1 else ''} {', '.join(lost)} verified before, not now"
        return None


@dataclass
class Report:
    results: list[ClaimResult] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # damaged files set aside, claims without checks
    interrupted: bool = False
    written: list[str] = field(default_factory=list)  # claims whose verdict this run wrote
    tried: list[str] = field(default_factory=list)  # claims run under --try (judged, nothing written)
    duration_s: float = 0.0
    checks_run: int = 0

    @property
    def ok(self) -> bool:
        """No claim left worse off than its committed verdict (``ClaimResult.regressed``)."""
        return not self.interrupted and all(r.regressed is None for r in self.results)

    @property
    def all_verified(self) -> bool:
        """Every selected claim verified (or skipped): what ``verify --strict`` asks."""
        return not self.interrupted and all(r.verified for r in self.results)


def now_iso() -> str:
    return dt.datetime.now(dt.timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z")


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


def git_commit(root: Path) -> str | None:
    """The commit checked out at ``root`` (None: no git)."""
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True,
                                timeout=10, check=True).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return commit or None


def git_dirty(root: Path, paths: Iterable[str]) -> bool | None:
    """Whether any of ``paths`` (relative to ``root``) differs from the commit: modified,
    staged, deleted or untracked (None: no git)."""
    try:
        out = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all", "--", *sorted(set(paths))],
                             cwd=root, capture_output=True, text=True, timeout=10, check=True).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return bool(out)


def covered_paths(claim_file: str, fingerprint: dict[str, str]) -> list[str]:
    """The files a claim's fingerprint covers: the claim's own file and every source file."""
    return [claim_file, *(key[len("source:"):] for key in fingerprint if key.startswith("source:"))]


def check_timeout(config: Config, check: CheckSpec, options: Options) -> float:
    """``--timeout`` if given, else the check's ``timeout:``, else the project's default."""
    if options.timeout is not None:
        return options.timeout
    return check.timeout if check.timeout is not None else config.timeout


def _figure_stage(workdir: Path, claim: str, check: str, variant: str, seed: int, first_seed: int) -> Path:
    path = workdir / "figures" / claim / check
    if variant:
        path = path / variant
    if seed != first_seed:
        path = path / f"seed-{seed}"
    return path


def _expected(previous: ClaimVerdict | None, check: str, variant: str, seed: int) -> float:
    """The last duration of this run (or of its check), for starting the slowest first."""
    if previous is None:
        return float("inf")
    for verdict in previous.checks:
        if verdict.name != check:
            continue
        runs = verdict.runs
        if variant:
            runs = next((c.runs for c in [*verdict.controls, *verdict.positives] if c.name == variant), [])
        for run in runs:
            if run.seed == seed:
                return run.duration_s
        return verdict.duration_s
    return float("inf")


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
    if options.jobs < 1:
        raise VerifyError("-j must be at least 1")
    if options.seeds is not None and options.seeds < 1:
        raise VerifyError("--seeds must be at least 1")
    if options.timeout is not None and options.timeout <= 0:
        raise VerifyError("--timeout must be a positive number of seconds")
    config: Config = project.config
    sweep(config.verdicts)  # temporary files of a verify that died (figures left half-kept: under the lock)
    record = project.record
    ids = claim_ids(project)

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
        chosen = [i for i in chosen if has_checks(i)]

    # The selected claims and those they use: enough to say what to run and on what they rest.
    chosen_ids = set(chosen)
    used = {cited for i in chosen for cited, relation in record.cites(i) if relation == "uses"}
    needed = [i for i in ids if i in chosen_ids or i in used]
    kept = None
    if project.cached and options.seeds is None:  # as status and render read them (``recordtool.verify.kept``)
        from recordtool.verify.kept import open_kept

        kept = open_kept(config)
    store = read_store(config, needed, kept)
    statuses, prints = assess_claims(project, needed, store, seeds=options.seeds, kept=kept)
    if kept is not None:
        kept.save()

    if options.stale or options.failed:
        chosen = [i for i in chosen if
                  (options.stale and statuses[i].state in ("stale", "unchecked"))
                  or (options.failed and statuses[i].outcome in FAILED_OUTCOMES)]

    to_run: list[Theory] = []
    for claim_id in chosen:
        status = statuses[claim_id]
        if not has_checks(claim_id):
            continue
        if (options.force or options.failed or options.trial or status.state in ("stale", "unchecked")
                or (status.verdict is not None and run_failure(status.verdict) is not None)  # the machine, not the claim
                or (status.state == "skipped" and (options.device == "cuda" or _scheduler(config, options)))):
            to_run.append(claim(claim_id))

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
    workdir = config.cache / "verify-runs" / f"{os.getpid()}-{int(time.time() * 1000)}"
    try:
        executor, no_gpu = _executor(config, options, workdir, display)
    except KeyboardInterrupt:  # while connecting to a cluster: nothing ran
        return True, 0
    with contextlib.closing(executor), locked(config):
        sweep_store(config)  # what a run that died left half-written
        # Read again under the lock: another run may have written since.
        store = read_store(config, [c.id for c in to_run])
        previous = {**previous, **store.verdicts}
        commit = git_commit(config.root)
        plans: dict[str, _Plan] = {}
        jobs: list[Job] = []
        for claim in to_run:
            fp, packages = prints[claim.id]
            prev = previous.get(claim.id)
            if prev is not None and prev.fingerprint == fp:
                prev, why = as_judged_now(claim, prev)  # (an older format: as today's rules judge its numbers)
                if why is not None:
                    prev = None  # its numbers do not give what it says (edited?): nothing to compare with, or keep
            comparable = set()
            if prev is not None:
                for check in claim.checks:
                    # the same check, code and environment; on as many seeds or not (compared seed by seed)
                    keys = [k for k in set(fp) | set(prev.fingerprint)
                            if (not k.startswith("check:") or k.startswith(f"check:{check.name}:"))
                            and k != f"check:{check.name}:seeds"]
                    if all(fp.get(k) == prev.fingerprint.get(k) for k in keys):
                        comparable.add(check.name)
            plan = _Plan(claim, fp, packages, prev, comparable)
            for check in claim.checks:
                if "gpu" in check.needs and no_gpu:
                    continue
                timeout = check_timeout(config, check, options)
                variants = [("", check.params, False)] + [
                    (c.name, {**check.params, **c.params}, kind) for kind, group in
                    enumerate((check.all_controls, check.all_positives)) for c in group]
                for variant, params, positive in variants:
                    for seed in seeds_of(check, options):
                        plan.jobs.append(Job(
                            claim=claim.id, check=check.name, variant=variant, seed=seed, module=check.module,
                            function=check.function, params=params, timeout=timeout,
                            figures_dir=_figure_stage(workdir, claim.id, check.name, variant, seed, 0),
                            expected_s=_expected(prev, check.name, variant, seed), threads=check.threads,
                            needs=tuple(check.needs), positive=bool(positive)))
            plans[claim.id] = plan
            jobs.extend(plan.jobs)

        def finish(plan: _Plan) -> None:
            dirty = git_dirty(config.root, covered_paths(project.record.places[plan.claim.id].path,
                                                         plan.fingerprint)) if commit else None
            verdict = _judge(config, options, plan, workdir, commit, dirty, no_gpu)
            claim_id = plan.claim.id
            if options.trial:  # judged and shown; the committed verdict and its figures stay
                tried = config.cache / "tried" / claim_id
                shutil.rmtree(tried, ignore_errors=True)
                if (workdir / "figures" / claim_id).is_dir():
                    shutil.copytree(workdir / "figures" / claim_id, tried)
                report.tried.append(claim_id)
                status = claim_status(plan.claim, verdict, plan.fingerprint)
                statuses[claim_id] = status
                display.claim(f"{claim_id}: {status.label} (tried; {config.relative(verdict_path(config, claim_id))} "
                              "left as it was)")
                return
            if claim_id in store.damaged:
                aside = set_aside(config, claim_id)
                if aside is not None:
                    report.notes.append(
                        f"{config.relative(verdict_path(config, claim_id))} was damaged "
                        f"({store.damaged[claim_id]}); kept as {config.relative(aside)}")
            try:
                keep_verdict(config, verdict, workdir / "figures" / claim_id)
            except OSError as exc:
                raise StoreError(f"cannot keep the verdict of {claim_id} in {config.relative(config.verdicts)}/: "
                                 f"{exc.strerror or exc}; its previous verdict and figures are kept as they were"
                                 ) from None
            report.written.append(claim_id)
            status = claim_status(plan.claim, verdict, plan.fingerprint)
            statuses[claim_id] = status
            line = f"{claim_id}: {status.label}"
            bad = [c for c in verdict.checks if c.outcome != "pass"]
            if bad:
                line += " — " + "; ".join(f"{c.name}: {c.outcome}: {c.message}" for c in bad)
            display.claim(line)

        finished = 0
        try:
            for plan in plans.values():
                if not plan.jobs:
                    finish(plan)
            results = executor.run(jobs)
            try:
                for result in results:
                    finished += 1
                    plan = plans[result.job.claim]
                    plan.results[(result.job.check, result.job.variant, result.job.seed)] = result
                    if len(plan.results) == len(plan.jobs):
                        finish(plan)
            finally:
                results.close()
        except KeyboardInterrupt:
            return True, finished
        finally:
            display.close()
            shutil.rmtree(workdir, ignore_errors=True)
    return False, finished


def seeds_of(check: CheckSpec, options: Options) -> list[int]:
    """The seeds a check runs on: 0..N-1, N from ``--seeds`` or else the check's ``seeds:``."""
    return list(range(options.seeds if options.seeds is not None else check.seeds))


def _judge(config: Config, options: Options, plan: _Plan, workdir: Path,
           commit: str | None, dirty: bool | None, no_gpu: str | None) -> ClaimVerdict:
    claim = plan.claim
    checks: list[CheckVerdict] = []
    clause_ids = claim.clause_ids
    kept = figures_id(workdir / "figures" / claim.id)  # the folder the figures will be kept in
    all_seeds: set[int] = set()
    for check in claim.checks:
        if "gpu" in check.needs and no_gpu:
            checks.append(skipped_check(check, no_gpu, clause_ids))
            continue
        seeds = seeds_of(check, options)
        all_seeds.update(seeds)

        def runs_of(variant: str, check: CheckSpec = check, seeds: list[int] = seeds) -> list[Run]:
            out = []
            for seed in seeds:
                r = plan.results[(check.name, variant, seed)]
                out.append(judge_run(check, seed, r.outcome, r.metrics, r.duration_s, r.error,
                                     r.log if r.outcome != "ok" else "", main=not variant))
            return out

        runs = runs_of("")
        check_devices = _devices(options.device, (plan.results[(check.name, "", seed)] for seed in seeds))
        controls: list[ControlResult] = [judge_control(c.name, {**check.params, **c.params}, runs_of(c.name))
                                         for c in check.all_controls]
        positives = [judge_control(c.name, {**check.params, **c.params}, runs_of(c.name), positive=True)
                     for c in check.all_positives]
        staged = workdir / "figures" / claim.id / check.name
        final = figures_dir(config, claim.id) / (kept or "") / check.name
        # the check's own figures first, then those of other seeds and of controls
        figures = sorted(
            (config.relative(final / p.relative_to(staged)) for p in staged.rglob("*")
             if p.is_file() and not is_sidecar(p)),  # a figure's title and caption stay beside it
            key=lambda rel: (rel.count("/"), rel),
        ) if staged.is_dir() else []
        duration = sum(r.duration_s for (name, _v, _s), r in plan.results.items() if name == check.name)
        prev_check = None
        if plan.previous is not None and check.name in plan.comparable:
            prev_check = next((c for c in plan.previous.checks if c.name == check.name), None)
        last = next((c for c in plan.previous.checks if c.name == check.name), None) if plan.previous else None
        # numbers measured on another CPU's kernels (or a GPU) may differ beyond the tolerance:
        # that is the machine's doing, not nondeterminism (docs/verdicts.md)
        elsewhere = plan.previous.device if plan.previous is not None and prev_check is not None \
            and not set(check_devices) <= set(_devices_of(plan.previous.device)) else ""
        checks.append(judge_check(check, runs, controls, timeout=check_timeout(config, check, options),
                                  figures=figures, duration_s=duration, previous=prev_check,
                                  clause_ids=clause_ids, last_ok=last_successful(last),
                                  previous_elsewhere=elsewhere, positives=positives))
    outcome = worst([c.outcome for c in checks])
    clauses = judge_clauses(claim, checks)
    result = claim_result(clauses, checks)
    verified_at = now_iso()
    since = verified_at
    if plan.previous is not None and plan.previous.result == result:
        since = plan.previous.since
    return ClaimVerdict(
        claim=claim.id,
        outcome=outcome,
        statement=claim.statement,
        checks=checks,
        fingerprint=plan.fingerprint,
        verified_at=verified_at,
        since=since,
        duration_s=round(sum(c.duration_s for c in checks), 3),
        seeds=sorted(all_seeds),
        git_commit=commit,
        git_dirty=dirty,
        versions=environment(plan.packages),
        device=_where(options.device, plan.results.values()),
        result=result,
        clauses=clauses,
    )


def _devices(device: str, results: Iterable[JobResult]) -> list[str]:
    """The devices the runs say they ran on (``cpu (Intel(R) Xeon(R) Processor, AVX512, kernels
    52b68cb2)``: ``recordtool.verify.kernels``), sorted; ``device`` when none says. A plain ``cpu``
    (a run that never loaded torch) is left out beside a CPU that is named."""
    named = sorted({r.device for r in results if r.device})
    if any(d.startswith(f"{device} (") for d in named):
        named = [d for d in named if d != device]
    return named or [device]


def _devices_of(where: str) -> list[str]:
    """A verdict's devices (``_where``), without the cluster's workers named after them."""
    return where.split(", worker", 1)[0].split("; ")


def _where(device: str, results: Iterable[JobResult]) -> str:
    """Where the claim's runs ran: each device (several when the cluster's workers differ, or a
    claim has CPU and GPU checks), then the cluster's workers (none: this machine)."""
    results = list(results)
    where = "; ".join(_devices(device, results))
    hosts = sorted({r.host for r in results if r.host})
    if not hosts:
        return where
    return f"{where}, worker{'s' if len(hosts) > 1 else ''} {', '.join(hosts)}"



def format_report(report: Report) -> str:
    """One line per selected claim, then the counts with their denominators."""
    width = max([len(r.claim) for r in report.results] + [8])
    lines = []
    for result in report.results:
        status, verdict = result.status, result.status.verdict
        how = "ran" if result.ran else ("fresh" if verdict is not None and status.state != "stale" else "not run")
        if result.cut_short:
            how = "not rerun: interrupted"
        elif result.claim in report.tried:
            how = "tried"
        line = f"{result.claim:<{width}}  {status.label:<9}  {how}"
        if verdict is not None and result.ran:
            line += f" in {verdict.duration_s:.1f} s"
        elif verdict is not None and status.state != "stale" and not result.cut_short:
            line += f", since {verdict.since}"
        bad = [c for c in verdict.checks if c.outcome != "pass"] if verdict is not None else []
        if bad and status.state != "stale":
            line += " — " + "; ".join(f"{c.name}: {c.outcome}: {c.message}" for c in bad)
        if status.reasons:
            line += " — " + ", ".join(status.reasons)
        if status.depends:
            line += " — uses " + ", ".join(f"{d} ({s})" for d, s in status.depends)
        lines.append(line)
    total = len(report.results)
    verified = sum(1 for r in report.results if r.status.state == "verified")
    others: dict[str, int] = {}
    for r in report.results:
        if r.status.state != "verified":
            others[r.status.state] = others.get(r.status.state, 0) + 1
    tail = f"verified {verified} of {total} selected claim{'s' if total != 1 else ''}"
    if others:
        tail += " (" + ", ".join(f"{n} {s}" for s, n in sorted(others.items())) + ")"
    tail += f"; ran {report.checks_run} check run{'s' if report.checks_run != 1 else ''} in {report.duration_s:.1f} s"
    lines.append(tail)
    for r in report.results:
        why = r.regressed
        if why is not None:
            lines.append(f"worse than committed: {r.claim}: {why}")
    if report.interrupted:
        lines.append(f"interrupted: kept {len(report.written)} finished verdict{'s' if len(report.written) != 1 else ''}")
    if report.tried:
        lines.append("tried, not kept: the committed verdicts and figures are as they were "
                     "(the figures of the try are in the cache's tried/ folder)")
    return "\n".join(lines)


def report_json(report: Report) -> dict[str, Any]:
    from recordtool.verify.status import status_json

    data = status_json({r.claim: r.status for r in report.results})
    ran = {r.claim for r in report.results if r.ran}
    for claim in data["claims"]:  # type: ignore[attr-defined]
        claim["ran"] = claim["claim"] in ran
    data.update({"ok": report.ok, "all_verified": report.all_verified,
                 "worse": {r.claim: r.regressed for r in report.results if r.regressed is not None},
                 "interrupted": report.interrupted, "notes": report.notes,
                 "checks_run": report.checks_run, "duration_s": round(report.duration_s, 3)})
    return data
