"""Checks of the bundled demo knowledge base ``pyql/data/cyclones.ttl``.

These tests use rdflib and pyoxigraph directly (not the pyql package), so a
broken KB file is reported as such and not as a pyql bug. Every query test
runs on both engines. Expected answers are the facts written in the KB file;
README.md next to it lists them with names.

SPARQL here writes Freebase IRIs in full: pyoxigraph rejects prefixed names
with several dots in the local part (``ns:a.b.c``).
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from pathlib import Path

import pyoxigraph
import pytest
import rdflib

DATA = Path(__file__).resolve().parent.parent / "pyql" / "data"
KB_PATH = DATA / "cyclones.ttl"
QUESTIONS_PATH = DATA / "demo_questions.jsonl"
README_PATH = DATA / "README.md"

FB = "http://rdf.freebase.com/ns/"
XSD = "http://www.w3.org/2001/XMLSchema#"
ENGINES = ["rdflib", "oxigraph"]

# Important mids, as authored in cyclones.ttl.
RACHEL = "m.0crbvqz"
DOLLY = "m.0107j2dw"
KATRINA = "m.0dkl7"
SANDY = "m.0n9cgl4"
LEE = "m.0gjcf_x"
PATRICIA = "m.012c7hkm"
GALVESTON_HURRICANE = "m.01cbx5"
TROPICAL_STORM = "m.05f4r3k"
JAMAICA = "m.03_r3"
LOUISIANA = "m.04ly1"
GOVERNOR = "m.0fkvn"
KATHLEEN_BLANCO = "m.02ml0h"
USD = "m.09nqf"
CIHUATLAN = "m.0286_xq"

CVT_TYPES = {
    "measurement_unit.dated_money_value",
    "measurement_unit.dated_integer",
    "government.government_position_held",
}


def fb(local: str) -> str:
    """A Freebase IRI written in full, ready for SPARQL."""
    return f"<{FB}{local}>"


def short(value: str) -> str:
    return value[len(FB) :] if value.startswith(FB) else value


# --------------------------------------------------------------------------
# Engines
# --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def rdflib_graph() -> rdflib.Graph:
    graph = rdflib.Graph()
    graph.parse(KB_PATH, format="turtle")
    return graph


@pytest.fixture(scope="module")
def ox_store() -> pyoxigraph.Store:
    store = pyoxigraph.Store()
    store.load(path=str(KB_PATH), format=pyoxigraph.RdfFormat.TURTLE)
    return store


@pytest.fixture(params=ENGINES)
def run(request, rdflib_graph, ox_store):
    """A function running a SPARQL query on one engine.

    SELECT gives a list of rows, each a tuple of plain strings (IRIs in the
    Freebase namespace shortened to their local name, literals as their
    lexical form, None for unbound); ASK gives a bool.
    """

    def run_rdflib(query: str):
        result = rdflib_graph.query(query)
        if result.type == "ASK":
            return bool(result.askAnswer)
        return [tuple(None if v is None else short(str(v)) for v in row) for row in result]

    def run_oxigraph(query: str):
        result = ox_store.query(query)
        if isinstance(result, pyoxigraph.QueryBoolean):
            return bool(result)
        width = len(result.variables)
        return [tuple(None if sol[i] is None else short(sol[i].value) for i in range(width)) for sol in result]

    return run_rdflib if request.param == "rdflib" else run_oxigraph


def column(rows) -> list[str]:
    return [row[0] for row in rows]


# --------------------------------------------------------------------------
# The file itself
# --------------------------------------------------------------------------


def test_both_parsers_read_the_same_triples(rdflib_graph, ox_store):
    assert len(rdflib_graph) == len(ox_store)
    assert 300 <= len(rdflib_graph) <= 1000


def test_no_prefixed_freebase_names_in_file():
    text = KB_PATH.read_text(encoding="utf-8")
    body = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))
    assert re.search(r"(?<![<\w])ns:\w", body) is None


def test_subjects_are_mids_and_objects_do_not_dangle(rdflib_graph):
    subjects = {str(s) for s in rdflib_graph.subjects()}
    for subject in subjects:
        assert re.fullmatch(re.escape(FB) + r"m\.0[a-z0-9_]+", subject), subject
    for obj in rdflib_graph.objects():
        if isinstance(obj, rdflib.URIRef) and str(obj).startswith(FB + "m."):
            assert str(obj) in subjects, f"{obj} is used but never described"


def test_every_named_entity_has_exactly_one_english_name(rdflib_graph):
    name = rdflib.URIRef(FB + "type.object.name")
    named = set(rdflib_graph.subjects(name, None))
    assert len(named) >= 40
    for entity in named:
        english = [n for n in rdflib_graph.objects(entity, name) if n.language == "en"]
        if short(str(entity)) == CIHUATLAN:
            assert english == []  # the one topic with only a non-English name
        else:
            assert len(english) == 1, (entity, english)


def test_cvts_have_types_but_no_names(rdflib_graph):
    name = rdflib.URIRef(FB + "type.object.name")
    rdf_type = rdflib.URIRef(FB + "type.object.type")
    kinds = Counter()
    for node, type_ in rdflib_graph.subject_objects(rdf_type):
        local = short(str(type_))
        if local in CVT_TYPES:
            kinds[local] += 1
            assert (node, name, None) not in rdflib_graph
    assert kinds["measurement_unit.dated_money_value"] == 11
    assert kinds["measurement_unit.dated_integer"] == 16
    assert kinds["government.government_position_held"] == 20


@pytest.mark.parametrize(
    "forward, backward",
    [
        ("meteorology.tropical_cyclone.category", "meteorology.tropical_cyclone_category.tropical_cyclones"),
        ("meteorology.tropical_cyclone.tropical_cyclone_season", "meteorology.tropical_cyclone_season.tropical_cyclones"),
        ("meteorology.tropical_cyclone.affected_areas", "meteorology.cyclone_affected_area.cyclones"),
        ("government.government_position_held.jurisdiction_of_office", "government.governmental_jurisdiction.governing_officials"),
        ("government.government_position_held.office_holder", "government.politician.government_positions_held"),
        ("location.location.containedby", "location.location.contains"),
        ("location.country.languages_spoken", "language.human_language.countries_spoken_in"),
        ("location.country.currency_used", "finance.currency.countries_used"),
    ],
)
def test_inverse_relations_agree(rdflib_graph, forward, backward):
    there = set(rdflib_graph.subject_objects(rdflib.URIRef(FB + forward)))
    back = {(o, s) for s, o in rdflib_graph.subject_objects(rdflib.URIRef(FB + backward))}
    assert there
    assert there == back


def test_date_precisions_are_mixed(rdflib_graph):
    datatypes = Counter()
    for prop in ("meteorology.tropical_cyclone.formed", "meteorology.tropical_cyclone.dissipated"):
        for value in rdflib_graph.objects(None, rdflib.URIRef(FB + prop)):
            datatypes[str(value.datatype)[len(XSD) :]] += 1
    assert set(datatypes) == {"date", "gYear", "gYearMonth", "dateTime"}
    assert datatypes["gYear"] == datatypes["gYearMonth"] == datatypes["dateTime"] == 1


def test_tricky_literals_round_trip(run):
    rows = run(f"SELECT ?a WHERE {{ {fb(LEE)} {fb('common.topic.alias')} ?a . }}")
    assert sorted(column(rows)) == sorted(['Storm "Big" Lee', "AL13\\2011"])
    rows = run(f'SELECT ?x WHERE {{ ?x {fb("type.object.name")} "Tempête tropicale Lee"@fr . }}')
    assert column(rows) == [LEE]
    rows = run(f'SELECT ?x WHERE {{ ?x {fb("common.topic.alias")} "Isaac\'s Storm"@en . }}')
    assert column(rows) == [GALVESTON_HURRICANE]
    rows = run(f"SELECT ?d WHERE {{ {fb(SANDY)} {fb('common.topic.description')} ?d . }}")
    assert '"Superstorm Sandy"' in column(rows)[0]
    rows = run(f"SELECT ?d WHERE {{ {fb(KATRINA)} {fb('common.topic.description')} ?d . }}")
    assert "nation's" in column(rows)[0]
    rows = run(f"SELECT ?n (LANG(?n) AS ?l) WHERE {{ {fb(CIHUATLAN)} {fb('type.object.name')} ?n . }}")
    assert rows == [("Cihuatlán", "es")]


# --------------------------------------------------------------------------
# The checks the brief of the demo KB asks for
# --------------------------------------------------------------------------

PAPER_QUESTION = f"""
SELECT ?x ?f WHERE {{
  {fb(RACHEL)} {fb('meteorology.tropical_cyclone.category')} ?c .
  ?x {fb('meteorology.tropical_cyclone.category')} ?c .
  ?x {fb('meteorology.tropical_cyclone.formed')} ?f .
}} ORDER BY DESC(?f)
"""


def test_paper_question_has_a_unique_answer(run):
    """which was the most recently formed cyclone that is in the same
    category as tropical storm rachel? -> Tropical Storm Dolly (2014)."""
    rows = run(PAPER_QUESTION)
    assert rows[0] == (DOLLY, "2014-09-01")
    assert rows[1][1] < rows[0][1]  # no tie at the top
    assert len(rows) == 5  # Rachel, Allison, Arlene, Lee, Dolly
    assert RACHEL in column(rows)
    category = run(f"SELECT ?c WHERE {{ {fb(DOLLY)} {fb('meteorology.tropical_cyclone.category')} ?c . }}")
    assert column(category) == [TROPICAL_STORM]


def test_languages_spoken_in_jamaica(run):
    rows = run(
        f"""SELECT ?x ?n WHERE {{
          {fb(JAMAICA)} {fb('location.country.languages_spoken')} ?x .
          ?x {fb('type.object.name')} ?n . FILTER(LANG(?n) = "en")
        }}"""
    )
    assert sorted(rows) == [("m.01428y", "Jamaican English"), ("m.04ygk0", "Jamaican Creole English Language")]


@pytest.mark.parametrize(
    "year, expected",
    [
        (2005, [KATHLEEN_BLANCO]),
        (2010, ["m.02pjtg"]),  # Bobby Jindal
        (2030, ["m.0bw7c3s"]),  # Jeff Landry, the holder without an end date
        (1990, []),
    ],
)
def test_governor_of_louisiana_in_a_year(run, year, expected):
    rows = run(
        f"""PREFIX xsd: <{XSD}>
        SELECT DISTINCT ?x WHERE {{
          {fb(LOUISIANA)} {fb('government.governmental_jurisdiction.governing_officials')} ?p .
          ?p {fb('government.government_position_held.basic_title')} {fb(GOVERNOR)} ;
             {fb('government.government_position_held.office_holder')} ?x ;
             {fb('government.government_position_held.from')} ?from .
          OPTIONAL {{ ?p {fb('government.government_position_held.to')} ?to . }}
          FILTER(?from <= "{year}-12-31"^^xsd:date && (!BOUND(?to) || ?to >= "{year}-01-01"^^xsd:date))
        }}"""
    )
    assert column(rows) == expected


def test_position_terms_do_not_overlap(run):
    """Consecutive terms of one office may share the hand-over day only."""
    rows = run(
        f"""SELECT ?j ?t ?from ?to WHERE {{
          ?p {fb('government.government_position_held.jurisdiction_of_office')} ?j ;
             {fb('government.government_position_held.basic_title')} ?t ;
             {fb('government.government_position_held.from')} ?from .
          OPTIONAL {{ ?p {fb('government.government_position_held.to')} ?to . }}
        }}"""
    )
    offices: dict[tuple[str, str], list[tuple[str, str | None]]] = {}
    for jurisdiction, title, start, end in rows:
        offices.setdefault((jurisdiction, title), []).append((start, end))
    assert len(offices) == 4
    for terms in offices.values():
        terms.sort()
        assert len(terms) >= 4
        assert sum(end is None for _, end in terms) == 1  # one current holder
        assert terms[-1][1] is None
        for (_, end), (next_start, _) in zip(terms, terms[1:]):
            assert end is not None and end <= next_start


def test_damage_amounts_are_cvts_in_us_dollars(run):
    rows = run(
        f"""SELECT ?x ?amount ?currency (DATATYPE(?amount) AS ?dt) WHERE {{
          ?x {fb('meteorology.tropical_cyclone.damages')} ?d .
          ?d {fb('measurement_unit.dated_money_value.amount')} ?amount ;
             {fb('measurement_unit.dated_money_value.currency')} ?currency .
        }}"""
    )
    assert len(rows) == 11
    assert {row[2] for row in rows} == {USD}
    assert {row[3] for row in rows} == {XSD + "decimal"}
    amounts = {row[0]: int(row[1]) for row in rows}
    assert amounts[KATRINA] == 125_000_000_000
    assert amounts[SANDY] == 68_700_000_000
    assert RACHEL not in amounts
    assert max(amounts, key=amounts.get) == KATRINA


def test_population_cvts_allow_argmax_over_years(run):
    rows = run(
        f"""SELECT ?year ?n WHERE {{
          {fb('m.0f2tj')} {fb('location.statistical_region.population')} ?p .
          ?p {fb('measurement_unit.dated_integer.year')} ?year ;
             {fb('measurement_unit.dated_integer.number')} ?n .
        }} ORDER BY DESC(?year)"""
    )
    assert rows == [("2020", "383997"), ("2010", "343829"), ("2006", "223388"), ("2000", "484674")]


# --------------------------------------------------------------------------
# The demo questions and their gold answers
# --------------------------------------------------------------------------


def load_questions() -> list[dict]:
    with QUESTIONS_PATH.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


QUESTIONS = load_questions()


def test_question_file_is_well_formed(rdflib_graph):
    assert len(QUESTIONS) >= 20
    ids = [q["id"] for q in QUESTIONS]
    assert len(set(ids)) == len(ids)
    name = rdflib.URIRef(FB + "type.object.name")
    for q in QUESTIONS:
        assert set(q) >= {"id", "question", "entities", "answers", "sparql"}
        assert q["answers"], q["id"]
        assert "ns:" not in q["sparql"]
        for label, mid in q["entities"].items():
            names = {str(n) for n in rdflib_graph.objects(rdflib.URIRef(FB + mid), name)}
            assert label in names, (q["id"], label, mid)
    kinds = {q["kind"] for q in QUESTIONS}
    assert {"one-hop", "two-hop", "cvt", "argmax", "argmin", "count", "numeric-filter", "time-constraint", "comparison", "avg"} <= kinds


def test_readme_lists_every_question():
    readme = README_PATH.read_text(encoding="utf-8")
    for q in QUESTIONS:
        assert q["question"] in readme, q["id"]
        for answer in q["answers"]:
            assert answer in readme, (q["id"], answer)


def same_answer(got: str, gold: str) -> bool:
    """Equal as text, or as numbers (engines print 94.0 or 94 for one float)."""
    if got == gold:
        return True
    try:
        return math.isclose(float(got), float(gold))
    except ValueError:
        return False


@pytest.mark.parametrize("question", QUESTIONS, ids=[q["id"] for q in QUESTIONS])
def test_gold_sparql_gives_gold_answers(run, question):
    result = run(question["sparql"])
    if isinstance(result, bool):
        got = ["true" if result else "false"]
    else:
        got = column(result)
    gold = question["answers"]
    assert len(got) == len(gold), (got, gold)
    unmatched = list(gold)
    for value in got:
        match = next((g for g in unmatched if same_answer(value, g)), None)
        assert match is not None, (value, gold)
        unmatched.remove(match)
