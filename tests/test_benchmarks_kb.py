"""MetaQA's kb.txt as an RDF KB under the generic profile (pyql.kb.metaqa, ``metaqa:PATH``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pyql import Query
from pyql.errors import KBError
from pyql.kb import KB
from pyql.kb.metaqa import METAQA, entity_id, entity_local, read_triples, write_turtle
from pyql.builder.profiles import get_profile
from pyql.builder.terms import parse_term

KB_TXT = Path(__file__).resolve().parent / "data" / "metaqa" / "kb.txt"


def test_open_metaqa_kb_with_labels_and_relations() -> None:
    kb = KB.open(f"metaqa:{KB_TXT}", "generic")
    assert kb.profile.name == "generic"
    relations = kb.relations(entity_id("Kismet"))
    assert set(relations.forward) == {
        "mqr:directed_by", "mqr:written_by", "mqr:starred_actors", "mqr:release_year", "mqr:in_language", "mqr:has_tags",
    }  # rdfs:label is not a relation to offer
    assert kb.relations(entity_id("Joe Thomas")).backward == ("mqr:starred_actors",)


def test_a_query_answers_with_labels() -> None:
    kb = KB.open(f"metaqa:{KB_TXT}", "generic")
    q = Query(profile=kb.profile).add_fact("?movie", "mqr:starred_actors", entity_id("Helen Mack")).set_answer("?movie")
    labels = sorted(a.to_dict()["label"] for a in kb.execute(q).answers())
    assert labels == ["Divorce", "Kiss and Make-Up", "The Son of Kong"]


def test_metaqa_needs_the_generic_profile_and_a_good_file(tmp_path: Path) -> None:
    with pytest.raises(KBError, match="give --profile generic"):
        KB.open(f"metaqa:{KB_TXT}", "freebase")
    with pytest.raises(KBError, match="no MetaQA kb.txt"):
        KB.open(f"metaqa:{tmp_path / 'kb.txt'}", "generic")
    bad = tmp_path / "kb.txt"
    bad.write_text("Kismet|directed_by|William Dieterle\nKismet|has_tags\n")
    with pytest.raises(KBError, match="line 2"):
        list(read_triples(bad))


def test_turtle_export_loads_back_on_the_same_names(tmp_path: Path) -> None:
    out = tmp_path / "kb.ttl"
    count = write_turtle(KB_TXT, out)
    lines = [line for line in KB_TXT.read_text(encoding="utf-8").splitlines() if line.strip()]
    names = {part for line in lines for part in (line.split("|")[0], line.split("|")[2])}
    assert count == len(lines) + len(names)  # one triple per line, one label per entity
    kb = KB.open(str(out), METAQA)
    assert "mqr:starred_actors" in kb.relations(entity_id("Before the Rain")).forward


def test_ids_keep_case_and_characters_apart() -> None:
    assert entity_id("Clint Eastwood") != entity_id("clint eastwood")  # the actor and the tag
    assert entity_local("bd-r") != entity_local("bd r") != entity_local("bd_r")
    assert entity_local("$002emng").startswith("_")  # a local name may not start with '-'


@given(st.text(min_size=1, max_size=20).map(str.strip).filter(bool), st.text(min_size=1, max_size=20).map(str.strip).filter(bool))
def test_entity_ids_are_injective_and_parse(a: str, b: str) -> None:
    if a != b:
        assert entity_local(a) != entity_local(b)
    profile = get_profile(METAQA)
    term = parse_term(entity_id(a), profile)
    assert profile.shorten(term.value) == entity_id(a)


def test_metaqa_takes_the_kb_options() -> None:
    kb = KB.open(f"metaqa:{KB_TXT}", "generic", count_cap=2)
    assert kb.count_cap == 2
    q = Query(profile=kb.profile).add_fact("?movie", "mqr:starred_actors", "?actor")
    assert kb.observe(q).get("?movie").capped  # type: ignore[union-attr]
