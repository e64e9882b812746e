"""The ``sparql`` format: SPARQL 1.1 text (written only, for now).

Writing gives :meth:`pyql.query.Query.sparql`: the query with its own
PREFIX lines, for the query's KB profile. (Reading gold SPARQL into a
chain comes later, with its own reader here.)

Example:
    >>> print(write_sparql(Query().add_fact("?a", "r.s.t", "?b").set_answer("?b")), end="")  # doctest: +ELLIPSIS
    PREFIX ns: <http://rdf.freebase.com/ns/>
    ...
    SELECT DISTINCT ?b WHERE {
      ?a <http://rdf.freebase.com/ns/r.s.t> ?b .
    }
"""

from __future__ import annotations

from pyql.interchange.registry import writer
from pyql.query import Query

__all__ = ["write_sparql"]


@writer("sparql", "SPARQL 1.1, each query with its own PREFIX lines")
def write_sparql(query: Query) -> str:
    """The SPARQL text of the query (:meth:`~pyql.query.Query.sparql`).

    Example:
        >>> "SELECT *" in write_sparql(Query())
        True
    """
    return query.sparql()
