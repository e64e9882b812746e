"""pyql: build SPARQL (and SQL) queries one executable step at a time.

Example:
    >>> from pyql import Query
    >>> Query("freebase").add_fact("m.0crbvqz", "meteorology.tropical_cyclone.category", "?c").variables
    (Variable(name='c'),)
"""

from __future__ import annotations

TYPE_CHECKING = False  # not typing's: the package's import stays light (type checkers know the name)
if TYPE_CHECKING:
    from typing import Any

    from pyql.errors import EngineError, EngineTimeout, KBError, ParseError, PyQLError, QueryError, TermError
    from pyql.profiles import FREEBASE, GENERIC, WIKIDATA, Profile, get_profile
    from pyql.query import Query
    from pyql.terms import IRI, BlankNode, Literal, Term, Variable, parse_term

# The names below are imported when first used (PEP 562), so that importing a
# light module of the package (the ``pyql`` command's entry point installs its
# Ctrl-C handler before anything heavy is imported) does not load the builder.
_EXPORTS = {
    **dict.fromkeys(("EngineError", "EngineTimeout", "KBError", "ParseError", "PyQLError", "QueryError", "TermError"), "pyql.errors"),
    **dict.fromkeys(("FREEBASE", "GENERIC", "WIKIDATA", "Profile", "get_profile"), "pyql.profiles"),
    "Query": "pyql.query",
    **dict.fromkeys(("IRI", "BlankNode", "Literal", "Term", "Variable", "parse_term"), "pyql.terms"),
}

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


def __getattr__(name: str) -> Any:
    """A public name of the package, imported from its module on first use (then kept)."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'pyql' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
