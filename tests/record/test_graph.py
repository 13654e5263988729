from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from recordtool.record.graph import Backlink, Mention
from recordtool.record.project import open_project
from tests.conftest import EveryWorker, ProjectBuilder, share_with_a_pool


def test_inverse_citations_backlinks_and_mentions(minimal: Callable[[], ProjectBuilder]) -> None:
    project = minimal()
    graph = open_project(root=project.root).graph
    assert graph.inverse("LIT-1") == [
        ("paper", "Cited as 'paper' by", ["NOTE-1"]),
        ("source", "Cited as 'source' by", ["THEORY-1"]),
    ]
    assert graph.backlinks("LIT-1") == [
        Backlink("NOTE-1", ("paper",), (Mention("NOTE-1", "LIT-1", "body", 4, "Read LIT-1 in full."),)),
        Backlink("THEORY-1", ("source",), (Mention("THEORY-1", "LIT-1", "statement", 2,
                                                   "The paper's claim, drawn from LIT-1."),)),
    ]
    assert graph.backlinks("NOTE-1") == [
        Backlink("LIT-1", (), (Mention("LIT-1", "NOTE-1", "body", 4, "See NOTE-1."),)),
    ]
    assert graph.neighbours("LIT-1") == ["NOTE-1", "THEORY-1"]
    assert graph.orphans() == []


def test_dangling_mentions_are_warnings_and_wanted(project: ProjectBuilder) -> None:
    project.add("NOTE-1", "title: T\nbody: |\n  Builds on THEORY-404.\n  Not `THEORY-405` in code.\n")
    project.add("NOTE-2", "title: Alone\n")
    result = open_project(root=project.root)
    assert [str(p) for p in result.problems] == [
        "record/notes/NOTE-1.yaml:4:1: warning: body: THEORY-404 is mentioned but not in the record; "
        "add it or write it without its id",
    ]
    assert list(result.graph.dangling) == ["THEORY-404"]
    assert result.graph.orphans() == ["NOTE-1", "NOTE-2"]


def test_citing_and_dangling_ids_are_listed_in_id_order(project: ProjectBuilder) -> None:
    project.add("LIT-1", 'title: P\nreference: {authors: ["A, B."], year: 2021, title: P}')
    for n in (100, 9, 10):
        project.add(f"THEORY-{n}", "statement: S.\ncites: [{id: LIT-1, as: source}]\n")
    project.add("NOTE-1", "title: N\ncites: [{id: LIT-1, as: paper}]\nbody: After THEORY-975, THEORY-1009 and THEORY-018.\n")
    result = open_project(root=project.root)
    assert result.errors == []
    assert result.graph.inverse("LIT-1") == [
        ("paper", "Cited as 'paper' by", ["NOTE-1"]),
        ("source", "Cited as 'source' by", ["THEORY-9", "THEORY-10", "THEORY-100"]),
    ]
    assert list(result.graph.dangling) == ["THEORY-018", "THEORY-975", "THEORY-1009"]
    assert [p.code for p in result.warnings] == ["dangling-mention"] * 3


def test_orphans_are_entries_with_no_link_either_way(project: ProjectBuilder) -> None:
    project.add("LIT-1", 'title: P\nreference: {authors: ["A, B."], year: 2021, title: P}')
    project.add("NOTE-1", "title: cites\ncites: [{id: LIT-1, as: paper}]\n")
    project.add("NOTE-2", "title: mentions\nbody: See NOTE-3.\n")
    project.add("NOTE-3", "title: mentioned\n")
    project.add("NOTE-4", "title: alone\nbody: Mentions THEORY-404 only, which is not in the record.\n")
    graph = open_project(root=project.root).graph
    assert graph.orphans() == ["NOTE-4"]
    assert graph.orphans() == [i for i in graph.record.entries if not graph.neighbours(i)]


def graph_project(project: ProjectBuilder) -> ProjectBuilder:
    """Entries that cite, mention and miss each other: enough for several chunks."""
    project.add("LIT-1", 'title: P\nreference: {authors: ["A, B."], year: 2021, title: P}\nbody: See NOTE-1.')
    for n in range(1, 9):
        project.add(f"NOTE-{n}", f"title: Note {n}\ncites: [{{id: LIT-1, as: paper}}]\n"
                                 f"body: After NOTE-{n + 1} and THEORY-{n}; not `NOTE-{n + 2}`.\n")
    for n in range(1, 5):
        project.add(f"THEORY-{n}", f"statement: Drawn from LIT-1 and NOTE-{n}.\ncites: [{{id: LIT-1, as: source}}]\n")
    return project


@pytest.mark.parametrize("cache", [False, True])
def test_each_mention_is_made_once_and_shared_by_the_indexes(project: ProjectBuilder, cache: bool) -> None:
    """A mention is made once, when its entry's file is read (or its mentions come back from
    the store), and the graph's indexes hold that very object: the same whether the mentions
    were found now or read back from the store."""
    graph_project(project)
    if cache:
        open_project(root=project.root, cache=True)  # (keeps the mentions; the next opening reads them back)
    graph = open_project(root=project.root, cache=cache).graph
    out = graph.mentions_out
    sentence = "After NOTE-3 and THEORY-2; not NOTE-4."  # (as the page quotes it: the code span's text)
    assert [tuple(m) for m in out["NOTE-2"]] == [("NOTE-2", "NOTE-3", "body", 4, sentence),
                                                 ("NOTE-2", "THEORY-2", "body", 4, sentence)]
    for source, mentions in out.items():
        assert all(type(m) is Mention and m.source == source for m in mentions)
    for target, mentions in graph.mentions_in.items():
        for mention in mentions:
            assert any(m is mention for m in out[mention.source]), (target, mention)  # the same object, not a copy


@pytest.mark.parametrize("jobs", [2, 3])
def test_reading_with_a_pool_gives_the_same_graph(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, jobs: int) -> None:
    """Each entry's prose is scanned by the process that read its file: the graph and its
    problems are those of one process, and one pool is started, to read."""
    import recordtool.record.load as load_module
    from tests.conftest import count_pools

    project = graph_project(ProjectBuilder(tmp_path))
    serial = open_project(root=project.root, jobs=1)
    share_with_a_pool(monkeypatch, load_module)
    reader = EveryWorker(load_module.load_file, jobs, tmp_path / "calls")
    monkeypatch.setattr(load_module, "load_file", reader)
    pools = count_pools(monkeypatch)
    shared = open_project(root=project.root, jobs=jobs)
    assert pools == [1]
    assert len(reader.pids()) == jobs  # every worker read entries
    for name in ("cited_by", "mentions_out", "mentions_in", "dangling"):
        assert getattr(shared.graph, name) == getattr(serial.graph, name), name
    assert shared.problems == serial.problems
