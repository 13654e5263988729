"""The stages import one way: record <- verify <- render <- the CLI on top; no modules import
each other in a circle.

Every import in recordtool's modules, at the top or inside a function, is read with ``ast``;
a module of an earlier stage may not import one of a later stage, and no module may reach
itself through the imports of others (``if TYPE_CHECKING:`` imports left out: they never run).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "recordtool"
# What each stage may import from recordtool (its own stage included). Shared helpers that
# belong to no stage sit at the top of the package and import no stage.
ALLOWED = {
    "shared": {"shared"},
    "record": {"shared", "record"},
    "verify": {"shared", "record", "verify"},
    "render": {"shared", "record", "verify", "render"},
    "cli": {"shared", "record", "verify", "render", "cli"},
    "surface": {"shared", "record", "verify", "render"},  # the package's __init__: re-exports, lazily
}
TOP_LEVEL = {"__init__": "surface", "atomic": "shared", "meter": "shared", "parallel": "shared", "safetext": "shared",
             "store": "shared", "cli": "cli", "__main__": "cli"}


def _stage_of_module(dotted: str) -> str | None:
    parts = dotted.split(".")
    if parts[0] != "recordtool":
        return None
    if len(parts) == 1:
        return "shared"
    if parts[1] in ("record", "verify", "render"):
        return parts[1]
    return TOP_LEVEL.get(parts[1], "shared")


def _stage_of_file(path: Path, package: Path = PACKAGE) -> str:
    rel = path.relative_to(package)
    if len(rel.parts) > 1:
        return rel.parts[0]
    return TOP_LEVEL[rel.stem]


def _imports(path: Path, root: Path = PACKAGE) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = ".".join(["recordtool", *path.relative_to(root).parent.parts])
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.rstrip(".").split(".")
                base = base[: len(base) - node.level + 1]
                module = ".".join([*base, node.module] if node.module else base)
            else:
                module = node.module or ""
            out.append((node.lineno, module))
            out += [(node.lineno, f"{module}.{alias.name}") for alias in node.names]
    return out


MODULES = sorted(PACKAGE.rglob("*.py"))


def test_every_module_has_a_stage() -> None:
    for path in MODULES:
        assert _stage_of_file(path) in ALLOWED, path


def violations(path: Path, package: Path = PACKAGE) -> list[str]:
    stage = _stage_of_file(path, package)
    wrong = []
    for line, name in _imports(path, package):
        target = _stage_of_module(name)
        if target is not None and target not in ALLOWED[stage]:
            wrong.append(f"{path.relative_to(package)}:{line}: {stage} imports {name} ({target})")
    return wrong


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.relative_to(PACKAGE).as_posix())
def test_imports_go_one_way(path: Path) -> None:
    wrong = violations(path)
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize(("module", "source", "found"), [
    ("record/graph.py", "from recordtool.render import page\n", ["render"]),
    ("record/load.py", "def f():\n    from ..verify.store import read_store\n", ["verify"]),
    ("verify/judge.py", "import recordtool.render.site\n", ["render"]),
    ("verify/judge.py", "from recordtool import cli\n", ["cli"]),
    ("atomic.py", "from recordtool.record import config\n", ["record"]),
    ("render/page.py", "from recordtool.verify.verdict import ClaimStatus\n", []),
    ("verify/judge.py", "from . import verdict\nfrom ..record import schema\n", []),
])
def test_the_rule_catches_imports_against_the_flow(tmp_path: Path, module: str, source: str,
                                                   found: list[str]) -> None:
    path = tmp_path / module
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(source, encoding="utf-8")
    stages = {v.rsplit("(", 1)[1].rstrip(")") for v in violations(path, tmp_path)}
    assert stages == set(found)


def test_the_package_re_exports_the_check_surface() -> None:
    import recordtool

    assert recordtool.CheckContext.__name__ == "CheckContext"
    assert callable(recordtool.write_atomic)
    with pytest.raises(AttributeError):
        _ = recordtool.no_such_name  # type: ignore[attr-defined]


def _module_name(path: Path, package: Path = PACKAGE) -> str:
    parts = ["recordtool", *path.relative_to(package).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _type_checking_lines(tree: ast.Module) -> set[int]:
    """Lines under ``if TYPE_CHECKING:``: imports for annotations only, never executed."""
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for inner in node.body:
                lines.update(range(inner.lineno, (inner.end_lineno or inner.lineno) + 1))
    return lines


def import_graph(package: Path = PACKAGE) -> dict[str, set[str]]:
    """Which of the package's modules each module imports, at the top or inside a function."""
    modules = {_module_name(path, package): path for path in sorted(package.rglob("*.py"))}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        skipped = _type_checking_lines(ast.parse(path.read_text(encoding="utf-8")))
        targets = set()
        for line, imported in _imports(path, package):
            while imported and imported not in modules:
                imported = imported.rpartition(".")[0]
            if imported and imported != name and line not in skipped:
                targets.add(imported)
        graph[name] = targets
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_import_cycles() -> None:
    assert cycles(import_graph()) == []


def test_a_cycle_is_found(tmp_path: Path) -> None:
    package = tmp_path / "recordtool"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("def f():\n    from recordtool import b\n")
    (package / "b.py").write_text("from recordtool.a import f\n")
    (package / "c.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from recordtool import a\n")
    assert cycles(import_graph(package)) == [["recordtool.a", "recordtool.b"]]
