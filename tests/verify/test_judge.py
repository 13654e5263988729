"""Judging measured numbers against a claim's expectations: power, seeds, quorum, clauses,
tolerance, NaN and infinities (the rules of docs/verdicts.md), each with its exact outcome
and message."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from typing import Any

from recordtool.record.schema import CheckSpec, Theory, Tolerance
from recordtool.verify.judge import as_judged_now, unsupported
from recordtool.verify.rules import (
    claim_result,
    close,
    judge_check,
    judge_clauses,
    judge_control,
    judge_run,
    last_successful,
)
from recordtool.verify.verdict import CheckVerdict, ClaimVerdict, ControlResult, Run, label, worst

SPEC = CheckSpec(name="small", run="checks.fake:ok", expect={"err": "< 0.5", "n": ">= 2"},
                 control={"name": "broken", "params": {"broken": True}})


def run(err: object, n: object = 3, seed: int = 0, spec: CheckSpec = SPEC, main: bool = True, **more: Any) -> Run:
    return judge_run(spec, seed, "ok", {"err": err, "n": n, **more}, 0.1, main=main)


def control(*runs: Run, name: str = "broken") -> ControlResult:
    return judge_control(name, {"broken": True}, list(runs))


def planted(*runs: Run, name: str = "planted") -> ControlResult:
    """A positive control of the check: the claim is known to hold under it."""
    return judge_control(name, {"planted": True}, list(runs), positive=True)


def holding(spec: CheckSpec = SPEC, seeds: int = 1) -> list[ControlResult]:
    """A positive control that holds every expectation of ``spec`` on ``seeds`` seeds."""
    values = {"err": 0.1, "n": 3, "k": 3.0}
    return [planted(*(judge_run(spec, s, "ok", {m: values.get(m, 1.0) for m in [*spec.expect, *spec.degenerate,
                                                                                *spec.observe]}, 0.1, main=False)
                      for s in range(seeds)))]


def check(runs: list[Run], controls: list[ControlResult] | None = None, previous: CheckVerdict | None = None,
          spec: CheckSpec = SPEC, clause_ids: list[str] | None = None,
          positives: list[ControlResult] | None = None) -> CheckVerdict:
    return judge_check(spec, runs, controls or [], timeout=5, figures=[], duration_s=0.1, previous=previous,
                       clause_ids=clause_ids, positives=positives)


def spec(**fields: Any) -> CheckSpec:
    return CheckSpec.model_validate({"name": "small", "run": "checks.fake:ok", **fields})


def test_pass_needs_power_from_a_control() -> None:
    broken = control(run(0.9, n=1))
    assert broken.outcome == "failed-as-required"
    verdict = check([run(0.1)], [broken])
    assert (verdict.outcome, verdict.message) == ("pass", "2 expectations with power hold")
    assert [(e.metric, e.state, e.power, e.holds_on, e.spread) for e in verdict.expectations] == [
        ("err", "holds", ["control 'broken'"], 1, [0.1, 0.1, 0.1]),
        ("n", "holds", ["control 'broken'"], 1, [3.0, 3.0, 3.0])]


def test_an_expectation_that_holds_under_every_control_has_no_power_and_decides_nothing() -> None:
    # n >= 2 holds under the control too: it decides nothing, err alone decides
    verdict = check([run(0.1)], [control(run(0.9, n=3))])
    assert (verdict.outcome, verdict.message) == (
        "pass", "1 expectation with power holds; 1 without power decides nothing (n)")
    assert [(e.metric, e.state, e.power) for e in verdict.expectations] == [
        ("err", "holds", ["control 'broken'"]), ("n", "no-power", [])]
    # failing without power decides nothing either
    assert check([run(0.1, n=0)], [control(run(0.9, n=3))]).outcome == "pass"
    # power means failing under the control on EVERY seed: holding on one seed of it is enough to lose it
    verdict = check([run(0.1, seed=0), run(0.1, seed=1)], [control(run(0.9, n=1, seed=0), run(0.2, n=1, seed=1))])
    assert [(e.metric, e.state) for e in verdict.expectations] == [("err", "no-power"), ("n", "holds")]
    # when nothing has power, the check cannot tell
    verdict = check([run(0.1)], [control(run(0.1, n=3))])
    assert (verdict.outcome, verdict.message) == (
        "no-power", "no expectation has power: none fails on every seed of a control or of its null")
    verdict = check([run(0.1)])
    assert (verdict.outcome, verdict.message) == (
        "no-power", "no expectation has power: the check has no control and no null")


def test_a_metric_undefined_under_a_control_gives_it_no_power() -> None:
    # NaN fails 'err < 0.5' on every seed of the control, yet measures nothing that could go wrong
    verdict = check([run(0.1)], [control(run(math.nan))])
    first = verdict.expectations[0]
    assert (first.metric, first.state, first.power) == ("err", "no-power", [])
    verdict = check([run(0.1)], [control(run(math.nan), name="undefined"), control(run(0.9))])
    assert verdict.expectations[0].power == ["control 'broken'"]
    nulled = spec(expect={"k": {"is": "> 2", "null": "k_null"}})
    verdict = check([run(0.1, spec=nulled, k=3.0, k_null=math.nan)], spec=nulled)
    assert (verdict.expectations[0].state, verdict.expectations[0].power) == ("no-power", [])


def test_a_declared_null_gives_power() -> None:
    nulled = spec(expect={"k": {"is": "> 2", "null": "k_null"}})
    verdict = check([run(0.1, spec=nulled, k=3.0, k_null=1.0, seed=s) for s in range(2)], spec=nulled)
    assert (verdict.outcome, verdict.message) == ("pass", "1 expectation with power holds on every one of 2 seeds")
    assert verdict.expectations[0].power == ["null k_null"]
    assert verdict.runs[0].expectations[0].null == 1.0 and verdict.runs[0].expectations[0].null_holds is False
    # a null that satisfies the expectation on one seed gives no power
    verdict = check([run(0.1, spec=nulled, k=3.0, k_null=1.0, seed=0), run(0.1, spec=nulled, k=3.0, k_null=2.5,
                                                                           seed=1)], spec=nulled)
    assert (verdict.outcome, verdict.expectations[0].power) == ("no-power", [])
    # a null the check does not return is an error that names it
    missing = judge_run(nulled, 0, "ok", {"k": 3.0}, 0.1)
    assert (missing.outcome, missing.error) == (
        "error", "metric 'k_null' missing, the null of 'k' (the check returned: k)")
    # a control's run need not return the null
    assert judge_run(nulled, 0, "ok", {"k": 3.0}, 0.1, main=False).outcome == "ok"


def test_fail_names_the_expectation_and_the_seed() -> None:
    broken = control(run(0.9, n=1))
    verdict = check([run(0.7)], [broken], positives=holding())
    assert (verdict.outcome, verdict.message) == ("fail", "err = 0.7, expected < 0.5")
    verdict = check([run(0.1, seed=0), run(0.8, seed=1)], [control(run(0.9, n=1, seed=0), run(0.9, n=1, seed=1))],
                    positives=holding(seeds=2))
    assert (verdict.outcome, verdict.message) == ("fail", "err = 0.8, expected < 0.5 (seed 1)")


def test_a_quorum_of_two_of_three_seeds() -> None:
    quorum = spec(expect={"err": "< 0.5"}, seeds=3, quorum=2, control={"params": {"broken": True}})
    controls = [judge_control("control", {}, [run(0.9, spec=quorum, seed=s) for s in range(3)])]
    two = check([run(v, spec=quorum, seed=s) for s, v in enumerate([0.1, 0.8, 0.2])], controls, spec=quorum)
    assert (two.outcome, two.message) == ("pass", "1 expectation with power holds on at least 2 of 3 seeds")
    assert (two.expectations[0].holds_on, two.expectations[0].required, two.required) == (2, 2, 2)
    assert two.expectations[0].spread == [0.1, 0.2, 0.8]
    one = check([run(v, spec=quorum, seed=s) for s, v in enumerate([0.1, 0.8, 0.9])], controls, spec=quorum,
                positives=holding(quorum, 3))
    assert (one.outcome, one.message) == ("fail", "err = 0.8, expected < 0.5 (seed 1); holds on 1 of 3 seeds, quorum 2")
    # without a quorum every seed must hold
    every = spec(expect={"err": "< 0.5"}, seeds=3, control={"params": {"broken": True}})
    verdict = check([run(v, spec=every, seed=s) for s, v in enumerate([0.1, 0.8, 0.2])], controls, spec=every,
                    positives=holding(every, 3))
    assert (verdict.outcome, verdict.message) == ("fail", "err = 0.8, expected < 0.5 (seed 1)")


def test_nan_never_satisfies_and_infinities_compare() -> None:
    broken = control(run(0.9, n=1))
    verdict = check([run(math.nan)], [broken], positives=holding())
    assert (verdict.outcome, verdict.message) == ("fail", "err = nan, expected < 0.5")
    assert (verdict.expectations[0].spread, verdict.expectations[0].nans) == (None, 1)
    # NaN under a control fails the expectation too: it gives power, it does not take it
    assert check([run(0.1)], [control(run(math.nan, n=1))]).outcome == "pass"
    inf = spec(expect={"err": "> 1"}, control={"params": {}})
    verdict = check([run(math.inf, spec=inf)], [judge_control("control", {}, [run(-math.inf, spec=inf)])], spec=inf)
    assert (verdict.outcome, verdict.expectations[0].spread) == ("pass", [math.inf, math.inf, math.inf])


def test_missing_and_non_numeric_metrics_are_errors_that_name_them() -> None:
    missing = judge_run(SPEC, 0, "ok", {"n": 3}, 0.1)
    assert missing.outcome == "error"
    assert missing.error == "metric 'err' missing (the check returned: n)"
    text = check([run("small")])
    assert (text.outcome, text.message) == ("error", "metric 'err' is the string 'small', not a number")
    assert [e.state for e in text.expectations] == ["error", "error"]
    listed = check([run([1.0, 2.0])])
    assert listed.message == "metric 'err' is a list of 2 values, not a number"


def test_errors_and_timeouts_of_controls() -> None:
    broken = judge_control("broken", {}, [judge_run(SPEC, 0, "timeout", {}, 5, "ran past")])
    verdict = check([run(0.1)], [broken])
    assert (verdict.outcome, verdict.message) == (
        "timeout", "control 'broken': ran past its 5 s timeout; raise the limit with 'timeout:' in the check's YAML "
        "or 'verify --timeout S'")
    told = judge_check(SPEC, [run(0.1)], [broken], timeout=5, figures=[], duration_s=1,
                       last_ok=last_successful(check([run(0.1)], [control(run(0.9, main=False))])))
    assert told.message.startswith("control 'broken': ran past its 5 s timeout; its last successful run took 0.1 s; ")
    crashed = judge_control("broken", {}, [judge_run(SPEC, 0, "error", {}, 5, "Traceback\n  x\nKeyError: 'a'")])
    assert check([run(0.1)], [crashed]).message == "control 'broken': raised KeyError: 'a'"
    # a failure with power stands even when another control broke
    assert check([run(0.7)], [control(run(0.9, n=1)), crashed], positives=holding()).outcome == "fail"


def test_degenerate_runs_are_flagged() -> None:
    flagged = spec(expect={"err": "< 0.5"}, degenerate={"loss_drop": "< 0.1"}, seeds=2,
                   controls=[{"name": "no-repeats", "params": {"broken": True}}])
    runs = [run(0.1, spec=flagged, seed=s, loss_drop=1.0) for s in range(2)]
    dead = judge_control("no-repeats", {}, [run(0.9, spec=flagged, seed=s, loss_drop=0.01) for s in range(2)])
    assert [r.degenerate for r in dead.runs] == [["loss_drop < 0.1"], ["loss_drop < 0.1"]]
    verdict = check(runs, [dead], spec=flagged)
    # a degenerate control gives no power: its failing shows nothing the measurement could get wrong
    assert (verdict.outcome, verdict.message) == (
        "no-power", "no expectation has power: none fails on every seed of a control or of its null; its only "
                    "power is degenerate (control 'no-repeats'); control 'no-repeats' is degenerate on seeds 0, 1")
    assert [(e.state, e.power, e.degenerate_power) for e in verdict.expectations] == [
        ("no-power", [], ["control 'no-repeats'"])]
    assert judge_run(flagged, 0, "ok", {"err": 0.1}, 0.1).error == (
        "metric 'loss_drop' missing, named under degenerate (the check returned: err)")


def test_tolerance_boundary() -> None:
    tolerance = Tolerance(rel=1e-6, abs=1e-9)
    assert close(1.0, 1.0 + 1e-6, tolerance)  # |a-b| = 1e-6 <= 1e-9 + 1e-6 * (1 + 1e-6)
    assert not close(1.0, 1.0 + 1.1e-6, tolerance)
    assert close(0.0, 1e-9, tolerance) and not close(0.0, 1.1e-9, tolerance)  # abs near zero
    assert close(2.22e-16, 3.33e-16, tolerance)  # noise, not nondeterminism
    assert close(math.nan, math.nan, tolerance) and not close(math.nan, 0.0, tolerance)
    assert close(math.inf, math.inf, tolerance) and not close(math.inf, -math.inf, tolerance)
    assert close([1.0, 2.0], [1.0, 2.0 + 1e-12], tolerance) and not close([1.0], [1.0, 2.0], tolerance)
    assert close(True, True, tolerance) and not close(True, 1.0, tolerance)


def test_reruns_are_compared_within_the_tolerance() -> None:
    broken = control(run(0.9, n=1))
    first = check([run(0.1)], [broken])
    assert not check([run(0.1 * (1 + 1e-7))], [broken], previous=first).nondeterministic
    again = check([run(0.1 * (1 + 1e-5))], [broken], previous=first)
    assert again.nondeterministic
    assert again.message == ("2 expectations with power hold; seed 0 gave different numbers than last time "
                             "(err 0.1 then 0.100001, beyond the tolerance): nondeterministic")
    loose = spec(expect={"err": "< 0.5", "n": ">= 2"}, tolerance={"rel": 1e-3}, control={"params": {}})
    assert not check([run(0.1 * (1 + 1e-5), spec=loose)], [broken], previous=first, spec=loose).nondeterministic
    assert not check([run(math.nan)], previous=check([run(math.nan)])).nondeterministic


def test_numbers_from_another_machine_beyond_the_tolerance_are_the_machines_not_nondeterminism() -> None:
    broken = control(run(0.9, n=1))
    first = check([run(0.1)], [broken])
    elsewhere = judge_check(SPEC, [run(0.1 * (1 + 1e-5))], [broken], timeout=5, figures=[], duration_s=0.1,
                            previous=first, previous_elsewhere="cpu (x86_64, AVX2)")
    assert not elsewhere.nondeterministic
    assert elsewhere.message == ("2 expectations with power hold; seed 0 gave different numbers than last time on "
                                 "cpu (x86_64, AVX2) (err 0.1 then 0.100001, beyond the tolerance): they depend on "
                                 "the machine")
    within = judge_check(SPEC, [run(0.1 * (1 + 1e-7))], [broken], timeout=5, figures=[], duration_s=0.1,
                         previous=first, previous_elsewhere="cpu (x86_64, AVX2)")
    assert within.message == "2 expectations with power hold" and not within.nondeterministic


TWO_CLAUSES = Theory.model_validate({
    "id": "THEORY-1", "kind": "theory", "statement": "A and B.", "clauses": {"a": "A.", "b": "B."},
    "checks": [{"name": "small", "run": "checks.fake:ok", "expect": {"err": {"is": "< 0.5", "clause": "a"}}}],
})


def test_a_clause_with_no_expectation_is_untested_and_the_claim_partly_verified() -> None:
    check_spec = TWO_CLAUSES.checks[0]
    verdict = check([run(0.1, spec=check_spec)], [control(run(0.9, spec=check_spec))], spec=check_spec,
                    clause_ids=TWO_CLAUSES.clause_ids)
    clauses = judge_clauses(TWO_CLAUSES, [verdict])
    assert [(c.clause, c.text, c.state, [(e.check, e.metric, e.state) for e in c.evidence]) for c in clauses] == [
        ("a", "A.", "verified", [("small", "err", "holds")]), ("b", "B.", "untested", [])]
    result = claim_result(clauses, [verdict])
    assert (result, label(result, clauses)) == ("partly-verified", "partly verified: 1 of 2 clauses")


def test_clause_verdicts_and_the_claim_result() -> None:
    claim = Theory.model_validate({
        "id": "THEORY-1", "kind": "theory", "statement": "A, B, C and D.",
        "clauses": {"a": "A.", "b": "B.", "c": "C.", "d": "D."},
        "checks": [{"name": "small", "run": "checks.fake:ok", "control": {"params": {}},
                    "expect": {"err": {"is": "< 0.5", "clause": ["a", "b"]}, "n": {"is": ">= 2", "clause": "c"}},
                    "observe": {"curve": "d"}}],
    })
    check_spec = claim.checks[0]

    def judged(err: float, n: float, control_n: float, positive: bool = True) -> tuple[str, list[str], str]:
        verdict = check([run(err, n, spec=check_spec, curve=1.0)], [control(run(0.9, control_n, spec=check_spec, main=False))],
                        spec=check_spec, clause_ids=claim.clause_ids,
                        positives=holding(check_spec) if positive else [])
        clauses = judge_clauses(claim, [verdict])
        result = claim_result(clauses, [verdict])
        return result, [c.state for c in clauses], label(result, clauses)

    assert judged(0.1, 3, 1) == ("partly-verified", ["verified", "verified", "verified", "observed"],
                                 "partly verified: 3 of 4 clauses")
    assert judged(0.1, 3, 3) == ("partly-verified", ["verified", "verified", "observed", "observed"],
                                 "partly verified: 2 of 4 clauses")
    assert judged(0.1, 1, 1) == ("contradicted", ["verified", "verified", "contradicted", "observed"],
                                 "contradicted: 1 of 4 clauses")
    # failing with power but no positive control: the test was never shown able to pass
    assert judged(0.1, 1, 1, positive=False) == (
        "partly-verified", ["verified", "verified", "not-reproduced", "observed"], "partly verified: 2 of 4 clauses")
    assert judged(0.7, 1, 1, positive=False) == (
        "not-reproduced", ["not-reproduced", "not-reproduced", "not-reproduced", "observed"], "not reproduced")
    one = Theory.model_validate({"id": "THEORY-2", "kind": "theory", "statement": "S.",
                                 "checks": [{"name": "small", "run": "checks.fake:ok", "expect": {"err": "< 0.5"}}]})
    verdict = check([run(0.1, spec=one.checks[0])], [control(run(0.9, spec=one.checks[0]))], spec=one.checks[0])
    clauses = judge_clauses(one, [verdict])
    assert (claim_result(clauses, [verdict]), label("verified", clauses)) == ("verified", "verified")
    nothing = check([run(0.1, spec=one.checks[0])], spec=one.checks[0])
    assert claim_result(judge_clauses(one, [nothing]), [nothing]) == "no-power"


def test_the_worked_example_of_docs_verdicts() -> None:
    """docs/verdicts.md's worked example, number for number: the four cases (a validated
    pass, a contradiction, no power from a degenerate control, not reproduced)."""
    claim = Theory.model_validate({
        "id": "THEORY-1", "kind": "theory",
        "statement": "The model has a previous-token head and induction heads, which K-compose with it "
                     "and with a recent-tokens head.",
        "clauses": {"previous-token": "A first-layer head attends to the previous token.",
                    "induction": "Second-layer heads attend to the token after an earlier occurrence.",
                    "k-composition": "The induction heads K-compose with the previous-token head.",
                    "recent-tokens": "A first-layer head attends over the last several tokens."},
        "checks": [{"name": "induction", "run": "checks.induction:measure", "seeds": 3, "quorum": 2,
                    "setting": "two-layer attention-only toy, d_model 64, trained on repeated random tokens",
                    "analogue": True,
                    "expect": {"previous_token_score": {"is": "> 0.4", "clause": "previous-token"},
                               "n_induction_heads": {"is": ">= 1", "clause": "induction"},
                               "k_comp_over_baseline": {"is": "> 2", "clause": "k-composition",
                                                        "null": "k_comp_null"},
                               "recent_score": {"is": "> 0.5", "clause": "recent-tokens"}},
                    "degenerate": {"loss_drop": "< 0.1"},
                    "controls": [{"name": "untrained", "params": {"train": False}},
                                 {"name": "shuffled", "params": {"data": "shuffled"}}],
                    "positives": [{"name": "planted", "params": {"plant": "induction"}}]}],
    })
    spec_ = claim.checks[0]
    names = ["previous_token_score", "n_induction_heads", "k_comp_over_baseline", "recent_score", "loss_drop"]

    def runs(rows: list[tuple[float, ...]], main: bool = False) -> list[Run]:
        return [judge_run(spec_, seed, "ok", {**dict(zip(names, row, strict=False)),
                                              **({"k_comp_null": row[-1]} if main else {})}, 1.0, main=main)
                for seed, row in enumerate(rows)]

    main = runs([(0.59, 4, 1.5, 0.2, 1.8, 1.0), (0.31, 4, 1.7, 0.3, 1.7, 1.1), (0.58, 3, 2.1, 0.25, 1.9, 0.9)],
                main=True)
    untrained = runs([(0.05, 0, 1.0, 0.1, 0.0), (0.06, 0, 1.1, 0.1, 0.0), (0.04, 0, 0.9, 0.1, 0.0)])
    shuffled = runs([(0.1, 2, 1.2, 0.15, 1.2), (0.12, 1, 1.0, 0.2, 1.1), (0.09, 3, 1.1, 0.1, 1.3)])
    plant = runs([(0.9, 4, 3.1, 0.3, 1.8), (0.92, 4, 3.3, 0.35, 1.8), (0.91, 4, 2.9, 0.3, 1.8)])
    verdict = check(main, [judge_control("untrained", {"train": False}, untrained),
                           judge_control("shuffled", {"data": "shuffled"}, shuffled)], spec=spec_,
                    clause_ids=claim.clause_ids, positives=[planted(*plant)])
    assert (verdict.outcome, verdict.message) == (
        "fail", "k_comp_over_baseline = 1.5, expected > 2 (seed 0); holds on 1 of 3 seeds, quorum 2; not reproduced: "
                "recent_score = 0.2, expected > 0.5 (seed 0); holds on 0 of 3 seeds, quorum 2; the test was never "
                "shown able to pass (no positive control holds it on every seed); 1 without power decides nothing "
                "(n_induction_heads [only degenerate power: control 'untrained']); control 'untrained' is degenerate "
                "on seeds 0, 1, 2")
    assert [(e.metric, e.state, e.holds_on, e.power, e.sensitivity, e.degenerate_power)
            for e in verdict.expectations] == [
        ("previous_token_score", "holds", 2, ["control 'shuffled'"], ["positive 'planted'"], ["control 'untrained'"]),
        ("n_induction_heads", "no-power", 3, [], ["positive 'planted'"], ["control 'untrained'"]),
        ("k_comp_over_baseline", "fails", 1, ["control 'shuffled'", "null k_comp_null"], ["positive 'planted'"],
         ["control 'untrained'"]),
        ("recent_score", "not-reproduced", 0, ["control 'shuffled'"], [], ["control 'untrained'"])]
    assert (verdict.setting, verdict.analogue) == (
        "two-layer attention-only toy, d_model 64, trained on repeated random tokens", True)
    clauses = judge_clauses(claim, [verdict])
    assert [(c.clause, c.state) for c in clauses] == [
        ("previous-token", "verified"), ("induction", "observed"), ("k-composition", "contradicted"),
        ("recent-tokens", "not-reproduced")]
    result = claim_result(clauses, [verdict])
    assert label(result, clauses, analogue=True) == "contradicted: 1 of 4 clauses"
    # without the contradiction (k-composition holding on the planted and the trained model alike)
    assert label("partly-verified", clauses[:1] + clauses[2:3], analogue=True) == (
        "partly verified in the lab's analogue: 1 of 2 clauses")


def test_a_long_list_kept_whole_compares_as_its_summary() -> None:
    from recordtool.verify.limits import bound_value

    curve = [4.0 - i / 100 for i in range(300)]
    tolerance = Tolerance()
    assert close(curve, bound_value(curve), tolerance) and close(bound_value(curve), curve, tolerance)
    assert not close(curve, bound_value([x + 0.5 for x in curve]), tolerance)
    assert not close(curve[:60], bound_value(curve), tolerance)


def _claim_verdict(claim: Theory, checks: list[CheckVerdict]) -> ClaimVerdict:
    clauses = judge_clauses(claim, checks)
    seeds = sorted({run.seed for c in checks for run in c.runs})
    return ClaimVerdict(claim=claim.id, outcome=worst([c.outcome for c in checks]), statement=claim.statement,
                        checks=checks, fingerprint={}, verified_at="2026-12-01T00:00:00Z",
                        since="2026-12-01T00:00:00Z", duration_s=0.1, seeds=seeds, git_commit=None, git_dirty=None,
                        versions={}, device="cpu", result=claim_result(clauses, checks), clauses=clauses)


def test_a_verdict_judged_again_from_its_own_numbers_gives_what_it_says_or_says_what_differs() -> None:
    """``unsupported``: a verdict the judge made comes out the same; each hand edit that would
    put a result on a page that the numbers do not give is named (a failing number marked as
    holding, a number shown that the metrics do not hold, a control said to fail, a check,
    a clause or the claim made to pass)."""
    claim = Theory.model_validate({
        "id": "THEORY-1", "kind": "theory", "statement": "A and B.", "clauses": {"a": "A.", "b": "B."},
        "checks": [{"name": "small", "run": "checks.fake:ok", "control": {"params": {"broken": True}}, "seeds": 2,
                    "positives": [{"name": "planted", "params": {"planted": True}}],
                    "expect": {"err": {"is": "< 0.5", "clause": "a"}, "n": {"is": ">= 2", "clause": "b"}}}]})
    spec_ = claim.checks[0]

    def made(err: float) -> ClaimVerdict:
        runs = [run(err, 3, seed=s, spec=spec_) for s in (0, 1)]
        controls = [judge_control("control", {"broken": True}, [run(0.9, 1, seed=s, spec=spec_, main=False)
                                                                for s in (0, 1)])]
        return _claim_verdict(claim, [check(runs, controls, spec=spec_, clause_ids=claim.clause_ids,
                                            positives=holding(spec_, 2))])

    assert (made(0.1).result, unsupported(claim, made(0.1))) == ("verified", None)
    assert (made(0.7).result, unsupported(claim, made(0.7))) == ("contradicted", None)

    def edited(change: Callable[[ClaimVerdict], None]) -> str | None:
        verdict = made(0.7)  # err fails on both seeds: contradicted
        change(verdict)
        return unsupported(claim, verdict)

    def holds(v: ClaimVerdict) -> None:
        v.checks[0].runs[0].expectations[0].holds = True

    def shown(v: ClaimVerdict) -> None:
        v.checks[0].runs[1].expectations[0].measured = 0.1

    def control_failed(v: ClaimVerdict) -> None:
        v.checks[0].controls[0].outcome = "passed"

    def passed(v: ClaimVerdict) -> None:
        v.checks[0].outcome = "pass"
        v.checks[0].expectations[0].state = "holds"

    def clause(v: ClaimVerdict) -> None:
        v.clauses[0].state = "verified"

    def result(v: ClaimVerdict) -> None:
        v.result = "verified"

    assert [edited(change) for change in (holds, shown, control_failed, passed, clause, result)] == [
        "check 'small', seed 0: err = 0.7 does not meet '< 0.5', but the file says it holds",
        "check 'small', seed 1: the file shows err as 0.1, its metrics hold 0.7",
        "check 'small': control 'control' failed-as-required by its numbers, but the file says passed",
        "check 'small': err fails by its numbers, but the file says holds",
        "clause 'a' is contradicted by its numbers, but the file says verified",
        "the claim is contradicted by its numbers, but the file says verified",
    ]
    assert edited(lambda v: setattr(v.checks[0], "name", "other")) == "it holds the checks ['other'], the claim has ['small']"
    assert edited(lambda v: v.checks.clear()) == "it holds the checks [], the claim has ['small']"  # a failing one left out
    assert edited(lambda v: v.checks[0].runs.pop()) == "check 'small': its runs are on seeds [0], not [0, 1]"
    # what a page shows besides the states: the spread, the power, the evidence of a clause
    assert edited(lambda v: setattr(v.checks[0].expectations[0], "spread", [0.1, 0.1, 0.1])) == (
        "check 'small': err's spread is [0.7, 0.7, 0.7] by its numbers, but the file says [0.1, 0.1, 0.1]")
    assert edited(lambda v: setattr(v.checks[0].expectations[1], "power", ["control 'x'"])) == (
        "check 'small': n's power is [\"control 'control'\"] by its numbers, but the file says [\"control 'x'\"]")
    assert edited(lambda v: v.clauses[1].evidence.clear()) == (
        "its clauses (their ids, text or evidence) are not those its checks give")
    # what a page shows of how the check ran: as the claim specifies it, on seeds 0..N-1
    made_message = made(0.7).checks[0].message
    assert [edited(change) for change in (
        lambda v: setattr(v.checks[0], "params", {"scale": 9}),
        lambda v: setattr(v.checks[0].runs[1], "seed", 5),
        lambda v: setattr(v.checks[0].controls[0], "params", {}),
        lambda v: setattr(v.checks[0].controls[0].runs[0], "seed", 1),
        lambda v: setattr(v.checks[0].runs[0].expectations[0], "expect", "< 9"),
        lambda v: setattr(v.checks[0], "message", "all good"),
        lambda v: setattr(v.checks[0], "nondeterministic", True),
        lambda v: setattr(v.checks[0], "required", 1),
        lambda v: setattr(v.clauses[0], "text", "Something else."),
        lambda v: setattr(v, "seeds", [0]),
        lambda v: setattr(v, "statement", "Something else."),
    )] == [
        "check 'small': its function, params or threads are not the claim's",
        "check 'small': its runs are on seeds [0, 5], not [0, 1]",
        "check 'small': its controls (their names or params) are not the claim's",
        "check 'small': control 'control' ran on seeds [1, 1], not [0, 1]",
        "check 'small', seed 0: its results are not those of the claim's expectations",
        f"check 'small': its message is not what its numbers give ('{made_message}')",
        "check 'small': it is flagged nondeterministic or not otherwise than its message says",
        "check 'small': its quorum is 2 by its numbers, but the file says 1",
        "its clauses (their ids, text or evidence) are not those its checks give",
        "it says it ran on seeds [0], its runs are on [0, 1]",
        "its statement is not the claim's",
    ]
    noted = made(0.7)  # a rerun's note that the numbers moved is the verdict's own: kept as it is
    noted.checks[0].message += "; seed 1 gave different numbers than last time (err 0.6 then 0.7, beyond the tolerance): nondeterministic"
    noted.checks[0].nondeterministic = True
    assert unsupported(claim, noted) is None
    # a verdict of an older format is judged again under today's rules: what it said of its
    # numbers is replaced, a number edited is still caught
    old = made(0.7)  # as a verdict of format 2 may read: no clauses
    old.clauses, old.format = [], 2
    old.checks[0].outcome = old.outcome = "pass"
    now, why = as_judged_now(claim, old)
    assert (why, now.result, now.format, [c.state for c in now.clauses]) == (
        None, "contradicted", 3, ["contradicted", "verified"])
    assert unsupported(claim, old) is None
    old.checks[0].runs[0].expectations[0].holds = True
    assert unsupported(claim, old) == "check 'small', seed 0: err = 0.7 does not meet '< 0.5', but the file says it holds"


def test_an_old_verdict_without_positive_controls_reads_as_not_reproduced() -> None:
    """A verdict of format 2 (before positive controls) whose expectation with power fails:
    read now, that expectation has no sensitivity, so its clause is not reproduced."""
    claim = Theory.model_validate({
        "id": "THEORY-1", "kind": "theory", "statement": "A and B.", "clauses": {"a": "A.", "b": "B."},
        "checks": [{"name": "small", "run": "checks.fake:ok", "control": {"params": {"broken": True}},
                    "expect": {"err": {"is": "< 0.5", "clause": "a"}, "n": {"is": ">= 2", "clause": "b"}}}]})
    spec_ = claim.checks[0]
    made = check([run(0.1, 1, spec=spec_)], [judge_control("control", {"broken": True},
                                                             [run(0.9, 1, spec=spec_, main=False)])],
                 spec=spec_, clause_ids=claim.clause_ids)
    old = _claim_verdict(claim, [made])
    assert (old.result, made.outcome) == ("partly-verified", "not-reproduced")
    old.format = 2  # as format 2 wrote it: the failing expectation 'fails', the clause contradicted
    old.checks[0].expectations[1].state = "fails"
    old.checks[0].outcome = old.outcome = "fail"
    old.clauses[1].state = "contradicted"
    old.result = "contradicted"
    now, why = as_judged_now(claim, ClaimVerdict.from_json(old.to_json()))
    assert why is None
    assert (now.result, [c.state for c in now.clauses], now.checks[0].outcome) == (
        "partly-verified", ["verified", "not-reproduced"], "not-reproduced")
    assert now.checks[0].message == (
        "not reproduced: n = 1, expected >= 2; the test was never shown able to pass (no positive control holds "
        "it on every seed)")


def test_an_observation_shown_otherwise_than_its_numbers_is_named() -> None:
    claim = Theory.model_validate({
        "id": "THEORY-1", "kind": "theory", "statement": "A and B.", "clauses": {"a": "A.", "b": "B."},
        "checks": [{"name": "small", "run": "checks.fake:ok", "control": {"params": {}},
                    "expect": {"err": {"is": "< 0.5", "clause": "a"}}, "observe": {"curve": "b"}}]})
    spec_ = claim.checks[0]
    made = check([run(0.1, spec=spec_, curve=2.0)],
                 [judge_control("control", {}, [run(0.9, spec=spec_, main=False, curve=1.0)])],
                 spec=spec_, clause_ids=claim.clause_ids)
    verdict = _claim_verdict(claim, [made])
    assert unsupported(claim, verdict) is None
    verdict.checks[0].observations[0].spread = [9.0, 9.0, 9.0]
    assert unsupported(claim, verdict) == (
        "check 'small': curve's spread is [2.0, 2.0, 2.0] by its numbers, but the file says [9.0, 9.0, 9.0]")


def test_a_verdict_with_nan_and_infinite_numbers_read_back_is_supported() -> None:
    """NaN is never equal to itself: a verdict that measured NaN (and infinity), written and
    read back, still judges the same as it says."""
    claim = Theory.model_validate({"id": "THEORY-1", "kind": "theory", "statement": "S.",
                                   "checks": [{"name": "small", "run": "checks.fake:ok", "seeds": 2,
                                               "control": {"params": {"broken": True}},
                                               "positives": [{"name": "planted", "params": {"planted": True}}],
                                               "expect": {"err": "< 0.5"}, "observe": {"curve": "statement"}}]})
    spec_ = claim.checks[0]
    runs = [judge_run(spec_, s, "ok", {"err": [0.1, math.nan][s], "curve": math.nan, "x": math.inf}, 0.1) for s in (0, 1)]
    controls = [judge_control("control", {"broken": True},
                              [judge_run(spec_, s, "ok", {"err": 0.9, "curve": 1.0}, 0.1, main=False) for s in (0, 1)])]
    verdict = _claim_verdict(claim, [check(runs, controls, spec=spec_, clause_ids=claim.clause_ids,
                                           positives=holding(spec_, 2))])
    assert verdict.result == "contradicted"  # NaN never satisfies an expectation
    assert unsupported(claim, ClaimVerdict.from_json(verdict.to_json())) is None
    # ... whichever NaN objects it holds: reading gives the one ``math.nan`` everywhere, which
    # ``==`` on dataclasses and lists took as equal to itself before Python 3.13 (by identity),
    # and Python 3.13's dataclasses, comparing field by field, do not
    made: list[float] = []
    fresh = _fresh_nans(ClaimVerdict.from_json(verdict.to_json()), made)
    assert len(made) >= 4 and unsupported(claim, fresh) is None


def _fresh_nans(value: Any, made: list[float]) -> Any:
    """``value`` (a verdict, or what it holds) with each NaN a new float object of its own,
    each one added to ``made``."""
    if isinstance(value, float) and math.isnan(value):
        made.append(float("nan"))
        return made[-1]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.replace(value, **{f.name: _fresh_nans(getattr(value, f.name), made)
                                             for f in dataclasses.fields(value) if f.init})
    if isinstance(value, (list, tuple)):
        return type(value)(_fresh_nans(item, made) for item in value)
    if isinstance(value, dict):
        return {key: _fresh_nans(item, made) for key, item in value.items()}
    return value
