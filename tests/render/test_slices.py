"""Slices of a project: every entry page composed from its slice alone, pickled as a worker
gets it, is the page composed from the whole project."""

from __future__ import annotations

import pickle
import sys
from pathlib import Path

import pytest

from recordtool.record.project import open_project
from recordtool.render import slices
from recordtool.render.page import render_entry
from recordtool.render.plan import context, plan_site
from recordtool.render.prose import compose_body
from recordtool.render.sitemap import Context
from recordtool.verify.status import assess
from recordtool.verify.verdict import ClaimStatus
from tests.conftest import ProjectBuilder
from tests.render_record import small_record, statuses, verdict


def _through_a_worker(ctx: Context, size: int, keep: bool = True) -> dict[str, str]:
    """Every entry page of ``ctx``, composed chunk by chunk of ``size`` entries from the slice a
    worker gets (pickled, as ``parallel.map_shipped`` sends it); with ``keep``, each chunk's
    context keeps the memos of the one before, as a worker does (``write.compose_shipped``)."""
    common = pickle.loads(pickle.dumps(slices.shared(ctx)))
    ids = list(ctx.project.record.entries)
    pages = {}
    kept = None
    for start in range(0, len(ids), size):
        own = ids[start:start + size]
        packed = pickle.loads(pickle.dumps(slices.pack(ctx, own), protocol=pickle.HIGHEST_PROTOCOL))
        sliced = slices.context(common, packed, kept if keep else None)
        kept = slices.memos(sliced)
        for entry_id in own:
            try:
                pages[entry_id] = render_entry(sliced, entry_id)
            except slices.Missing as exc:  # allowed (composed by the caller), but then slices save nothing
                raise AssertionError(f"the page of {entry_id} needs {exc} beyond its slice: add it to "
                                     "slices.pack") from exc
    return pages


def _compare(ctx: Context, size: int) -> None:
    whole = plan_site(ctx)
    for keep in (True, False):
        pages = _through_a_worker(ctx, size, keep)
        assert pages and all(text == whole.compose(f"{entry_id}.md") for entry_id, text in pages.items())


@pytest.mark.parametrize("size", [1, 3])
def test_the_small_record_with_a_verdict(project: ProjectBuilder, size: int) -> None:
    record = small_record(project)
    states = statuses(record, THEORY_1=ClaimStatus("THEORY-1", "verified", verdict()))
    _compare(context(record, states, project.root / "record" / "pages"), size)


def test_a_worker_works_out_what_pages_show_of_a_neighbour_once(tmp_path: Path) -> None:
    """The memos of one chunk's context are those of the next (``slices.memos``): a
    neighbour's label is worked out once per worker, not once per chunk."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    from bench_scale import generate_record  # type: ignore[import-not-found]

    from recordtool.render import mermaid

    generate_record(tmp_path, 60, seed=5)
    record = open_project(root=tmp_path, compose=compose_body)
    ctx = context(record, assess(record), tmp_path / "out")
    labelled: list[str] = []
    real = mermaid.label

    def label(ctx: Context, entry_id: str) -> str:
        labelled.append(entry_id)
        return real(ctx, entry_id)

    mermaid.label = label  # type: ignore[assignment]
    try:
        _through_a_worker(ctx, 4, keep=True)
        once = list(labelled)
        labelled.clear()
        _through_a_worker(ctx, 4, keep=False)
    finally:
        mermaid.label = real  # type: ignore[assignment]
    assert once and len(once) == len(set(once)) < len(labelled)


def test_a_synthetic_record_of_research_markdown(tmp_path: Path) -> None:
    """Citations, mentions both ways, ids not in the record, relative links, tables, code."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    from bench_scale import generate_record  # type: ignore[import-not-found]

    generate_record(tmp_path, 120, seed=3)
    (tmp_path / "record" / "notes" / "NOTE-2.yaml").write_text("id: NOTE-2\ntitle: [broken\n", encoding="utf-8")
    record = open_project(root=tmp_path, compose=compose_body)
    assert "NOTE-2" in record.record.failed  # mentioned, cited, and could not be loaded
    _compare(context(record, assess(record), tmp_path / "out"), 16)


def test_a_slice_answers_for_what_it_holds_and_refuses_the_rest() -> None:
    part = slices.Part({"A-1": 1}, frozenset({"A-1", "A-2"}))
    assert part["A-1"] == 1 and part.get("A-2", 0) == 0 and "A-1" in part and "A-2" not in part
    with pytest.raises(KeyError):
        _ = part["A-2"]
    for asked in (lambda: part["B-1"], lambda: part.get("B-1"), lambda: "B-1" in part, lambda: list(part),
                  lambda: len(part), part.keys, part.values, part.items):
        with pytest.raises(slices.Missing):
            asked()
    faces = {"A-2": ("Second", "A-1", "uses")}
    entries = slices.Entries({"A-1": "first"}, faces, {"A-1": 0, "A-2": 1, "A-3": 2})
    assert list(entries) == ["A-1", "A-2", "A-3"] and len(entries) == 3 and "A-3" in entries
    assert "B-1" not in entries and entries.get("B-1") is None
    second = entries["A-2"]
    assert (second.display_title, [(c.id, c.as_) for c in second.cites]) == ("Second", [("A-1", "uses")])
    with pytest.raises(slices.Missing):
        _ = second.body  # a face holds the title and citations only
    with pytest.raises(slices.Missing):
        _ = entries["A-3"]
    with pytest.raises(KeyError):
        _ = entries["B-1"]
