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
    from pyql.builder.profiles import FREEBASE, GENERIC, WIKIDATA, Profile, get_profile
    from pyql.builder.query import Query
    from pyql.builder.terms import IRI, BlankNode, Literal, Term, Variable, parse_term

# The names below are imported when first used (PEP 562), so that importing a
# light module of the package (the ``pyql`` command's entry point installs its
# Ctrl-C handler before anything heavy is imported) does not load the builder.
_EXPORTS = {
    **dict.fromkeys(("EngineError", "EngineTimeout", "KBError", "ParseError", "PyQLError", "QueryError", "TermError"), "pyql.errors"),
    **dict.fromkeys(("FREEBASE", "GENERIC", "WIKIDATA", "Profile", "get_profile"), "pyql.builder.profiles"),
    "Query": "pyql.builder.query",
    **dict.fromkeys(("IRI", "BlankNode", "Literal", "Term", "Variable", "parse_term"), "pyql.builder.terms"),
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


#: Modules that moved into the package's rooms, by their old names (``import
#: pyql.query`` still works and gives the same module object as
#: ``pyql.builder.query``). Loaded only when an old name is imported.
MOVED_MODULES: dict[str, str] = {
    **{f"pyql.{name}": f"pyql.builder.{name}" for name in ("terms", "escape", "profiles", "steps", "expressions", "compiler", "query")},
    "pyql.observation": "pyql.kb.observation",
    "pyql.actions": "pyql.environment.actions",
    "pyql.sparql_environment": "pyql.environment.sparql",
    "pyql.sparql_actions": "pyql.environment.sparql_actions",
    "pyql.agentbench_environment": "pyql.environment.agentbench",
    "pyql.agentbench_actions": "pyql.environment.agentbench_actions",
    **{f"pyql.{name}": f"pyql.environment.{name}" for name in ("next_steps", "batch_trials", "value_steps", "grounding", "candidates")},
    "pyql.markqa_program": "pyql.interchange.markqa_program",
    "pyql.gold_sparql": "pyql.interchange.gold_sparql",
    "pyql.legacy": "pyql.interchange.legacy",
}


class _MovedModule:
    """Finds a module by its old name (:data:`MOVED_MODULES`) and gives the module of its new name."""

    @staticmethod
    def find_spec(fullname: str, path: Any = None, target: Any = None) -> Any:
        if fullname not in MOVED_MODULES:
            return None
        import importlib.util

        return importlib.util.spec_from_loader(fullname, _MovedModule)

    @staticmethod
    def create_module(spec: Any) -> Any:
        import importlib

        module = importlib.import_module(MOVED_MODULES[spec.name])
        spec.loader_state = module.__spec__  # the import machinery sets the old name's spec on it next
        return module

    @staticmethod
    def exec_module(module: Any) -> None:
        module.__spec__ = module.__spec__.loader_state


import sys as _sys  # noqa: E402

if not any(finder is _MovedModule for finder in _sys.meta_path):
    _sys.meta_path.append(_MovedModule)
