"""The ``sparql`` format: SPARQL 1.1 text, written from a chain; gold SPARQL read into one.

Writing gives :meth:`pyql.builder.query.Query.sparql`: the query with its own
PREFIX lines, for the query's KB profile. Reading takes the gold queries
the benchmarks ship (WebQSP, CWQ, GrailQA: Virtuoso's dialect) through
:func:`pyql.interchange.gold_sparql.gold_to_query`, which says what maps to which step
and what is refused.

Example:
    >>> print(write_sparql(Query().add_fact("?a", "r.s.t", "?b").set_answer("?b")), end="")  # doctest: +ELLIPSIS
    PREFIX ns: <http://rdf.freebase.com/ns/>
    ...
    SELECT DISTINCT ?b WHERE {
      ?a <http://rdf.freebase.com/ns/r.s.t> ?b .
    }
"""

from __future__ import annotations

from typing import Mapping

from pyql.interchange.gold_sparql import gold_to_query
from pyql.interchange.registry import reader, writer
from pyql.builder.profiles import FREEBASE, Profile  # noqa: F401 (FREEBASE: the doctests use it)
from pyql.builder.query import Query

__all__ = ["read_sparql", "write_sparql"]


@reader("sparql", "SPARQL 1.1, each query with its own PREFIX lines")
def read_sparql(text: str, entities: Mapping[str, str], profile: Profile) -> Query:
    """The chain of a gold SPARQL query (WebQSP, CWQ and GrailQA dialects).

    Raises:
        ParseError: naming the character; ConversionError: a part that has no step, naming it.

    Example:
        >>> read_sparql("PREFIX ns: <http://rdf.freebase.com/ns/> SELECT DISTINCT ?x WHERE { ns:m.0a ns:a.b.c ?x . }", {}, FREEBASE).actions()
        ['add_fact(m.0a, a.b.c, ?x)', 'set_answer(?x)']
    """
    return gold_to_query(text, profile)


@writer("sparql", "SPARQL 1.1, each query with its own PREFIX lines")
def write_sparql(query: Query) -> str:
    """The SPARQL text of the query (:meth:`~pyql.builder.query.Query.sparql`).

    Example:
        >>> "SELECT *" in write_sparql(Query())
        True
    """
    return query.sparql()
