from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from recordtool.record.config import (
    ConfigError,
    config_from_table,
    find_root,
    id_regex,
    load_config,
)
from tests.conftest import ProjectBuilder


def test_defaults_when_nothing_is_configured(tmp_path: Path) -> None:
    config = load_config(tmp_path)
    assert config.record == tmp_path / "record"
    assert sorted(config.kinds) == ["LIT", "NOTE", "THEORY"]
    assert config.relations["source"] == "Cited as 'source' by"
    assert config.id_pattern.findall("THEORY-988, LIT-1534; NOTE-1189") == ["THEORY-988", "LIT-1534", "NOTE-1189"]
    assert config.scheduler is None  # checks run here
    assert config_from_table(tmp_path, {"scheduler": " tcp://head:8786 "}).scheduler == "tcp://head:8786"


@pytest.mark.parametrize("prefixes", [["LIT", "NOTE", "THEORY"], ["T", "TH", "THEORY", "X1"], ["A"]])
def test_the_id_regex_matches_what_a_plain_lookbehind_matches(prefixes: list[str]) -> None:
    plain = re.compile(rf"(?<![A-Za-z0-9_])(?:{'|'.join(sorted(prefixes, key=len, reverse=True))})-\d+\b")
    fast = id_regex(prefixes)
    rng = random.Random(0)
    alphabet = "".join(sorted(set("".join(prefixes)))) + "-0123456789 _aé.[](`*"
    for _ in range(50_000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 16)))
        assert [m.span() for m in fast.finditer(text)] == [m.span() for m in plain.finditer(text)], text
    assert fast.findall("xLIT-1 _LIT-2 (LIT-3) LIT-4x LIT-5_ éLIT-6") == (["LIT-3", "LIT-6"] if "LIT" in prefixes else [])


def test_kinds_and_relations_are_configuration(tmp_path: Path) -> None:
    config = config_from_table(tmp_path, {
        "kinds": {"DATA": {"kind": "dataset", "folder": "data"}, "THEORY": {"kind": "theory", "folder": "claims"}},
        "relations": {"trains-on": "Trained on by"},
    })
    assert config.kinds["DATA"].schema == "note"
    assert config.kinds["THEORY"].schema == "theory"
    assert config.kind_named("dataset") == config.kinds["DATA"]
    assert config.relations == {"trains-on": "Trained on by"}


@pytest.mark.parametrize(("table", "message"), [
    ({"kinds": {"lit": {"kind": "literature"}}}, "[tool.recordtool].kinds: 'lit' is not an id prefix; use capitals, e.g. LIT"),
    ({"relations": {"Uses": "Used by"}}, "[tool.recordtool].relations: 'Uses' must be one lowercase word"),
    ({"timeout": -1}, "[tool.recordtool]: 'timeout' must be a positive number of seconds, not -1"),
    ({"timeout": float("inf")}, "[tool.recordtool]: 'timeout' must be a positive number of seconds, not inf"),
    ({"timeout": float("nan")}, "[tool.recordtool]: 'timeout' must be a positive number of seconds, not nan"),
    ({"checks": "../x"}, "[tool.recordtool]: 'checks' must be a package name such as \"checks\", not '../x'"),
    ({"scheduler": 8786}, "[tool.recordtool]: 'scheduler' must be a Dask scheduler's address such as "
                          "\"tcp://host:8786\" or \"local:4\", not 8786"),
    # a kind's folder: one folder of the record folder (those starting with '.' are never read)
    *[({"kinds": {"NOTE": {"kind": "note", "folder": folder}}},
       "[tool.recordtool].kinds.NOTE: folder must be the name of a folder in the record folder, such as "
       f"\"note\", not {folder!r}") for folder in ["../notes", "/etc", "notes/sub", "notes\\sub", "", ".", "..",
                                                  ".notes", 3, ["notes"]]],
    ({"kinds": {"NOTE": {"kind": "note", "fodler": "notes"}}},
     "[tool.recordtool].kinds.NOTE: unknown key 'fodler'; known keys: folder, kind, schema"),
    *[({"kinds": {"NOTE": {"kind": name}}},
       f"[tool.recordtool].kinds.NOTE: kind must be one lowercase word, such as \"note\", not {name!r}")
      for name in ["", "Note", "my notes", "../x", "notes/x"]],
    ({"kinds": {"NOTE": {"kind": "note"}, "MEMO": {"kind": "note", "folder": "memos"}}},
     "[tool.recordtool].kinds: NOTE and MEMO are both kind 'note'; give each kind a name of its own"),
    ({"kinds": {"NOTE": {"kind": "note", "folder": "notes"}, "MEMO": {"kind": "memo", "folder": "notes"}}},
     "[tool.recordtool].kinds: NOTE and MEMO both keep their entries in 'notes'; give each kind a folder of its own"),
    ({"kinds": 3}, "[tool.recordtool]: 'kinds' must be a table ([tool.recordtool.kinds], with lines such as "
                   "NOTE = { kind = \"note\", folder = \"notes\" }), not 3"),
    ({"kinds": {}}, "[tool.recordtool].kinds: no kind of entry; give at least one, such as "
                    "NOTE = { kind = \"note\", folder = \"notes\" }"),
    ({"relations": ["uses"]}, "[tool.recordtool]: 'relations' must be a table ([tool.recordtool.relations], with "
                              "lines such as uses = \"Used by\"), not ['uses']"),
    # what recordtool writes: never a kind's folder, the pages never in one
    ({"pages": "record/notes/pages"}, "[tool.recordtool]: 'pages' (record/notes/pages) is inside the folder of kind "
                                      "NOTE (note), which holds entries; give the pages a folder of their own, such as "
                                      "\"record/pages\""),
    ({"verdicts": "record/theory"}, "[tool.recordtool]: 'verdicts' (record/theory) is the folder of kind THEORY "
                                    "(theory), which holds entries; give the verdicts a folder of their own, such as "
                                    "\"record/verdicts\""),
    ({"cache": "record/./literature"}, "[tool.recordtool]: 'cache' (record/./literature) is the folder of kind LIT "
                                       "(literature), which holds entries; give the cache a folder of its own, such "
                                       "as \".recordtool-cache\""),
    ({"kinds": {"PAGE": {"kind": "page", "folder": "pages"}}},
     "[tool.recordtool]: 'pages' (record/pages) is the folder of kind PAGE (page), which holds entries; give the "
     "pages a folder of their own, such as \"pages\""),
])
def test_bad_configuration_says_how_to_fix_it(tmp_path: Path, table: dict[str, object], message: str) -> None:
    """Each setting that cannot work is refused with what to write instead, never read as
    something else (a kind whose folder is outside the record would read no entry, and call
    the user's folder stray)."""
    with pytest.raises(ConfigError) as info:
        config_from_table(tmp_path, table)
    assert str(info.value) == message


def test_find_root_walks_up_to_the_configured_project(project: ProjectBuilder) -> None:
    assert find_root(project.root / "record" / "theory") == project.root


@pytest.mark.parametrize("text", ["tool = 3\n", "[tool]\nrecordtool = 3\n", "[tool]\nrecordtool = [1]\n"])
def test_a_recordtool_table_that_is_no_table_is_refused_or_left_alone(tmp_path: Path, text: str) -> None:
    """``tool`` that is not a table holds no recordtool settings (the defaults); a
    ``tool.recordtool`` that is not one is refused, never a crash."""
    (tmp_path / "pyproject.toml").write_text(text, encoding="utf-8")
    if text.startswith("tool ="):
        assert load_config(tmp_path).record == tmp_path / "record"
        return
    with pytest.raises(ConfigError) as info:
        load_config(tmp_path)
    assert str(info.value).startswith("pyproject.toml [tool.recordtool]: must be a table of settings")
