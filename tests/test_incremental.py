"""Incremental validate and render give what a cold run gives: a seeded random walk of edits.

Each step edits, adds or deletes a few entries of a small record (titles, tags, citations and
their relations, mentions, ids, kinds, statuses, verdicts and their figures, entries made
invalid and valid again, duplicates, the configuration and its kinds, a template's
placeholder, titles that escaping must keep, bodies of research Markdown, entries moved into a
folder of their kind's folder), then runs ``validate`` and ``render`` in the project
as it has been all along (the store and the manifest kept from the last
run) and in a fresh copy of it with no cache and no pages. Their problems, exit codes and every
page must be the same, byte for byte; a deleted entry's page is gone.
"""

from __future__ import annotations

import json
import os
import random
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from recordtool.record.config import load_config
from recordtool.record.load import id_sort_key
from recordtool.record.project import Project
from recordtool.record.static import PLACEHOLDER_BODY
from recordtool.verify.store import write_verdict
from tests.conftest import FOLDERS, ProjectBuilder
from tests.corpus import invoke
from tests.render_record import verdict

PREFIXES = list(FOLDERS)
RELATIONS = ["source", "uses", "paper", "extends", "supports", "contradicts", "sorce"]  # 'sorce': unknown
TAGS = ["alpha", "beta", "gamma", "Bad Tag"]  # 'Bad Tag' is refused by the schema
WORDS = ["the", "head", "attends", "to", "the", "previous", "token", "and", "copies", "it", "forward"]
CHANGES = ["title", "tags", "cites", "mentions", "reword", "status", "id", "kind", "add", "delete", "break", "mend",
           "duplicate", "verdict", "config", "same", "relation", "placeholder", "page", "markup", "markdown", "nested",
           "figure", "unverified", "kinds", "aside"]
TITLES = ["A | b *c* <x>", "Under_score [a link](x) `code`", "#hash &amp; more", "Back\\slash", "Ünïcödé — title",
          "标题 THEORY-1", "e\u0301 combining", "\u00a0no-break space"]  # what escaping and parsing must keep
SEED_OF_TIME = 1_600_000_000_000_000_000  # file times are set from here on, a second a step


class Walk:
    """A small record and a seeded random source of changes to it."""

    def __init__(self, root: Path, seed: int, *, just_now: bool = False) -> None:
        root.mkdir(parents=True, exist_ok=True)
        self.project = ProjectBuilder(root)
        self.root = root
        self.rng = random.Random(seed)
        self.step = 0
        self.just_now = just_now  # files keep the times their writing gave them (``touch``)
        self.broken: dict[Path, bytes] = {}  # files made invalid, and what they held before
        for n in range(1, 5):
            for prefix in PREFIXES:
                self.write(f"{prefix}-{n}", self.entry(f"{prefix}-{n}"))

    def files(self) -> list[Path]:
        return sorted((self.root / "record").glob("*/*.yaml"))

    def ids(self) -> list[str]:
        return [p.stem for p in self.files()]

    def some_id(self) -> str:
        """An id of the record, now and then one that is not in it."""
        ids = self.ids()
        if not ids or self.rng.random() < 0.2:
            return f"{self.rng.choice(PREFIXES)}-{self.rng.randint(50, 54)}"
        return self.rng.choice(ids)

    def entry(self, entry_id: str) -> str:
        """The YAML of a valid entry ``entry_id`` (after its id line), with random links."""
        rng = self.rng
        prefix = entry_id.split("-")[0]
        cites = [{"id": self.some_id(), "as": rng.choice(RELATIONS[:-1])} for _ in range(rng.randint(0, 2))]
        cites = [c for c in cites if c["id"] != entry_id]
        tags = sorted(set(rng.sample(TAGS[:-1], rng.randint(0, 2))))
        lines = [f"title: {self.sentence()}", f"tags: [{', '.join(tags)}]", f"cites: {json.dumps(cites)}",
                 f"status: {rng.choice(['active', 'active', 'draft', 'superseded'])}",
                 f"body: {json.dumps(self.prose())}"]
        if prefix == "LIT":
            lines.append('reference: {authors: ["Doe, J."], year: 2021, title: A paper}')
        if prefix == "THEORY":
            lines.append(f"statement: {json.dumps(self.sentence() + '.')}")
        return "\n".join(lines) + "\n"

    def sentence(self) -> str:
        words = self.rng.sample(WORDS, 4)
        return " ".join(words).capitalize()

    def markdown(self) -> str:
        """A body of research Markdown naming an id: headings, lists, code, tables, quotes, links."""
        target = self.some_id()
        return self.rng.choice([
            f"# Heading {target}\n\n- item {target}\n- *em* {target}\n\n```\n{target} in code\n```\n",
            f"| a | b |\n|---|---|\n| {target} | x |\n\n> quoted {target}\n",
            f"See [a file](../notes/x.yaml), [{target}]({target}) and <https://x.org/{target}>.\n\n1. one {target}\n2. two\n",
            f"Line one {target}  \nafter a hard break.\n\n    indented {target}\n"])

    def prose(self) -> str:
        """Sentences mentioning ids (in prose, in a link, in code, which is not a mention)."""
        parts = []
        for _ in range(self.rng.randint(1, 4)):
            target = self.some_id()
            other = self.some_id()
            parts.append(self.rng.choice([f"{self.sentence()} as {target} says.", f"See [{target}]({target}.md).",
                                          f"{self.sentence()}, as {target} and {other} say.",
                                          f"Not a mention: `{target}`.", f"{self.sentence()}."]))
        return " ".join(parts)

    def write(self, entry_id: str, text: str, folder: str | None = None) -> None:
        path = self.project.add(entry_id, text, folder=folder)
        self.touch(path)

    def touch(self, path: Path) -> None:
        """Give a changed file a time of its own, long past (so that the cache trusts its size
        and times, rather than comparing the content of a file changed just now); with
        ``just_now``, leave it the time its writing gave it, as an editor does: the next run
        then finds it changed within the tick of a file's time (racy), and compares content."""
        self.step += 1
        if self.just_now:
            return
        when = SEED_OF_TIME + self.step * 1_000_000_000
        os.utime(path, ns=(when, when))

    def edit(self, path: Path, change: Callable[[list[str]], list[str]]) -> None:
        lines = path.read_text(encoding="utf-8").splitlines()
        path.write_text("\n".join(change(lines)) + "\n", encoding="utf-8")
        self.touch(path)

    def set_field(self, path: Path, name: str, value: str) -> None:
        def change(lines: list[str]) -> list[str]:
            kept = [line for line in lines if not line.startswith(f"{name}:")]
            return [*kept, f"{name}: {value}"]

        self.edit(path, change)

    def mutate(self, what: str | None = None) -> str:
        """Make one change (``what``, else one at random); say which."""
        rng = self.rng
        files = self.files()
        if not files:
            what = "add"
        elif what is None:
            what = rng.choice([*CHANGES, "tags", "mentions", "add", "mend"])
        path = rng.choice(files) if files else None
        if what == "add" or path is None:
            prefix = rng.choice(PREFIXES)
            used = {int(i.split("-")[1]) for i in self.ids() if i.startswith(prefix + "-")}
            # a new id, or one that is mentioned but not in the record yet
            number = rng.choice([n for n in [*range(1, 12), *range(50, 55)] if n not in used] or [99])
            self.write(f"{prefix}-{number}", self.entry(f"{prefix}-{number}"))
        elif what == "title":
            self.set_field(path, "title", self.sentence())
        elif what == "tags":
            tags = rng.sample(TAGS[:-1], rng.randint(0, 2)) + (TAGS[-1:] if rng.random() < 0.1 else [])
            self.set_field(path, "tags", f"[{', '.join(tags)}]")
        elif what in ("cites", "relation"):
            cites = [{"id": self.some_id(), "as": rng.choice(RELATIONS)} for _ in range(rng.randint(0, 3))]
            self.set_field(path, "cites", json.dumps(cites))
        elif what == "mentions":
            self.set_field(path, "body", json.dumps(self.prose()))
        elif what == "placeholder":  # ``recordtool new``'s body: a warning only reading the entry finds
            self.set_field(path, "body", json.dumps(PLACEHOLDER_BODY + " " + self.prose()))
        elif what == "reword":  # the same ids mentioned, in other words: the sentences quoted change
            said = rng.choice([" says.", " say."])
            self.edit(path, lambda lines: [line.replace(said, " once" + said, 1)
                                           if line.startswith("body:") else line for line in lines])
        elif what == "aside":  # a paragraph that mentions no id: what neighbours' pages show of it is the same
            aside = f"\\n\\nAn aside on {self.sentence().lower()}.\""
            self.edit(path, lambda lines: [line[:-1] + aside if line.startswith('body: "') and line.endswith('"')
                                           else line for line in lines])
        elif what == "status":
            self.set_field(path, "status", rng.choice(["active", "draft", "retracted", "superseded", "gone"]))
        elif what == "id":  # an id that does not match the file, or a renamed file with its id
            new_id = f"{path.stem.split('-')[0]}-{rng.randint(20, 30)}"
            if rng.random() < 0.5:
                self.edit(path, lambda lines: [f"id: {new_id}", *lines[1:]])
            elif not self.project.path(new_id).exists():
                text = path.read_text(encoding="utf-8").split("\n", 1)[1]
                path.unlink()
                self.write(new_id, text)
        elif what == "kind":  # a wrong kind: field, or a file in another kind's folder
            if rng.random() < 0.5:
                self.set_field(path, "kind", rng.choice(["note", "literature", "theory", "essay"]))
            else:
                folder = rng.choice([f for f in FOLDERS.values() if f != path.parent.name])
                target = path.parent.parent / folder / path.name
                if not target.exists():
                    path.rename(target)
                    self.touch(target)
        elif what == "delete":
            path.unlink()
            self.broken.pop(path, None)
        elif what == "break":  # invalid YAML, or a value the schema refuses
            self.broken.setdefault(path, path.read_bytes())
            if rng.random() < 0.5:
                self.edit(path, lambda lines: [*lines, "title: [unclosed"])
            else:
                self.set_field(path, "version", rng.choice(["0", "many", "{a: 1}"]))
        elif what == "mend":  # an entry made invalid before is valid again, as it was
            mended = [p for p in self.broken if p.exists()]
            if mended:
                fixed = rng.choice(mended)
                fixed.write_bytes(self.broken.pop(fixed))
                self.touch(fixed)
        elif what == "duplicate":
            folder = path.parent
            copy = folder / f"{path.stem.split('-')[0]}-{rng.randint(40, 45)}.yaml"
            if not copy.exists():
                shutil.copyfile(path, copy)  # the id inside is the original's: a duplicate id
                self.touch(copy)
        elif what == "verdict":
            config = load_config(self.root)
            claims = [i for i in self.ids() if i.startswith("THEORY-")]
            if claims:
                claim = rng.choice(claims)
                outcome = rng.choice(["pass", "fail"])
                write_verdict(config, verdict(claim, outcome, error=None if outcome == "pass" else "it broke"))
        elif what == "config":  # a relation more or less: every entry's results may change
            pyproject = self.root / "pyproject.toml"
            text = pyproject.read_text(encoding="utf-8")
            extra = '\n[tool.recordtool.relations]\nsorce = "Sorce of"\n'
            pyproject.write_text(text.replace(extra, "") if extra in text else text + extra, encoding="utf-8")
        elif what == "page":  # a page or a figure's copy (half the time, if any) deleted, or edited by hand
            # keeping its size: the next render puts it back
            pages = self.root / "record" / "pages"
            written = sorted(pages.rglob("*.png")) if rng.random() < 0.5 else []
            written = written or sorted(pages.rglob("*.md"))
            if written:
                page = rng.choice(written)
                data = page.read_bytes()
                if rng.random() < 0.5 or not data:
                    page.unlink()
                else:
                    page.write_bytes(data[:-1] + (b"!" if data[-1:] != b"!" else b"?"))
        elif what == "markup":  # a title that escaping must keep as it is
            self.set_field(path, "title", json.dumps(rng.choice(TITLES)))
        elif what == "markdown":
            self.set_field(path, "body", json.dumps(self.markdown()))
        elif what == "nested":  # an entry moved into a folder of its kind's folder, or back
            target = path.parent.parent / path.name if path.parent.name == "sub" else path.parent / "sub" / path.name
            if not target.exists():
                target.parent.mkdir(exist_ok=True)
                path.rename(target)
                self.touch(target)
        elif what == "figure":  # a verdict with a figure (published with the pages), or naming one that is not there
            config = load_config(self.root)
            claims = [i for i in self.ids() if i.startswith("THEORY-")]
            if claims:
                claim = rng.choice(claims)
                figure = config.verdicts / "figures" / claim / rng.choice(["loss.png", "trace.png"])
                if rng.random() < 0.8:  # (rewritten: most often of the same size, at another time)
                    figure.parent.mkdir(parents=True, exist_ok=True)
                    figure.write_bytes(b"\x89PNG\r\n\x1a\n" + rng.randbytes(rng.choice([8, 8, 8, 9])))
                    self.touch(figure)
                sidecar = figure.with_name(figure.name + ".json")  # its title and caption
                if rng.random() < 0.4:
                    sidecar.parent.mkdir(parents=True, exist_ok=True)
                    sidecar.write_text(json.dumps({"title": f"Figure {rng.randint(10, 99)}", "caption": "Seen."}),
                                       encoding="utf-8")  # (most often of the same size)
                    self.touch(sidecar)
                elif rng.random() < 0.2 and sidecar.exists():
                    sidecar.unlink()
                named = {figure, *(figure.parent.glob("*.png") if rng.random() < 0.5 else [])}
                write_verdict(config, verdict(claim, "pass", figures=sorted(config.relative(f) for f in named)))
        elif what == "unverified":  # a claim's verdict deleted
            written = sorted((self.root / "record" / "verdicts").glob("*.json"))
            if written:
                rng.choice(written).unlink()
        elif what == "kinds":  # a kind more or less in the configuration
            pyproject = self.root / "pyproject.toml"
            text = pyproject.read_text(encoding="utf-8")
            extra = "\n[tool.recordtool.kinds]\n" + "".join(
                f'{prefix} = {{ kind = "{kind}", folder = "{folder}" }}\n'
                for prefix, kind, folder in [("LIT", "literature", "literature"), ("NOTE", "note", "notes"),
                                             ("THEORY", "theory", "theory"), ("ESSAY", "essay", "essays")])
            pyproject.write_text(text.replace(extra, "") if extra in text else text + extra, encoding="utf-8")
        elif what == "same":  # written again with the same bytes: new times, same content
            path.write_bytes(path.read_bytes())
            self.touch(path)
        return what


def _pages(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and p.name != ".recordtool-snapshot.json"}


def _cold_copy(root: Path, to: Path, *, pages: bool = False) -> Path:
    """The project as it is, without its cache, and without its pages unless ``pages``: a render
    whose entry files do not all load keeps their pages as they were (only one of the same
    pages, cold, writes what it wrote), and exits 1."""
    shutil.rmtree(to, ignore_errors=True)
    shutil.copytree(root, to, ignore=shutil.ignore_patterns(".recordtool-cache", *([] if pages else ["pages"])))
    return to


def _validate(root: Path, *options: str) -> tuple[int, object, str]:
    outcome = invoke("validate", "--root", str(root), "--format", "json", *options)
    return outcome.code, json.loads(outcome.out), outcome.err


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_incremental_validate_and_render_are_a_cold_run(tmp_path: Path, seed: int) -> None:
    """Seeds 1 to 3 give every changed file a time long past; seed 4 leaves each the time its
    writing gave it, as a user's editor does right before a run: every changed file is then
    racy to the store and to the pages' kept keys, which compare its content."""
    walk = Walk(tmp_path / "project", seed, just_now=seed == 4)
    root = walk.root
    pages = root / "record" / "pages"
    done: list[str] = []
    first = walk.rng.sample(CHANGES, len(CHANGES))  # each kind of change at least once, then any
    for step in range(30):
        done += [walk.mutate(first.pop() if first else None) for _ in range(walk.rng.randint(1, 3))]
        incremental = _validate(root)
        rendered = invoke("render", "--root", str(root))
        cold = _cold_copy(root, tmp_path / "cold", pages=rendered.code == 1)
        assert incremental == _validate(cold, "--no-cache"), f"seed {seed}, step {step}: {done}"
        cold_rendered = invoke("render", "--root", str(cold), "--no-cache")
        assert rendered.code == cold_rendered.code, f"seed {seed}, step {step}: {done}"
        assert rendered.code == 0 or "do not load" in rendered.err or "does not load" in rendered.err
        assert _pages(pages) == _pages(cold / "record" / "pages"), f"seed {seed}, step {step}: {done}"
        assert (root / ".recordtool-cache" / "store.sqlite").is_file()
    assert set(CHANGES) <= set(done)


def test_a_record_emptied_and_filled_again_is_a_cold_run(tmp_path: Path) -> None:
    """Every entry deleted, then entries added again: what each kept file holds of no entry
    at all (an empty column, an empty shard) reads back as nothing, and every run after it
    gives what a cold run gives (the kept rows of an empty record once failed to read back)."""
    walk = Walk(tmp_path / "project", 7)
    root = walk.root
    steps = [lambda: [path.unlink() for path in walk.files()], lambda: walk.mutate("add"),
             lambda: [path.unlink() for path in walk.files()], lambda: walk.mutate("add"), lambda: walk.mutate("add")]
    for step, change in enumerate(["first", *steps]):
        if callable(change):
            change()
        incremental = _validate(root)
        assert invoke("render", "--root", str(root)).code == 0, step
        cold = _cold_copy(root, tmp_path / "cold")
        assert incremental == _validate(cold, "--no-cache"), step
        assert invoke("render", "--root", str(cold), "--no-cache").code == 0, step
        assert _pages(root / "record" / "pages") == _pages(cold / "record" / "pages"), step
    assert len(walk.files()) == 2


@pytest.mark.parametrize("seed", [8, 9])
def test_index_pages_and_a_summarised_graph_are_a_cold_render(
        tmp_path: Path, seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """``graph.md``, summarised by tag above ``WHOLE_MAX`` nodes (lowered here so that a small
    record is summarised), and every index page, after titles, tags, kinds, citations,
    statuses, verdicts, additions and deletions, are what a cold render gives."""
    from recordtool.render import mermaid

    monkeypatch.setattr(mermaid, "WHOLE_MAX", 2)
    walk = Walk(tmp_path / "project", seed)
    changes = ["title", "title", "tags", "tags", "tags", "kind", "add", "delete", "cites", "cites", "status",
               "verdict", "id", "same", "break", "mend", "duplicate", "page"]
    summarised = 0
    for now in _renders_as_cold(walk, tmp_path, changes, steps=20, seed=seed):
        summarised += "are more than 2 nodes" in now["graph.md"].decode()
    assert summarised >= 5, summarised  # the summary was drawn often


@pytest.mark.parametrize("seed", [10, 11])
def test_figures_copied_and_kept_are_a_cold_render(tmp_path: Path, seed: int) -> None:
    """A render copies a figure again only when its file or its copy is not as the last render
    left them: after figures added and rewritten (most often of the same
    size, at another time), their copies edited by hand or deleted, verdicts that name them or
    not, every page and every figure is what a cold render gives."""
    walk = Walk(tmp_path / "project", seed)
    changes = ["figure", "figure", "figure", "figure", "page", "page", "verdict", "unverified", "title", "same"]
    copies = 0
    for now in _renders_as_cold(walk, tmp_path, changes, steps=20, seed=seed):
        copies += sum(rel.endswith(".png") for rel in now)
    assert copies >= 20, copies  # (figures were there to copy, or to keep, at most steps)


def _renders_as_cold(walk: Walk, tmp_path: Path, changes: list[str], *, steps: int, seed: int
                     ) -> Iterator[dict[str, bytes]]:
    """Each step, one or two of ``changes`` (drawn at random), a render, and a cold render of a
    copy of the project: the pages (and figures) the render left, once found to be the cold
    render's."""
    root = walk.root
    done: list[str] = []
    for step in range(steps):
        done += [walk.mutate(walk.rng.choice(changes)) for _ in range(walk.rng.randint(1, 2))]
        code = invoke("render", "--root", str(root)).code
        cold = _cold_copy(root, tmp_path / "cold", pages=code == 1)
        assert invoke("render", "--root", str(cold), "--no-cache").code == code
        now = _pages(root / "record" / "pages")
        assert now == _pages(cold / "record" / "pages"), f"seed {seed}, step {step}: {done}"
        yield now


@pytest.mark.parametrize("outcomes", [("pass", "fail"), ("fail", "pass")])
def test_a_claims_new_verdict_recomposes_its_page(tmp_path: Path, outcomes: tuple[str, str]) -> None:
    """A verdict changes nothing in the record, only the claim's status: its page (and what
    shows the status) must still be composed again, as a cold render composes it."""
    walk = Walk(tmp_path / "project", 0)
    root = walk.root
    pages = root / "record" / "pages"
    config = load_config(root)
    claim = next(i for i in walk.ids() if i.startswith("THEORY-"))
    before: dict[str, bytes] = {}
    for outcome in outcomes:
        assert invoke("render", "--root", str(root)).code == 0
        write_verdict(config, verdict(claim, outcome, error=None if outcome == "pass" else "it broke"))
        assert invoke("render", "--root", str(root)).code == 0
        cold = _cold_copy(root, tmp_path / "cold")
        assert invoke("render", "--root", str(cold), "--no-cache").code == 0
        now = _pages(pages)
        assert now == _pages(cold / "record" / "pages"), outcome
        page = next(p for p in now if p.endswith(f"{claim}.md"))
        assert now[page] != before.get(page), f"{claim}'s page did not change with its verdict ({outcome})"
        before = now


@pytest.mark.parametrize("seed", [4, 5])
def test_the_graphs_dangling_mentions_and_orphans_are_what_its_indexes_say(tmp_path: Path, seed: int) -> None:
    """After random changes, the dangling mentions and the orphans ``build_graph`` works out are
    what the indexes of citations and mentions say."""
    from recordtool.record.graph import Graph
    from recordtool.record.project import open_project

    walk = Walk(tmp_path / "project", seed)
    for step in range(20):
        for _ in range(walk.rng.randint(1, 3)):
            walk.mutate()
        project = open_project(root=walk.root, cache=True)
        graph, entries, failed = project.graph, project.record.entries, project.record.failed
        indexed = Graph(project.record, graph.cited_by, graph.mentions_out, graph.mentions_in)
        assert graph.orphans() == indexed.orphans(), f"seed {seed}, step {step}"
        wanted: dict[str, list[object]] = {}
        for mentions in graph.mentions_out.values():
            for mention in mentions:
                if mention.target not in entries and mention.target not in failed:
                    wanted.setdefault(mention.target, []).append(mention)
        assert graph.dangling == {t: wanted[t] for t in sorted(wanted, key=id_sort_key)}, f"seed {seed}, step {step}"


KEEPS_IDS = ["title", "cites", "relation", "mentions", "reword", "placeholder", "same", "kind"]  # changes that keep the ids


@pytest.mark.parametrize("seed", [8, 9])
def test_what_spans_the_record_after_changes_is_a_cold_run(tmp_path: Path, seed: int) -> None:
    """After changes that keep the record's ids (citations, relations and 'uses' cycles,
    mentions, sentences, titles), entries added, deleted, broken and mended, the dangling
    mentions, orphans, cycles, missing citations and every other problem of a project opened
    with the store are a cold run's."""
    from recordtool.record.project import open_project

    walk = Walk(tmp_path / "project", seed)
    open_project(root=walk.root, cache=True)
    cycles = failing = 0
    for step in range(25):
        what = {7: "add", 3: "delete", 5: "break", 6: "mend"}.get(step % 8)
        done = [walk.mutate(what or walk.rng.choice(KEEPS_IDS)) for _ in range(1 if what else walk.rng.randint(1, 3))]
        if step % 5 == 1:  # two entries that rely on each other: a 'uses' cycle
            a, b = walk.rng.sample(walk.files(), 2)
            walk.set_field(a, "cites", json.dumps([{"id": b.stem, "as": "uses"}]))
            walk.set_field(b, "cites", json.dumps([{"id": "NOTE-404", "as": "uses"}, {"id": a.stem, "as": "uses"}]))
            done.append(f"cycle {a.stem} {b.stem}")
        warm = open_project(root=walk.root, cache=True)
        cold = open_project(root=walk.root)
        assert warm.problems == cold.problems, f"seed {seed}, step {step}: {done}"
        assert warm.graph.orphans() == cold.graph.orphans(), f"seed {seed}, step {step}: {done}"
        assert warm.graph.dangling == cold.graph.dangling, f"seed {seed}, step {step}: {done}"
        assert _names(warm) == _names(cold), f"seed {seed}, step {step}: {done}"
        failing += bool(warm.record.failed)
        cycles += any(p.code == "uses-cycle" for p in cold.problems)
    assert cycles and failing, "no step made a 'uses' cycle or a broken entry: the walk does not test them"


def _names(project: Project) -> dict[str, set[str]]:
    """The ids each entry of ``project`` cites or mentions (in the record or not)."""
    record, mentions = project.record, project.graph.mentions_out
    return {i: {cited for cited, _relation in record.cites(i)} | {m.target for m in mentions.get(i, ())}
            for i in record.entries}


def test_a_render_after_many_changes_gives_the_cold_pages(project: ProjectBuilder, tmp_path: Path) -> None:
    """After half the claims changed at once, naming other entries, the pages are a cold render's."""
    root = _papers_and_claims(project, 20)
    assert invoke("render", "--root", str(root)).code == 0
    for n in range(1, 21, 2):  # half the claims: another body, naming other entries
        path = project.path(f"THEORY-{n}")
        path.write_text(path.read_text(encoding="utf-8").replace("body: Against", f"body: After LIT-{n % 5 + 1}, against"),
                        encoding="utf-8")
    rendered = invoke("render", "--root", str(root))
    assert rendered.code == 0 and not rendered.err, rendered
    cold = _cold_copy(root, tmp_path / "cold")
    assert invoke("render", "--root", str(cold), "--no-cache").code == 0
    assert _pages(root / "record" / "pages") == _pages(cold / "record" / "pages")


def test_a_body_edit_rewrites_only_the_pages_it_changes(project: ProjectBuilder, tmp_path: Path) -> None:
    """After one body edit, render writes the pages that show it (the entry's, and the quote on
    the page of the entry it mentions), and they are a cold render's."""
    for n in range(1, 13):
        project.add(f"LIT-{n}", f"title: Paper {n}\ntags: [t{n % 3}]\n"
                                'reference: {authors: ["Doe, J."], year: 2021, title: A paper}\n')
        project.add(f"THEORY-{n}", f"title: Claim {n}\nstatement: Claim {n} holds.\ncites: [{{id: LIT-{n}, as: source}}]\n")
    project.add("NOTE-1", "title: A note\ncites: [{id: LIT-1, as: paper}]\nbody: On LIT-2.\n")
    root = project.root
    _age_all(root)
    assert invoke("render", "--root", str(root)).code == 0
    path = project.path("NOTE-1")
    path.write_text(path.read_text(encoding="utf-8").replace("On LIT-2.", "On LIT-2, again."), encoding="utf-8")
    rendered = invoke("render", "--root", str(root))
    assert rendered.code == 0 and ": 2 written, " in rendered.out and not rendered.err  # NOTE-1's page, LIT-2's quote
    cold = _cold_copy(root, tmp_path / "cold")
    assert invoke("render", "--root", str(cold), "--no-cache").code == 0
    assert _pages(root / "record" / "pages") == _pages(cold / "record" / "pages")


def test_a_render_into_a_new_folder_writes_every_page_as_a_cold_render(
        project: ProjectBuilder, tmp_path_factory: pytest.TempPathFactory) -> None:
    """With the store and the page keys kept, a render into a folder never rendered to writes
    every page, those of a cold render."""
    root = _papers_and_claims(project, 30)
    # (folders outside the project: the pages' keys are the same in any such folder)
    outside = tmp_path_factory.mktemp("outside")
    assert invoke("render", "--root", str(root), "-o", str(outside / "first")).code == 0
    rendered = invoke("render", "--root", str(root), "-o", str(outside / "site"))
    assert rendered.code == 0 and ": 66 written, 0 unchanged" in rendered.out and not rendered.err, rendered
    cold = _cold_copy(root, outside / "cold")
    assert invoke("render", "--root", str(cold), "--no-cache", "-o", str(outside / "cold-site")).code == 0
    assert _pages(outside / "site") == _pages(outside / "cold-site")


def _papers_and_claims(project: ProjectBuilder, count: int) -> Path:
    """``count`` papers and as many claims, each citing its paper and naming the next claim and
    a paper in its body, written long ago (``_age_all``); the project's root."""
    for n in range(1, count + 1):
        project.add(f"LIT-{n}", f"title: Paper {n}\n"
                                'reference: {authors: ["Doe, J."], year: 2021, title: A paper}\n')
        project.add(f"THEORY-{n}", f"title: Claim {n}\nstatement: Claim {n} holds.\n"
                    f"cites: [{{id: LIT-{n}, as: source}}]\nbody: Against THEORY-{n % count + 1} and LIT-{n % 7 + 1}.\n")
    _age_all(project.root)
    return project.root


def _age_all(root: Path) -> None:
    """Every file of the project written long ago (the cache then trusts sizes and times)."""
    for folder, _dirs, files in os.walk(root):
        for name in files:
            os.utime(os.path.join(folder, name), ns=(SEED_OF_TIME, SEED_OF_TIME))


