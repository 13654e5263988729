"""The compiled modules (``recordtool/compiled.py``): run only when built from the sources there,
and the same results as the pure Python modules.

The rest of the suite runs the pure Python modules (``tests/conftest.py`` sets
``RECORDTOOL_PURE_PYTHON``: tests replace module functions with ``monkeypatch``, which calls
inside compiled modules do not see). Here fresh processes run each way, on the same inputs:
what the parser and the prose writer give for thousands of documents, whole renders, and the
tests of pages composed from slices and after edits.
Where the compiled modules were not built (no C compiler), the comparisons are skipped, except
in CI, which builds them (``.ci/run``), where that fails.
"""

from __future__ import annotations

import ast
import importlib.machinery
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from recordtool import compiled
from tests.conftest import ProjectBuilder
from tests.render_record import small_record

REPO = Path(__file__).resolve().parents[1]


def _env(pure: bool) -> dict[str, str]:
    env = dict(os.environ)
    env.pop(compiled.PURE, None)
    if pure:
        env[compiled.PURE] = "1"
    env["PYTHONHASHSEED"] = "0"
    return env


def _python(code: str, pure: bool) -> str:
    done = subprocess.run([sys.executable, "-c", code], env=_env(pure), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@pytest.fixture(scope="module")
def built() -> None:
    """Skip when this install has no compiled modules to compare (fail in CI, which builds them)."""
    state = _python("from recordtool import compiled; print(compiled.state())", pure=False)
    if not state.startswith("compiled"):
        if os.environ.get("CI"):
            pytest.fail(f"CI installs recordtool compiled, but here it runs {state}")
        pytest.skip(state)


# Which modules run -------------------------------------------------------------------------

def _package(tmp_path: Path, *, built: bool = True) -> Path:
    """A copy of what ``compiled.why_not_compiled`` reads: the sources, and when ``built`` a
    manifest of their digests and an (empty) extension file beside each."""
    package = tmp_path / "recordtool"
    sources = {}
    for module in compiled.COMPILED:
        source = package.joinpath(*module.split(".")[1:]).with_suffix(".py")
        source.parent.mkdir(parents=True, exist_ok=True)
        source.write_text(f"# {module}\n")
        sources[module] = compiled.digest(str(source))
        if built:
            source.with_name(source.stem + importlib.machinery.EXTENSION_SUFFIXES[0]).write_bytes(b"")
    if built:
        (package / compiled.MANIFEST).write_text(json.dumps({"group": compiled.GROUP, "sources": sources}))
    return package


def test_pure_python_is_chosen_when_nothing_was_compiled(tmp_path: Path) -> None:
    package = _package(tmp_path, built=False)
    assert compiled.why_not_compiled(str(package), {}) == (
        "not compiled (no C compiler or mypyc when it was installed, or RECORDTOOL_COMPILE=0)")


def test_pure_python_is_chosen_when_asked(tmp_path: Path) -> None:
    package = _package(tmp_path)
    assert compiled.why_not_compiled(str(package), {compiled.PURE: "1"}) == "RECORDTOOL_PURE_PYTHON is set"
    assert compiled.why_not_compiled(str(package), {compiled.PURE: "0"}) == compiled.why_not_compiled(str(package), {})


def test_an_edited_source_runs_from_its_source(tmp_path: Path) -> None:
    package = _package(tmp_path)
    edited = package / "render" / "prose.py"
    edited.write_text(edited.read_text() + "# an edit\n")
    assert compiled.why_not_compiled(str(package), {}) == (
        f"{edited} was changed after it was compiled: install again to compile it")


def test_a_module_whose_build_failed_means_none_runs_compiled(tmp_path: Path) -> None:
    package = _package(tmp_path)
    package.joinpath("record", "blocks" + importlib.machinery.EXTENSION_SUFFIXES[0]).unlink()
    assert compiled.why_not_compiled(str(package), {}) == (
        "recordtool.record.blocks was not compiled (its build failed): the rest would run without it")


@pytest.mark.parametrize("manifest", ["{", '{"group": "recordtool.native"}', '{"group": "other", "sources": {}}',
                                      '{"group": "recordtool.native", "sources": {"recordtool.record.blocks": "0"}}'])
def test_a_manifest_that_does_not_fit_means_pure_python(tmp_path: Path, manifest: str) -> None:
    package = _package(tmp_path)
    (package / compiled.MANIFEST).write_text(manifest)
    why = compiled.why_not_compiled(str(package), {})
    assert why is not None and why.startswith(compiled.MANIFEST)


def test_the_library_that_does_not_load_means_pure_python(tmp_path: Path) -> None:
    package = _package(tmp_path)  # every file in place, but the shared library is not importable from here
    why = compiled.why_not_compiled(str(package), {}, library="recordtool.no_such__mypyc")
    assert why is not None and why.startswith("the compiled modules' library does not load")


def test_the_modules_imported_are_those_the_state_names() -> None:
    code = ("from recordtool import compiled; import recordtool.render.prose as p, recordtool.record.blocks as b; "
            "print(compiled.state()); print(p.__file__); print(b.__file__)")
    state, *files = _python(code, pure=True).splitlines()
    assert state == "pure Python: RECORDTOOL_PURE_PYTHON is set"
    assert all(file.endswith(".py") for file in files)
    state, *files = _python(code, pure=False).splitlines()
    assert all(file.endswith(".py") != state.startswith("compiled") for file in files), (state, files)


def test_an_extension_beside_a_source_never_runs_for_a_module_not_compiled(tmp_path: Path) -> None:
    folder = tmp_path / "pkg"
    folder.mkdir()
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    (folder / "both.py").write_text("")
    (folder / f"both{suffix}").write_bytes(b"")
    (folder / f"library{suffix}").write_bytes(b"")  # an extension with no source (the compiled modules' library)
    (folder / "plain.py").write_text("")

    def spec(name: str) -> importlib.machinery.ModuleSpec | None:
        return compiled.source_instead(importlib.machinery.PathFinder.find_spec(name, [str(folder)]))

    both = spec("both")
    assert both is not None and both.origin == str(folder / "both.py")
    assert isinstance(both.loader, importlib.machinery.SourceFileLoader) and both.has_location
    library = spec("library")
    assert library is not None and isinstance(library.loader, importlib.machinery.ExtensionFileLoader)
    plain = spec("plain")
    assert plain is not None and plain.origin == str(folder / "plain.py")
    assert spec("missing") is None


def _with_extension_left(tmp_path: Path, left: Path, code: str) -> subprocess.CompletedProcess[str]:
    """``code`` run by Python on a copy of recordtool's sources in ``tmp_path`` (nothing compiled),
    with a file that is no extension named as one at ``left``."""
    shutil.copytree(REPO / "recordtool", tmp_path / "recordtool",
                    ignore=shutil.ignore_patterns("*.so", "*.pyd", compiled.MANIFEST, "__pycache__"))
    left.write_bytes(b"not an extension")
    return subprocess.run([sys.executable, "-c", code], env={**_env(pure=False), "PYTHONPATH": str(tmp_path)},
                          capture_output=True, text=True, timeout=120, cwd=tmp_path)


@pytest.mark.parametrize("module", ["recordtool.render.plan", "recordtool.record.graph", "recordtool.render.prose"])
def test_a_stale_extension_left_beside_a_module_does_not_run(tmp_path: Path, module: str) -> None:
    # A build that compiled more modules (a later commit, a tried build) leaves their extensions
    # in an editable install; at a commit that compiles fewer, they must not run in place of the
    # sources (which would run stale code, or fail to load as here: the file is no extension).
    source = tmp_path.joinpath(*module.split(".")).with_suffix(".py")
    done = _with_extension_left(tmp_path, source.with_name(source.stem + importlib.machinery.EXTENSION_SUFFIXES[0]),
                                f"import {module} as m, recordtool.compiled as c; print(m.__file__); print(c.state())")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == str(source)
    assert done.stdout.splitlines()[1].startswith("pure Python: not compiled")


def test_an_extension_whose_source_is_gone_is_not_imported(tmp_path: Path) -> None:
    left = tmp_path / "recordtool" / "render" / ("gone" + importlib.machinery.EXTENSION_SUFFIXES[0])
    done = _with_extension_left(tmp_path, left, "import recordtool.render.gone")
    assert done.returncode == 1
    assert done.stderr.splitlines()[-1] == (
        f"ModuleNotFoundError: No module named 'recordtool.render.gone': only an extension of it is left ({left}), "
        "built from a source that is gone; delete it")


def test_a_build_whose_compiler_fails_leaves_no_manifest(tmp_path: Path) -> None:
    """An in-place build (as an editable install makes) that cannot compile removes the manifest
    the build before it wrote: the extensions that build left would otherwise run beside sources
    they were not built from."""
    pytest.importorskip("mypyc.build")
    for name in ("setup.py", "pyproject.toml", "README.md"):
        (tmp_path / name).write_bytes((REPO / name).read_bytes())
    for source in (REPO / "recordtool").rglob("*.py"):
        copy = tmp_path / source.relative_to(REPO)
        copy.parent.mkdir(parents=True, exist_ok=True)
        copy.write_bytes(source.read_bytes())
    stale = tmp_path / "recordtool" / compiled.MANIFEST
    stale.write_text('{"group": "recordtool.native", "sources": {}}')
    env = {**_env(pure=False), "CC": "false"}  # a compiler that fails every time
    done = subprocess.run([sys.executable, "setup.py", "build_ext", "--inplace"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr  # (the extensions are optional)
    assert "not compiled; the pure Python modules will run" in done.stderr
    assert not stale.exists()


# What may be compiled ------------------------------------------------------------------------
# mypyc compiles ``key in d``, ``d.get(key)`` and ``len(d)`` for a ``d`` typed as a dict, or as any
# subclass of dict, to dict's own C functions, which do not call a subclass's overrides (set's,
# likewise). recordtool's lazy mappings (the record's entries, made from the entry cache when first
# asked for: ``load.Entries``; a worker's slices of the project, which answer ``Missing`` for what
# they do not hold: ``slices.Part``) would be read wrongly by such code: a kept entry's raw tuple,
# an entry outside the slice as "not in the record" (docs/performance.md, "Compiled with mypyc").
# So no class of recordtool subclasses a dict or a set (they are ``Mapping``s holding one, which
# compiled code reads through their own methods), and no public function of a compiled module takes
# a dict or a set (a caller's subclass would be read by the wrong functions): it takes Mapping,
# Container or AbstractSet.

_CONTAINERS = frozenset({"dict", "set", "frozenset", "Dict", "Set", "FrozenSet", "DefaultDict", "defaultdict",
                         "OrderedDict", "Counter"})


def _container_subclasses(tree: ast.Module) -> list[str]:
    """The classes of ``tree`` (at any depth) that name a dict or a set among their bases."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            for base in node.bases:
                names = {n.id for n in ast.walk(base) if isinstance(n, ast.Name)}
                names |= {n.attr for n in ast.walk(base) if isinstance(n, ast.Attribute)}
                if names & _CONTAINERS and not (isinstance(base, ast.Subscript) and _generic_only(base)):
                    found.append(node.name)
    return found


def _generic_only(base: ast.Subscript) -> bool:
    """Whether ``base`` (``Mapping[str, dict[str, int]]``) names a dict or a set only as a type
    argument, not as the class subclassed."""
    names = {n.id for n in ast.walk(base.value) if isinstance(n, ast.Name)}
    names |= {n.attr for n in ast.walk(base.value) if isinstance(n, ast.Attribute)}
    return not names & _CONTAINERS


def _containers_taken(tree: ast.Module) -> list[str]:
    """``function(parameter)`` for each parameter of a public function or method of ``tree``
    whose annotation names a dict or a set."""
    found = []
    scopes: list[tuple[str, list[ast.stmt]]] = [("", tree.body)]
    scopes += [(f"{node.name}.", node.body) for node in tree.body
               if isinstance(node, ast.ClassDef) and not node.name.startswith("_")]
    for prefix, body in scopes:
        for node in body:
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or node.name.startswith("_"):
                continue
            arguments = [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs, node.args.vararg,
                         node.args.kwarg]
            for argument in arguments:
                if argument is None or argument.annotation is None:
                    continue
                names = {n.id for n in ast.walk(argument.annotation) if isinstance(n, ast.Name)}
                names |= {n.attr for n in ast.walk(argument.annotation) if isinstance(n, ast.Attribute)}
                if names & _CONTAINERS:
                    found.append(f"{prefix}{node.name}({argument.arg})")
    return found


def test_the_checks_of_what_may_be_compiled_find_what_they_look_for() -> None:
    tree = ast.parse("def page(ctx: Context, ids: dict[str, int], *, seen: typing.Set[str] | None = None) -> None:\n"
                     "    class Local(collections.OrderedDict[str, int]): ...\n"
                     "def _own(ids: dict[str, int]) -> None: ...\n"
                     "class Writer:\n"
                     "    def put(self, names: Mapping[str, str], kept: collections.OrderedDict[str, int]) -> None: ...\n"
                     "class Lazy(dict[str, int]): ...\n"
                     "class Names(Generic[T], set): ...\n"
                     "class Held(Mapping[str, dict[str, int]]): ...\n"
                     "class Plain(NamedTuple): ...\n")
    assert _containers_taken(tree) == ["page(ids)", "page(seen)", "Writer.put(kept)"]
    assert sorted(_container_subclasses(tree)) == ["Lazy", "Local", "Names"]


def test_no_class_of_recordtool_subclasses_a_dict_or_a_set() -> None:
    found = {}
    for source in sorted((REPO / "recordtool").rglob("*.py")):
        classes = _container_subclasses(ast.parse(source.read_text(encoding="utf-8"), str(source)))
        if classes:
            found[str(source.relative_to(REPO))] = classes
    assert found == {}, (f"{found}: compiled code would read these with the dict's or set's own functions, "
                         "never their methods; hold a dict in a Mapping instead (see above)")


@pytest.mark.parametrize("module", compiled.COMPILED)
def test_a_compiled_module_takes_no_dict_or_set_from_its_callers(module: str) -> None:
    source = Path(compiled.source_path(module))
    tree = ast.parse(source.read_text(encoding="utf-8"), str(source))
    assert _containers_taken(tree) == [], (
        "a public function of a compiled module takes a dict or a set; take Mapping, Container or AbstractSet "
        "(see above)")


def _lenient() -> list[str]:
    """``LENIENT`` of setup.py: the flags that relax the type check mypyc runs to compile."""
    tree = ast.parse((REPO / "setup.py").read_text(encoding="utf-8"))
    found = [node.value for node in tree.body if isinstance(node, ast.Assign)
             and any(isinstance(t, ast.Name) and t.id == "LENIENT" for t in node.targets)]
    assert len(found) == 1
    return list(ast.literal_eval(found[0]))


def test_the_compiled_modules_type_check_for_a_build_without_the_runtime_packages(tmp_path: Path) -> None:
    """pip builds in an environment of the build requirements only (no pydantic, no PyYAML), where
    mypyc's type check failed on what the pages' modules reach through recordtool's others, and a
    fresh install compiled nothing. Checked here with no installed package visible at all."""
    shutil.copytree(REPO / "recordtool", tmp_path / "recordtool", ignore=shutil.ignore_patterns("__pycache__", "*.so"))
    shutil.copy(REPO / "pyproject.toml", tmp_path)  # (its strict configuration, which the flags relax)
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    done = subprocess.run([sys.executable, "-m", "mypy", "--no-site-packages", "--python-version", version,
                           "--cache-dir", str(tmp_path / "cache"), *_lenient(),
                           *(compiled.source_path(module, "recordtool") for module in compiled.COMPILED)],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-1000:]


# The same results ----------------------------------------------------------------------------

def _probe(pure: bool, count: int, seed: int) -> list[str]:
    done = subprocess.run([sys.executable, str(REPO / "tests" / "compiled_probe.py"), str(count), str(seed)],
                          env=_env(pure), capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def test_the_parser_and_the_prose_writer_give_the_same_results_compiled(built: None) -> None:
    pure, fast = _probe(True, 1500, 7), _probe(False, 1500, 7)
    assert json.loads(pure[0]).startswith("pure Python") and json.loads(fast[0]).startswith("compiled")
    assert len(pure) == len(fast) == 1501
    for mine, theirs in zip(pure[1:], fast[1:], strict=True):
        if mine != theirs:
            text, expected = json.loads(mine)
            got = json.loads(theirs)[1]
            which = next(i for i, (a, b) in enumerate(zip(expected, got, strict=True)) if a != b)
            want, have = repr(expected[which]), repr(got[which])
            at = next((i for i, (x, y) in enumerate(zip(want, have, strict=False)) if x != y), min(len(want), len(have)))
            pytest.fail(f"compiled differs on output {which} for {text!r}: from character {at}, pure Python "
                        f"gives {want[max(at - 40, 0):at + 80]!r}, compiled {have[max(at - 40, 0):at + 80]!r}")


def _tree(root: Path) -> dict[str, bytes]:
    return {str(path.relative_to(root)): path.read_bytes() for path in sorted(root.rglob("*"))
            if path.is_file() and not path.name.startswith(".recordtool-")}


def _cli(root: Path, pure: bool, *args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([sys.executable, "-m", "recordtool", *args, "--root", str(root)], env=_env(pure),
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return done


# A 1x1 PNG, for a figure the check leaves.
PNG = ("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")


def test_a_record_validates_and_renders_the_same_compiled(built: None, project: ProjectBuilder, tmp_path: Path) -> None:
    """A record whose claim has a verdict and a figure with a caption in Markdown, citations,
    index pages and graph views, rendered by one process; then a synthetic record of realistic
    bodies (with ids not in the record: warnings with their places), rendered by two. What
    ``validate`` says and every page are the same bytes each way."""
    small_record(project)
    (project.root / "checks").mkdir(exist_ok=True)
    (project.root / "checks" / "demo.py").write_text(
        "import base64\n\n"
        "def measure(ctx, *, n=2, noise=False):\n"
        "    figure = ctx.figure('fit.png', title='The *fit*', caption='Drawn from [LIT-1](LIT-1) <b>as</b> `x`.')\n"
        f"    figure.write_bytes(base64.b64decode('{PNG}'))\n"
        "    return {'error': 0.5 if noise else 0.0, 'terms': 2 * n + 1}\n")
    _cli(project.root, True, "verify")
    synthetic = tmp_path / "synthetic"
    subprocess.run([sys.executable, str(REPO / "benchmarks" / "bench_scale.py"), "--write", str(synthetic), "300"], check=True,
                   capture_output=True, timeout=120)
    for root, jobs in [(project.root, "1"), (synthetic, "2")]:
        said = {pure: _cli(root, pure, "validate", "--no-cache") for pure in (True, False)}
        assert (said[True].stdout, said[True].stderr) == (said[False].stdout, said[False].stderr)
        pages = {}
        for pure in (True, False):
            out = tmp_path / f"pages-{root.name}-{pure}"
            _cli(root, pure, "render", "-o", str(out), "-j", jobs, "--no-cache")
            pages[pure] = _tree(out)
        assert len(pages[True]) > 5 and (root != project.root or any(name.endswith(".png") for name in pages[True]))
        assert pages[True] == pages[False], sorted(k for k in pages[True] if pages[True][k] != pages[False].get(k))


# Tests of the rest of the suite that hold compiled too: pages composed from a worker's slice of the
# project (``slices.Part``: a mapping that refuses what it does not hold) and renders after random
# edits, against cold renders, with the entries the cache keeps made when first asked for
# (``load.Entries``): the two ways a compiled page module could be given a lazy mapping. Only the
# tests that count calls by replacing a module's functions are left out (calls inside compiled
# code do not see the replacement).
COMPILED_TOO = ("tests/render/test_slices.py", "tests/test_incremental.py", "tests/render/test_page.py")
COUNTING = ("test_a_worker_works_out_what_pages_show_of_a_neighbour_once",)


def test_the_pages_of_slices_and_of_edited_records_are_the_same_compiled(built: None) -> None:
    env = {**_env(pure=False), compiled.PURE: "0"}  # (tests/conftest.py runs pure Python unless told so)
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *COMPILED_TOO,
                           "-k", " and ".join(f"not {name}" for name in COUNTING)],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert " passed" in done.stdout and " deselected" in done.stdout
