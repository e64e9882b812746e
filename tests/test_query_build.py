"""Builder → expected SPARQL, compared as parsed algebra (not as strings).

One table: each case is a chain of builder calls and the SPARQL it must
mean. Both sides are parsed with rdflib and their algebra compared, so
whitespace, PREFIX use and redundant parentheses do not matter but every
pattern, filter, modifier and nesting does.
"""

from __future__ import annotations

import pytest
from rdflib.plugins.sparql import prepareQuery

from pyql import Query
from pyql.errors import QueryError, TermError

FB = "http://rdf.freebase.com/ns/"
P = "PREFIX ns: <http://rdf.freebase.com/ns/>\nPREFIX xsd: <http://www.w3.org/2001/XMLSchema#>\n"


def fb(name: str) -> str:
    return f"<{FB}{name}>"


RACHEL = Query().add_fact("m.0crbvqz", "meteorology.tropical_cyclone.category", "?category")
CYCLONES = RACHEL.add_fact("?cyclone", "meteorology.tropical_cyclone.category", "?category").add_fact(
    "?cyclone", "meteorology.tropical_cyclone.formed", "?time"
)
CORE = (
    f"{fb('m.0crbvqz')} {fb('meteorology.tropical_cyclone.category')} ?category . "
    f"?cyclone {fb('meteorology.tropical_cyclone.category')} ?category . "
    f"?cyclone {fb('meteorology.tropical_cyclone.formed')} ?time ."
)
ORDER_DESC = "ORDER BY DESC(IF(isNumeric(?time), ?time, STR(?time)))"

CASES = [
    ("empty", Query(), "SELECT * WHERE { }"),
    (
        "one fact",
        RACHEL,
        f"SELECT DISTINCT ?category WHERE {{ {fb('m.0crbvqz')} {fb('meteorology.tropical_cyclone.category')} ?category . }}",
    ),
    ("three facts", CYCLONES, f"SELECT DISTINCT ?category ?cyclone ?time WHERE {{ {CORE} }}"),
    (
        "argmax then answer",
        CYCLONES.add_max("?time").set_answer("?cyclone"),
        f"SELECT DISTINCT ?cyclone WHERE {{ {CORE} }} {ORDER_DESC} LIMIT 1",
    ),
    (
        "argmin with limit and offset",
        CYCLONES.add_min("?time", limit=3, offset=1),
        f"SELECT DISTINCT ?category ?cyclone ?time WHERE {{ {CORE} }} "
        "ORDER BY ASC(IF(isNumeric(?time), ?time, STR(?time))) LIMIT 3 OFFSET 1",
    ),
    (
        "numeric filter",
        Query().add_fact("?c", "meteorology.tropical_cyclone.highest_winds", "?w").add_filter("?w", ">", 200),
        f"SELECT DISTINCT ?c ?w WHERE {{ ?c {fb('meteorology.tropical_cyclone.highest_winds')} ?w . FILTER(?w > 200) }}",
    ),
    (
        "entity inequality (legacy WebQSP form)",
        Query().add_filter("?x0", "!=", "m.03_r3").add_fact("m.03_r3", "location.country.languages_spoken", "?x0"),
        f"SELECT DISTINCT ?x0 WHERE {{ FILTER(?x0 != {fb('m.03_r3')}) {fb('m.03_r3')} {fb('location.country.languages_spoken')} ?x0 . }}",
    ),
    (
        "date filter compares at the coarser precision",
        Query().add_fact("?c", "meteorology.tropical_cyclone.formed", "?t").add_filter("?t", ">=", "2005-06-01"),
        f"SELECT DISTINCT ?c ?t WHERE {{ ?c {fb('meteorology.tropical_cyclone.formed')} ?t . "
        'FILTER(isLiteral(?t) && SUBSTR(STR(?t), 1, STRLEN("2005-06-01")) >= SUBSTR("2005-06-01", 1, STRLEN(STR(?t)))) }',
    ),
    (
        "type constraint",
        Query().add_type_constrain("meteorology.tropical_cyclone", "?c"),
        f"SELECT DISTINCT ?c WHERE {{ ?c {fb('type.object.type')} {fb('meteorology.tropical_cyclone')} . }}",
    ),
    (
        "count",
        CYCLONES.add_count("?cyclone", "?n"),
        f"SELECT DISTINCT ?n WHERE {{ {{ SELECT (COUNT(DISTINCT ?cyclone) AS ?n) WHERE {{ {CORE} }} }} }}",
    ),
    (
        "count after argmax nests the argmax rows",
        CYCLONES.add_max("?time").add_count("?cyclone", "?n"),
        f"SELECT DISTINCT ?n WHERE {{ {{ SELECT (COUNT(DISTINCT ?cyclone) AS ?n) WHERE {{ "
        f"{{ SELECT * WHERE {{ {CORE} }} {ORDER_DESC} LIMIT 1 }} }} }} }}",
    ),
    (
        "filter on a count",
        CYCLONES.add_count("?cyclone", "?n").add_filter("?n", ">", 3),
        f"SELECT DISTINCT ?n WHERE {{ {{ SELECT (COUNT(DISTINCT ?cyclone) AS ?n) WHERE {{ {CORE} }} }} FILTER(?n > 3) }}",
    ),
    (
        "argmax over a grouped count",
        CYCLONES.add_count("?cyclone", "?n", group_by=["?category"]).add_max("?n"),
        f"SELECT DISTINCT ?category ?n WHERE {{ {{ SELECT ?category (COUNT(DISTINCT ?cyclone) AS ?n) WHERE {{ {CORE} }} "
        "GROUP BY ?category } } ORDER BY DESC(IF(isNumeric(?n), ?n, STR(?n))) LIMIT 1",
    ),
    (
        "sum and avg",
        Query().add_fact("?c", "meteorology.tropical_cyclone.direct_fatalities", "?d").add_sum("?d", "?total"),
        f"SELECT DISTINCT ?total WHERE {{ {{ SELECT (SUM(?d) AS ?total) WHERE {{ ?c {fb('meteorology.tropical_cyclone.direct_fatalities')} ?d . }} }} }}",
    ),
    (
        "avg",
        Query().add_fact("?c", "meteorology.tropical_cyclone.highest_winds", "?w").add_avg("?w", "?mean"),
        f"SELECT DISTINCT ?mean WHERE {{ {{ SELECT (AVG(?w) AS ?mean) WHERE {{ ?c {fb('meteorology.tropical_cyclone.highest_winds')} ?w . }} }} }}",
    ),
    (
        "yes/no comparison is an ASK",
        Query()
        .add_fact("m.0dkl7", "meteorology.tropical_cyclone.highest_winds", "?w1")
        .add_fact("m.0crbvqz", "meteorology.tropical_cyclone.highest_winds", "?w2")
        .add_compare("?w1", ">", "?w2"),
        f"ASK {{ {fb('m.0dkl7')} {fb('meteorology.tropical_cyclone.highest_winds')} ?w1 . "
        f"{fb('m.0crbvqz')} {fb('meteorology.tropical_cyclone.highest_winds')} ?w2 . FILTER(?w1 > ?w2) }}",
    ),
    (
        "comparison after argmax applies to the argmax row",
        CYCLONES.add_max("?time").add_compare("?cyclone", "=", "m.0107j2dw"),
        f"ASK {{ {{ SELECT * WHERE {{ {CORE} }} {ORDER_DESC} LIMIT 1 }} FILTER(?cyclone = {fb('m.0107j2dw')}) }}",
    ),
    (
        "time constraint (WebQSP pattern)",
        Query()
        .add_fact("m.04ly1", "government.governmental_jurisdiction.governing_officials", "?p")
        .add_time_constrain("?p", "government.government_position_held.from", "government.government_position_held.to", "2005-12-31", "2005-01-01"),
        f"SELECT DISTINCT ?p WHERE {{ {fb('m.04ly1')} {fb('government.governmental_jurisdiction.governing_officials')} ?p . "
        f"FILTER(NOT EXISTS {{ ?p {fb('government.government_position_held.from')} ?__t1_0 }} || EXISTS {{ ?p {fb('government.government_position_held.from')} ?__t1_1 . "
        'FILTER(isLiteral(?__t1_1) && SUBSTR(STR(?__t1_1), 1, STRLEN("2005-12-31")) <= SUBSTR("2005-12-31", 1, STRLEN(STR(?__t1_1)))) }) '
        f"FILTER(NOT EXISTS {{ ?p {fb('government.government_position_held.to')} ?__t1_2 }} || EXISTS {{ ?p {fb('government.government_position_held.to')} ?__t1_3 . "
        'FILTER(isLiteral(?__t1_3) && SUBSTR(STR(?__t1_3), 1, STRLEN("2005-01-01")) >= SUBSTR("2005-01-01", 1, STRLEN(STR(?__t1_3)))) }) }',
    ),
    (
        "typed literal in the dataset form",
        Query().add_fact("?u", "measurement_unit.angular_velocity_unit.frequency_in_radians_per_second", "1.0^^http://www.w3.org/2001/XMLSchema#float"),
        f'SELECT DISTINCT ?u WHERE {{ ?u {fb("measurement_unit.angular_velocity_unit.frequency_in_radians_per_second")} "1.0"^^xsd:float . }}',
    ),
    (
        "language-tagged tail",
        Query().add_fact("?c", "type.object.name", '"Tropical Storm Rachel"@en'),
        f'SELECT DISTINCT ?c WHERE {{ ?c {fb("type.object.name")} "Tropical Storm Rachel"@en . }}',
    ),
]


@pytest.mark.parametrize("name,query,expected", CASES, ids=[c[0] for c in CASES])
def test_builder_compiles_to_expected_sparql(name: str, query: Query, expected: str) -> None:
    text = query.sparql()
    assert text.startswith("PREFIX ns: <http://rdf.freebase.com/ns/>"), "every query carries its own PREFIX lines"
    assert prepareQuery(text).algebra == prepareQuery(P + expected).algebra


@pytest.mark.parametrize("name,query,expected", CASES, ids=[c[0] for c in CASES])
def test_sparql_works_after_every_step(name: str, query: Query, expected: str) -> None:
    partial = Query(query.profile)
    for step in query.steps:
        partial = Query(query.profile, partial.steps + (step,))
        prepareQuery(partial.sparql())


def test_undo_returns_the_previous_query() -> None:
    q = CYCLONES.add_max("?time")
    assert q.undo() == CYCLONES
    assert q.undo().sparql() == CYCLONES.sparql()
    with pytest.raises(QueryError, match="no step to undo"):
        Query().undo()


@pytest.mark.parametrize(
    "build,message",
    [
        (lambda: Query().set_answer("yes"), "existing variable"),
        (lambda: RACHEL.set_answer("?nope"), r"\?nope is not a variable of the query; existing variables: \?category"),
        (lambda: RACHEL.add_max("?time"), "not a variable of the query"),
        (lambda: RACHEL.add_count("?category", "?category"), "already exists|new variable"),
        (lambda: RACHEL.add_filter("?category", "contains", 10), "not a comparison operator"),
        (lambda: Query().add_fact('"text"', "a.b.c", "?x"), "head of add_fact cannot be the literal"),
        (lambda: Query().add_fact("?x", "10", "?y"), "relation of add_fact"),
        (lambda: Query().add_type_constrain("?t", "?x"), "type name"),
        (lambda: Query().add_fact("?__x", "a.b.c", "?y"), "reserved"),
        (lambda: RACHEL.add_time_constrain("?category", "a.b.c", "a.b.d", "yesterday", "2005-01-01"), "cannot read|date"),
        (lambda: Query(profile="dbpedia"), "unknown KB profile"),
    ],
)
def test_bad_steps_raise_specific_errors(build, message: str) -> None:
    with pytest.raises((QueryError, TermError), match=message):
        build()


def test_prefixed_names_only_where_all_engines_agree() -> None:
    text = Query().add_fact("m.0crbvqz", "meteorology.tropical_cyclone.category", "?c").sparql()
    assert "ns:meteorology" not in text
    assert "<http://rdf.freebase.com/ns/meteorology.tropical_cyclone.category>" in text


def test_actions_round_trip_to_the_same_query() -> None:
    from pyql.action_parser import parse_action
    from pyql.interchange.actions import calls_to_query

    q = CYCLONES.add_max("?time").add_filter("?time", ">", "2001-01-01").set_answer("?cyclone")
    again = calls_to_query([parse_action(line) for line in q.actions()])
    assert again == q
