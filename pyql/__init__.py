"""pyql: build SPARQL (and SQL) queries one executable step at a time.

Example:
    >>> from pyql import Query
    >>> Query("freebase").add_fact("m.0crbvqz", "meteorology.tropical_cyclone.category", "?c").variables
    (Variable(name='c'),)
"""

from pyql.errors import (
    EngineError,
    EngineTimeout,
    KBError,
    ParseError,
    PyQLError,
    QueryError,
    TermError,
)
from pyql.profiles import FREEBASE, GENERIC, WIKIDATA, Profile, get_profile
from pyql.query import Query
from pyql.terms import IRI, BlankNode, Literal, Term, Variable, parse_term

__version__ = "0.1.0"

__all__ = [
    "Query",
    "Profile",
    "FREEBASE",
    "WIKIDATA",
    "GENERIC",
    "get_profile",
    "Term",
    "Variable",
    "IRI",
    "Literal",
    "BlankNode",
    "parse_term",
    "PyQLError",
    "TermError",
    "QueryError",
    "KBError",
    "EngineError",
    "EngineTimeout",
    "ParseError",
]
