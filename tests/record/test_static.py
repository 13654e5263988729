"""Checks read without running them: run, params and metrics, each with its place and a hint."""

from __future__ import annotations

import textwrap

from recordtool.record.project import open_project
from tests.conftest import ProjectBuilder

MODULE = '''
from typing import TypedDict

from recordtool import CheckContext


class Metrics(TypedDict):
    accuracy: float
    accuracy_null: float
    loss_curve: list[float]


def measure(ctx: CheckContext, *, n_bits: int, steps: int = 100, train: bool = True) -> Metrics:
    raise SystemExit("never run by validate")


def loose(ctx, size=3, **more):
    return {}


def strict(ctx, only, /, *, n: int = 1):
    return {}
'''


def claim(project: ProjectBuilder, check: str, module: str = MODULE, **others: str) -> list[str]:
    (project.root / "checks").mkdir(exist_ok=True)
    (project.root / "checks" / "__init__.py").write_text("", encoding="utf-8")
    (project.root / "checks" / "lab.py").write_text(module, encoding="utf-8")
    for name, text in others.items():
        (project.root / "checks" / f"{name}.py").write_text(text, encoding="utf-8")
    project.add("THEORY-1", "statement: S.\nchecks:\n" + textwrap.indent(textwrap.dedent(check).strip(), "  ") + "\n")
    return [str(p) for p in open_project(root=project.root).problems]


def test_a_check_that_fits_its_function_has_no_problem(project: ProjectBuilder) -> None:
    assert claim(project, """
        - name: c
          run: checks.lab:measure
          params: {n_bits: 4}
          expect: {accuracy: {is: "> 0.9", null: accuracy_null}}
          observe: {loss_curve: statement}
          controls: [{name: untrained, params: {train: false}}]
    """) == []


def test_a_wrong_module_or_function_is_named_with_a_hint(project: ProjectBuilder) -> None:
    assert claim(project, """
        - {name: a, run: checks.lb:measure, params: {n_bits: 4}, expect: {accuracy: "> 0"}}
        - {name: b, run: checks.lab:measur, params: {n_bits: 4}, expect: {accuracy: "> 0"}}
    """) == [
        "record/theory/THEORY-1.yaml:4:20: error: checks[0].run: no module 'checks.lb' in checks/; "
        "did you mean 'checks.lab'?",
        "record/theory/THEORY-1.yaml:5:20: error: checks[1].run: checks/lab.py has no function 'measur'; "
        "did you mean 'measure'?",
    ]


def test_params_and_every_controls_params_must_fit_the_signature(project: ProjectBuilder) -> None:
    assert claim(project, """
        - name: c
          run: checks.lab:measure
          params: {n_bit: 4}
          expect: {accuracy: "> 0"}
          controls:
            - {name: untrained, params: {trian: false}}
        - {name: d, run: checks.lab:loose, params: {anything: 1}, expect: {x: "> 0"}}
        - {name: e, run: checks.lab:strict, params: {only: 1, n: 2}, expect: {x: "> 0"}}
    """) == [
        "record/theory/THEORY-1.yaml:6:13: error: checks[0].params: measure() (checks/lab.py:13) needs 'n_bits', "
        "which the check does not give; add it to params or give it a default",
        "record/theory/THEORY-1.yaml:6:14: error: checks[0].params.n_bit: measure() (checks/lab.py:13) has no "
        "parameter 'n_bit'; did you mean 'n_bits'?",
        "record/theory/THEORY-1.yaml:9:36: error: checks[0].controls[0].params.trian: measure() (checks/lab.py:13) "
        "has no parameter 'trian'; did you mean 'train'?",
        "record/theory/THEORY-1.yaml:11:48: error: checks[2].params.only: 'only' is a positional-only parameter "
        "of strict() (checks/lab.py:21); make it a keyword parameter",
        "record/theory/THEORY-1.yaml:10:20: warning: checks[1].run: checks.lab:loose does not declare the metrics "
        "it returns, so a metric named here is checked only once it has run; annotate its return type with a "
        "TypedDict, or set METRICS = (...) in checks/lab.py (docs/checks.md)",
        "record/theory/THEORY-1.yaml:11:20: warning: checks[2].run: checks.lab:strict does not declare the metrics "
        "it returns, so a metric named here is checked only once it has run; annotate its return type with a "
        "TypedDict, or set METRICS = (...) in checks/lab.py (docs/checks.md)",
    ]


def test_metrics_must_be_declared_by_the_check(project: ProjectBuilder) -> None:
    assert claim(project, """
        - name: c
          run: checks.lab:measure
          params: {n_bits: 4}
          expect:
            acuracy: "> 0.9"
            accuracy: {is: "> 0.9", null: accuracy_nul}
          degenerate: {loss: "< 0.1"}
    """) == [
        "record/theory/THEORY-1.yaml:8:7: error: checks[0].expect.acuracy: checks.lab:measure does not return "
        "'acuracy' (its return type Metrics); did you mean 'accuracy'?",
        "record/theory/THEORY-1.yaml:9:31: error: checks[0].expect.accuracy.null: checks.lab:measure does not "
        "return 'accuracy_nul' (its return type Metrics); did you mean 'accuracy_null'?",
        "record/theory/THEORY-1.yaml:10:18: error: checks[0].degenerate.loss: checks.lab:measure does not return "
        "'loss' (its return type Metrics); it declares: accuracy, accuracy_null, loss_curve",
    ]


def test_metrics_declared_by_an_imported_typed_dict_or_by_METRICS(project: ProjectBuilder) -> None:
    module = ('from checks.kinds import Scores\n\nMETRICS = ("a", "b")\n\n'
              'def measure(ctx, *, n=1) -> "Scores":\n    return {}\n\ndef other(ctx) -> dict[str, float]:\n    return {}\n')
    kinds = "from typing import TypedDict\n\nclass Base(TypedDict):\n    x: float\n\nclass Scores(Base, total=False):\n    y: float\n"
    assert claim(project, """
        - {name: c, run: checks.lab:measure, expect: {x: "> 0", y: "> 0", a: "> 0"}}
        - {name: d, run: checks.lab:other, expect: {a: "> 0", b: "> 0", x: "> 0"}}
    """, module, kinds=kinds) == [
        "record/theory/THEORY-1.yaml:4:69: error: checks[0].expect.a: checks.lab:measure does not return 'a' "
        "(its return type Scores); it declares: x, y",
        "record/theory/THEORY-1.yaml:5:67: error: checks[1].expect.x: checks.lab:other does not return 'x' "
        "(METRICS in checks/lab.py); it declares: a, b",
    ]


def test_a_module_that_does_not_parse_is_reported_not_run(project: ProjectBuilder) -> None:
    assert claim(project, '- {name: c, run: checks.lab:measure, expect: {x: "> 0"}}', "def measure(ctx:\n") == [
        "record/theory/THEORY-1.yaml:4:20: error: checks[0].run: cannot read 'checks.lab': checks/lab.py:1: "
        "'(' was never closed",
    ]
