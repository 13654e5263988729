"""One work in two literature entries: found by DOI, URL or title, as written differently."""

from __future__ import annotations

from recordtool.record.duplicates import doi_key, same_work, title_key, url_key
from recordtool.record.project import open_project
from tests.conftest import ProjectBuilder


def test_keys_fold_what_differs_in_writing_only() -> None:
    assert doi_key("https://doi.org/10.1/AbC") == doi_key("doi:10.1/abc") == doi_key("10.1/ABC") == "10.1/abc"
    assert url_key("HTTPS://www.Example.org/a/") == url_key("http://example.org/a") == "example.org/a"
    assert url_key("https://example.org/a?b=1") != url_key("https://example.org/a")
    assert title_key("In-context  Learning: and Induction Heads!") == title_key("in context learning and induction heads")


def test_validate_warns_of_each_entry_that_repeats_an_earlier_one(project: ProjectBuilder) -> None:
    project.add("LIT-1", """
        title: In-context Learning and Induction Heads
        reference:
          authors: ["Olsson, C."]
          year: 2022
          title: In-context Learning and Induction Heads
          url: https://transformer-circuits.pub/2022/in-context/
          doi: 10.1234/abc
    """)
    project.add("LIT-2", """
        title: Induction heads
        reference:
          authors: ["Olsson, C."]
          year: 2022
          title: "In-context learning and induction heads."
          url: http://transformer-circuits.pub/2022/in-context
    """)
    project.add("LIT-3", """
        title: Another
        reference: {authors: ["Doe, J."], year: 2020, title: Another, doi: "https://doi.org/10.1234/ABC"}
    """)
    project.add("NOTE-1", "title: In-context Learning and Induction Heads\n")  # not literature: never compared
    warnings = [str(p) for p in open_project(root=project.root).warnings if p.code == "duplicate"]
    assert warnings == [
        "record/literature/LIT-2.yaml:7:8: warning: reference.url: the same URL and title as LIT-1 "
        "(record/literature/LIT-1.yaml:7:8); if both are one work, keep one entry and cite it",
        "record/literature/LIT-3.yaml:3:68: warning: reference.doi: the same DOI as LIT-1 "
        "(record/literature/LIT-1.yaml:8:8); if both are one work, keep one entry and cite it",
    ]


def test_same_work_names_the_entry_and_what_it_shares(project: ProjectBuilder) -> None:
    project.add("LIT-1", 'title: P\nreference: {authors: ["A, B."], year: 2021, title: "The Paper", doi: 10.1234/x}')
    record = open_project(root=project.root).record
    assert same_work(record, "Another", doi="https://doi.org/10.1234/X") == ("LIT-1", "DOI")
    assert same_work(record, "the paper") == ("LIT-1", "title")
    assert same_work(record, "Another", url="https://example.org") is None
