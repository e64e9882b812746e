"""The ``sparql`` conversion format (pyql/interchange/sparql.py): written from a query."""

from __future__ import annotations

from pyql.interchange import convert
from pyql.interchange.sparql import write_sparql
from pyql.profiles import WIKIDATA
from pyql.query import Query


def test_writing_is_the_querys_sparql_with_its_prefixes() -> None:
    query = Query().add_fact("m.0crbvqz", "meteorology.tropical_cyclone.category", "?c").set_answer("?c")
    text = write_sparql(query)
    assert text == query.sparql() and text.startswith("PREFIX ns: <http://rdf.freebase.com/ns/>\n") and text.endswith("}\n")


def test_the_profile_decides_the_prefixes() -> None:
    query = Query(WIKIDATA).add_fact("Q64", "P1082", "?p")
    assert write_sparql(query) == convert("add_fact(Q64, P1082, ?p)", "actions", "sparql", profile=WIKIDATA)
    assert "PREFIX wd: <http://www.wikidata.org/entity/>" in write_sparql(query)
