"""BibTeX in: one entry of a file as a literature entry's reference, its LaTeX decoded."""

from __future__ import annotations

from pathlib import Path

import pytest

from recordtool.record.bibtex import BibtexError, read_reference
from recordtool.record.schema import Reference

PAPER = r"""@article{olsson2022,
  Title = {In-context {L}earning and {I}nduction {H}eads -- a {G}\"{o}del study},
  author = {Olsson, Catherine and M{\"u}ller, Jean-Paul and von Neumann, John and others},
  journal = {Transformer
             Circuits Thread},
  year = {2022},
  doi = {https://doi.org/10.1234/Ind.2022},
  url = {https://transformer-circuits.pub/2022/in-context/}
}
"""
OTHER = "@inproceedings{elhage2021, title = {A Framework}, author = {Elhage, N.}, booktitle = {Thread}, year = 2021}\n"


def bib(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "refs.bib"
    path.write_text(text, encoding="utf-8")
    return path


def test_an_entry_becomes_a_reference_with_its_latex_decoded(tmp_path: Path) -> None:
    assert read_reference(bib(tmp_path, PAPER)) == Reference(
        authors=["Olsson, C.", "Müller, J.-P.", "von Neumann, J."], et_al=True, year=2022,
        title="In-context Learning and Induction Heads – a Gödel study", venue="Transformer Circuits Thread",
        url="https://transformer-circuits.pub/2022/in-context/", doi="10.1234/Ind.2022")


def test_key_or_doi_chooses_among_several_entries(tmp_path: Path) -> None:
    path = bib(tmp_path, PAPER + OTHER)
    assert read_reference(path, key="elhage2021").venue == "Thread"
    assert read_reference(path, doi="doi:10.1234/IND.2022").title.startswith("In-context")
    with pytest.raises(BibtexError) as caught:
        read_reference(path)
    assert str(caught.value) == f"{path} holds 2 entries; choose one with --key: olsson2022, elhage2021"
    with pytest.raises(BibtexError) as caught:
        read_reference(path, key="olson2022")
    assert str(caught.value) == f"no entry 'olson2022' in {path}; its keys: olsson2022, elhage2021"
    with pytest.raises(BibtexError) as caught:
        read_reference(path, key="elhage2021", doi="10.1234/ind.2022")
    assert str(caught.value) == (f"no entry 'elhage2021' with DOI 10.1234/ind.2022 in {path}; "
                                 "its keys: olsson2022, elhage2021")


@pytest.mark.parametrize(("text", "message"), [
    (OTHER + "@article{bad, title = {oops\n", "{path}:2: not valid BibTeX (Unexpectedly reached end of file); "
                                              "fix it or export it again"),
    ("no entry here\n", "{path} holds no BibTeX entry; export one from your reference manager"),
    ("@misc{m, title = {T}}\n", "{path}:1: @misc{{m}} has no author or year; add them to the BibTeX"),
    ("@misc{m, title = {T}, author = {A, B.}, year = {soon}}\n",
     "{path}:1: @misc{{m}}: year: Input should be a valid integer, unable to parse string as an integer; "
     "fix it in the BibTeX"),
    ("@misc{m, title = {T}, author = {A, B.}, year = 2020, url = {javascript:alert(1)}}\n",
     "{path}:1: @misc{{m}}: url: 'javascript:alert(1)' is not a link a page may carry; write an http(s) address, "
     "a doi: or a path relative to the record (no javascript:, data:, file: or spaces); fix it in the BibTeX"),
])
def test_bibtex_that_gives_no_reference_is_one_clear_line(tmp_path: Path, text: str, message: str) -> None:
    path = bib(tmp_path, text)
    with pytest.raises(BibtexError) as caught:
        read_reference(path)
    assert str(caught.value) == message.format(path=path)


def test_a_file_that_is_not_utf8_is_named(tmp_path: Path) -> None:
    path = tmp_path / "refs.bib"
    path.write_bytes(PAPER.replace(r"M{\"u}ller", "Müller").encode("latin-1"))
    with pytest.raises(BibtexError) as caught:
        read_reference(path)
    assert str(caught.value) == f"cannot read {path}: it is not UTF-8 text"
