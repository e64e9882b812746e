"""One suite, three engines: rdflib (embedded default), pyoxigraph, and a real
Virtuoso behind SPARQLWrapper. The same queries must give the same answers,
observations, relation lists and labels everywhere.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pyql import IRI, Literal, Query
from pyql.errors import EngineError, KBError, QueryError
from pyql.kb import KB, demo_kb_path
from pyql.kb.endpoint_backend import EndpointKB
from pyql.kb.oxigraph_backend import OxigraphKB
from pyql.kb.rdflib_backend import RdflibKB
from pyql.environment.sparql import SparqlEnvironment

DEMO_GRAPH = "http://pyql.test/demo"
QUESTIONS = [json.loads(line) for line in (demo_kb_path().parent / "demo_questions.jsonl").read_text().splitlines() if line.strip()]
CHAINED = [q for q in QUESTIONS if q.get("actions")]


@pytest.fixture(scope="module", params=["rdflib", "oxigraph", pytest.param("virtuoso", marks=pytest.mark.virtuoso)])
def kb(request: pytest.FixtureRequest) -> KB:
    if request.param == "rdflib":
        return RdflibKB(demo_kb_path())
    if request.param == "oxigraph":
        return OxigraphKB(demo_kb_path())
    server = request.getfixturevalue("virtuoso_server")
    server.load_turtle(demo_kb_path(), DEMO_GRAPH)
    return EndpointKB(server.endpoint, default_graph=DEMO_GRAPH, timeout=30)


def _norm(value: str) -> str:
    """Gold answers write numbers and booleans in more than one way."""
    lowered = value.lower()
    if lowered in ("true", "yes"):
        return "yes"
    if lowered in ("false", "no"):
        return "no"
    try:
        return repr(float(value))
    except ValueError:
        return value


def test_demo_questions_have_gold_chains() -> None:
    assert len(CHAINED) == len(QUESTIONS) >= 30


@pytest.mark.parametrize("question", CHAINED, ids=[q["id"] for q in CHAINED])
def test_gold_chain_answers_on_every_engine(kb: KB, question: dict) -> None:
    env = SparqlEnvironment(kb, question=question["question"], entities=question["entities"])
    records = env.run(question["actions"])
    failed = [(r.text, r.error, r.observation) for r in records if not r.ok]
    assert not failed
    assert env.done
    got = sorted(_norm(a["value"]) for a in env.final_json()["answers"])
    assert got == sorted(_norm(a) for a in question["answers"])


def test_observation_values_labels_counts(kb: KB) -> None:
    q = Query().add_fact("m.0crbvqz", "meteorology.tropical_cyclone.category", "?category").add_fact(
        "?cyclone", "meteorology.tropical_cyclone.category", "?category"
    )
    obs = kb.observe(q)
    category = obs.get("category")
    cyclones = obs.get("?cyclone")
    assert category is not None and cyclones is not None
    assert [(v.short, v.label) for v in category.values] == [("m.05f4r3k", "Tropical storm (SSHS)")]
    assert category.total == 1 and cyclones.total == 5
    assert {v.label for v in cyclones.values} == {
        "Tropical Storm Rachel",
        "Tropical Storm Allison",
        "Tropical Storm Arlene",
        "Tropical Storm Lee",
        "Tropical Storm Dolly",
    }


def test_observation_is_bounded_with_total_count(kb: KB) -> None:
    q = Query().add_fact("?x", "type.object.name", "?name")
    obs = kb.observe(q, per_variable=3)
    names = obs.get("name")
    assert names is not None and len(names.values) == 3 and names.total > 60
    assert kb.stats.queries >= 1


def test_one_step_costs_one_query(kb: KB) -> None:
    before = kb.stats.queries
    kb.observe(Query().add_fact("?c", "meteorology.tropical_cyclone.formed", "?t").add_max("?t"))
    kb.relations("m.0dkl7")
    assert kb.stats.queries - before == 2


def test_unnamed_nodes_are_marked(kb: KB) -> None:
    q = Query().add_fact("m.0n9cgl4", "meteorology.tropical_cyclone.damages", "?damage")
    obs = kb.observe(q)
    assert obs.unnamed_variables == (q.term("?damage"),)
    assert "unnamed node" in str(obs)


def test_relations_forward_backward_and_hidden(kb: KB) -> None:
    rels = kb.relations("m.0crbvqz")
    assert "meteorology.tropical_cyclone.category" in rels.forward
    assert "meteorology.tropical_cyclone_category.tropical_cyclones" in rels.backward
    assert not [r for r in rels.all() if r.startswith(("type.", "common.", "kg.", "freebase."))]


def test_relations_of_a_variable(kb: KB) -> None:
    q = Query().add_fact("m.0crbvqz", "meteorology.tropical_cyclone.category", "?category")
    rels = kb.relations("?category", q)
    assert rels.forward == ("meteorology.tropical_cyclone_category.tropical_cyclones",)
    assert rels.backward == ("meteorology.tropical_cyclone.category",)


def test_relations_of_a_literal_are_backward_only(kb: KB) -> None:
    rels = kb.relations(Literal("1833", "http://www.w3.org/2001/XMLSchema#integer"))
    assert rels.forward == ()
    assert rels.backward == ("meteorology.tropical_cyclone.direct_fatalities",)


def test_relations_of_several_entities_in_one_query(kb: KB) -> None:
    """entity_relations: one query, each entity's relations as relations() gives them (a literal backward only)."""
    targets = ["m.0crbvqz", "m.0dkl7", "m.03_r3", Literal("1833", "http://www.w3.org/2001/XMLSchema#integer")]
    before = kb.stats.queries
    found = kb.entity_relations(targets)
    assert kb.stats.queries - before == 1
    assert [found[kb.term(t, "entity")] for t in targets] == [kb.relations(t) for t in targets]
    assert kb.entity_relations([]) == {}
    with pytest.raises(QueryError, match="a variable's relations need its query"):
        kb.entity_relations(["m.0crbvqz", "?x"])


def test_labels_in_one_query(kb: KB) -> None:
    before = kb.stats.queries
    labels = kb.labels(["m.0crbvqz", "m.0dkl7", "m.0gp0102"])
    assert kb.stats.queries - before == 1
    assert labels[IRI("http://rdf.freebase.com/ns/m.0crbvqz")] == "Tropical Storm Rachel"
    assert labels[IRI("http://rdf.freebase.com/ns/m.0dkl7")] == "Hurricane Katrina"


def test_only_non_english_label_is_still_found(kb: KB) -> None:
    # Cihuatlán has only a Spanish name: it is not an unnamed node, but has no English label.
    obs = kb.observe(Query().add_fact("m.012c7hkm", "meteorology.tropical_cyclone.affected_areas", "?place"))
    places = obs.get("place")
    assert places is not None and places.total == 2


def test_literals_come_back_typed_and_canonical(kb: KB) -> None:
    rows = kb.execute(Query().add_fact("m.0dkl7", "meteorology.tropical_cyclone.highest_winds", "?w")).answers()
    assert [v.term for v in rows] == [Literal("280.0", "http://www.w3.org/2001/XMLSchema#float")]
    formed = kb.execute(Query().add_fact("m.01cbx5", "meteorology.tropical_cyclone.formed", "?t")).answers()
    assert [v.term for v in formed] == [Literal("1900", "http://www.w3.org/2001/XMLSchema#gYear")]


def test_ask_queries(kb: KB) -> None:
    q = Query().add_fact("m.0dkl7", "meteorology.tropical_cyclone.highest_winds", "?a").add_fact(
        "m.0crbvqz", "meteorology.tropical_cyclone.highest_winds", "?b"
    )
    assert kb.execute(q.add_compare("?a", ">", "?b")).boolean is True
    assert kb.execute(q.add_compare("?a", "<", "?b")).boolean is False


def test_engine_rejects_bad_query_with_engine_error(kb: KB) -> None:
    with pytest.raises(EngineError):
        kb.select("SELECT ?x WHERE { ?x ?y }")
    assert kb.stats.errors >= 1


def test_open_specs() -> None:
    assert isinstance(KB.open("demo"), OxigraphKB), "pyoxigraph is the embedded default"
    assert isinstance(KB.open(str(demo_kb_path())), OxigraphKB), "a file opens on pyoxigraph"
    assert isinstance(KB.open("oxigraph:demo"), OxigraphKB)
    assert isinstance(KB.open("rdflib:demo"), RdflibKB)
    assert isinstance(KB.open("rdflib:" + str(demo_kb_path())), RdflibKB), "rdflib by name"
    assert isinstance(KB.open("http://127.0.0.1:9/sparql"), EndpointKB)
    with pytest.raises(KBError, match="no such RDF file"):
        KB.open("missing.ttl")
    with pytest.raises(KBError, match="directory"):
        KB.open(str(Path(__file__).parent))
    with pytest.raises(KBError, match="no such RDF file"):
        KB.open("rdflib:missing.ttl")


def test_handed_in_graphs_and_stores_are_wrapped() -> None:
    import pyoxigraph as ox
    import rdflib

    graph = rdflib.Graph().parse(str(demo_kb_path()), format="turtle")
    kb = KB.open(graph)
    assert isinstance(kb, RdflibKB) and kb.graph is graph
    store = ox.Store()
    store.bulk_load(path=str(demo_kb_path()), format=ox.RdfFormat.TURTLE)
    other = KB.open(store)
    assert isinstance(other, OxigraphKB) and other.store is store
    assert kb.relations("m.0crbvqz") == other.relations("m.0crbvqz")
    with pytest.raises(KBError, match="a KB spec is a string"):
        KB.open(42)  # type: ignore[arg-type]


def test_unreachable_endpoint_is_a_kb_error() -> None:
    kb = EndpointKB("http://127.0.0.1:9/sparql", timeout=2)
    with pytest.raises(KBError):
        kb.observe(Query().add_fact("?x", "a.b.c", "?y"))


def test_profile_mismatch_is_reported() -> None:
    from pyql.errors import QueryError

    with pytest.raises(QueryError, match="profile"):
        KB.open("demo").observe(Query("generic").add_fact("?x", "rdfs:label", "?y"))



def test_value_kinds_decide_where_the_engines_own_order_is_used(kb: KB) -> None:
    assert kb.value_kind("meteorology.tropical_cyclone.highest_winds") == "numeric"
    # formed mixes xsd:date, gYear, gYearMonth and dateTime: the ISO-text key is needed
    assert kb.value_kind("meteorology.tropical_cyclone.formed") is None
    assert kb.value_kind("meteorology.tropical_cyclone.category") is None  # entities: the key orders them
    q = Query().add_fact("?c", "meteorology.tropical_cyclone.highest_winds", "?w").add_fact(
        "?c", "meteorology.tropical_cyclone.formed", "?t"
    )
    assert kb.native_order("?w", q) is True
    assert kb.native_order("?t", q) is False
    assert kb.native_order("?c", q) is False  # a subject: nodes
    assert kb.native_order("?n", q.add_count("?c", "?n")) is True


def test_the_engines_own_order_gives_the_same_rows_on_numbers(kb: KB) -> None:
    base = Query().add_fact("?c", "meteorology.tropical_cyclone.highest_winds", "?w")
    for descending in (True, False):
        keyed = base.add_max("?w", limit=3) if descending else base.add_min("?w", limit=3)
        native = base.add_max("?w", limit=3, native=True) if descending else base.add_min("?w", limit=3, native=True)
        assert "IF(isNumeric" in keyed.sparql() and "IF(isNumeric" not in native.sparql()
        keyed_rows = [v.term for v in kb.execute(keyed.set_answer("?w")).answers()]
        native_rows = [v.term for v in kb.execute(native.set_answer("?w")).answers()]
        assert keyed_rows == native_rows and len(native_rows) >= 2  # DISTINCT ?w of the top 3 rows (ties)


def test_value_kinds_are_asked_once_per_relation() -> None:
    kb = OxigraphKB(demo_kb_path())
    sent: list[str] = []
    select = kb._select
    kb._select = lambda text: sent.append(text) or select(text)  # type: ignore[method-assign]
    assert kb.value_kind("meteorology.tropical_cyclone.highest_winds") == "numeric"
    first = len(sent)
    assert 1 <= first <= 2
    for _ in range(3):
        assert kb.value_kind("meteorology.tropical_cyclone.highest_winds") == "numeric"
    assert len(sent) == first
    # text: the first 20 edges say so, no second query
    assert kb.value_kind("type.object.name") is None and len(sent) == first + 1
    with pytest.raises(QueryError, match="relation name"):
        kb.value_kind("?x")
