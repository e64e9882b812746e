"""MarkQA's functions in the builder (issue 21, item 1): SPARQL and rows on a small Wikidata-shaped graph.

The graph is made here, in Wikidata's statement model (populations are
``xsd:decimal`` amounts as in Wikidata's RDF: Virtuoso divides two
``xsd:integer`` values as integers, 200 / 2000 = 0, where the SPARQL spec and
the other engines give 0.1): population statements
with point-in-time qualifiers, an area in km² whose unit has a P2370
conversion to SI, cities typed through a P279 subclass chain, districts.
Every query runs on pyoxigraph and on rdflib, with the same rows expected.
"""

from __future__ import annotations

from decimal import Decimal

import pyoxigraph as ox
import pytest
import rdflib
from rdflib.plugins.sparql import prepareQuery

from pyql import Query
from pyql.errors import PyQLError, QueryError, TermError

TTL = """
@prefix wd: <http://www.wikidata.org/entity/> .
@prefix wdt: <http://www.wikidata.org/prop/direct/> .
@prefix p: <http://www.wikidata.org/prop/> .
@prefix ps: <http://www.wikidata.org/prop/statement/> .
@prefix psv: <http://www.wikidata.org/prop/statement/value/> .
@prefix pq: <http://www.wikidata.org/prop/qualifier/> .
@prefix pqv: <http://www.wikidata.org/prop/qualifier/value/> .
@prefix wikibase: <http://wikiba.se/ontology#> .
@prefix wds: <http://www.wikidata.org/entity/statement/> .
@prefix wdv: <http://www.wikidata.org/value/> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .

wd:Q64 wdt:P31 wd:Q515 ; wdt:P150 wd:Q101, wd:Q102, wd:Q103 ;
  p:P1082 wds:s11, wds:s21 ; p:P2046 wds:a64 .
wds:s11 psv:P1082 wdv:v11 ; pq:P585 "2011-05-09T00:00:00Z"^^xsd:dateTime .
wdv:v11 wikibase:quantityAmount 2000.0 .
wds:s21 psv:P1082 wdv:v21 ; pq:P585 "2021-05-15T00:00:00Z"^^xsd:dateTime .
wdv:v21 wikibase:quantityAmount 2200.0 .
wds:a64 psv:P2046 wdv:va64 .
wdv:va64 wikibase:quantityAmount 900 ; wikibase:quantityUnit wd:Q712226 .

wd:Q712226 p:P2370 wds:km2 .
wds:km2 psv:P2370 wdv:km2 .
wdv:km2 wikibase:quantityAmount 1000000 .
wd:Q25343 p:P2370 wds:m2 .
wds:m2 psv:P2370 wdv:m2 .
wdv:m2 wikibase:quantityAmount 1 .

wd:Q90 wdt:P31 wd:Q1549591 ; wdt:P150 wd:Q201 ; p:P2046 wds:a90 .
wds:a90 psv:P2046 wdv:va90 .
wdv:va90 wikibase:quantityAmount 105 ; wikibase:quantityUnit wd:Q712226 .
wd:Q1549591 wdt:P279 wd:Q515 .
wd:Q1 wdt:P31 wd:Q515 ; p:P2046 wds:a1 .
wds:a1 psv:P2046 wdv:va1 .
wdv:va1 wikibase:quantityAmount 1000000000 ; wikibase:quantityUnit wd:Q25343 .

wd:Q8 wdt:P580 "1914-07-28T00:00:00Z"^^xsd:dateTime ; wdt:P582 "1918-11-11T00:00:00Z"^^xsd:dateTime .
"""


@pytest.fixture(scope="module")
def stores() -> tuple[ox.Store, rdflib.Graph]:
    store = ox.Store()
    store.load(TTL.encode(), ox.RdfFormat.TURTLE)
    graph = rdflib.Graph()
    graph.parse(data=TTL, format="turtle")
    return store, graph


def _value(text: str) -> object:
    for kind in (int, Decimal):
        try:
            return kind(text)
        except Exception:
            pass
    return text.rsplit("/", 1)[-1].replace("+00:00", "Z")  # rdflib writes UTC as +00:00


def rows(store: ox.Store, graph: rdflib.Graph, query: Query) -> list[tuple[object, ...]]:
    """The rows of a query on pyoxigraph and on rdflib, checked equal (values as numbers or local names)."""
    text = query.sparql()
    ox_rows = sorted(
        tuple(_value(term.value) if term is not None else None for term in solution) for solution in store.query(text)
    )
    rdf_rows = sorted(tuple(_value(str(term)) if term is not None else None for term in row) for row in graph.query(text))
    assert ox_rows == rdf_rows, text
    return ox_rows


W = Query("wikidata")


class Ratio:
    """A stand-in for pyql.builder.expressions (not merged yet): ((?a - ?b) / ?b) * 100."""

    def __init__(self, a: str, b: str) -> None:
        self.a, self.b = a, b

    def variables(self) -> tuple[str, ...]:
        return (self.a, self.b)

    def sparql(self, profile: object) -> str:
        return f"(((?{self.a} - ?{self.b}) / ?{self.b}) * 100)"


def test_growth_percentage_between_two_years(stores) -> None:
    q = (
        W.add_quantity("Q64", "P1082", "pop_2011", 2011)
        .add_quantity("Q64", "P1082", "pop_2021", "2021")
        .add_bind(Ratio("pop_2021", "pop_2011"), "ans")
    )
    assert q.answer.name == "ans"
    assert rows(*stores, q) == [(Decimal(10),)]


def test_time_forms(stores) -> None:
    assert rows(*stores, W.add_quantity("Q64", "P1082", "pop", True).set_answer("?time_pop"))[0][0] == "2011-05-09T00:00:00Z"
    dated = W.add_quantity("Q64", "P1082", "pop", "2021-05-15T00:00:00Z")
    assert "FILTER(?time_pop = " in dated.sparql() and rows(*stores, dated) == [(2200,)]
    bound = W.add_quantity("Q64", "P1082", "pop", "?when").set_answer("?when")
    assert len(rows(*stores, bound)) == 2


def test_unit_conversion(stores) -> None:
    q = W.add_quantity("Q64", "P2046", "area", unit=True)
    assert "wikibase:quantityUnit/p:P2370/psv:P2370/wikibase:quantityAmount ?si_conversion_area" in q.sparql()
    assert rows(*stores, q) == [(900000000,)]


def test_type_closure_rank_and_group_obj(stores) -> None:
    cities = W.add_type_constrain("Q515", "city")
    # wdt:P31/wdt:P279* as its zero-step and one-or-more-step halves (Virtuoso answers this form in full)
    assert "{ ?city wdt:P31 wd:Q515 . } UNION { ?city wdt:P31/wdt:P279+ wd:Q515 . }" in cities.sparql()
    assert {r[0] for r in rows(*stores, cities)} == {"Q64", "Q90", "Q1"}
    star = Query("wikidata", cities.steps).sparql().replace(
        "{ ?city wdt:P31 wd:Q515 . } UNION { ?city wdt:P31/wdt:P279+ wd:Q515 . }", "?city wdt:P31/wdt:P279* wd:Q515 .")
    assert sorted(map(str, stores[0].query(star))) == sorted(map(str, stores[0].query(cities.sparql())))
    rank = cities.add_quantity("Q64", "P2046", "mine", unit=True).add_quantity("city", "P2046", "area", unit=True)
    assert rows(*stores, rank.add_rank("mine", "area", "rank")) == [(2,)]
    districts = cities.add_fact("?city", "wdt:P150", "?d").add_count("?d", "?n", "?city")
    assert rows(*stores, districts) == [("Q64", 3), ("Q90", 1)]


def test_sub_queries_values_and_max(stores) -> None:
    a = W.add_quantity("Q64", "P1082", "p21", 2021)
    b = W.add_quantity("Q64", "P1082", "p11", 2011)
    q = W.add_sub_query(a, b).add_bind(Ratio("p21", "p11"), "growth")
    assert q.sparql().count("SELECT DISTINCT") == 3
    assert rows(*stores, q) == [(Decimal(10),)]
    cars = W.add_assignment(["Q64", "Q90"], "town").add_quantity("town", "P2046", "area").add_max("area", "town")
    assert rows(*stores, cars) == [("Q64",)]
    second = W.add_assignment(["Q64", "Q90", "Q1"], "town").add_quantity("town", "P2046", "area", unit=True)
    assert rows(*stores, second.add_max("area", "town", offset=1)) == [("Q64",)]
    assert len(rows(*stores, second.add_min("area", "town", limit=None))) == 3


def test_start_end_and_point_in_time(stores) -> None:
    q = W.add_start_time("Q8", "start").add_end_time("Q8", "end")
    assert rows(*stores, q.set_answer("end")) == [("1918-11-11T00:00:00Z",)]
    assert q.actions() == ["add_start_time(wd:Q8, ?start)", "add_end_time(wd:Q8, ?end)"]


EXPECTED = [
    (
        W.add_quantity("Q64", "P1082", "pop", 2011),
        """SELECT DISTINCT ?pop WHERE { wd:Q64 p:P1082 ?statement_pop . ?statement_pop psv:P1082 ?value_st_pop .
        ?value_st_pop wikibase:quantityAmount ?pop . ?statement_pop pq:P585 ?time_pop . FILTER(YEAR(?time_pop) = 2011) }""",
    ),
    (
        W.add_quantity_with_qualifier("Q1", "P2069", "P518", "Q2", "perf"),
        """SELECT DISTINCT ?perf WHERE { wd:Q1 p:P2069 ?statement_perf . ?statement_perf psv:P2069 ?value_st_perf .
        ?value_st_perf wikibase:quantityAmount ?perf . ?statement_perf pq:P518 wd:Q2 . }""",
    ),
    (
        W.add_quantity_by_qualifier("Q1", "P186", "Q2", "P2067", "m", unit=True),
        """SELECT DISTINCT ?m WHERE { wd:Q1 p:P186 ?statement_m . ?statement_m ps:P186 wd:Q2 .
        ?statement_m pqv:P2067 ?non_si_value_st_m . ?non_si_value_st_m wikibase:quantityAmount ?non_si_m .
        ?non_si_value_st_m wikibase:quantityUnit/p:P2370/psv:P2370/wikibase:quantityAmount ?si_conversion_m .
        BIND((?non_si_m * ?si_conversion_m) AS ?m) }""",
    ),
    (
        W.add_assignment(["Q319", "Q2"], "car"),
        "SELECT DISTINCT ?car WHERE { VALUES ?car { wd:Q319 wd:Q2 } }",
    ),
]


def _algebra(text: str) -> str:
    return str(prepareQuery(text).algebra)


@pytest.mark.parametrize("query, expected", EXPECTED)
def test_expected_sparql(query: Query, expected: str) -> None:
    prefixes = Query("wikidata").sparql().split("SELECT")[0]
    assert _algebra(query.sparql()) == _algebra(prefixes + expected)


@pytest.mark.parametrize(
    "build, error, words",
    [
        (lambda: W.add_quantity("Q12x", "P1082", "pop"), TermError, "Q followed by digits"),
        (lambda: W.add_quantity("Q64", "P10x", "pop"), TermError, "P followed by digits"),
        (lambda: W.add_quantity("Q64", "P1082", "pop", 3.5), QueryError, "time of add_quantity"),
        (lambda: W.add_quantity("Q64", "P1082", "Q5"), QueryError, "variable name"),
        (lambda: W.add_bind(Ratio("a", "b"), "x"), QueryError, "not in the query"),
        (lambda: W.add_bind("?a + ?b", "x"), QueryError, "expression"),
        (lambda: W.add_assignment("Q1", "x"), QueryError, "list of values"),
        (lambda: W.set_head("SELECT ?x WHERE { ?x ?p ?o }"), QueryError, "add_count"),
        (lambda: Query().add_quantity("m.0a", "P1", "x"), QueryError, r"Query\('wikidata'\)"),
        (lambda: W.add_sub_query("SELECT * {}"), QueryError, "pyql.Query"),
    ],
)
def test_errors_are_actionable(build, error, words) -> None:
    with pytest.raises(error, match=words) as info:
        build()
    assert isinstance(info.value, PyQLError)


def test_steps_are_immutable() -> None:
    base = W.add_quantity("Q64", "P1082", "a", 2011)
    after = base.add_quantity("Q64", "P1082", "b", 2021).add_bind(Ratio("b", "a"), "g")
    assert len(base.steps) == 1 and len(after.steps) == 3 and after.undo().answer.name == "b"


def test_freebase_type_constraint_unchanged() -> None:
    assert "type.object.type> <http://rdf.freebase.com/ns/a.b> ." in Query().add_type_constrain("a.b", "?x").sparql()


def test_actions_build_the_same_query(stores) -> None:
    from pyql.environment.sparql_actions import SPARQL_ACTION_ORDER, SPARQL_ALL_ACTIONS
    from pyql.kb.oxigraph_backend import OxigraphKB
    from pyql.environment.sparql_actions import SparqlActions
    from pyql.environment.sparql import SparqlEnvironment

    assert SparqlActions().names == SPARQL_ACTION_ORDER  # the default set is unchanged
    env = SparqlEnvironment(OxigraphKB(stores[0], profile="wikidata"), actions=SPARQL_ALL_ACTIONS)
    for line in (
        "add_quantity(Q64, P1082, pop_2011, 2011)",
        "add_quantity(Q64, P1082, pop_2021, 2021)",
        "add_assignment((Q64, Q90), ?town)",
        "add_start_time(Q8, start)",
    ):
        record = env.step(line)
        assert record.ok, (line, record)
    built = (
        W.add_quantity("Q64", "P1082", "pop_2011", 2011)
        .add_quantity("Q64", "P1082", "pop_2021", 2021)
        .add_assignment(["Q64", "Q90"], "town")
        .add_start_time("Q8", "start")
    )
    assert env.query.sparql() == built.sparql()
    bad = env.step("add_quantity(Q12x, P1082, pop, 2011)")
    assert not bad.ok and "Q followed by digits" in bad.observation


def test_expression_actions_nest_and_are_capped() -> None:
    expressions = pytest.importorskip("pyql.builder.expressions")
    from pyql.action_parser import parse_action
    from pyql.environment.sparql_actions import markqa_argument

    arg = parse_action("add_bind(mul(div(sub(?pop_2021, ?pop_2011), ?pop_2011), 100), ?ans)").args[0]
    expected = expressions.mul(expressions.div(expressions.sub("pop_2021", "pop_2011"), "pop_2011"), 100)
    assert markqa_argument("expression", arg).sparql() == expected.sparql()
    deep = parse_action("f(" + "abs(" * 20 + "?x" + ")" * 20 + ")").args[0]
    with pytest.raises(QueryError, match="nests deeper"):
        markqa_argument("expression", deep)
    with pytest.raises(QueryError, match="unknown expression function"):
        markqa_argument("expression", parse_action("f(pow(?x, 2))").args[0])


PARITY = {
    "growth": lambda: W.add_quantity("Q64", "P1082", "a", 2011).add_quantity("Q64", "P1082", "b", 2021).add_bind(Ratio("b", "a"), "g"),
    "unit": lambda: W.add_quantity("Q64", "P2046", "area", unit=True),
    "rank": lambda: W.add_type_constrain("Q515", "city")
    .add_quantity("Q64", "P2046", "mine", unit=True)
    .add_quantity("city", "P2046", "area", unit=True)
    .add_rank("mine", "area", "rank"),
    "values_max": lambda: W.add_assignment(["Q64", "Q90"], "town").add_quantity("town", "P2046", "area").add_max("area", "town"),
}


@pytest.mark.virtuoso
@pytest.mark.parametrize("name", sorted(PARITY))
def test_virtuoso_parity(name: str, virtuoso_server, tmp_path) -> None:
    """MarkQA's engine: the same answers on Virtuoso as on pyoxigraph."""
    from tests.turtle_engines import oxigraph_kb, virtuoso_kb

    remote = virtuoso_kb(virtuoso_server, TTL, tmp_path, "http://pyql.test/markqa", profile="wikidata")
    local = oxigraph_kb(TTL, profile="wikidata")
    query = PARITY[name]()

    def answers(kb) -> list[object]:
        return sorted(_value(v.display()) for v in kb.execute(query).answers())

    assert answers(remote) == answers(local)
